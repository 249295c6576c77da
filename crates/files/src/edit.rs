use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, encode_text};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput};

use crate::near::nearest;
use crate::{lf, read_text};

/// `edit`: replaces an exact string in a UTF-8 text file.
pub struct EditTool;

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// File to edit, relative to the workspace root (`file_path` is accepted too).
    #[serde(alias = "file_path")]
    path: String,
    /// Exact text to find; must occur exactly once unless `replace_all` is set.
    old_string: String,
    /// Text to put in its place.
    new_string: String,
    /// Replace every occurrence. Default false.
    #[serde(default)]
    replace_all: bool,
    /// Stage the change instead of writing it: the result shows its diff and the new
    /// problems the language servers find in the proposed text (nothing is written), and
    /// `resolve` with the edit_id it gives writes or drops it. Default false.
    #[serde(default)]
    dry_run: bool,
}

impl Tool for EditTool {
    type Args = EditArgs;

    fn name(&self) -> &'static str {
        "edit"
    }

    fn description(&self) -> String {
        "Replace `old_string` with `new_string` in a file. `old_string` must occur exactly once \
         (include surrounding lines to make it unique) unless `replace_all` is true, which \
         replaces every occurrence and says how many. When it is not found, the error shows the \
         nearest lines of the file as a diff. The file keeps its line endings, BOM and final \
         newline. The result lists syntax errors the edit introduced (a tree-sitter check of \
         the bundled languages, on unless the run turned it off). `dry_run` stages the edit \
         instead, showing its diff and the problems it would bring, for `resolve`."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
    }

    fn preview(&self, args: &EditArgs) -> Preview {
        let every = if args.replace_all {
            " (every occurrence)"
        } else {
            ""
        };
        let summary = format!(
            "replace{every}:\n{}\n{}",
            Preview::quoted('-', &args.old_string),
            Preview::quoted('+', &args.new_string)
        );
        Preview::new(summary, vec![args.path.clone()])
    }

    async fn call(&self, cx: &CallCx, args: EditArgs) -> Result<ToolOutput, ToolError> {
        let path = cx.workspace().resolve_write(&args.path)?;
        let file = read_text(cx.workspace(), &path)?;
        let (old, new) = (lf(&args.old_string), lf(&args.new_string));
        let new_text = replace(&file.text, &old, &new, args.replace_all)
            .map_err(|e| ToolError::invalid(format!("{}: {e}", path.rel())))?;
        let count = if args.replace_all {
            file.text.matches(old.as_str()).count()
        } else {
            1
        };
        let first_line = file.text[..file.text.find(old.as_str()).unwrap_or(0)]
            .matches('\n')
            .count()
            + 1;
        let ops = vec![ChangeOp::Write {
            path: path.clone(),
            content: encode_text(&new_text, file.shape),
            expect: file.hash,
        }];
        let plural = if count == 1 { "" } else { "s" };
        if args.dry_run {
            let summary = format!("{count} replacement{plural} in {}", path.rel());
            return Ok(ToolOutput::text(
                tether_tool::stage_dry_run(cx, "edit", &summary, ops).await?,
            ));
        }
        cx.fs().commit(ops).await?;
        Ok(ToolOutput::text(format!(
            "edited {}: {count} replacement{plural} (first at line {first_line})",
            path.rel()
        )))
    }
}

/// Replaces `old` by `new` with the uniqueness rule; errors say how many matches there were.
fn replace(text: &str, old: &str, new: &str, all: bool) -> Result<String, String> {
    if old.is_empty() {
        return Err("old_string is empty; give the exact text to replace".into());
    }
    if old == new {
        return Err("old_string and new_string are the same; nothing would change".into());
    }
    match text.matches(old).count() {
        0 => Err(not_found_hint(text, old)),
        1 => Ok(text.replacen(old, new, 1)),
        _ if all => Ok(text.replace(old, new)),
        n => Err(format!(
            "old_string occurs {n} times ({}); include more surrounding lines to make it unique, \
             or set replace_all to replace all {n}",
            occurrence_lines(text, old)
        )),
    }
}

/// Occurrences shown by line before the rest is counted.
const MAX_LINES_SHOWN: usize = 10;

/// "at lines 3, 9 and 12" for the matches of `old`, the first few of them.
fn occurrence_lines(text: &str, old: &str) -> String {
    let mut lines = Vec::new();
    let (mut line, mut seen) = (1usize, 0usize);
    for (at, _) in text.match_indices(old) {
        line += text[seen..at].matches('\n').count();
        seen = at;
        lines.push(line.to_string());
        if lines.len() == MAX_LINES_SHOWN {
            break;
        }
    }
    let total = text.matches(old).count();
    let more = total - lines.len();
    match (lines.split_last(), more) {
        (Some((last, init)), 0) if !init.is_empty() => {
            format!("at lines {} and {last}", init.join(", "))
        }
        (Some((last, [])), 0) => format!("at line {last}"),
        _ => format!("at lines {} and {more} more", lines.join(", ")),
    }
}

