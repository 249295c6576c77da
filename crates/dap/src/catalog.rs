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
}

/// The catalog.
pub const ADAPTERS: &[AdapterKind] = &[
    AdapterKind {
        id: "debugpy",
        markers: &["pyproject.toml", "setup.py", "requirements.txt"],
        binaries: &["python3"],
    },
    AdapterKind {
        id: "lldb",
        markers: &["Cargo.toml", "CMakeLists.txt", "Makefile"],
        binaries: &[
            "lldb-dap",
            "lldb-dap-20",
            "lldb-dap-19",
            "lldb-dap-18",
            "lldb-vscode-14",
        ],
    },
    AdapterKind {
        id: "delve",
        markers: &["go.mod"],
        binaries: &["dlv"],
    },
    AdapterKind {
        id: "dart",
        markers: &["pubspec.yaml"],
        binaries: &["dart"],
    },
];

/// `[debug.adapters.ID]`: a command and markers replacing the catalog's, or a new adapter.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterOverride {
    /// The whole command that runs the adapter.
    pub command: Option<Vec<String>>,
    /// Files that mark a project it debugs.
    pub markers: Option<Vec<String>>,
}

/// Every override, by adapter id.
pub type Overrides = std::collections::BTreeMap<String, AdapterOverride>;

/// An adapter that can start: how, and from which project folder.
#[derive(Debug, Clone)]
pub struct Found {
    pub id: String,
    /// The command that runs the adapter.
    pub argv: Vec<String>,
    /// The folder holding the marker; the adapter and the program run there.
    pub root: PathBuf,
    /// For debugpy, the interpreter chosen and why.
    pub interpreter: Option<String>,
    /// Commands lldb runs first: Rust's own formatters for a Cargo project, so a `Vec` or
    /// `String` reads as one.
    pub init_commands: Vec<String>,
}

/// The adapter a program's type asks for: debugpy for `.py`, delve for `.go`, dart for
/// `.dart`, lldb for a native (ELF) program; `None` when the file does not say.
pub fn adapter_for(program: &Path) -> Option<&'static str> {
    match program.extension().and_then(|e| e.to_str()) {
        Some("py") => Some("debugpy"),
        Some("go") => Some("delve"),
        Some("dart") => Some("dart"),
        _ if is_elf(program) => Some("lldb"),
        _ => None,
    }
}

/// Whether `path` is a native ELF program. Opened without blocking and read only if the open
/// file is regular, so a FIFO or device put where the program was does not stall the call.
fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut head = [0u8; 4];
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|mut f| match f.metadata()?.is_file() {
            true => f.read_exact(&mut head),
            false => Err(std::io::ErrorKind::InvalidInput.into()),
        })
        .is_ok_and(|()| head == *b"\x7fELF")
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

/// An adapter as `[debug.adapters.ID]` gives it: its command, run from the nearest folder
/// with one of its markers.
fn configured(
    id: &str,
    o: &AdapterOverride,
    program: &Path,
    workspace: &Path,
) -> Result<Found, String> {
    let command = o.command.clone().filter(|c| !c.is_empty()).ok_or_else(|| {
        format!("[debug.adapters.{id}] needs a `command` (the adapter and its arguments)")
    })?;
    let markers: Vec<&str> = o.markers.iter().flatten().map(String::as_str).collect();
    if markers.is_empty() {
        return Err(format!(
            "[debug.adapters.{id}] needs `markers` (files that mark its projects)"
        ));
    }
    let root = marker_root(program, workspace, &markers).ok_or_else(|| {
        format!(
            "{id}: no {} from the program up to the workspace root",
            markers.join(" or ")
        )
    })?;
    Ok(Found {
        id: id.to_string(),
        argv: command,
        root,
        interpreter: None,
        init_commands: Vec::new(),
    })
}

/// The lldb commands that load the Rust toolchain's formatters, as `rust-lldb` does; none when
/// `rustc` or its scripts cannot be found. The toolchain is the one chosen outside the
/// workspace, so that no repository's toolchain file picks what runs here.
async fn rust_formatters(root: &Path) -> Vec<String> {
    let Some(sysroot) = tether_proc::neutral_rust_sysroot(root).await else {
        return Vec::new();
    };
    let etc = sysroot.join("lib/rustlib/etc");
    let (lookup, commands) = (etc.join("lldb_lookup.py"), etc.join("lldb_commands"));
    if !lookup.exists() || !commands.exists() {
        return Vec::new();
    }
    vec![
        format!("command script import \"{}\"", lookup.display()),
        format!("command source -s 1 \"{}\"", commands.display()),
    ]
}

