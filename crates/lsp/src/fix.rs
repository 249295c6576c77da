//! Code actions: `lsp` `code_actions` lists what the server offers, numbered, and the run
//! keeps that listing; `lsp_fix` applies one of them through the write door, all files or
//! none, with any `workspace/applyEdit` its command makes part of the same change.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lsp_types as lsp;
use lsp_types::request as req;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_base::lock;
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput};

use crate::edits::{Gathered, gathering_edits};
use crate::protocol::{self, CodeAction};
use crate::tool::Target;

/// Code actions listed at most.
const ACTIONS_CAP: usize = 50;
/// Diagnostics of a file asked about at most when no line is given.
const DIAGNOSTICS_ASKED: usize = 50;

/// Where a listing was asked: at a symbol on a line, or for every diagnostic of the file.
#[derive(Clone, Debug)]
pub(crate) enum Asked {
    At { line_no: usize, symbol: String },
    File,
}

/// One listing, as `code_actions` showed it.
struct Listing {
    /// The hash of the file's text it was computed on.
    text_hash: tether_fs::ContentHash,
    server: String,
    asked: Asked,
    /// Where it was asked, as the listing's first line says it.
    head: String,
    actions: Vec<Offered>,
}

/// One listed action: the server that offered it, and the action as it was sent.
struct Offered {
    server: String,
    raw: Value,
    action: CodeAction,
}

/// The last listing of each file in this run, which `lsp_fix` numbers refer to.
#[derive(Default)]
pub(crate) struct Listings {
    by_file: Mutex<HashMap<PathBuf, Listing>>,
}

/// The code actions the server offers where `asked` says, and those of the server run beside
/// it (ruff beside pyright), kept as this run's listing of the file; the text that shows them
/// numbered.
pub(crate) async fn list(
    listings: &Listings,
    (t, beside): (&Target, Option<&Target>),
    cx: &CallCx,
    file: &str,
    asked: Asked,
) -> Result<String, ToolError> {
    let mut actions = Vec::new();
    let (mut head, mut diagnostics) = (String::new(), 0);
    for one in std::iter::once(t).chain(beside) {
        let found = match &asked {
            Asked::At { line_no, symbol } => {
                let (found, said) = at_symbol(one, cx, file, *line_no, symbol).await?;
                head = said;
                found
            }
            Asked::File => {
                let (found, seen) = for_diagnostics(one, cx).await?;
                diagnostics += seen;
                found
            }
        };
        let server = &one.server.id;
        actions.extend(found.into_iter().map(|(raw, action)| Offered {
            server: server.clone(),
            raw,
            action,
        }));
    }
    if let Asked::File = asked {
        head = match diagnostics {
            0 => "for the file (it has no diagnostics now)".to_string(),
            n => format!(
                "for the {} of the file",
                tether_tool::counted(n, "diagnostic")
            ),
        };
    }
    let text = render(&t.server.id, &head, &actions);
    let listing = Listing {
        text_hash: tether_fs::hash_bytes(t.text.as_bytes()),
        server: t.server.id.clone(),
        asked,
        head,
        actions,
    };
    lock(&listings.by_file).insert(t.abs.clone(), listing);
    Ok(text)
}

/// The actions at a symbol, with the diagnostics on its line as context.
async fn at_symbol(
    t: &Target,
    cx: &CallCx,
    file: &str,
    line_no: usize,
    symbol: &str,
) -> Result<(Vec<(Value, CodeAction)>, String), ToolError> {
    let lines: Vec<&str> = t.text.lines().collect();
    let (line, byte, ident) = crate::position::locate_line(file, &lines, line_no, symbol)?;
    let enc = t.server.encoding;
    let row = u32::try_from(line_no - 1).unwrap_or(u32::MAX);
    let range = lsp::Range::new(
        lsp::Position::new(row, enc.column(line, byte)),
        lsp::Position::new(row, enc.column(line, byte + ident.len())),
    );
    let on_line: Vec<lsp::Diagnostic> = diagnostics_now(t, cx)
        .await
        .into_iter()
        .filter(|d| d.range.start.line == row)
        .collect();
    let actions = ask(t, cx, range, on_line, None).await?;
    Ok((actions, format!("for `{ident}` at line {line_no}")))
}

