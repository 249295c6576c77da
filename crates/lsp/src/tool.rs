//! `lsp`: language-server queries addressed by file, line and symbol (never a column).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lsp_types as lsp;
use lsp_types::request as req;
use schemars::JsonSchema;
use serde::Deserialize;
use tether_rpc::codes::METHOD_NOT_FOUND;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::navigate::{Navigate, unoffered};
use crate::position::locate_line;
use crate::protocol;
use crate::render::{Place, hover, locations, outline, places};
use crate::server::Server;
use crate::status::{introduced, server_line, status};
use crate::supervisor::Supervisor;

/// How long `status` waits for the changes made on disk before it to be diagnosed.
const CAUGHT_UP: std::time::Duration = std::time::Duration::from_secs(2);

/// References shown before the list is cut.
const REFERENCES_CAP: usize = 50;
/// Workspace symbols shown for a query.
const QUERY_CAP: usize = 100;
/// Outline entries shown for a file.
const OUTLINE_CAP: usize = 200;

/// What `lsp` can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Errors and warnings of a file.
    Diagnostics,
    /// Where the symbol is declared.
    Definition,
    /// Where its type is declared.
    TypeDefinition,
    /// Its concrete implementations.
    Implementation,
    /// Every use (at most 50).
    References,
    /// Its signature and doc comment.
    Hover,
    /// Workspace symbols matching `query`, or the outline of `file`.
    Symbols,
    /// Quick fixes and refactorings the server offers at the symbol, or without a `line` the
    /// fixes for every diagnostic of the file; numbered, for `lsp_fix`.
    CodeActions,
    /// Which servers run, and which are configured but unavailable, and why.
    Status,
    /// Restart the servers of the file's project (all when no file is given).
    Reload,
}

/// Arguments of `lsp`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspArgs {
    /// What to do.
    action: Action,
    /// The file, relative to the workspace (or absolute inside a read root).
    #[serde(alias = "path", alias = "file_path")]
    file: Option<String>,
    /// 1-based line of the symbol.
    #[schemars(range(min = 1))]
    line: Option<usize>,
    /// Text naming the symbol on that line, such as `parse` or `self.parse(`; `name#2` picks
    /// the second occurrence.
    symbol: Option<String>,
    /// For `symbols`: a workspace-wide search instead of a file's outline.
    query: Option<String>,
    /// For a file's `symbols` outline: also list the parameters and local variables inside
    /// functions and methods (default false: classes, functions, methods, module names).
    locals: Option<bool>,
}

/// The `lsp` tool over the run's supervisor.
pub struct LspTool {
    pub(crate) servers: Arc<Supervisor>,
    /// What this run's writes broke, for `status`.
    pub(crate) ledger: Arc<crate::ledger::Ledger>,
    /// The watch for outside edits, for `status`.
    pub(crate) outside: Arc<crate::outside::Outside>,
    /// The servers run beside the chosen ones (ruff beside pyright), for `status`.
    pub(crate) beside: Option<Arc<Supervisor>>,
    /// The code actions listed in this run, which `lsp_fix` applies by number.
    pub(crate) listings: Arc<crate::fix::Listings>,
}

impl Tool for LspTool {
    type Args = LspArgs;

