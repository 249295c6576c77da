//! How the debugger's answers read for a model: compact, capped, and saying what was cut.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_fs::{Unshown, Workspace};

/// Frames shown of a stack.
pub const MAX_FRAMES: usize = 30;
/// Children shown of a variable.
pub const MAX_CHILDREN: usize = 50;
/// Characters shown of one value.
pub const MAX_VALUE: usize = 400;

/// A value cut to [`MAX_VALUE`] characters, saying how long it was.
pub fn value(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_VALUE {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_VALUE).collect();
    format!("{head}… ({count} characters, cut at {MAX_VALUE})")
}

/// What `setBreakpoints` answered for one file: verified, moved, or refused, per line.
pub fn breakpoints(file: &Path, asked: &[usize], answer: &Value) -> String {
    let name = file.display();
    if asked.is_empty() {
        return format!("{name}: breakpoints cleared");
    }
    let given = answer["breakpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let parts: Vec<String> = asked
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let b = given.get(i).cloned().unwrap_or(Value::Null);
            let at = b["line"].as_u64().map(|l| l as usize);
            match (b["verified"].as_bool(), at) {
                (Some(true), Some(at)) if at != *line => format!("line {line} moved to {at}"),
                (Some(true), _) => format!("line {line} verified"),
                _ => match b["message"].as_str() {
                    Some(why) => format!("line {line} not verified ({why})"),
                    None => format!("line {line} not verified yet"),
                },
            }
        })
        .collect();
    format!("{name}: {}", parts.join(", "))
}

/// One frame as `#id path:line function`.
pub fn frame(f: &Value, root: &Path) -> String {
    format!("#{} {}", f["id"].as_i64().unwrap_or(0), place(f, root))
}

/// Where a frame is, as `path:line function` (the path from the workspace root when inside it).
pub fn place(f: &Value, root: &Path) -> String {
    let name = f["name"].as_str().unwrap_or("?");
    let line = f["line"].as_u64().unwrap_or(0);
    match f["source"]["path"].as_str() {
        Some(path) => {
            let shown = Path::new(path)
                .strip_prefix(root)
                .map_or(path.to_string(), |p| p.display().to_string());
            format!("{shown}:{line} {name}")
        }
        None => format!("{name} (no source)"),
    }
}

/// The text of `line` (1-based) in `path`, trimmed, or why it is not shown; read through the
/// door on the blocking pool, as the adapter names any path (`#line "/dev/zero"` in a source).
pub async fn source_line(ws: &Workspace, path: &str, line: u64) -> Option<String> {
    let n = line.checked_sub(1)? as usize;
    let (door, named) = (ws.clone(), PathBuf::from(path));
    let text = tokio::task::spawn_blocking(move || door.read_named(&named))
        .await
        .unwrap_or_else(|e| Err(Unshown::Unreadable(e.to_string())));
    match text {
        Ok(text) => Some(value(text.lines().nth(n)?.trim())),
        Err(why) => Some(format!("({why}: not shown)")),
    }
}

/// Variables as `name: type = value`, with their references, capped.
pub fn variables(items: &[Value]) -> String {
    let mut lines = Vec::new();
    for v in items.iter().take(MAX_CHILDREN) {
        let name = v["name"].as_str().unwrap_or("?");
        let shown = value(v["value"].as_str().unwrap_or(""));
        let kind = v["type"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map_or(String::new(), |t| format!(": {t}"));
        let reference = v["variablesReference"].as_i64().unwrap_or(0);
        let more = match reference {
            0 => String::new(),
            r => format!("  [reference {r}]"),
        };
        lines.push(format!("  {name}{kind} = {shown}{more}"));
    }
    if items.len() > MAX_CHILDREN {
        lines.push(format!(
            "  … {} more, cut at {MAX_CHILDREN}",
            items.len() - MAX_CHILDREN
        ));
    }
    lines.join("\n")
}