/// The quick fixes for every diagnostic the file has now (at most [`DIAGNOSTICS_ASKED`]),
/// each offered once; and how many diagnostics were asked about.
async fn for_diagnostics(
    t: &Target,
    cx: &CallCx,
) -> Result<(Vec<(Value, CodeAction)>, usize), ToolError> {
    let found = diagnostics_now(t, cx).await;
    let mut actions: Vec<(Value, CodeAction)> = Vec::new();
    for d in found.iter().take(DIAGNOSTICS_ASKED) {
        let only = Some(vec![lsp::CodeActionKind::QUICKFIX]);
        for offered in ask(t, cx, d.range, vec![d.clone()], only).await? {
            let same = |(raw, _): &(Value, CodeAction)| *raw == offered.0;
            if !actions.iter().any(same) {
                actions.push(offered);
            }
        }
    }
    Ok((actions, found.len().min(DIAGNOSTICS_ASKED)))
}

/// The file's diagnostics for its current text, as the context its fixes are asked with: a
/// server that answers pulls is asked, and its items are kept whole (ruff finds a fix in an
/// item's `data`, which tether's own store leaves out); else what it answers within its request
/// deadline, or published last.
async fn diagnostics_now(t: &Target, cx: &CallCx) -> Vec<lsp::Diagnostic> {
    if t.server.capabilities.diagnostic_provider.on {
        let params = lsp::DocumentDiagnosticParams {
            text_document: match protocol::document(&t.abs) {
                Ok(document) => document,
                Err(_) => return Vec::new(),
            },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let pulled = t
            .server
            .call::<req::DocumentDiagnosticRequest>(params, cx.cancel_token())
            .await;
        if let Ok(report) = pulled
            && let Some(Value::Array(items)) = report.get("items")
        {
            return items
                .iter()
                .filter_map(|item| serde_json::from_value(item.clone()).ok())
                .collect();
        }
    }
    let items = match t
        .server
        .diagnostics_within(&t.abs, t.server.timeout())
        .await
    {
        Some(items) => items,
        None => t.server.published_now(&t.abs),
    };
    items.iter().map(lsp::Diagnostic::from).collect()
}

/// One `textDocument/codeAction` request.
async fn ask(
    t: &Target,
    cx: &CallCx,
    range: lsp::Range,
    diagnostics: Vec<lsp::Diagnostic>,
    only: Option<Vec<lsp::CodeActionKind>>,
) -> Result<Vec<(Value, CodeAction)>, ToolError> {
    let params = lsp::CodeActionParams {
        text_document: protocol::document(&t.abs)?,
        range,
        context: lsp::CodeActionContext {
            diagnostics,
            only,
            trigger_kind: None,
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    Ok(t.server
        .call::<req::CodeActionRequest>(params, cx.cancel_token())
        .await?)
}

/// The numbered list `lsp_fix` refers to; each action names its server when two offered.
fn render(server: &str, head: &str, actions: &[Offered]) -> String {
    if actions.is_empty() {
        return format!("{server} offers no code action {head}");
    }
    let mut by: Vec<&str> = Vec::new();
    for a in actions {
        if !by.contains(&a.server.as_str()) {
            by.push(&a.server);
        }
    }
    let mut out = vec![format!(
        "code actions {head} ({} offered by {}; apply one with lsp_fix and its number):",
        actions.len(),
        by.join(" and ")
    )];
    for (n, offered) in actions.iter().enumerate().take(ACTIONS_CAP) {
        let action = &offered.action;
        let title = action.title.as_deref().unwrap_or("?");
        let kind = action
            .kind
            .as_ref()
            .map(|k| format!(" ({k})"))
            .unwrap_or_default();
        let preferred = if action.is_preferred {
            " [preferred]"
        } else {
            ""
        };
        let disabled = action
            .disabled
            .as_ref()
            .map(|d| format!(" [disabled: {}]", d.reason))
            .unwrap_or_default();
        let from = match by.len() {
            1 => String::new(),
            _ => format!(" [{}]", offered.server),
        };
        out.push(format!(
            "{}. {title}{kind}{preferred}{disabled}{from}",
            n + 1
        ));
    }
    if actions.len() > ACTIONS_CAP {
        out.push(format!(
            "… {} more not shown (cap {ACTIONS_CAP})",
            actions.len() - ACTIONS_CAP
        ));
    }
    out.join("\n")
}

/// Which listed action to apply: its number, or its title.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Pick {
    /// Its number in the listing, from 1.
    Number(#[schemars(range(min = 1))] usize),
    /// Its title, whole or a part only it has (any case).
    Title(String),
}

/// Arguments of `lsp_fix`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FixArgs {
    /// The file whose code actions `lsp` `code_actions` listed, relative to the workspace.
    #[serde(alias = "path", alias = "file_path")]
    file: String,
    /// The action: its number in that listing, or its title.
    action: Pick,
}

/// The `lsp_fix` tool.
pub struct LspFixTool {
    pub(crate) servers: Arc<crate::supervisor::Supervisor>,
    /// The servers run beside the chosen ones, whose actions a listing may hold too.
    pub(crate) beside: Option<Arc<crate::supervisor::Supervisor>>,
    pub(crate) listings: Arc<Listings>,
}

impl Tool for LspFixTool {
    type Args = FixArgs;

    fn name(&self) -> &'static str {
        "lsp_fix"
    }

    fn description(&self) -> String {
        "Apply one code action the language server offers (a quick fix, an import, a \
         refactoring): first list them with `lsp` `code_actions` (at a `line` and `symbol`, or \
         without a line for the fixes of every diagnostic in the file), then give `file` and \
         `action`, its number in that listing or its title. Its edits, and those its command \
         makes, are written all files or none, with the diagnostics they bring. A file changed \
         since the listing is refused with the current list."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &FixArgs) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &FixArgs) -> Preview {
        let which = match &args.action {
            Pick::Number(n) => format!("code action {n}"),
            Pick::Title(title) => format!("the code action `{title}`"),
        };
        Preview::new(
            format!("apply {which} listed for {}", args.file),
            vec![args.file.clone()],
        )
    }

    async fn call(&self, cx: &CallCx, args: FixArgs) -> Result<ToolOutput, ToolError> {
        let t = crate::tool::target(&self.servers, cx, &args.file).await?;
        let stale = {
            let listings = lock(&self.listings.by_file);
            let Some(listing) = listings.get(&t.abs) else {
                return Err(ToolError::invalid(format!(
                    "no code actions of {} were listed in this run: list them with `lsp` \
                     `code_actions` (`file`, and `line` and `symbol`, or no line for the fixes \
                     of every diagnostic), then give the number",
                    args.file
                )));
            };
            let current = listing.text_hash == tether_fs::hash_bytes(t.text.as_bytes())
                && listing.server == t.server.id;
            (!current).then(|| listing.asked.clone())
        };
        let beside = match &self.beside {
            Some(beside) => crate::tool::beside_target(beside, &t).await,
            None => None,
        };
        if let Some(asked) = stale {
            // Its numbers may name other actions now.
            let both = (&t, beside.as_ref());
            let fresh = list(&self.listings, both, cx, &args.file, asked).await?;
            return Err(ToolError::invalid(format!(
                "{} changed since its code actions were listed, so their numbers may not fit \
                 it: nothing was applied. The current list:\n{fresh}",
                args.file
            )));
        }
        // The listing stays: after this change its numbers are stale, and a second use is
        // refused with the list as it is then.
        let (server, raw) = self.pick(&t, &args.action)?;
        let by = match beside.as_ref() {
            Some(other) if other.server.id == server => other,
            _ if t.server.id == server => &t,
            _ => {
                return Err(ToolError::failed(format!(
                    "{server}, which offered that action, no longer serves {}: list the \
                     actions again",
                    args.file
                )));
            }
        };
        Ok(ToolOutput::text(apply(by, cx, raw).await?))
    }
}

