//! `lsp_rename`: the server's rename, applied to every file it touches in one all-or-nothing
//! write, against the text the server saw; an edit computed on a stale copy is refused. The
//! server decides which files it touches, so what it left is searched for afterwards.

use std::sync::Arc;

use lsp_types as lsp;
use lsp_types::request::{PrepareRenameRequest, Rename};
use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput, counted};

use crate::edits::{Gathered, gathering_edits};
use crate::leftovers;
use crate::position::locate_line;
use crate::protocol;
use crate::supervisor::Supervisor;

/// Arguments of `lsp_rename`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameArgs {
    /// The file, relative to the workspace.
    #[serde(alias = "path", alias = "file_path")]
    file: String,
    /// 1-based line of the symbol (a symbol rename).
    #[schemars(range(min = 1))]
    line: Option<usize>,
    /// Text naming the symbol on that line (`name#2` for the second occurrence).
    symbol: Option<String>,
    /// The symbol's new name.
    new_name: Option<String>,
    /// Instead of a symbol: where the file moves to, relative to the workspace; the files
    /// that import it are updated as its server says.
    to_path: Option<String>,
    /// Stage the change instead of writing it: the result shows each file's diff and the new
    /// problems the servers find in the proposed text, and `resolve` with the edit_id it
    /// gives writes or drops it. Default false.
    #[serde(default)]
    dry_run: bool,
}

/// What an `lsp_rename` call asks for.
enum Wanted<'a> {
    Symbol {
        line: usize,
        symbol: &'a str,
        new_name: &'a str,
    },
    Move {
        to_path: &'a str,
    },
}

impl RenameArgs {
    /// A symbol rename (`line`, `symbol`, `new_name`) or a move (`to_path`), never both.
    fn wanted(&self) -> Result<Wanted<'_>, ToolError> {
        match (&self.line, &self.symbol, &self.new_name, &self.to_path) {
            (None, None, None, Some(to_path)) => Ok(Wanted::Move { to_path }),
            (Some(_), _, _, Some(_)) | (_, Some(_), _, Some(_)) | (_, _, Some(_), Some(_)) => {
                Err(ToolError::invalid(
                    "give `to_path` to move the file, or `line`, `symbol` and `new_name` to \
                     rename a symbol in it, not both",
                ))
            }
            (Some(0), _, _, None) => {
                Err(ToolError::invalid("`line` is 1-based: the first line is 1"))
            }
            (Some(line), Some(symbol), Some(new_name), None) => Ok(Wanted::Symbol {
                line: *line,
                symbol,
                new_name,
            }),
            _ => Err(ToolError::invalid(
                "a symbol rename needs `line`, `symbol` and `new_name`; to move the file \
                 instead, give `to_path` alone",
            )),
        }
    }
}

/// The `lsp_rename` tool.
pub struct LspRenameTool {
    pub(crate) servers: Arc<Supervisor>,
}

impl Tool for LspRenameTool {
    type Args = RenameArgs;

