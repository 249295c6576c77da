//! A write hook that reports syntax errors a write introduced, from tree-sitter alone: it
//! compares the ERROR and MISSING nodes of each file before and after the write.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tether_fs::{ChangeKind, FileReceipt, Workspace, WritePath};
use tether_tool::{Baseline, BoxFuture, WriteHook, cut_line};

use crate::lang::Lang;

/// One syntax problem: a signature that survives line shifts, and where it is now.
#[derive(Debug, Clone)]
struct Problem {
    signature: String,
    line: usize,
    shown: String,
}

/// The syntax-error write hook. Each write's baseline travels from `before` to its own
/// `after`, so overlapping writes never mix them up.
pub struct SyntaxCheck {
    /// Files are read beneath the workspace's descriptor, like every other read.
    workspace: Arc<Workspace>,
}

/// Problems per file, taken before a write.
type Before = HashMap<PathBuf, Vec<Problem>>;

impl SyntaxCheck {
    /// A hook reading files of `workspace`.
    pub fn new(workspace: Arc<Workspace>) -> Self {
        SyntaxCheck { workspace }
    }
}

/// [`problems`] on a blocking thread, so a large parse never stalls the async runtime and the
/// hook's time budget can cut it off.
async fn problems_off_thread(ws: &Arc<Workspace>, path: &Path) -> Option<Vec<Problem>> {
    let path = path.to_path_buf();
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || problems(&ws, &path))
        .await
        .ok()
        .flatten()
}

/// The outermost ERROR and MISSING nodes of a file, or None if it is not a bundled language,
/// not readable text, or larger than structural search reads.
fn problems(ws: &Workspace, path: &Path) -> Option<Vec<Problem>> {
    let lang = Lang::from_path(path)?;
    let file = ws.open_read(path).ok()?;
    if file.metadata().ok()?.len() > crate::search::MAX_FILE_BYTES {
        return None;
    }
    let mut text = String::new();
    (&file).read_to_string(&mut text).ok()?;
    let tree = lang.parse(&text);
    let root = tree.root();
    if !root.get_inner_node().has_error() {
        return Some(Vec::new());
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            out.push(Problem {
                signature: format!("missing {}", node.kind()),
                line: node.start_pos().line() + 1,
                shown: format!("missing `{}`", node.kind()),
            });
        } else if node.is_error() {
            let text = node.text();
            let first = text.lines().next().unwrap_or("").trim().to_string();
            out.push(Problem {
                signature: format!("error {first}"),
                line: node.start_pos().line() + 1,
                shown: format!("syntax error at `{}`", cut_line(&first, 80)),
            });
        } else if node.get_inner_node().has_error() {
            let mut children: Vec<_> = node.children().collect();
            children.reverse();
            stack.extend(children);
        }
    }
    Some(out)
}

impl WriteHook for SyntaxCheck {
    fn name(&self) -> &str {
        "syntax"
    }

    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            let mut seen = Before::new();
            for path in paths {
                if Lang::from_path(path.abs()).is_none() {
                    continue;
                }
                let found = problems_off_thread(&self.workspace, path.abs())
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
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut before = baseline.and_then(|b| b.downcast::<Before>().ok());
            let mut report = Vec::new();
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
                if receipt.hash_after.is_none() {
                    continue;
                }
                let Some(now) = problems_off_thread(&self.workspace, abs).await else {
                    continue;
                };
                let mut old: Vec<&str> = old.iter().map(|p| p.signature.as_str()).collect();
                for p in now {
                    if let Some(i) = old.iter().position(|s| *s == p.signature) {
                        old.swap_remove(i);
                    } else {
                        report.push(format!("{}:{} {}", receipt.path.rel(), p.line, p.shown));
                    }
                }
            }
            if report.is_empty() {
                return None;
            }
            let n = report.len();
            let s = if n == 1 { "" } else { "s" };
            let head = match before {
                Some(_) => format!("syntax check: this write introduced {n} syntax error{s}"),
                None => format!(
                    "syntax check: no baseline was taken in time, so these {n} syntax error{s} \
                     may predate this write"
                ),
            };
            Some(format!("{head} (tree-sitter):\n{}", report.join("\n")))
        })
    }
}