impl LspFixTool {
    /// The listed action `pick` names, as the server sent it; or why none fits, with the list.
    fn pick(&self, t: &Target, pick: &Pick) -> Result<(String, Value), ToolError> {
        let listings = lock(&self.listings.by_file);
        let Some(listing) = listings.get(&t.abs) else {
            return Err(ToolError::invalid(
                "the listing is gone: list the actions again",
            ));
        };
        let shown = || render(&listing.server, &listing.head, &listing.actions);
        let title = |o: &Offered| o.action.title.clone().unwrap_or_default().to_lowercase();
        let chosen = |o: &Offered| (o.server.clone(), o.raw.clone());
        let found = match pick {
            Pick::Number(n) => match n.checked_sub(1).and_then(|i| listing.actions.get(i)) {
                Some(offered) => chosen(offered),
                None => {
                    return Err(ToolError::invalid(format!(
                        "there is no action {n}: the listing has {}. {}",
                        listing.actions.len(),
                        shown()
                    )));
                }
            },
            Pick::Title(wanted) => {
                let wanted = wanted.to_lowercase();
                let exact: Vec<&Offered> = (listing.actions.iter())
                    .filter(|o| title(o) == wanted)
                    .collect();
                let part: Vec<&Offered> = (listing.actions.iter())
                    .filter(|o| title(o).contains(&wanted))
                    .collect();
                match (exact.as_slice(), part.as_slice()) {
                    ([one, ..], _) | ([], [one]) => chosen(one),
                    ([], []) => {
                        return Err(ToolError::invalid(format!(
                            "no listed action's title has `{wanted}`. {}",
                            shown()
                        )));
                    }
                    ([], many) => {
                        return Err(ToolError::invalid(format!(
                            "{} listed actions have `{wanted}` in their title: give its number. \
                             {}",
                            many.len(),
                            shown()
                        )));
                    }
                }
            }
        };
        Ok(found)
    }
}

