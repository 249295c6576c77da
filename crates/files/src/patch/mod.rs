//! Parsing and applying the "apply_patch" format that coding models are trained to emit.
//!
//! A patch is a `*** Begin Patch` / `*** End Patch` envelope around file operations
//! (`*** Add File:`, `*** Delete File:`, `*** Update File:` with an optional `*** Move to:`).
//! Updates carry hunks of context (` `), removed (`-`) and added (`+`) lines that are located
//! by content rather than by line number, with progressively looser whitespace matching.
//! Paths are returned exactly as written; confining them is the caller's job.

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";
/// The smallest whole patch, shown when a patch in another format is given.
const EXAMPLE: &str =
    "*** Begin Patch\n*** Update File: src/app.py\n-    return 1\n+    return 2\n*** End Patch";

mod apply;
mod matcher;
mod outline;

pub use matcher::MatchBudget;
pub use outline::{PatchOutline, outline, paths_of, touched_paths};

/// A parsed patch: the file operations in the order they appear, so callers can apply them in sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The file operations, in patch order.
    pub files: Vec<FilePatch>,
}

/// One file operation of a patch, telling the caller what to do with a single path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilePatch {
    /// Create a file with the given content.
    Add {
        /// Path as written in the patch.
        path: String,
        /// Full file content: the `+` lines joined with `\n` plus a final `\n` (empty if there were none).
        content: String,
    },
    /// Remove a file.
    Delete {
        /// Path as written in the patch.
        path: String,
    },
    /// Edit a file in place (and optionally rename it).
    Update {
        /// Path of the existing file, as written in the patch.
        path: String,
        /// New path when the patch also renames the file.
        move_to: Option<String>,
        /// Edits to apply in order; may be empty only when `move_to` is set.
        hunks: Vec<Hunk>,
    },
}

/// A contiguous edit inside an updated file, located by its content rather than by line numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Text of the `@@` line, if any: a line to find first so that the hunk's lines are searched after it.
    pub header: Option<String>,
    /// Context, removed and added lines in patch order.
    pub lines: Vec<HunkLine>,
    /// Set by `*** End of File`: the hunk's old lines must end at the last line of the file.
    pub end_of_file: bool,
}

/// One line of a hunk, without its leading marker character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// Line that must be present and is kept (` ` prefix, or an entirely empty line).
    Context(String),
    /// Line that must be present and is removed (`-` prefix).
    Remove(String),
    /// Line that is inserted (`+` prefix).
    Add(String),
}

/// Error with the 1-based line number of the patch text and what was expected there.
#[derive(Debug, thiserror::Error)]
#[error("patch line {line}: {message}")]
pub struct PatchParseError {
    /// 1-based line number in the patch text where the problem was found.
    pub line: usize,
    /// What was expected at that line and what was found instead.
    pub message: String,
}

/// Why one hunk could not be applied; `hunk` is 1-based within its file.
#[derive(Debug, thiserror::Error)]
#[error("hunk {hunk}: {reason}")]
pub struct HunkError {
    /// 1-based index of the failing hunk within its file.
    pub hunk: usize,
    /// Human-readable explanation aimed at letting a model fix its patch.
    pub reason: String,
    /// Set when matching was stopped (over budget or cancelled) rather than the hunk not fitting.
    pub stopped: Option<Stopped>,
}

/// Why matching ended before it could decide, so a caller can tell a cancelled call apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The patch used up its [`MatchBudget`].
    OverBudget,
    /// The budget's cancellation check said the call was cancelled.
    Cancelled,
}

/// Applies hunks in order to LF-normalized text (no BOM, no CR), returning the new text.
///
/// Whether the original ended with `\n` is preserved; each hunk is searched for after the previous one.
/// Uses a fresh standard [`MatchBudget`] that is never cancelled; the tool shares one per patch.
#[cfg(test)]
pub fn apply_hunks(original: &str, hunks: &[Hunk]) -> Result<String, HunkError> {
    apply::apply_hunks(original, hunks, &mut MatchBudget::default())
}

/// [`apply_hunks`] drawing on `budget`, which one patch shares across its files so the total
/// matching work stays bounded and a cancelled call stops promptly.
pub fn apply_hunks_within(
    original: &str,
    hunks: &[Hunk],
    budget: &mut MatchBudget,
) -> Result<String, HunkError> {
    apply::apply_hunks(original, hunks, budget)
}

fn parse_err(line: usize, message: impl Into<String>) -> PatchParseError {
    PatchParseError {
        line,
        message: message.into(),
    }
}

