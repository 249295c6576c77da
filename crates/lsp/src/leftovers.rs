//! What a rename left behind: the server decides which files it renames (pyright only those of
//! its project's `include`), so after it the old name is searched as an identifier with
//! `ast_grep`, through the dispatch seam, and each use left is shown with its line and its
//! file's diagnostics, so the model can finish the rename without asking again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use serde_json::json;
use tether_tool::{CallCx, counted};

use crate::supervisor::Supervisor;
use tether_base::cut_line;

/// Lines of uses left shown before the list is cut.
const LINES_SHOWN: usize = 30;
/// Files whose diagnostics are shown; more would make the result longer than it helps.
const FILES_DIAGNOSED: usize = 5;
/// Diagnostics shown per file.
const DIAGNOSTICS_SHOWN: usize = 10;
/// Characters of a shown line before it is cut.
const LINE_CHARS: usize = 300;

/// Uses of the old name found by one search: the places shown (workspace-relative path,
/// 1-based line) and how many matches there were in all.
#[derive(Debug, Default, PartialEq)]
struct Found {
    places: Vec<(String, usize)>,
    total: usize,
}

/// Reads `ast_grep`'s text for a bare identifier `old`: a `N matches in M files` header, then
/// one `path:line old` row per match (its excerpt is the identifier itself, which keeps a
/// path with colons or spaces unambiguous); anything else is a footer.
fn parse(text: &str, old: &str) -> Found {
    let mut lines = text.lines();
    let total = lines
        .next()
        .and_then(|head| head.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let tail = format!(" {old}");
    let places = lines
        .filter_map(|row| {
            let (path, line) = row.strip_suffix(&tail)?.rsplit_once(':')?;
            Some((path.to_string(), line.parse().ok()?))
        })
        .collect();
    Found { places, total }
}

/// What the rename left, for its result.
pub(crate) struct Left {
    /// A few words for the result's first line when uses are left.
    pub(crate) summary: Option<String>,
    /// The uses left with their lines and their files' diagnostics, or what was checked.
    pub(crate) section: String,
}

/// Searches files of `lang` for every identifier `old` left after the rename: each as
/// `path:line  | text`, then those files' diagnostics now; or a line saying none is left.
/// `edited` names the files the server changed, where a name it left is more likely another
/// symbol's.
pub(crate) async fn report(
    cx: &CallCx,
    servers: &Supervisor,
    lang: &str,
    old: &str,
    edited: &[&str],
    subject: &str,
) -> Left {
    // A `$` would make the pattern a metavariable; such a name is not searched.
    // The grammars differ, the server does not: a TypeScript rename reaches JavaScript too.
    let grammars = servers
        .config()
        .language(lang)
        .map(|l| l.grammars.clone())
        .unwrap_or_default();
    if old.contains('$') || grammars.is_empty() {
        return Left {
            summary: None,
            section: format!("(uses of `{old}` the server may have left were not searched)"),
        };
    }
    let mut found = Found::default();
    let mut failed = Vec::new();
    for grammar in &grammars {
        let args = json!({"pattern": old, "path": ".", "language": grammar, "max_results": 1000});
        match cx.dispatch("ast_grep", args).await {
            Ok(out) => {
                let one = parse(&out.to_text(), old);
                found.total += one.total;
                found.places.extend(one.places);
            }
            Err(e) => failed.push(format!("{grammar}: {e}")),
        }
    }
    let searched = grammars.join("/");
    let mut out = Vec::new();
    if !failed.is_empty() {
        out.push(format!(
            "the search for uses of `{old}` the server left failed ({}); check with ast_grep",
            failed.join("; ")
        ));
    }
    if found.total == 0 {
        if failed.is_empty() {
            out.push(format!(
                "checked: no `{old}` left as a name (of a value, type or field) in the \
                 workspace's {searched} files"
            ));
        }
        return Left {
            summary: None,
            section: out.join("\n"),
        };
    }
    let mut by_file: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (path, line) in &found.places {
        by_file.entry(path.clone()).or_default().insert(*line);
    }
    let summary = format!(
        "NOT in every file: `{old}` is still used {} in {}, listed below",
        counted(found.total, "time"),
        counted(by_file.len(), "file")
    );
    out.push(format!(
        "not renamed by the server: `{old}` is still an identifier at these places in \
         {searched} files (comments and strings not counted). The server renames only the \
         files it knows of; a use of {subject} here is now broken, so rename it too \
         (another symbol of the same name stays as it is):"
    ));
    out.push(shown_lines(cx, &by_file, found.total).await);
    let renamed_in: Vec<&str> = by_file
        .keys()
        .map(String::as_str)
        .filter(|f| edited.contains(f))
        .collect();
    if !renamed_in.is_empty() {
        out.push(format!(
            "(the server renamed other uses in {}, so what it left there is more likely \
             another symbol of the same name)",
            renamed_in.join(", ")
        ));
    }
    out.push(diagnostics(cx, servers, lang, by_file.keys()).await);
    Left {
        summary: Some(summary),
        section: out.join("\n"),
    }
}

/// `path:line  | text` for each place, at most [`LINES_SHOWN`], with a count of the rest.
async fn shown_lines(
    cx: &CallCx,
    by_file: &BTreeMap<String, BTreeSet<usize>>,
    total: usize,
) -> String {
    let root = cx.workspace().root().to_path_buf();
    let wanted: HashMap<PathBuf, BTreeSet<usize>> = by_file
        .iter()
        .map(|(rel, lines)| (root.join(rel), lines.iter().map(|n| n - 1).collect()))
        .collect();
    let texts = crate::named::lines(cx.workspace(), wanted).await;
    let mut rows = Vec::new();
    let mut places = 0;
    for (rel, lines) in by_file {
        for n in lines {
            places += 1;
            if rows.len() == LINES_SHOWN {
                continue;
            }
            let row = match texts.get(&root.join(rel)) {
                Some(Ok(got)) => match got.get(&(n - 1)) {
                    Some(text) => format!("{rel}:{n}  | {}", cut_line(text.trim(), LINE_CHARS)),
                    None => format!("{rel}:{n}  (the line is gone: not shown)"),
                },
                Some(Err(why)) => format!("{rel}:{n}  ({why}: not shown)"),
                None => format!("{rel}:{n}  (not read: not shown)"),
            };
            rows.push(row);
        }
    }
    if places > rows.len() {
        rows.push(format!(
            "… {} more lines not shown ({} uses in all); ast_grep lists them",
            places - rows.len(),
            total
        ));
    }
    rows.join("\n")
}

/// The diagnostics the server gives now for the first [`FILES_DIAGNOSED`] files: the rename
/// did not write them, so no write reports them.
async fn diagnostics<'a>(
    cx: &CallCx,
    servers: &Supervisor,
    lang: &str,
    files: impl Iterator<Item = &'a String>,
) -> String {
    let files: Vec<&String> = files.collect();
    let mut out = vec!["diagnostics of those files now:".to_string()];
    for rel in files.iter().take(FILES_DIAGNOSED) {
        out.push(one_file(cx, servers, lang, rel).await);
    }
    if files.len() > FILES_DIAGNOSED {
        out.push(format!(
            "… {} more files not checked; ask lsp diagnostics for each",
            files.len() - FILES_DIAGNOSED
        ));
    }
    out.join("\n")
}