    fn name(&self) -> &'static str {
        "lsp"
    }

    fn description(&self) -> String {
        "Language-server queries. Address a symbol by `file`, 1-based `line` and `symbol` (text \
         naming it on that line; never a column): definition, type_definition, implementation, \
         references, hover. `symbols` takes a `query` (workspace search) or a `file` (outline). \
         `code_actions` lists the fixes at a symbol, or without `line` those of every \
         diagnostic of the `file`, numbered for `lsp_fix`. `status` says which servers run and \
         why others cannot. Servers start on first use \
         (Rust, Python, C/C++, TypeScript/JavaScript, Go, Dart)."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn concurrency(&self, _: &LspArgs) -> Concurrency {
        Concurrency::Free
    }

    async fn call(&self, cx: &CallCx, args: LspArgs) -> Result<ToolOutput, ToolError> {
        if args.line == Some(0) {
            return Err(ToolError::invalid(
                "`line` is 1-based: the first line of a file is line 1",
            ));
        }
        let text = match args.action {
            Action::Status => {
                // What changed on disk before this call is told before the state is read.
                let caught_up = self.outside.caught_up(CAUGHT_UP).await;
                let mut text = status(&self.servers).await;
                if let Some(beside) = &self.beside {
                    for s in beside.running().await {
                        let line = server_line(&s, beside.workspace()).await;
                        text.push_str(&format!("\nbeside the chosen server: {line}"));
                    }
                }
                text.push_str(&introduced(&self.ledger, self.servers.workspace()));
                if let Some(watch) = self.outside.describe() {
                    text.push_str(&format!("\n{watch}"));
                    if !caught_up {
                        text.push_str(&format!(
                            "; changes made before this call were still being diagnosed after \
                             {} s: their notice follows",
                            CAUGHT_UP.as_secs()
                        ));
                    }
                }
                text
            }
            Action::Reload => reload(&self.servers, cx, args.file.as_deref()).await?,
            Action::Symbols => symbols(&self.servers, cx, &args).await?,
            Action::Diagnostics => {
                let mut text = diagnostics(&self.servers, cx, args.file.as_deref()).await?;
                if let (Some(beside), Some(file)) = (&self.beside, args.file.as_deref())
                    && file != "*"
                {
                    text.push_str(&beside_diagnostics(beside, cx, file).await);
                }
                text
            }
            Action::CodeActions => {
                let file = need(&args.file, "file", Action::CodeActions)?;
                let asked = match (args.line, &args.symbol) {
                    (Some(line_no), Some(symbol)) => crate::fix::Asked::At {
                        line_no,
                        symbol: symbol.clone(),
                    },
                    (None, None) => crate::fix::Asked::File,
                    (Some(_), None) => {
                        return Err(ToolError::invalid(
                            "`code_actions` at a `line` needs `symbol` (text naming it on that \
                             line); give neither for the fixes of every diagnostic in the file",
                        ));
                    }
                    (None, Some(_)) => {
                        return Err(ToolError::invalid(
                            "`code_actions` with a `symbol` needs its 1-based `line`; give \
                             neither for the fixes of every diagnostic in the file",
                        ));
                    }
                };
                let t = target(&self.servers, cx, file).await?;
                let beside = match &self.beside {
                    Some(beside) => beside_target(beside, &t).await,
                    None => None,
                };
                let both = (&t, beside.as_ref());
                crate::fix::list(&self.listings, both, cx, file, asked).await?
            }
            Action::Definition => navigate(&self.servers, cx, &args, Navigate::Definition).await?,
            Action::TypeDefinition => {
                navigate(&self.servers, cx, &args, Navigate::TypeDefinition).await?
            }
            Action::Implementation => {
                navigate(&self.servers, cx, &args, Navigate::Implementation).await?
            }
            Action::References => navigate(&self.servers, cx, &args, Navigate::References).await?,
            Action::Hover => navigate(&self.servers, cx, &args, Navigate::Hover).await?,
        };
        Ok(ToolOutput::text(text))
    }
}

pub(crate) fn action_name(a: Action) -> &'static str {
    match a {
        Action::Diagnostics => "diagnostics",
        Action::Definition => "definition",
        Action::TypeDefinition => "type_definition",
        Action::Implementation => "implementation",
        Action::References => "references",
        Action::Hover => "hover",
        Action::Symbols => "symbols",
        Action::CodeActions => "code_actions",
        Action::Status => "status",
        Action::Reload => "reload",
    }
}

/// A file the model named, resolved and read, with the server that serves it.
pub(crate) struct Target {
    pub(crate) abs: PathBuf,
    pub(crate) text: String,
    pub(crate) server: Arc<Server>,
}

