//! Which Python runs a project's code: its own `.venv` or `venv` before `python3` on PATH, since
//! the wrong environment fails in ways that read like broken code.

use std::path::{Path, PathBuf};

/// The files whose folder is a Python project's root, for every part of tether that looks
/// for one (language servers, checkers, the debugger).
pub const PYTHON_PROJECT_MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "pyrightconfig.json",
];

/// The markers of a project kind tether keeps in one place, by the name catalogs give it
/// (`project = "python"`); `None` for a kind it does not know.
pub fn project_markers(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "python" => Some(PYTHON_PROJECT_MARKERS),
        _ => None,
    }
}

/// The virtual environments a project keeps at its root, in the order they are preferred.
const VENVS: [(&str, &str); 2] = [
    (".venv", "the project's .venv"),
    ("venv", "the project's venv"),
];

/// The interpreter of the project's own virtual environment (`.venv`, then `venv`), if any.
pub fn project_venv(root: &Path) -> Option<PathBuf> {
    VENVS
        .iter()
        .map(|(venv, _)| root.join(venv).join("bin/python"))
        .find(|p| p.exists())
}

/// The project's interpreter and why it was chosen, or `None` when there is none at all.
pub fn project_python(root: &Path) -> Option<(PathBuf, &'static str)> {
    for (venv, why) in VENVS {
        let python = root.join(venv).join("bin/python");
        if python.exists() {
            return Some((python, why));
        }
    }
    let found = which::which("python3").ok()?;
    Some((found, "python3 on PATH; the project has no .venv or venv"))
}
