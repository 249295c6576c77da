//! A write hook that reports the syntax status of each file a write touched, from tree-sitter
//! alone: it counts the ERROR and MISSING nodes of each file before and after the write, keyed
//! by the kind of node that holds them, so an error that only moved or changed shape is not new.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tether_base::{cut_line, lock};
use tether_fs::{ChangeKind, FileReceipt, Workspace, WritePath};
use tether_tool::{Baseline, BoxFuture, FileReport, FileStatus, Finding, Proposed, WriteHook};

use crate::lang::{Lang, Tree};

/// The syntax-error write hook. Each write's baseline travels from `before` to its own
/// `after`, so overlapping writes never mix them up.
pub struct SyntaxCheck {
    /// Files are read beneath the workspace's descriptor, like every other read.
    workspace: Arc<Workspace>,
    /// The last text parsed per file: a file written again was parsed after the last write,
    /// and its baseline is that same text.
    parsed: Arc<Parsed>,
}

/// Problems per file, taken before a write.
type Before = HashMap<PathBuf, Vec<Finding>>;

/// What the last parses left: per file, the hash of the text last parsed and its problems,
/// and the trees of the files parsed last, from which a new text of the same file is parsed
/// reading only what changed (a one-line write to a 6,000-line C file cost 20 ms parsed whole).
#[derive(Default)]
struct Parsed {
    found: Mutex<HashMap<PathBuf, (u64, Vec<Finding>)>>,
    trees: Mutex<VecDeque<(PathBuf, Tree)>>,
}

/// Files whose last parse is kept, at most; past it the memory starts over.
const PARSED_KEPT: usize = 256;

/// Files whose last tree is kept, the most recently parsed.
const TREES_KEPT: usize = 8;

impl SyntaxCheck {
    /// A hook reading files of `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        SyntaxCheck {
            workspace,
            parsed: Arc::default(),
        }
    }
}

/// [`problems`] on a blocking thread, so a large parse never stalls the async runtime and the
/// hook's time budget can cut it off.
async fn problems_off_thread(
    ws: &Arc<Workspace>,
    parsed: &Arc<Parsed>,
    path: &Path,
) -> Option<Vec<Finding>> {
    let (ws, parsed, path) = (ws.clone(), parsed.clone(), path.to_path_buf());
    tokio::task::spawn_blocking(move || problems(&ws, &parsed, &path))
        .await
        .ok()
        .flatten()
}

/// [`written_problems`] on a blocking thread, like [`problems_off_thread`].
async fn written_off_thread(
    parsed: &Arc<Parsed>,
    path: &Path,
    bytes: Arc<[u8]>,
) -> Option<Vec<Finding>> {
    let (parsed, path) = (parsed.clone(), path.to_path_buf());
    tokio::task::spawn_blocking(move || written_problems(&parsed, &path, &bytes))
        .await
        .ok()
        .flatten()
}

/// [`problems_in`], unless `text` is the text last parsed for `path`.
fn problems_remembered(parsed: &Parsed, path: &Path, lang: Lang, text: &str) -> Vec<Finding> {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    let hash = hasher.finish();
    if let Some((_, found)) = lock_parsed(parsed).get(path).filter(|(h, _)| *h == hash) {
        return found.clone();
    }
    let (mut tree, again) = parse_again(parsed, path, lang, text);
    let mut found = problems_in(&tree);
    // Where a tree parsed again holds errors, a whole parse says where: recovery from an
    // error may take another shape when old parts of the tree are reused, and an error that
    // only moved must not read as new.
    if again && !found.is_empty() {
        tree = lang.parse(text);
        found = problems_in(&tree);
    }
    lock_parsed(parsed).insert(path.to_path_buf(), (hash, found.clone()));
    let mut trees = lock(&parsed.trees);
    trees.push_back((path.to_path_buf(), tree));
    if trees.len() > TREES_KEPT {
        trees.pop_front();
    }
    found
}

/// `text` parsed from the last tree of `path` when one is kept (true), else whole.
fn parse_again(parsed: &Parsed, path: &Path, lang: Lang, text: &str) -> (Tree, bool) {
    let kept = {
        let mut trees = lock(&parsed.trees);
        let at = trees.iter().position(|(p, _)| p == path);
        at.and_then(|i| trees.remove(i))
    };
    let again = kept.and_then(|(_, mut tree)| {
        let edit = change_between(tree.get_text(), text);
        tree.edit(edit).ok()?;
        (tree.get_text() == text).then_some(tree)
    });
    match again {
        Some(tree) => (tree, true),
        None => (lang.parse(text), false),
    }
}