pub(crate) async fn target(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    file: &str,
) -> Result<Target, ToolError> {
    let abs = cx.workspace().resolve_read(file)?;
    let Some(lang) = servers.config().language_of(&abs) else {
        let known: Vec<&str> = servers
            .config()
            .languages
            .keys()
            .map(String::as_str)
            .collect();
        return Err(ToolError::invalid(format!(
            "{file}: no language server handles this kind of file; languages: {}",
            known.join(", ")
        )));
    };
    // Read by descriptor, as `read` does: what is synced is what the model may read.
    let text = match crate::named::read(cx.workspace(), &abs).await {
        Ok(text) => text,
        Err(why) => {
            let hint = match abs.exists() {
                true => String::new(),
                false => tether_fs::suggest::did_you_mean(&cx.similar_files(file).await),
            };
            return Err(ToolError::invalid(format!(
                "cannot read {file}: {why}{hint}"
            )));
        }
    };
    cx.progress(&format!("waiting for the {lang} language server"));
    let server = server_within(servers, lang, &abs, cx).await?;
    server.sync(&abs, &text).await?;
    server.refresh_open(cx.workspace()).await?;
    server.warm_pull(&abs);
    // A server still loading the project answers "nothing here" for what it has not read yet
    // (rust-analyzer refuses a rename with "No references found"): its answer waits.
    if !server.loaded_within(std::time::Duration::ZERO).await {
        cx.progress(&format!("waiting for {} to load the project", server.id));
        if !server.loaded_within(server.timeout()).await {
            return Err(ToolError::failed(format!(
                "{} was still loading the project after {} s ({}); ask again shortly",
                server.id,
                server.timeout().as_secs(),
                server.state().await
            )));
        }
    }
    Ok(Target { abs, text, server })
}

/// Tells the run, by a notice, how the install a call left pending ended: the server it
/// started, or why none came up. The task ends with the install, whose own deadline bounds it.
fn tell_when_installed(
    start: tokio::task::JoinHandle<Result<Arc<crate::server::Server>, crate::LspError>>,
    id: String,
    lang: &'static str,
    notices: tether_tool::NoticeQueue,
) {
    tokio::spawn(async move {
        let text = match start.await {
            Ok(Ok(_)) => format!(
                "{id} is installed for {lang} (`[lsp] auto_install`) and runs now: ask again \
                 what was answered pending"
            ),
            Ok(Err(why)) => format!("{id} for {lang} did not come up after its install: {why}"),
            Err(_) => return,
        };
        notices.push_keyed("lsp", &format!("auto_install|{id}"), text);
    });
}

/// The server for `abs`, started if need be; one being installed on first need (`[lsp]
/// auto_install`) is waited for at most a request's deadline, then the call is answered as
/// pending while the install goes on.
async fn server_within(
    servers: &Arc<Supervisor>,
    lang: &'static str,
    abs: &Path,
    cx: &CallCx,
) -> Result<Arc<crate::server::Server>, ToolError> {
    let (supervisor, path) = (servers.clone(), abs.to_path_buf());
    let mut start = tokio::spawn(async move { supervisor.server_for(lang, &path).await });
    let deadline = servers.config().request_timeout;
    let say = |waited: std::time::Duration| match servers.installing(lang) {
        Some(id) => format!(
            "installing {id} for {lang} (`[lsp] auto_install`): {} s so far",
            waited.as_secs()
        ),
        None => format!(
            "still waiting for the {lang} language server: {} s so far",
            waited.as_secs()
        ),
    };
    let within = tokio::time::timeout(deadline, &mut start);
    let answer = match cx.progress_while(within, &say).await {
        Ok(answer) => answer,
        Err(_) => match servers.installing(lang) {
            Some(id) => {
                tell_when_installed(start, id.clone(), lang, cx.notices().clone());
                return Err(ToolError::failed(format!(
                    "pending: {id} is being installed for {lang} (`[lsp] auto_install`), and \
                     was not ready within {} s; the install goes on in the background, and a \
                     notice on a later result says when it is done",
                    deadline.as_secs()
                )));
            }
            None => cx.progress_while(start, &say).await,
        },
    };
    let server = answer.map_err(|e| {
        ToolError::failed(format!("starting the {lang} language server failed: {e}"))
    })??;
    Ok(server)
}

fn need<'a, T>(value: &'a Option<T>, what: &str, action: Action) -> Result<&'a T, ToolError> {
    value.as_ref().ok_or_else(|| {
        ToolError::invalid(format!(
            "`{}` needs `{what}`: give `file`, `line` (1-based) and `symbol` (text naming it on \
             that line)",
            action_name(action)
        ))
    })
}

/// The symbol a call names, found on its line of its file.
struct Spot<'a> {
    /// The file and the symbol's text as the call gave them.
    file: &'a str,
    symbol: &'a str,
    target: Target,
    line_no: usize,
    /// Where the symbol's name begins on the line.
    byte: usize,
    ident: String,
}

impl Spot<'_> {
    fn line(&self) -> &str {
        self.target.text.lines().nth(self.line_no - 1).unwrap_or("")
    }
}