/// One file's diagnostics, or why there are none to show.
async fn one_file(cx: &CallCx, servers: &Supervisor, lang: &str, rel: &str) -> String {
    let abs = cx.workspace().root().join(rel);
    let text = match crate::named::read(cx.workspace(), &abs).await {
        Ok(text) => text,
        Err(why) => return format!("{rel}: not checked ({why})"),
    };
    let server = match servers.server_for(lang, &abs).await {
        Ok(server) => server,
        Err(why) => return format!("{rel}: not checked ({why})"),
    };
    if let Err(why) = server.sync(&abs, &text).await {
        return format!("{rel}: not checked ({why})");
    }
    // A file the change created or deleted (a move) is news to a server that lists the
    // project's files: asked before its new listing, it answers as if the move had not been.
    server.listing_awaited().await;
    match server.diagnostics_within(&abs, server.timeout()).await {
        Some(items) => crate::render::diagnostics(rel, &items, DIAGNOSTICS_SHOWN),
        None => format!(
            "{rel}: {} gave no diagnostics within {} s; ask lsp diagnostics",
            server.id,
            server.timeout().as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_read_by_the_identifier_they_end_with() {
        let text = "4 matches in 2 files\na b:c.py:1 total\ntests/t.py:5 total\ntests/t.py:9 total\n\
                    … showing the first 3 of 4 matches (in 2 files); narrow `path`\n\
                    searched 2 python files under . (0 ruled out)\n";
        let found = parse(text, "total");
        assert_eq!(found.total, 4);
        assert_eq!(
            found.places,
            vec![
                ("a b:c.py".to_string(), 1),
                ("tests/t.py".to_string(), 5),
                ("tests/t.py".to_string(), 9)
            ]
        );
        assert_eq!(
            parse("0 matches\nsearched 0 files\n", "total"),
            Found::default()
        );
    }
}
