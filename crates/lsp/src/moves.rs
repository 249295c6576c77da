//! `lsp_rename` with `to_path`: a file moves, and the edits its server says the files that
//! import it need (`workspace/willRenameFiles`) are part of the same all-or-nothing change.
//! Where the server offers none, or renames only what it knows of, the uses of the old module
//! name left are searched as a symbol rename's are.

use std::path::Path;
use std::sync::Arc;

use lsp_types as lsp;
use lsp_types::request as req;
use tether_tool::{CallCx, ToolError, counted};

use crate::edits::{Gathered, gathering_edits};
use crate::supervisor::Supervisor;

/// Moves `file` to `to_path` with the edits its server computes for the move; the result's
/// text.
pub(crate) async fn move_file(
    servers: &Arc<Supervisor>,
    cx: &CallCx,
    file: &str,
    to_path: &str,
) -> Result<String, ToolError> {
    let t = crate::tool::target(servers, cx, file).await?;
    let to_rel = cx.workspace().resolve_write(to_path)?;
    let to = to_rel.abs().to_path_buf();
    if to == t.abs {
        return Err(ToolError::invalid(format!(
            "{file} is at {to_path} already: give the path it should move to"
        )));
    }
    if std::fs::symlink_metadata(&to).is_ok() {
        return Err(ToolError::invalid(format!(
            "{to_path} exists: a move never overwrites; pick a free path, or remove that file \
             first"
        )));
    }
    let config = servers.config();
    let (from_lang, to_lang) = (config.language_of(&t.abs), config.language_of(&to));
    if from_lang != to_lang {
        return Err(ToolError::invalid(format!(
            "moving {file} to {to_path} would change its language ({} to {}), which its server \
             cannot follow: keep its extension, or write the new file and delete the old one",
            from_lang.unwrap_or("none"),
            to_lang.unwrap_or("none")
        )));
    }
    let server = &t.server;
    let again = "Run lsp_rename again";
    let mut gathered = Gathered::default();
    gathered
        .move_file(cx, server, t.abs.clone(), to.clone())
        .await?;
    let offers = (server
        .capabilities
        .workspace
        .file_operations
        .will_rename
        .as_ref())
    .is_some_and(|filters| filters.cover(&t.abs, false));
    if offers {
        let params = lsp::RenameFilesParams {
            files: vec![lsp::FileRename {
                old_uri: crate::server::file_uri(&t.abs),
                new_uri: crate::server::file_uri(&to),
            }],
        };
        let ask = server.call::<req::WillRenameFiles>(params, cx.cancel_token());
        let edit = gathering_edits(cx, server, ask, &mut gathered, again).await?;
        gathered.add(cx, server, &edit, again).await?;
    }
    let report = gathered.commit(cx, server).await?;
    let others = report.len().saturating_sub(1);
    let mut head = format!("moved {file} to {}", to_rel.rel());
    match (offers, others) {
        (false, _) => head.push_str(&format!(
            " ({} offers no edits for a moved file, so no file that imports it was changed)",
            server.id
        )),
        (true, 0) => head.push_str(&format!(" ({} found no file to change for it)", server.id)),
        (true, n) => head.push_str(&format!(
            " ({} updated the uses of it in {})",
            server.id,
            counted(n, "other file")
        )),
    }
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    let left = match (from_lang, stem(&t.abs), stem(&to)) {
        (Some(lang), Some(old), Some(new)) if old != new => {
            // Each report line is `path: N edits`; a moved file's names both places.
            let edited: Vec<&str> = report
                .iter()
                .filter_map(|line| Some(line.rsplit_once(": ")?.0))
                .collect();
            let found =
                crate::leftovers::report(cx, servers, lang, &old, &edited, "the moved module")
                    .await;
            if let Some(summary) = found.summary {
                head.push_str(&format!("; {summary}"));
            }
            format!("\n{}", found.section)
        }
        (_, Some(old), _) => format!(
            "\nits module name `{old}` did not change, so its uses were not searched: an \
             import naming its old folder shows in the diagnostics below"
        ),
        _ => String::new(),
    };
    Ok(format!("{head}:\n{}{left}", report.join("\n")))
}