/// Why `old` was not found, with the file's nearest text when some is close enough to show.
fn not_found_hint(text: &str, old: &str) -> String {
    let mixed = if text.contains("\r\n") {
        "; the file mixes CRLF and LF line endings, so lines ending in \\r\\n must be given \
         with the \\r"
    } else {
        ""
    };
    let head = "old_string was not found (0 matches)";
    match nearest(text, old) {
        Some(near) => {
            let lines = match near.last_line > near.first_line {
                true => format!("lines {}-{}", near.first_line, near.last_line),
                false => format!("line {}", near.first_line),
            };
            let what = match near.whitespace_only {
                true => format!("{lines} match it except for whitespace (indentation or spacing)"),
                false => format!("the nearest text is at {lines}"),
            };
            // Only the file's text may go into old_string: the + lines and, when some lines
            // were alike, the unmarked ones between them.
            let copy = match near.has_context {
                true => format!(
                    "The file's {lines} are the unmarked and + lines, in order: to edit these \
                     lines, copy them (without the markers) into old_string exactly"
                ),
                false => format!(
                    "The + lines are the file's {lines}: to edit these lines, copy them (without \
                     the +) into old_string exactly"
                ),
            };
            let unlike = match near.unlike.as_slice() {
                [] => String::new(),
                lines => format!(
                    " The file's line{} {} look{} nothing like what you gave in {}: the text you \
                     meant is likely elsewhere, so read around it first.",
                    if lines.len() == 1 { "" } else { "s" },
                    lines
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    if lines.len() == 1 { "s" } else { "" },
                    if lines.len() == 1 {
                        "its place"
                    } else {
                        "their places"
                    },
                ),
            };
            format!(
                "{head}; {what}{mixed}. As a diff from your old_string (-) to the file (+):\n{}\n\
                 {copy}; the file need not be read again for these.{unlike}",
                near.diff
            )
        }
        None => format!(
            "{head}{}{mixed}; read the file and copy the text exactly",
            first_line_hint(text, old)
        ),
    }
}

/// Where `old`'s first line occurs ignoring indentation, when nothing closer was found.
fn first_line_hint(text: &str, old: &str) -> String {
    let first = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(old)
        .trim();
    text.lines()
        .position(|l| l.trim() == first)
        .map(|i| {
            format!(
                "; its first line occurs (ignoring indentation) at line {}, so check whitespace \
                 and the following lines",
                i + 1
            )
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_matches_in_errors() {
        assert!(
            replace("a a", "a", "b", false)
                .unwrap_err()
                .contains("occurs 2 times")
        );
        assert!(
            replace("a", "x", "b", false)
                .unwrap_err()
                .contains("0 matches")
        );
        assert_eq!(replace("a a", "a", "b", true).unwrap(), "b b");
        assert_eq!(replace("xay", "a", "b", false).unwrap(), "xby");
    }

    #[test]
    fn repeated_matches_are_listed_by_line() {
        let e = replace("a\nb a\nc\na\n", "a", "z", false).unwrap_err();
        assert!(e.contains("occurs 3 times (at lines 1, 2 and 4)"), "{e}");
        let many = "x\n".repeat(12);
        let e = replace(&many, "x", "z", false).unwrap_err();
        assert!(
            e.contains("(at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more)"),
            "{e}"
        );
        assert_eq!(occurrence_lines("q\nab", "ab"), "at line 2");
    }

    #[test]
    fn a_typo_gets_the_nearest_line_as_a_diff() {
        let text = "fn main() {\n    let name = \"world\";\n    println!(\"hello {name}\");\n}\n";
        let e = replace(text, "    println!(\"helo {name}\");", "x", false).unwrap_err();
        insta::assert_snapshot!(e);
        let e = replace(
            text,
            "let name = \"world\";\nprintln!(\"hello {name}\");",
            "x",
            false,
        )
        .unwrap_err();
        insta::assert_snapshot!(e);
        let e = replace(text, "impl Matrix for Grid", "x", false).unwrap_err();
        assert_eq!(
            e,
            "old_string was not found (0 matches); read the file and copy the text exactly"
        );
    }

    #[test]
    fn the_advice_names_the_lines_to_copy_and_warns_when_the_rest_is_elsewhere() {
        let text = "fn main() {\n    let name = \"world\";\n    println!(\"hello {name}\");\n    \
                    save(&name);\n}\n";
        // The first line alike, the second misspelt: old_string must take both, not just +.
        let old = "    let name = \"world\";\n    println!(\"helo {name}\");";
        let e = replace(text, old, "x", false).unwrap_err();
        assert!(
            e.contains("The file's lines 2-3 are the unmarked and + lines, in order"),
            "{e}"
        );
        assert!(!e.contains("nothing like"), "{e}");
        // A third line the file does not have there: the advice says so.
        let old =
            "    let name = \"world\";\n    println!(\"helo {name}\");\n    upload_all(&files, 3);";
        let e = replace(text, old, "x", false).unwrap_err();
        assert!(
            e.contains("line 4 looks nothing like what you gave in its place"),
            "{e}"
        );
    }

    #[test]
    fn hint_points_at_an_indentation_mismatch() {
        let e = replace(
            "fn f() {\n    let x = 1;\n}\n",
            "  let x = 1;\nfoo",
            "z",
            false,
        )
        .unwrap_err();
        assert!(e.contains("at lines 2-3"), "{e}");
    }
}