/// Whether `python` can import debugpy, within a few seconds. Isolated (`-I`) and from `/`, so
/// a `debugpy.py` in the workspace is not what gets imported.
async fn has_debugpy(python: &Path) -> bool {
    let spec = tether_proc::ChildSpec {
        argv: vec![
            python.display().to_string(),
            "-I".into(),
            "-c".into(),
            "import debugpy".into(),
        ],
        cwd: Some(PathBuf::from("/")),
        env: Vec::new(),
    };
    matches!(
        tether_proc::run_with_deadline(&spec, Duration::from_secs(10)).await,
        Ok(out) if out.status.success()
    )
}

/// The adapter `id` for `program`, or why it cannot start here.
pub async fn find(
    id: &str,
    program: &Path,
    workspace: &Path,
    overrides: &Overrides,
) -> Result<Found, String> {
    find_with(id, program, workspace, overrides, true).await
}

/// [`find`]; with `run_inside` false an interpreter inside the workspace is named, never run
/// (what `tether doctor` needs: it runs nothing a repository ships).
async fn find_with(
    id: &str,
    program: &Path,
    workspace: &Path,
    overrides: &Overrides,
    run_inside: bool,
) -> Result<Found, String> {
    let given = overrides.get(id);
    let Some(kind) = ADAPTERS.iter().find(|a| a.id == id) else {
        return match given {
            Some(o) => configured(id, o, program, workspace),
            None => {
                let mut known: Vec<&str> = ADAPTERS.iter().map(|a| a.id).collect();
                known.extend(overrides.keys().map(String::as_str));
                Err(format!("no adapter `{id}`: known are {}", known.join(", ")))
            }
        };
    };
    if let Some(o) = given.filter(|o| o.command.is_some()) {
        let mut o = o.clone();
        o.markers = o
            .markers
            .or_else(|| Some(kind.markers.iter().map(|m| m.to_string()).collect()));
        return configured(id, &o, program, workspace);
    }
    // A native program is a project of its own for lldb.
    let own = (kind.id == "lldb" && is_elf(program)).then(|| workspace.to_path_buf());
    let root = marker_root(program, workspace, kind.markers)
        .or(own)
        .ok_or_else(|| {
            let from = program.strip_prefix(workspace).unwrap_or(program);
            let from = match from.display().to_string().trim_matches('.') {
                "" => "the workspace root".to_string(),
                f => format!("{f} up to the workspace root"),
            };
            format!("{id}: no {} from {from}", kind.markers.join(" or "))
        })?;
    if kind.id != "debugpy" {
        let binary = kind
            .binaries
            .iter()
            .find_map(|b| which::which(b).ok())
            .ok_or_else(|| {
                format!(
                    "{id}: a project marker is there, but none of {} is on PATH",
                    kind.binaries.join(", ")
                )
            })?;
        let init_commands = match kind.id {
            "lldb" if root.join("Cargo.toml").exists() => rust_formatters(&root).await,
            _ => Vec::new(),
        };
        let mut argv = vec![binary.display().to_string()];
        match kind.id {
            // delve speaks DAP over TCP only: on a port of its choosing, which it prints.
            "delve" => argv.extend(["dap".to_string(), "--listen=127.0.0.1:0".to_string()]),
            "dart" => argv.push("debug_adapter".to_string()),
            _ => {}
        }
        return Ok(Found {
            id: kind.id.to_string(),
            argv,
            root,
            interpreter: None,
            init_commands,
        });
    }
    let (python, why) = tether_proc::project_python(&root).ok_or("debugpy: no python3 on PATH")?;
    if !run_inside && tether_proc::inside(&python, workspace) {
        return Ok(Found {
            id: kind.id.to_string(),
            argv: vec![python.display().to_string()],
            root,
            interpreter: Some(format!(
                "{} ({why}); inside the workspace, so doctor does not run it: whether it has \
                 debugpy is checked at the first launch",
                python.display()
            )),
            init_commands: Vec::new(),
        });
    }
    if !has_debugpy(&python).await {
        return Err(format!(
            "debugpy: {} ({why}) has no debugpy: install it there (`{} -m pip install debugpy`)",
            python.display(),
            python.display()
        ));
    }
    Ok(Found {
        id: kind.id.to_string(),
        argv: vec![
            python.display().to_string(),
            "-m".into(),
            "debugpy.adapter".into(),
        ],
        root,
        interpreter: Some(format!("{} ({why})", python.display())),
        init_commands: Vec::new(),
    })
}

/// The `launch` arguments for `program` under `found`'s adapter.
pub fn launch_args(found: &Found, program: &Path, args: &[String]) -> serde_json::Value {
    match found.id.as_str() {
        "debugpy" => serde_json::json!({
            "request": "launch", "name": "tether", "type": "python",
            "program": program, "args": args, "cwd": found.root,
            "console": "internalConsole", "justMyCode": true,
            "python": [found.argv[0].clone()],
        }),
        // delve builds the package that holds the file.
        "delve" => serde_json::json!({
            "request": "launch", "name": "tether", "mode": "debug",
            "program": program.parent().unwrap_or(program), "args": args, "cwd": found.root,
        }),
        // `dart debug_adapter` runs the script itself.
        "dart" => serde_json::json!({
            "request": "launch", "name": "tether", "program": program, "args": args,
            "cwd": found.root,
        }),
        _ => serde_json::json!({
            "request": "launch", "name": "tether", "program": program, "args": args,
            "cwd": found.root, "stopOnEntry": false, "initCommands": found.init_commands,
        }),
    }
}

