use schemars::JsonSchema;
use serde::Deserialize;
use tether_fs::{ChangeOp, encode_text};
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::{lf, read_text};

/// `edit`: replaces an exact string in a UTF-8 text file.
pub struct EditTool;

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// File to edit, relative to the workspace root.
    path: String,
    /// Exact text to find; must occur exactly once unless `replace_all` is set.
    old_string: String,
    /// Text to put in its place.
    new_string: String,
    /// Replace every occurrence. Default false.
    #[serde(default)]
    replace_all: bool,
}

impl Tool for EditTool {
    type Args = EditArgs;

    fn name(&self) -> &'static str {
        "edit"
    }

    fn description(&self) -> String {
        "Replace `old_string` with `new_string` in a file. `old_string` must occur exactly once \
         (include surrounding lines to make it unique) unless `replace_all` is true. The file \
         keeps its line endings, BOM and final newline."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Workspace
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
        cx.fs()
            .commit(vec![ChangeOp::Write {
                path: path.clone(),
                content: encode_text(&new_text, file.shape),
                expect: file.hash,
            }])
            .await?;
        let plural = if count == 1 { "" } else { "s" };
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
        n if all => {
            let _ = n;
            Ok(text.replace(old, new))
        }
        n => Err(format!(
            "old_string occurs {n} times; include more surrounding lines to make it unique, \
             or set replace_all to replace all {n}"
        )),
    }
}

fn not_found_hint(text: &str, old: &str) -> String {
    let first = old
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(old)
        .trim();
    let near = text
        .lines()
        .position(|l| l.trim() == first)
        .map(|i| {
            format!(
                "; its first line occurs (ignoring indentation) at line {}, so check whitespace \
                 and the following lines",
                i + 1
            )
        })
        .unwrap_or_default();
    let mixed = if text.contains("\r\n") {
        "; the file mixes CRLF and LF line endings, so lines ending in \\r\\n must be given \
         with the \\r"
    } else {
        ""
    };
    format!(
        "old_string was not found (0 matches){near}{mixed}; read the file and copy the text exactly"
    )
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
    fn hint_points_at_an_indentation_mismatch() {
        let e = replace(
            "fn f() {\n    let x = 1;\n}\n",
            "  let x = 1;\nfoo",
            "z",
            false,
        )
        .unwrap_err();
        assert!(e.contains("at line 2"), "{e}");
    }
}