/// Parses apply_patch text into file operations, so a tool can validate a whole patch before touching any file.
///
/// Blank lines around the envelope and CRLF line endings are tolerated; anything else outside it is an error.
pub fn parse_patch(text: &str) -> Result<Patch, PatchParseError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(parse_err(
            1,
            format!("expected `{BEGIN}`, but the patch is empty"),
        ));
    };
    let first_line = lines.get(first).copied().unwrap_or_default().trim();
    if first_line != BEGIN {
        let unified = ["--- ", "diff --git", "Index: ", "@@ "]
            .iter()
            .any(|p| first_line.starts_with(p));
        let what = match unified {
            true => format!(
                "this is a unified diff (`{}`), which apply_patch does not take",
                tether_base::cut_line(first_line, 60)
            ),
            false => format!("expected `{BEGIN}`, found `{first_line}`"),
        };
        return Err(parse_err(
            first + 1,
            format!(
                "{what}; write it in this format, the lines found by their text, not by number:\n{EXAMPLE}"
            ),
        ));
    }
    let last = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(first);
    let last_line = lines.get(last).copied().unwrap_or_default().trim();
    if last == first {
        return Err(parse_err(
            last + 1,
            format!("the patch ends without `{END}`"),
        ));
    }
    if last_line != END {
        let early_end = (first + 1..last).find(|&i| lines.get(i).is_some_and(|l| l.trim() == END));
        if let Some(end_idx) = early_end {
            let extra = (end_idx + 1..=last)
                .find(|&i| lines.get(i).is_some_and(|l| !l.trim().is_empty()))
                .unwrap_or(last);
            return Err(parse_err(
                extra + 1,
                format!("unexpected text after `{END}`"),
            ));
        }
        return Err(parse_err(
            last + 1,
            format!("expected `{END}` as the last line of the patch, found `{last_line}`"),
        ));
    }
    let mut parser = Parser {
        lines: &lines,
        pos: first + 1,
        end: last,
    };
    let files = parser.parse_files()?;
    if files.is_empty() {
        return Err(parse_err(last + 1, "the patch contains no file operations"));
    }
    Ok(Patch { files })
}

/// Cursor over the lines strictly between `*** Begin Patch` and `*** End Patch`.
struct Parser<'a> {
    lines: &'a [&'a str],
    pos: usize,
    end: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        if self.pos < self.end {
            self.lines.get(self.pos).copied()
        } else {
            None
        }
    }

    fn line_no(&self) -> usize {
        self.pos + 1
    }

    fn path(&self, rest: &str, marker: &str) -> Result<String, PatchParseError> {
        let path = rest.trim();
        if path.is_empty() {
            return Err(parse_err(
                self.line_no(),
                format!("missing path after `{marker}`"),
            ));
        }
        // Confinement would quietly drop a trailing `/` or `/.` and act on a file of that name.
        if let Some(ending) = folder_ending(path) {
            let base = path.trim_end_matches('/');
            let example = if base.is_empty() || ending != "/" {
                "src/name.ext".to_string()
            } else {
                format!("{base}/name.ext")
            };
            return Err(parse_err(
                self.line_no(),
                format!(
                    "`{marker} {path}` names a folder (the path ends in `{ending}`), but every \
                     patch operation needs the path of a file; give one such as `{example}`"
                ),
            ));
        }
        Ok(path.to_string())
    }

    fn parse_files(&mut self) -> Result<Vec<FilePatch>, PatchParseError> {
        let mut files = Vec::new();
        while let Some(line) = self.peek() {
            let marker = line.trim();
            if marker.is_empty() {
                self.pos += 1;
            } else if let Some(rest) = marker.strip_prefix(ADD) {
                let path = self.path(rest, ADD)?;
                self.pos += 1;
                files.push(self.parse_add(path)?);
            } else if let Some(rest) = marker.strip_prefix(DELETE) {
                let path = self.path(rest, DELETE)?;
                self.pos += 1;
                files.push(FilePatch::Delete { path });
            } else if let Some(rest) = marker.strip_prefix(UPDATE) {
                let path = self.path(rest, UPDATE)?;
                files.push(self.parse_update(path)?);
            } else if marker == END {
                let extra = (self.pos + 1..=self.end)
                    .find(|&i| self.lines.get(i).is_some_and(|l| !l.trim().is_empty()))
                    .unwrap_or(self.end);
                return Err(parse_err(
                    extra + 1,
                    format!("unexpected text after `{END}`"),
                ));
            } else {
                return Err(parse_err(
                    self.line_no(),
                    format!(
                        "expected `{ADD}`, `{UPDATE}` or `{DELETE}`, found `{}`",
                        line.trim_end()
                    ),
                ));
            }
        }
        Ok(files)
    }

    fn parse_add(&mut self, path: String) -> Result<FilePatch, PatchParseError> {
        let mut content: Vec<&str> = Vec::new();
        // Blank lines count as empty content lines only when more `+` lines follow;
        // trailing ones are just separators before the next operation.
        let mut pending_blank = 0usize;
        while let Some(line) = self.peek() {
            if line.starts_with("***") {
                break;
            }
            if let Some(rest) = line.strip_prefix('+') {
                content.extend(std::iter::repeat_n("", pending_blank));
                pending_blank = 0;
                content.push(rest);
            } else if line.trim().is_empty() {
                pending_blank += 1;
            } else {
                return Err(parse_err(
                    self.line_no(),
                    format!(
                        "expected a line starting with '+' in the content of added file `{path}`, found `{}`",
                        line.trim_end()
                    ),
                ));
            }
            self.pos += 1;
        }
        let content = if content.is_empty() {
            String::new()
        } else {
            let mut joined = content.join("\n");
            joined.push('\n');
            joined
        };
        Ok(FilePatch::Add { path, content })
    }

    fn parse_update(&mut self, path: String) -> Result<FilePatch, PatchParseError> {
        let update_line = self.line_no();
        self.pos += 1;
        let mut move_to = None;
        if let Some(rest) = self.peek().and_then(|l| l.trim().strip_prefix(MOVE)) {
            move_to = Some(self.path(rest, MOVE)?);
            self.pos += 1;
        }
        let mut hunks = Vec::new();
        // The hunk being collected, with the patch line where it started.
        let mut current: Option<(usize, Hunk)> = None;
        let mut after_eof = false;
        while let Some(line) = self.peek() {
            let line_no = self.line_no();
            if line.starts_with("***") {
                let marker = line.trim();
                if marker == END_OF_FILE {
                    match current.take() {
                        Some((_, mut hunk)) if !hunk.lines.is_empty() => {
                            hunk.end_of_file = true;
                            hunks.push(hunk);
                            after_eof = true;
                        }
                        _ => {
                            return Err(parse_err(
                                line_no,
                                format!("`{END_OF_FILE}` must follow the lines of a hunk"),
                            ));
                        }
                    }
                    self.pos += 1;
                    continue;
                }
                if marker.starts_with(MOVE) {
                    return Err(parse_err(
                        line_no,
                        format!("`{MOVE}` must directly follow its `{UPDATE}` line"),
                    ));
                }
                break;
            }
            if let Some(rest) = line.strip_prefix("@@") {
                finish_hunk(current.take(), &mut hunks)?;
                current = Some((
                    line_no,
                    Hunk {
                        header: parse_header(rest),
                        lines: Vec::new(),
                        end_of_file: false,
                    },
                ));
                after_eof = false;
            } else if current.is_none() && line.trim().is_empty() {
                // A blank line cannot start a hunk; it only separates sections.
            } else {
                let hunk_line = if let Some(rest) = line.strip_prefix(' ') {
                    HunkLine::Context(rest.to_string())
                } else if let Some(rest) = line.strip_prefix('-') {
                    HunkLine::Remove(rest.to_string())
                } else if let Some(rest) = line.strip_prefix('+') {
                    HunkLine::Add(rest.to_string())
                } else if line.trim().is_empty() {
                    // Models often drop the leading space of an empty context line.
                    HunkLine::Context(line.to_string())
                } else {
                    return Err(parse_err(
                        line_no,
                        format!(
                            "expected a hunk line starting with ' ', '-', '+' or `@@` in `{path}`, found `{}`",
                            line.trim_end()
                        ),
                    ));
                };
                if current.is_none() && after_eof {
                    return Err(parse_err(
                        line_no,
                        format!("expected `@@` or a file operation after `{END_OF_FILE}`"),
                    ));
                }
                let (_, hunk) = current.get_or_insert_with(|| {
                    (
                        line_no,
                        Hunk {
                            header: None,
                            lines: Vec::new(),
                            end_of_file: false,
                        },
                    )
                });
                hunk.lines.push(hunk_line);
            }
            self.pos += 1;
        }
        finish_hunk(current, &mut hunks)?;
        if hunks.is_empty() && move_to.is_none() {
            return Err(parse_err(
                update_line,
                format!("`{UPDATE} {path}` has no hunks and no `{MOVE}`"),
            ));
        }
        Ok(FilePatch::Update {
            path,
            move_to,
            hunks,
        })
    }
}