/// The symbol `args` name for `action` (`file`, `line`, `symbol`), found in its file.
async fn spot<'a>(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    args: &'a LspArgs,
    action: Action,
) -> Result<Spot<'a>, ToolError> {
    let file = need(&args.file, "file", action)?;
    let line_no = *need(&args.line, "line", action)?;
    let symbol = need(&args.symbol, "symbol", action)?;
    let target = target(servers, cx, file).await?;
    let lines: Vec<&str> = target.text.lines().collect();
    let (_, byte, ident) = locate_line(file, &lines, line_no, symbol)?;
    Ok(Spot {
        file,
        symbol,
        target,
        line_no,
        byte,
        ident,
    })
}

async fn navigate(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    args: &LspArgs,
    nav: Navigate,
) -> Result<String, ToolError> {
    let action = nav.action();
    let spot = spot(servers, cx, args, action).await?;
    let (file, symbol) = (spot.file, spot.symbol);
    let (t, line_no, ident) = (&spot.target, spot.line_no, &spot.ident);
    let position = protocol::at(
        &t.abs,
        line_no - 1,
        t.server.encoding.column(spot.line(), spot.byte),
    )?;
    let refused = || unoffered(&t.server.id, nav);
    if !nav.provider(&t.server.capabilities).on {
        return Err(refused());
    }
    let ask = || async {
        nav.ask(&t.server, &position, cx.cancel_token())
            .await
            .map_err(|e| match e.code() == Some(METHOD_NOT_FOUND) {
                true => refused(),
                false => ToolError::from(e),
            })
    };
    // A listing takes a moment (pyright: a fraction of a second), so the answer is whole.
    t.server.listing_awaited().await;
    // Whether the answer covers every file, as the server stood when it was asked (pyright
    // sends an answer from its open files, then at once the log that it has listed the rest).
    let mut whole = t.server.searches_whole_project();
    let mut answer = ask().await?;
    // While a server indexes, an empty answer (or references holding only the declaration)
    // is not final: wait for it to finish, within the request's deadline, and ask again.
    let thin = |a: &serde_json::Value| match a {
        serde_json::Value::Null => true,
        serde_json::Value::Array(v) => v.len() <= usize::from(nav == Navigate::References),
        _ => false,
    };
    let mut incomplete = false;
    if thin(&answer) && !whole {
        cx.progress(&format!(
            "{} is indexing; waiting to ask again",
            t.server.id
        ));
        if t.server.settled(t.server.timeout()).await {
            whole = t.server.searches_whole_project();
            answer = ask().await?;
        } else {
            incomplete = true;
        }
    }
    let at = match crate::position::typed_name(symbol) {
        Some(typed) if &typed != ident => format!(
            "`{ident}` (`{typed}` is not a whole name on that line; this is the one it is part \
             of) at {file}:{line_no}"
        ),
        _ => format!("`{ident}` at {file}:{line_no}"),
    };
    if nav == Navigate::Hover {
        return Ok(match (hover(answer), t.server.health()) {
            (Some(h), _) => match withheld(t, cx, &position).await {
                Some(why) => format!("hover of {at}: {why}"),
                None => format!("{at}:\n{h}"),
            },
            (None, None) => format!("{} has nothing to say about {at}", t.server.id),
            (None, Some(health)) => format!(
                "{} has nothing to say about {at}; but {health}, so this may be why",
                t.server.id
            ),
        });
    }
    let found = places(answer);
    if found.is_empty() {
        let state = t.server.state().await;
        let mut text = format!(
            "no {} for {at} ({} is {state})",
            action_name(action).replace('_', " "),
            t.server.id
        );
        // An empty answer from a project that failed to load is not an answer about the code.
        if let Some(health) = t.server.health() {
            text.push_str(&format!("; but {health}, so this may be why"));
        }
        return Ok(text);
    }
    let cap = if nav == Navigate::References {
        REFERENCES_CAP
    } else {
        QUERY_CAP
    };
    let list = locations(&found, cx.workspace(), t.server.encoding, cap).await;
    let n = found.len();
    let partial = match (partial_note(&t.server, whole).await, incomplete) {
        (Some(note), _) => format!("{note}\n"),
        (None, true) => format!(
            "partial: {} was still indexing when it answered, so this list may miss what it \
             had not reached; ask again\n",
            t.server.id
        ),
        (None, false) => String::new(),
    };
    Ok(format!(
        "{} for {at} ({n} found):\n{partial}{list}",
        action_name(action).replace('_', " ")
    ))
}

