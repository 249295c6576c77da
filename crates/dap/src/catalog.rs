//! The debug adapters tether knows, and which one can debug a program here: the same rule as
//! language servers, a project marker between the program and the workspace root AND the
//! adapter's binary (for debugpy, an interpreter that has debugpy installed).

use std::path::{Path, PathBuf};
use std::time::Duration;

/// One known adapter.
pub struct AdapterKind {
    pub id: &'static str,
    /// Files that mark a project it debugs.
    pub markers: &'static [&'static str],
    /// Binaries to look for on PATH, in order.
    pub binaries: &'static [&'static str],
    /// Whether this build can drive it yet.
    pub built: bool,
}

/// The catalog.
pub const ADAPTERS: &[AdapterKind] = &[
    AdapterKind {
        id: "debugpy",
        markers: &["pyproject.toml", "setup.py", "requirements.txt"],
        binaries: &["python3"],
        built: true,
    },
    AdapterKind {
        id: "lldb",
        markers: &["Cargo.toml", "CMakeLists.txt", "Makefile"],
        binaries: &["lldb-dap", "lldb-dap-19", "lldb-dap-18", "lldb-vscode-14"],
        built: false,
    },
    AdapterKind {
        id: "delve",
        markers: &["go.mod"],
        binaries: &["dlv"],
        built: false,
    },
    AdapterKind {
        id: "dart",
        markers: &["pubspec.yaml"],
        binaries: &["dart"],
        built: false,
    },
];

/// An adapter that can start: how, and from which project folder.
#[derive(Debug, Clone)]
pub struct Found {
    pub id: &'static str,
    /// The command that runs the adapter.
    pub argv: Vec<String>,
    /// The folder holding the marker; the adapter and the program run there.
    pub root: PathBuf,
    /// For debugpy, the interpreter chosen and why.
    pub interpreter: Option<String>,
}

/// The adapter a program's file type asks for: Python for `.py`, else none yet.
pub fn adapter_for(program: &Path) -> Option<&'static str> {
    match program.extension().and_then(|e| e.to_str()) {
        Some("py") => Some("debugpy"),
        Some("go") => Some("delve"),
        Some("dart") => Some("dart"),
        _ => Some("lldb"),
    }
}

/// The nearest folder from `start` up to `workspace` that holds one of `markers`.
fn marker_root(start: &Path, workspace: &Path, markers: &[&str]) -> Option<PathBuf> {
    let mut dir = if start.is_dir() {
        start
    } else {
        start.parent()?
    };
    loop {
        if markers.iter().any(|m| dir.join(m).exists()) {
            return Some(dir.to_path_buf());
        }
        if dir == workspace {
            return None;
        }
        dir = dir.parent().filter(|d| d.starts_with(workspace))?;
    }
}

/// The Python a project uses: its `.venv` or `venv`, else `python3` on PATH; and why.
fn interpreter(root: &Path) -> Option<(PathBuf, String)> {
    for venv in [".venv", "venv"] {
        let python = root.join(venv).join("bin/python");
        if python.exists() {
            return Some((python, format!("the project's {venv}")));
        }
    }
    let found = which::which("python3").ok()?;
    Some((
        found,
        "python3 on PATH (the project has no .venv or venv)".into(),
    ))
}

/// Whether `python` can import debugpy, within a few seconds.
async fn has_debugpy(python: &Path) -> bool {
    let argv = vec![
        python.display().to_string(),
        "-c".into(),
        "import debugpy".into(),
    ];
    matches!(
        tether_proc::output_with_deadline(&argv, Duration::from_secs(10)).await,
        Ok(out) if out.status.success()
    )
}

/// The adapter `id` for `program`, or why it cannot start here.
pub async fn find(id: &str, program: &Path, workspace: &Path) -> Result<Found, String> {
    let Some(kind) = ADAPTERS.iter().find(|a| a.id == id) else {
        let known: Vec<&str> = ADAPTERS.iter().map(|a| a.id).collect();
        return Err(format!("no adapter `{id}`: known are {}", known.join(", ")));
    };
    let root = marker_root(program, workspace, kind.markers).ok_or_else(|| {
        format!(
            "{id}: no {} between {} and the workspace root",
            kind.markers.join(" or "),
            program.strip_prefix(workspace).unwrap_or(program).display()
        )
    })?;
    if !kind.built {
        return Err(format!(
            "{id}: this build of tether drives only debugpy so far; {id} is not built yet"
        ));
    }
    let (python, why) = interpreter(&root).ok_or("debugpy: no python3 on PATH")?;
    if !has_debugpy(&python).await {
        return Err(format!(
            "debugpy: {} ({why}) has no debugpy: install it there (`{} -m pip install debugpy`)",
            python.display(),
            python.display()
        ));
    }
    Ok(Found {
        id: kind.id,
        argv: vec![
            python.display().to_string(),
            "-m".into(),
            "debugpy.adapter".into(),
        ],
        root,
        interpreter: Some(format!("{} ({why})", python.display())),
    })
}

/// What `adapters` says: per adapter, whether it can be used here and why (not).
pub async fn report(workspace: &Path) -> String {
    let mut out = Vec::new();
    for kind in ADAPTERS {
        let line = match kind.built {
            true => match find(kind.id, workspace, workspace).await {
                Ok(found) => format!(
                    "{}: ready ({})",
                    kind.id,
                    found.interpreter.unwrap_or_else(|| found.argv.join(" "))
                ),
                Err(why) => why,
            },
            false => {
                let binary = kind.binaries.iter().find(|b| which::which(b).is_ok());
                let at = binary.map_or("not on PATH".to_string(), |b| format!("{b} found"));
                format!(
                    "{}: not built yet in this version of tether ({at})",
                    kind.id
                )
            }
        };
        out.push(line);
    }
    out.join("\n")
}