/// The one span that turns `old` into `new`: what lies between their common start and end.
fn change_between(old: &str, new: &str) -> ast_grep_core::source::Edit<String> {
    let (old, new) = (old.as_bytes(), new.as_bytes());
    let start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - start;
    let end = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    ast_grep_core::source::Edit {
        position: start,
        deleted_length: old.len() - start - end,
        inserted_text: new[start..new.len() - end].to_vec(),
    }
}

/// The memory of last parses, started over once it holds [`PARSED_KEPT`] files.
fn lock_parsed(
    parsed: &Parsed,
) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (u64, Vec<Finding>)>> {
    let mut map = lock(&parsed.found);
    if map.len() > PARSED_KEPT {
        map.clear();
    }
    map
}

/// The problems of a file on disk (the baseline), or None if it is not a bundled language, not
/// readable text, or larger than structural search reads.
fn problems(ws: &Workspace, parsed: &Parsed, path: &Path) -> Option<Vec<Finding>> {
    let lang = Lang::from_path(path)?;
    let file = ws.open_read(path).ok()?;
    if file.metadata().ok()?.len() > crate::search::MAX_FILE_BYTES {
        return None;
    }
    let mut text = String::new();
    (&file).read_to_string(&mut text).ok()?;
    Some(problems_remembered(parsed, path, lang, &text))
}

/// The problems of the bytes a write left at `path` (its receipt's), by the same rules as
/// [`problems`]: the file is not read again, since it may have changed since.
fn written_problems(parsed: &Parsed, path: &Path, bytes: &[u8]) -> Option<Vec<Finding>> {
    let lang = Lang::from_path(path)?;
    if bytes.len() as u64 > crate::search::MAX_FILE_BYTES {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    Some(problems_remembered(parsed, path, lang, text))
}

/// The outermost ERROR and MISSING nodes of `tree`, each keyed by its parent's kind.
fn problems_in(tree: &Tree) -> Vec<Finding> {
    let root = tree.root();
    if !root.get_inner_node().has_error() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let key = || {
            let parent = node.get_inner_node().parent();
            parent.map_or("file", |p| p.kind()).to_string()
        };
        if node.is_missing() {
            out.push(Finding {
                line: node.start_pos().line() + 1,
                text: format!("missing `{}`", node.kind()),
                key: key(),
                class: "syntax error".into(),
            });
        } else if node.is_error() {
            let text = node.text();
            let first = text.lines().next().unwrap_or("").trim().to_string();
            out.push(Finding {
                line: node.start_pos().line() + 1,
                text: format!("syntax error at `{}`", cut_line(&first, 80)),
                key: key(),
                class: "syntax error".into(),
            });
        } else if node.get_inner_node().has_error() {
            let mut children: Vec<_> = node.children().collect();
            children.reverse();
            stack.extend(children);
        }
    }
    out
}

