//! How the debugger's answers read for a model: compact, capped, and saying what was cut.

use std::path::{Path, PathBuf};

use tether_base::cut_line;
use tether_fs::{Unshown, Workspace};

use crate::protocol::{SetBreakpointsResponse, StackFrame, Variable};

/// Frames shown of a stack.
pub const MAX_FRAMES: usize = 30;
/// Children shown of a variable.
pub const MAX_CHILDREN: usize = 50;
/// Characters shown of one value.
pub const MAX_VALUE: usize = 400;

/// A value cut to [`MAX_VALUE`] characters, saying how much was cut.
pub fn value(text: &str) -> String {
    cut_line(text, MAX_VALUE)
}

/// What `setBreakpoints` answered for one file: verified, moved, or refused, per line.
pub fn breakpoints(file: &Path, asked: &[usize], answer: &SetBreakpointsResponse) -> String {
    let name = file.display();
    if asked.is_empty() {
        return format!("{name}: breakpoints cleared");
    }
    let parts: Vec<String> = asked
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let b = answer.breakpoints.get(i);
            let at = b.and_then(|b| b.line).map(|l| l as usize);
            match (b.is_some_and(|b| b.verified), at) {
                (true, Some(at)) if at != *line => format!("line {line} moved to {at}"),
                (true, _) => format!("line {line} verified"),
                _ => match b.and_then(|b| b.message.as_deref()) {
                    Some(why) => format!("line {line} not verified ({why})"),
                    None => format!("line {line} not verified yet"),
                },
            }
        })
        .collect();
    format!("{name}: {}", parts.join(", "))
}

/// One frame as `#id path:line function`.
pub fn frame(f: &StackFrame, root: &Path) -> String {
    format!("#{} {}", f.id, place(f, root))
}

/// Where a frame is, as `path:line function` (the path from the workspace root when inside it).
pub fn place(f: &StackFrame, root: &Path) -> String {
    let name = f.name.as_deref().unwrap_or("?");
    let line = f.line;
    match f.path() {
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
pub fn variables(items: &[Variable]) -> String {
    let mut lines = Vec::new();
    for v in items.iter().take(MAX_CHILDREN) {
        let name = v.name.as_deref().unwrap_or("?");
        let shown = value(&v.value);
        let kind = v
            .kind
            .as_deref()
            .filter(|t| !t.is_empty())
            .map_or(String::new(), |t| format!(": {t}"));
        let more = match v.variables_reference {
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