    fn name(&self) -> &'static str {
        "lsp_rename"
    }

    fn description(&self) -> String {
        "Project-wide rename through the language server: the symbol named by `file`, 1-based \
         `line` and `symbol` becomes `new_name` in the files the server finds (it may miss \
         some, e.g. pyright skips files outside its project's `include`); its edits are \
         written all or nothing. Reports the files changed and the edits in each, then every \
         use of the old name still left in files of that language (identifiers, not comments \
         or strings) with its line and its file's diagnostics. With `to_path` instead, the \
         file moves there and the server's edits to the files that import it (where it offers \
         them) are part of the same change; the uses of its old module name left are listed. \
         `dry_run` stages either instead, with each file's diff and what it would bring, for \
         `resolve`."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &RenameArgs) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &RenameArgs) -> Preview {
        let summary = match args.wanted() {
            Ok(Wanted::Move { to_path }) => format!(
                "move {} to {to_path}, with the edits its importers need",
                args.file
            ),
            _ => format!(
                "rename `{}` to `{}` wherever the server finds it",
                args.symbol.as_deref().unwrap_or("?"),
                args.new_name.as_deref().unwrap_or("?")
            ),
        };
        Preview::new(summary, vec![args.file.clone()])
    }

    async fn call(&self, cx: &CallCx, args: RenameArgs) -> Result<ToolOutput, ToolError> {
        let (line_no, symbol, new_name) = match args.wanted()? {
            Wanted::Move { to_path } => {
                let text =
                    crate::moves::move_file(&self.servers, cx, &args.file, to_path, args.dry_run)
                        .await?;
                return Ok(ToolOutput::text(text));
            }
            Wanted::Symbol {
                line,
                symbol,
                new_name,
            } => (line, symbol, new_name),
        };
        let t = crate::tool::target(&self.servers, cx, &args.file).await?;
        let lines: Vec<&str> = t.text.lines().collect();
        let (line, byte, ident) = locate_line(&args.file, &lines, line_no, symbol)?;
        // A rename writes: a name that is only part of the identifier it lands on is refused.
        if let Some(typed) = crate::position::typed_name(symbol).filter(|t| *t != ident) {
            return Err(ToolError::invalid(format!(
                "`{typed}` is not a whole name on line {}: it is part of `{ident}`; to rename \
                 that, give `symbol: \"{ident}\"`",
                line_no
            )));
        }
        let server = &t.server;
        let at = protocol::at(&t.abs, line_no - 1, server.encoding.column(line, byte))?;
        let can_prepare = server.capabilities.rename_provider.options.prepare_provider;
        if can_prepare {
            let ok = server
                .call::<PrepareRenameRequest>(at.clone(), cx.cancel_token())
                .await?;
            if ok.is_null() {
                return Err(ToolError::invalid(format!(
                    "{} cannot rename `{ident}` at {}:{} (not a renameable symbol there)",
                    server.id, args.file, line_no
                )));
            }
        }
        // A server whose queries search every file once it has listed them is given the
        // moment that takes (pyright: about a second); one still indexing renames the uses it
        // has reached: said beside the count, so the leftovers below are read as likely.
        server.listing_awaited().await;
        let indexing = match server.searches_whole_project() {
            true => None,
            false => match server.state().await {
                crate::server::State::Indexing(pct) => Some(pct),
                _ => None,
            },
        };
        let params = lsp::RenameParams {
            text_document_position: at,
            new_name: new_name.to_string(),
            work_done_progress_params: Default::default(),
        };
        let rename = server.call::<Rename>(params, cx.cancel_token());
        // Its answer and any edit it sends meanwhile make one change.
        let mut gathered = Gathered::default();
        let again = "Run lsp_rename again";
        let edit = gathering_edits(cx, server, rename, &mut gathered, again).await?;
        gathered.add(cx, server, &edit, again).await?;
        if gathered.is_empty() {
            return Err(ToolError::invalid(format!(
                "{} returned no edits for renaming `{ident}`",
                server.id
            )));
        }
        let (staged, report) = match args.dry_run {
            true => {
                let summary = |report: &[String]| {
                    format!("rename `{ident}` to `{new_name}`: {}", report.join(", "))
                };
                let (staged, report) = gathered.stage(cx, "lsp_rename", summary).await?;
                (Some(staged), report)
            }
            false => (None, gathered.commit(cx, server).await?),
        };
        let mut head = match &staged {
            Some(staged) => staged.clone(),
            None => format!(
                "renamed `{ident}` to `{}` in {}",
                new_name,
                counted(report.len(), "file")
            ),
        };
        if let Some(pct) = indexing {
            head.push_str(&format!(
                " ({} was still indexing{} when it renamed, so it may have missed uses it had \
                 not reached: check the search for leftovers below, or rename again once `lsp \
                 status` says it is ready)",
                server.id,
                pct.map_or(String::new(), |p| format!(" ({p}%)"))
            ));
        }
        // The server picks the files; what it left is searched, unless the name did not change.
        let mut left = String::new();
        if let (Some(lang), true) = (self.servers.config().language_of(&t.abs), ident != new_name) {
            // Each report line is `path: N edits`, as a gathered change's commit writes it.
            let edited: Vec<&str> = report
                .iter()
                .filter_map(|line| Some(line.rsplit_once(": ")?.0))
                .collect();
            let found = leftovers::report(
                cx,
                &self.servers,
                lang,
                &ident,
                &edited,
                "the renamed symbol",
            )
            .await;
            if let Some(summary) = found.summary {
                head.push_str(&match staged {
                    Some(_) => format!("\n{} chose the files; {summary}", server.id),
                    None => format!(" ({} chose them; {summary})", server.id),
                });
            }
            left = format!("\n{}", found.section);
        }
        Ok(ToolOutput::text(match staged {
            Some(_) => format!("{head}{left}"),
            None => format!("{head}:\n{}{left}", report.join("\n")),
        }))
    }
}