impl WriteHook for SyntaxCheck {
    fn name(&self) -> &str {
        "syntax check (tree-sitter)"
    }

    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            let mut seen = Before::new();
            for path in paths {
                if Lang::from_path(path.abs()).is_none() {
                    continue;
                }
                let found = problems_off_thread(&self.workspace, &self.parsed, path.abs())
                    .await
                    .unwrap_or_default();
                seen.insert(path.abs().to_path_buf(), found);
            }
            Box::new(seen) as Baseline
        })
    }

    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let mut before = baseline.and_then(|b| b.downcast::<Before>().ok());
            let mut reports = Vec::new();
            for receipt in receipts {
                let abs = receipt.path.abs();
                let mut old = before
                    .as_mut()
                    .and_then(|b| b.remove(abs))
                    .unwrap_or_default();
                // A moved file keeps the problems it had under its old name.
                if let ChangeKind::Renamed { from } = &receipt.kind {
                    old.extend(
                        before
                            .as_mut()
                            .and_then(|b| b.remove(from.abs()))
                            .unwrap_or_default(),
                    );
                }
                let Some(bytes) = receipt.content.clone() else {
                    continue;
                };
                let config = tether_fs::is_config_file(abs);
                if config && Lang::from_path(abs).is_none() {
                    reports.push(FileReport {
                        path: receipt.path.rel().to_string(),
                        scope: tether_tool::ReportScope::Changed,
                        source: tether_tool::ReportSource::hook(self.name()),
                        noun: "syntax error".into(),
                        status: FileStatus::Unavailable {
                            why: "tether has no grammar for this kind of file, so its syntax \
                                  was not checked"
                                .into(),
                            now: Vec::new(),
                        },
                    });
                    continue;
                }
                let Some(now) = written_off_thread(&self.parsed, abs, bytes).await else {
                    continue;
                };
                let status = match &before {
                    // No language server checks a configuration file: that its syntax is
                    // sound is said, not left to be inferred from silence.
                    Some(_) if config && old.is_empty() && now.is_empty() => FileStatus::Clean,
                    Some(_) => FileStatus::compare(&old, now),
                    None if now.is_empty() => continue,
                    None => FileStatus::Unavailable {
                        why: "no baseline was taken in time".into(),
                        now,
                    },
                };
                reports.push(FileReport {
                    path: receipt.path.rel().to_string(),
                    scope: tether_tool::ReportScope::Changed,
                    source: tether_tool::ReportSource::hook(self.name()),
                    noun: "syntax error".into(),
                    status,
                });
            }
            reports
        })
    }

    fn preview<'a>(&'a self, changes: &'a [Proposed]) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            let mut reports = Vec::new();
            for change in changes.iter().filter(|c| !c.deleted) {
                let abs = change.path.abs();
                let Some(text) = &change.text else { continue };
                if Lang::from_path(abs).is_none() {
                    continue;
                }
                let old = problems_off_thread(&self.workspace, &self.parsed, abs)
                    .await
                    .unwrap_or_default();
                let bytes: Arc<[u8]> = text.as_bytes().into();
                let Some(now) = written_off_thread(&self.parsed, abs, bytes).await else {
                    continue;
                };
                reports.push(FileReport {
                    path: change.path.rel().to_string(),
                    scope: tether_tool::ReportScope::Changed,
                    source: tether_tool::ReportSource::hook(self.name()),
                    noun: "syntax error".into(),
                    status: FileStatus::compare(&old, now),
                });
            }
            reports
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text parsed before gives its problems without a parse; any other text is parsed,
    /// so a file's last problems never stand for a new text.
    #[test]
    fn a_remembered_parse_is_used_only_for_the_same_text() {
        let parsed = Parsed::default();
        let path = Path::new("/w/a.py");
        let lang = Lang::from_path(path).expect("python");
        let broken = "def f(:\n    return 1\n";
        let first = problems_remembered(&parsed, path, lang, broken);
        assert_eq!(first.len(), 1, "{first:?}");
        assert_eq!(problems_remembered(&parsed, path, lang, broken), first);
        let fixed = "def f():\n    return 1\n";
        assert!(problems_remembered(&parsed, path, lang, fixed).is_empty());
        assert_eq!(problems_remembered(&parsed, path, lang, broken), first);
        // Another file with the same text is its own entry.
        let other = Path::new("/w/b.py");
        assert_eq!(problems_remembered(&parsed, other, lang, broken), first);
        assert_eq!(lock(&parsed.found).len(), 2);
    }

    /// A file written again is parsed from its last tree, and every text's problems are
    /// those a whole parse finds, errors coming and going included.
    #[test]
    fn a_file_parsed_again_from_its_tree_has_the_problems_of_a_whole_parse() {
        let parsed = Parsed::default();
        let path = Path::new("/w/inode.c");
        let lang = Lang::from_path(path).expect("c");
        let body: String = (0..400)
            .map(|i| format!("static int f{i}(int x)\n{{\n\treturn x + {i};\n}}\n\n"))
            .collect();
        let texts = [
            body.clone(),
            body.replacen("return x + 7;", "return x + 7; /* é */", 1),
            body.replacen("return x + 9;", "return x + ;", 1),
            body.replacen("return x + 9;", "return (x + 9;", 1),
            body.replacen(
                "{\n\treturn x + 300;",
                "{\n\treturn x + 300;\n\tint y = 2;",
                1,
            ),
            format!("/* head */\n{body}int tail;\n"),
            String::new(),
            body.clone(),
        ];
        let kept = |parsed: &Parsed| {
            let trees = lock(&parsed.trees);
            trees
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, t)| t.get_text().to_string())
        };
        for (i, text) in texts.iter().enumerate() {
            if i > 0 {
                assert_eq!(kept(&parsed).as_ref(), Some(&texts[i - 1]), "text {i}");
            }
            let whole = problems_in(&lang.parse(text));
            assert_eq!(
                problems_remembered(&parsed, path, lang, text),
                whole,
                "text {i}"
            );
            assert_eq!(kept(&parsed).as_ref(), Some(text));
        }
        assert!(!problems_in(&lang.parse(&texts[2])).is_empty());
        let (tree, again) = parse_again(&parsed, path, lang, &texts[1]);
        assert!(again && tree.get_text() == texts[1]);
    }

    #[test]
    fn the_change_between_two_texts_is_the_span_they_do_not_share() {
        let edit = change_between("abcXYdef", "abcZdef");
        assert_eq!((edit.position, edit.deleted_length), (3, 2));
        assert_eq!(edit.inserted_text, b"Z");
        let edit = change_between("aaa", "aaaa");
        assert_eq!(
            (edit.position, edit.deleted_length, edit.inserted_text.len()),
            (3, 0, 1)
        );
        let edit = change_between("same", "same");
        assert_eq!((edit.deleted_length, edit.inserted_text.len()), (0, 0));
    }
}