/// The ending that makes `path` name a folder rather than a file: a trailing `/`, or a last
/// component of `.` or `..`.
fn folder_ending(path: &str) -> Option<&'static str> {
    if path.ends_with('/') {
        return Some("/");
    }
    match path.rsplit('/').next() {
        Some(".") => Some("."),
        Some("..") => Some(".."),
        _ => None,
    }
}

fn finish_hunk(
    current: Option<(usize, Hunk)>,
    hunks: &mut Vec<Hunk>,
) -> Result<(), PatchParseError> {
    if let Some((line_no, hunk)) = current {
        if hunk.lines.is_empty() {
            return Err(parse_err(
                line_no,
                "hunk has no lines; expected lines starting with ' ', '-' or '+' after `@@`",
            ));
        }
        hunks.push(hunk);
    }
    Ok(())
}

/// Extracts the header text after `@@`, dropping unified-diff ranges such as `-1,3 +1,4 @@`
/// that models sometimes carry over from git diffs.
fn parse_header(rest: &str) -> Option<String> {
    let mut header = rest.trim();
    let is_range = |s: &str| {
        s.starts_with('-')
            && s.contains('+')
            && s.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ' ' | ',' | '-' | '+'))
    };
    if let Some(idx) = header.find("@@") {
        let (range, after) = header.split_at(idx);
        if is_range(range.trim()) {
            header = after.get(2..).unwrap_or_default().trim();
        }
    } else if is_range(header) {
        header = "";
    }
    if header.is_empty() || header == "@@" {
        None
    } else {
        Some(header.to_string())
    }
}

#[cfg(test)]
mod tests;
