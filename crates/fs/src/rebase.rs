//! Rebasing a staged change onto files that changed after it was staged: each rewritten file
//! is merged three ways (the text it was staged against, the staged text, the text now), so
//! two staged edits of one file can be accepted one after the other.

use crate::merge::{Overlap, merge3};
use crate::{ChangeOp, FsError, StagedChange, Workspace};

/// A change ready to commit against the files as they are now.
#[derive(Debug)]
pub struct Rebased {
    /// The ops to commit, each expecting the file's current content.
    pub ops: Vec<ChangeOp>,
    /// Files that had changed since staging and were merged, relative paths.
    pub rebased: Vec<String>,
    /// Sites of the staging pattern that code added since staging brought in, which the
    /// change does not cover.
    pub more_sites: usize,
}

/// Why a change cannot be rebased; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum RebaseError {
    /// A file the change rewrites was deleted or replaced by a non-text file.
    #[error("{path} {why} since it was staged")]
    Gone {
        /// The file, relative.
        path: String,
        /// What happened to it.
        why: &'static str,
    },
    /// The change and a later write changed the same or neighbouring lines.
    #[error("in {path}, its {}", describe(.overlaps))]
    Overlap {
        /// The file, relative.
        path: String,
        /// The staged change's lines (in the staged-against text) that a later write touched.
        overlaps: Vec<Overlap>,
    },
    /// The file changed and the change kept no text to merge from.
    #[error("{path} changed since it was staged, and this change cannot be merged onto it")]
    NoBase {
        /// The file, relative.
        path: String,
    },
    /// Reading a file failed.
    #[error(transparent)]
    Fs(#[from] FsError),
}

fn describe(overlaps: &[Overlap]) -> String {
    let spans: Vec<String> = overlaps
        .iter()
        .map(|o| match o.last.cmp(&o.first) {
            std::cmp::Ordering::Less => format!("the insertion after line {}", o.last),
            std::cmp::Ordering::Equal => format!("line {}", o.first),
            std::cmp::Ordering::Greater => format!("lines {}-{}", o.first, o.last),
        })
        .collect();
    let (edits, verb) = if spans.len() == 1 {
        ("edit", "overlaps")
    } else {
        ("edits", "overlap")
    };
    let spans = match spans.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => spans.concat(),
    };
    format!("{edits} of {spans} {verb} lines changed after it was staged")
}

impl StagedChange {
    /// The ops to commit now: unchanged files as staged, changed ones merged onto their
    /// current text. Other ops (create, delete, rename) are checked by the commit itself.
    pub fn rebase(&self, ws: &Workspace) -> Result<Rebased, RebaseError> {
        let mut out = Rebased {
            ops: Vec::with_capacity(self.ops.len()),
            rebased: Vec::new(),
            more_sites: 0,
        };
        for op in &self.ops {
            let ChangeOp::Write {
                path,
                content,
                expect,
            } = op
            else {
                out.ops.push(op.clone());
                continue;
            };
            let rel = path.rel().to_string();
            let Some((bytes, now_hash)) = ws.read_hashed(path)? else {
                return Err(RebaseError::Gone {
                    path: rel,
                    why: "was deleted",
                });
            };
            if now_hash == *expect {
                out.ops.push(op.clone());
                continue;
            }
            let base = self
                .bases
                .get(path)
                .ok_or_else(|| RebaseError::NoBase { path: rel.clone() })?;
            let (Ok(theirs), Ok(ours)) =
                (std::str::from_utf8(&bytes), std::str::from_utf8(content))
            else {
                return Err(RebaseError::Gone {
                    path: rel,
                    why: "is no longer UTF-8 text",
                });
            };
            let merged = merge3(base, ours, theirs).map_err(|overlaps| RebaseError::Overlap {
                path: rel.clone(),
                overlaps,
            })?;
            if let Some(recount) = &self.recount {
                out.more_sites += recount(theirs).saturating_sub(recount(base));
            }
            out.ops.push(ChangeOp::Write {
                path: path.clone(),
                content: merged.into_bytes(),
                expect: now_hash,
            });
            out.rebased.push(rel);
        }
        Ok(out)
    }
}