/// How a debuggee waits on a port for each adapter that can attach to one.
pub const ATTACH_HOWTO: &str = "debugpy: `python -m debugpy --listen 127.0.0.1:PORT \
     --wait-for-client app.py`; lldb: `lldb-server gdbserver 127.0.0.1:PORT ./program`; delve: \
     `dlv exec --headless --listen=127.0.0.1:PORT ./program`";

/// The adapter to attach with when none is named: the one whose markers the workspace root
/// holds, if exactly one does.
pub fn attach_adapter(workspace: &Path) -> Result<&'static str, String> {
    let marked: Vec<&'static str> = ADAPTERS
        .iter()
        .filter(|kind| ["debugpy", "lldb", "delve"].contains(&kind.id))
        .filter(|kind| kind.markers.iter().any(|m| workspace.join(m).exists()))
        .map(|kind| kind.id)
        .collect();
    match marked.as_slice() {
        [one] => Ok(one),
        _ => Err(format!(
            "cannot tell which adapter to attach with: name one with `adapter` (the program \
             must wait on the port: {ATTACH_HOWTO})"
        )),
    }
}

/// The adapter for attaching on `port`: debugpy and delve are spoken to on the port itself,
/// lldb-dap is started here and connects to the lldb-server there.
pub async fn for_attach(
    id: &str,
    workspace: &Path,
    overrides: &Overrides,
) -> Result<Found, String> {
    let mut found = Found {
        id: id.to_string(),
        argv: Vec::new(),
        root: workspace.to_path_buf(),
        interpreter: None,
        init_commands: Vec::new(),
    };
    match id {
        "debugpy" | "delve" => Ok(found),
        "lldb" => {
            found.argv = match overrides.get(id).and_then(|o| o.command.clone()) {
                Some(command) if !command.is_empty() => command,
                _ => {
                    let binaries = ADAPTERS
                        .iter()
                        .find(|a| a.id == id)
                        .map_or(&[][..], |kind| kind.binaries);
                    let binary = binaries
                        .iter()
                        .find_map(|b| which::which(b).ok())
                        .ok_or_else(|| {
                            format!("lldb: none of {} is on PATH", binaries.join(", "))
                        })?;
                    vec![binary.display().to_string()]
                }
            };
            if workspace.join("Cargo.toml").exists() {
                found.init_commands = rust_formatters(workspace).await;
            }
            Ok(found)
        }
        _ => Err(format!(
            "attach by port is built for debugpy, lldb and delve, not `{id}`; the program must \
             wait on the port: {ATTACH_HOWTO}"
        )),
    }
}

/// The `attach` arguments for a debuggee waiting on `port`.
pub fn attach_args(found: &Found, port: u16) -> serde_json::Value {
    match found.id.as_str() {
        "debugpy" => serde_json::json!({"request": "attach", "name": "tether", "justMyCode": true}),
        // A headless dlv server is driven in its remote mode.
        "delve" => serde_json::json!({"request": "attach", "name": "tether", "mode": "remote"}),
        // lldb-dap connects itself, synchronously. Through `attachCommands` it would run
        // `gdb-remote` asynchronously and could find the process still unloaded, then refuse.
        _ => serde_json::json!({
            "request": "attach", "name": "tether", "initCommands": found.init_commands,
            "gdb-remote-port": port, "gdb-remote-hostname": "127.0.0.1",
        }),
    }
}

/// What `adapters` says: per adapter, whether it can be used here and why (not).
pub async fn report(workspace: &Path, overrides: &Overrides) -> String {
    let mut out = Vec::new();
    for kind in ADAPTERS {
        let line = match find_with(kind.id, &workspace.join("."), workspace, overrides, false).await
        {
            Ok(found) => format!(
                "{}: ready ({})",
                kind.id,
                found.interpreter.unwrap_or_else(|| found.argv.join(" "))
            ),
            Err(why) => why,
        };
        out.push(line);
    }
    for (id, o) in overrides
        .iter()
        .filter(|(id, _)| !ADAPTERS.iter().any(|a| a.id == id.as_str()))
    {
        out.push(match configured(id, o, &workspace.join("."), workspace) {
            Ok(found) => format!(
                "{id}: ready ({}; from [debug.adapters.{id}])",
                found.argv.join(" ")
            ),
            Err(why) => why,
        });
    }
    out.join("\n")
}