/// Applies the action the server sent as `raw`: resolved first when it comes without its
/// edit, then its edit and the edits its command sends back, as one change.
async fn apply(t: &Target, cx: &CallCx, raw: Value) -> Result<String, ToolError> {
    let server = &t.server;
    let mut action: CodeAction = protocol::read(raw.clone());
    let title = action.title.clone().unwrap_or_else(|| "?".into());
    if let Some(disabled) = &action.disabled {
        return Err(ToolError::invalid(format!(
            "{} offers `{title}` but says it cannot be applied now: {}; nothing was applied",
            server.id, disabled.reason
        )));
    }
    let resolves = server
        .capabilities
        .code_action_provider
        .options
        .resolve_provider;
    if action.edit.is_none() && resolves && !action.data.is_null() {
        let unresolved: lsp::CodeAction = serde_json::from_value(raw).map_err(|e| {
            ToolError::failed(format!(
                "{} sent a code action tether cannot read: {e}",
                server.id
            ))
        })?;
        let resolved = server
            .call::<req::CodeActionResolveRequest>(unresolved, cx.cancel_token())
            .await?;
        action = protocol::read(resolved);
    }
    let again = "List the actions again with `lsp` `code_actions`";
    let mut gathered = Gathered::default();
    if let Some(edit) = &action.edit {
        gathered.add(cx, server, edit, again).await?;
    }
    let mut how = String::new();
    if let Some(params) = command_of(&action) {
        let command = params.command.clone();
        how = format!(", by its command `{command}`");
        let run = server.call::<req::ExecuteCommand>(params, cx.cancel_token());
        gathering_edits(cx, server, run, &mut gathered, again)
            .await
            .map_err(|e| {
                ToolError::failed(format!("{}'s command `{command}` failed: {e}", server.id))
            })?;
    }
    if gathered.is_empty() {
        return Ok(format!(
            "`{title}` changed no file: {}{how} made no edit for it",
            server.id
        ));
    }
    let report = gathered.commit(cx, server).await?;
    Ok(format!(
        "applied `{title}` ({}{how}) in {}:\n{}",
        server.id,
        tether_tool::counted(report.len(), "file"),
        report.join("\n")
    ))
}

/// The command an action runs, if any: an action's `command` object, or a bare command's
/// method name and arguments.
fn command_of(action: &CodeAction) -> Option<lsp::ExecuteCommandParams> {
    let (name, arguments) = match &action.command {
        Value::String(name) => (name.clone(), action.arguments.clone()),
        Value::Object(object) => (
            object.get("command")?.as_str()?.to_string(),
            object.get("arguments").cloned().unwrap_or(Value::Null),
        ),
        _ => return None,
    };
    let arguments = match arguments {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        one => vec![one],
    };
    Some(lsp::ExecuteCommandParams {
        command: name,
        arguments,
        work_done_progress_params: Default::default(),
    })
}