/// A line saying a list may be short, when the server that gave it is still indexing: a
/// list it gives now may miss what it has not reached, and a short list read as the whole
/// (one reference: "unused") is a wrong answer that looks right. A server whose queries
/// search every file when asked (pyright) answers whole while its diagnostics pass runs,
/// when it had listed the project's files before it was asked (`whole`).
async fn partial_note(server: &Server, whole: bool) -> Option<String> {
    match (server.queries_on_demand, whole) {
        (true, true) => return None,
        (true, false) => {
            let what = match server.relisting() {
                true => "the files created or deleted since it last listed them",
                false => "the project's files",
            };
            return Some(format!(
                "partial: {} had not listed {what} yet when it answered, so this list may miss \
                 files it had not opened; ask again",
                server.id
            ));
        }
        (false, _) => {}
    }
    match server.state().await {
        crate::server::State::Indexing(pct) => Some(format!(
            "partial: {} is still indexing{}, so this list may miss what it has not reached; \
             ask again once `lsp status` says it is ready",
            server.id,
            pct.map_or(String::new(), |p| format!(" ({p}%)"))
        )),
        _ => None,
    }
}

/// Why a hover is not shown, when the symbol is declared in a file the server reached through
/// the workspace but `read` may not read (a symlink out of it, a FIFO): the hover quotes that
/// file. A declaration outside every root by its own name (the server's bundled stubs) is
/// the server's knowledge, and its hover is shown.
async fn withheld(t: &Target, cx: &CallCx, at: &lsp::TextDocumentPositionParams) -> Option<String> {
    if !t.server.capabilities.definition_provider.on {
        return None;
    }
    let params = lsp::GotoDefinitionParams {
        text_document_position_params: at.clone(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let answer = t
        .server
        .call::<req::GotoDefinition>(params, cx.cancel_token())
        .await
        .ok()?;
    let ws = cx.workspace();
    for place in places(answer) {
        if !crate::named::named_inside(ws, &place.path) {
            continue;
        }
        match crate::named::read(ws, &place.path).await {
            Ok(_) | Err(tether_fs::Unshown::Missing) => {}
            Err(why) => {
                let shown = crate::render::shown(&place.path, ws.root());
                return Some(format!(
                    "declared at {shown}:{} ({why}: not shown)",
                    place.line + 1
                ));
            }
        }
    }
    None
}

/// Diagnostics cap for one file.
const DIAGNOSTICS_CAP: usize = 100;

async fn diagnostics(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    file: Option<&str>,
) -> Result<String, ToolError> {
    let file = file.ok_or_else(|| ToolError::invalid("`diagnostics` needs `file` (a path)"))?;
    if file == "*" {
        if !servers.trusted() {
            return Err(ToolError::invalid(
                "`diagnostics \"*\"` runs the project's own build (build scripts, plugins), \
                 and this workspace is not trusted: ask per `file`, or run `tether trust`",
            ));
        }
        if !servers.builds() {
            return Err(ToolError::invalid(
                "`diagnostics \"*\"` runs the project's own build (build scripts can write \
                 anywhere), and this run serves the plan or readonly surface, which never \
                 writes: ask per `file`, or set `[lsp] read_surfaces_build = true` in the user \
                 config",
            ));
        }
        cx.progress("running the project's checkers");
        let deadline = servers.config().check_timeout;
        return Ok(crate::checker::check_project(servers.workspace(), deadline).await);
    }
    let t = target(servers, cx, file).await?;
    cx.progress(&format!("waiting for {}'s diagnostics", t.server.id));
    let items = t.server.file_answer(&t.abs, t.server.timeout()).await?;
    let shown = crate::render::shown(&t.abs, servers.workspace());
    Ok(crate::render::diagnostics(&shown, &items, DIAGNOSTICS_CAP))
}

/// The server run beside the chosen one (ruff beside pyright) for `abs`, started if need be,
/// when one serves it and is available.
async fn beside_server(beside: &Arc<Supervisor>, abs: &Path) -> Option<Arc<Server>> {
    let lang = beside.config().language_of(abs)?;
    let config = beside.config();
    crate::avail::find(config, lang, abs, beside.workspace(), beside.trusted()).ok()?;
    beside.server_for(lang, abs).await.ok()
}

/// The file of `t` as the server run beside the chosen one has it, when one is available for
/// it ([`beside_server`]), given the same text.
pub(crate) async fn beside_target(beside: &Arc<Supervisor>, t: &Target) -> Option<Target> {
    let server = beside_server(beside, &t.abs).await?;
    server.sync(&t.abs, &t.text).await.ok()?;
    Some(Target {
        abs: t.abs.clone(),
        text: t.text.clone(),
        server,
    })
}

/// What the servers run beside the chosen one (ruff) say of `file`, each under its name;
/// nothing when none serves it or none is installed.
async fn beside_diagnostics(beside: &Arc<Supervisor>, cx: &CallCx, file: &str) -> String {
    let Ok(abs) = cx.workspace().resolve_read(file) else {
        return String::new();
    };
    let Some(server) = beside_server(beside, &abs).await else {
        return String::new();
    };
    let Ok(text) = crate::named::read(cx.workspace(), &abs).await else {
        return String::new();
    };
    cx.progress(&format!("waiting for {}'s diagnostics", server.id));
    let answer = match server.sync(&abs, &text).await {
        Ok(()) => server.file_answer(&abs, server.timeout()).await,
        Err(why) => Err(why),
    };
    let said = match answer {
        Ok(items) => {
            let shown = crate::render::shown(&abs, beside.workspace());
            crate::render::diagnostics(&shown, &items, DIAGNOSTICS_CAP)
        }
        Err(why) => format!("no answer: {why}"),
    };
    format!(
        "\n\n{} (run beside the chosen server) says:\n{said}",
        server.id
    )
}

async fn symbols(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    args: &LspArgs,
) -> Result<String, ToolError> {
    match (&args.query, &args.file) {
        (Some(query), file) => {
            // A workspace search goes to the server of the given file, else of any running one.
            let server = match file {
                Some(f) => target(servers, cx, f).await?.server,
                None => servers.running().await.into_iter().next().ok_or_else(|| {
                    ToolError::invalid(
                        "no language server runs yet: give `file` (any file of the project) \
                         with `query`, so the right server starts",
                    )
                })?,
            };
            let params = lsp::WorkspaceSymbolParams {
                query: query.clone(),
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let whole = server.searches_whole_project();
            let found: Vec<Place> = server
                .call::<req::WorkspaceSymbolRequest>(params, cx.cancel_token())
                .await?
                .iter()
                .filter_map(|s| Place::of(s.location.as_ref()?))
                .collect();
            if found.is_empty() {
                return Ok(format!(
                    "no symbol matches `{query}` ({} searched; it is {})",
                    server.id,
                    server.state().await
                ));
            }
            let list = locations(&found, cx.workspace(), server.encoding, QUERY_CAP).await;
            let partial = partial_note(&server, whole)
                .await
                .map_or(String::new(), |note| format!("{note}\n"));
            Ok(format!(
                "symbols matching `{query}` ({} found):\n{partial}{list}",
                found.len()
            ))
        }
        (None, Some(file)) => {
            let t = target(servers, cx, file).await?;
            let params = lsp::DocumentSymbolParams {
                text_document: protocol::document(&t.abs)?,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let symbols = t
                .server
                .call::<req::DocumentSymbolRequest>(params, cx.cancel_token())
                .await?;
            Ok(format!(
                "outline of {file}:\n{}",
                outline(&symbols, OUTLINE_CAP, args.locals.unwrap_or(false))
            ))
        }
        (None, None) => Err(ToolError::invalid(
            "`symbols` needs `query` (a workspace search) or `file` (its outline)",
        )),
    }
}

async fn reload(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    file: Option<&str>,
) -> Result<String, ToolError> {
    let root: Option<PathBuf> = match file {
        Some(f) => {
            let abs = cx.workspace().resolve_read(f)?;
            let running = servers.running().await;
            running
                .iter()
                .find(|s| abs.starts_with(&s.root))
                .map(|s| s.root.clone())
        }
        None => None,
    };
    let stopped = servers
        .stop(root.as_deref(), std::time::Duration::from_secs(5))
        .await;
    Ok(match stopped.as_slice() {
        [] => "no language server was running; each starts on its next call".into(),
        ids => format!(
            "stopped {}; each starts again on its next call",
            ids.join(", ")
        ),
    })
}
