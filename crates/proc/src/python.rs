//! Which Python runs a project's code: its own `.venv` or `venv` before `python3` on PATH, since
//! the wrong environment fails in ways that read like broken code.

use std::path::{Path, PathBuf};

/// The project's interpreter and why it was chosen, or `None` when there is none at all.
pub fn project_python(root: &Path) -> Option<(PathBuf, &'static str)> {
    for (venv, why) in [
        (".venv", "the project's .venv"),
        ("venv", "the project's venv"),
    ] {
        let python = root.join(venv).join("bin/python");
        if python.exists() {
            return Some((python, why));
        }
    }
    let found = which::which("python3").ok()?;
    Some((found, "python3 on PATH; the project has no .venv or venv"))
}
