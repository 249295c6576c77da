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
    dry_run: bool,
) -> Result<String, ToolError> {
    if cx.workspace().resolve_read(file)?.is_dir() {
        return Err(ToolError::invalid(format!(
            "{file} is a folder: `to_path` moves one file at a time, so move its files one by \
             one (each with the edits its importers need)"
        )));
    }
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
    let (staged, report): (Option<String>, _) = match dry_run {
        true => {
            let summary = |report: &[String]| format!("move {file}: {}", report.join(", "));
            let (staged, report) = gathered.stage(cx, "lsp_rename", summary).await?;
            (Some(staged), report)
        }
        false => (None, gathered.commit(cx, server).await?),
    };
    let others = report.len().saturating_sub(1);
    let mut head = match &staged {
        Some(_) => format!("the move of {file} to {}", to_rel.rel()),
        None => format!("moved {file} to {}", to_rel.rel()),
    };
    let (changed, updated) = match staged {
        Some(_) => ("would be changed", "would update"),
        None => ("was changed", "updated"),
    };
    match (offers, others) {
        (false, _) => head.push_str(&format!(
            " ({} offers no edits for a moved file, so no file that imports it {changed})",
            server.id
        )),
        (true, 0) => head.push_str(&format!(" ({} found no file to change for it)", server.id)),
        (true, n) => head.push_str(&format!(
            " ({} {updated} the uses of it in {})",
            server.id,
            counted(n, "other file")
        )),
    }
    let stem = |p: &Path| p.file_stem().map(|s| s.to_string_lossy().into_owned());
    // Imports that name a file in a string (TypeScript, C's `#include`, Go) are not names,
    // which the search below looks for: they are looked for as text.
    // (A file that keeps its name is not searched: the imports the server updated name it too.)
    let named = match (stem(&t.abs), stem(&to)) {
        (Some(old), Some(new)) if old != new => {
            let extensions: Vec<String> = (config.languages.values())
                .filter(|l| l.servers.contains(&server.id))
                .flat_map(|l| l.extensions.clone())
                .collect();
            let (root, moved) = (cx.workspace().root().to_path_buf(), to.clone());
            let ask = move || in_strings(&root, &extensions, &old, &moved);
            tokio::task::spawn_blocking(ask).await.unwrap_or_default()
        }
        _ => Vec::new(),
    };
    if !named.is_empty() {
        head.push_str(&format!(
            "; NOT every import: {} may still name the old file in a string, listed below",
            counted(named.len(), "line")
        ));
    }
    let named = match named.is_empty() {
        true => String::new(),
        false => format!(
            "\nlines that may still import the old file by its name in a string (the server did \
             not change them; an import of it here is now broken, so point it at {}):\n{}",
            to_rel.rel(),
            named.join("\n")
        ),
    };
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
    let done = format!("{head}:\n{}{left}{named}", report.join("\n"));
    Ok(match staged {
        Some(staged) => format!("{staged}\n\n{done}"),
        None => done,
    })
}

/// Files searched for string imports at most, and lines listed.
const FILES_SEARCHED: usize = 20_000;
const LINES_LISTED: usize = 30;

/// Lines of the workspace's files with one of `extensions` (never `moved`, the file at its new
/// place) where `stem` is a whole word inside a quoted string or `<...>`: the imports that may
/// still name the old file, as `path:line  | text`.
fn in_strings(root: &Path, extensions: &[String], stem: &str, moved: &Path) -> Vec<String> {
    let wanted = |p: &Path| {
        p.extension().is_some_and(|e| {
            extensions
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x.as_str()))
        })
    };
    let files = ignore::WalkBuilder::new(root)
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| wanted(p) && p != moved)
        .take(FILES_SEARCHED);
    let mut found = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for (n, line) in text.lines().enumerate() {
            if quoted_word(line, stem) {
                let shown: String = line.trim().chars().take(200).collect();
                found.push(format!("{rel}:{}  | {shown}", n + 1));
                if found.len() == LINES_LISTED {
                    return found;
                }
            }
        }
    }
    found
}

/// Whether `word` stands whole in `line` inside a quoted string or `<...>`.
fn quoted_word(line: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + word.len()..].chars().next();
        if before.is_some_and(is_word) || after.is_some_and(is_word) {
            return false;
        }
        let head = &line[..at];
        let open = |c: char| head.matches(c).count() % 2 == 1;
        open('"') || open('\'') || open('`') || head.rfind('<') > head.rfind('>')
    })
}

#[cfg(test)]
mod tests {
    use super::quoted_word;

    #[test]
    fn a_module_name_counts_only_whole_and_inside_a_string() {
        assert!(quoted_word("import { a } from \"./paths\";", "paths"));
        assert!(quoted_word("#include \"utils.h\"", "utils"));
        assert!(quoted_word("#include <lib/utils.h>", "utils"));
        assert!(quoted_word("const m = require('../paths')", "paths"));
        assert!(!quoted_word("import { paths } from \"./other\";", "paths"));
        assert!(!quoted_word("const s = \"my_paths\";", "paths"));
        assert!(!quoted_word("let x = paths.join(a);", "paths"));
    }
}
