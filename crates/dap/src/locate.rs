//! Which catalog adapter can debug a program here, and the command that starts it: the same
//! rule as language servers, a project marker between the program and the workspace root AND
//! the adapter's binary (or an interpreter that imports its module).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::catalog::{Adapter, Catalog};
use crate::error::LocateError;
use crate::template::{self, Context, Values};

/// An adapter that can start: how, and from which project folder.
#[derive(Debug, Clone)]
pub struct Found {
    pub id: String,
    /// Its catalog entry: the flags and templates the session follows.
    pub kind: Arc<Adapter>,
    /// The command that runs the adapter; empty when the debuggee's port speaks DAP itself.
    pub argv: Vec<String>,
    /// The folder holding the marker; the adapter and the program run there.
    pub root: PathBuf,
    /// `{python}`: the project's interpreter, when the adapter names it.
    pub python: Option<String>,
    /// The interpreter chosen and why, said at launch.
    pub interpreter: Option<String>,
    /// `{init_commands}`: Rust's own lldb formatters for a Cargo project, so a `Vec` or
    /// `String` reads as one.
    pub init_commands: Vec<String>,
}

/// Whether `path` is a native ELF program. Opened without blocking and read only if the open
/// file is regular, so a FIFO or device put where the program was does not stall the call.
pub fn is_elf(path: &Path) -> bool {
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
fn marker_root(start: &Path, workspace: &Path, markers: &[String]) -> Option<PathBuf> {
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

/// The lldb commands that load the Rust toolchain's formatters, as `rust-lldb` does; none when
/// `rustc` or its scripts cannot be found. The toolchain is the one chosen outside the
/// workspace, so that no repository's toolchain file picks what runs here.
async fn rust_formatters(root: &Path) -> Vec<String> {
    let Some(sysroot) = tether_toolchain::neutral_rust_sysroot(root).await else {
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

/// Whether `python` can import `module`, within a few seconds. Isolated (`-I`) and from `/`,
/// so a module of that name in the workspace is not what gets imported.
async fn has_module(python: &Path, module: &str) -> bool {
    let spec = tether_proc::ChildSpec {
        argv: vec![
            python.display().to_string(),
            "-I".into(),
            "-c".into(),
            format!("import {module}"),
        ],
        cwd: Some(PathBuf::from("/")),
        env: Vec::new(),
    };
    matches!(
        tether_proc::run_with_deadline(&spec, Duration::from_secs(10)).await,
        Ok(out) if out.status.success()
    )
}

/// `kind`'s command with `{binary}` (the first of its binaries on PATH) and `{python}` filled;
/// `marked` says, when no binary is there, that a project marker was.
fn command(kind: &Adapter, python: Option<&str>, marked: bool) -> Result<Vec<String>, LocateError> {
    let binary = match kind.command.iter().any(|c| c.contains("{binary}")) {
        false => None,
        true if kind.binaries.is_empty() => {
            return Err(LocateError::NoBinaries {
                id: kind.id.clone(),
            });
        }
        // A copy `tether install` recorded first, then PATH.
        true => Some(
            tether_toolchain::installed_program(&kind.binaries)
                .or_else(|| kind.binaries.iter().find_map(|b| which::which(b).ok()))
                .ok_or_else(|| LocateError::NotOnPath {
                    id: kind.id.clone(),
                    names: kind.binaries.join(", "),
                    marked,
                })?
                .display()
                .to_string(),
        ),
    };
    let fill = |part: &String| {
        let part = binary
            .as_ref()
            .map_or(part.clone(), |b| part.replace("{binary}", b));
        python.map_or(part.clone(), |p| part.replace("{python}", p))
    };
    Ok(kind.command.iter().map(fill).collect())
}

/// `[debug.adapters.ID] needs a command` for an entry that gave none.
fn needs_command(kind: &Adapter) -> Result<(), LocateError> {
    match kind.command.is_empty() {
        true => Err(LocateError::NoCommand {
            id: kind.id.clone(),
        }),
        false => Ok(()),
    }
}

fn unknown(catalog: &Catalog, id: &str) -> LocateError {
    LocateError::Unknown {
        id: id.to_string(),
        known: catalog.ids().into_iter().map(str::to_string).collect(),
    }
}

/// The adapter `id` for `program`, or why it cannot start here.
pub async fn find(
    catalog: &Catalog,
    id: &str,
    program: &Path,
    workspace: &Path,
) -> Result<Found, LocateError> {
    find_with(catalog, id, program, workspace, true).await
}

/// [`find`]; with `run_inside` false an interpreter inside the workspace is named, never run
/// (what `tether doctor` needs: it runs nothing a repository ships).
async fn find_with(
    catalog: &Catalog,
    id: &str,
    program: &Path,
    workspace: &Path,
    run_inside: bool,
) -> Result<Found, LocateError> {
    let kind = catalog.get(id).ok_or_else(|| unknown(catalog, id))?.clone();
    needs_command(&kind)?;
    if kind.markers.is_empty() && !kind.native {
        return Err(LocateError::NoMarkers { id: id.to_string() });
    }
    // A native program is a project of its own.
    let own = (kind.native && is_elf(program)).then(|| workspace.to_path_buf());
    let root = marker_root(program, workspace, &kind.markers)
        .or(own)
        .ok_or_else(|| {
            let from = program.strip_prefix(workspace).unwrap_or(program);
            let from = match from.display().to_string().trim_matches('.') {
                "" => "the workspace root".to_string(),
                f => format!("{f} up to the workspace root"),
            };
            LocateError::NoProject {
                id: id.to_string(),
                markers: kind.markers.clone(),
                from,
            }
        })?;
    let mut found = Found {
        id: kind.id.clone(),
        kind: kind.clone(),
        argv: Vec::new(),
        root,
        python: None,
        interpreter: None,
        init_commands: Vec::new(),
    };
    let mut own_adapter = None;
    if kind.uses_python() {
        let (python, why) = tether_toolchain::project_python(&found.root)
            .ok_or_else(|| LocateError::NoPython { id: id.to_string() })?;
        if !run_inside && tether_toolchain::inside(&python, workspace) {
            let module = kind.python_module.as_deref().unwrap_or("what it needs");
            found.argv = vec![python.display().to_string()];
            found.interpreter = Some(format!(
                "{} ({why}); inside the workspace, so doctor does not run it: whether it has \
                 {module} is checked at the first launch",
                python.display()
            ));
            return Ok(found);
        }
        let mut interpreter = format!("{} ({why})", python.display());
        if let Some(module) = &kind.python_module
            && !has_module(&python, module).await
        {
            // tether's own copy of the adapter runs on its own interpreter; the program
            // still runs on the project's.
            let own = kind.installed_program.as_ref();
            let Some(adapter) = own.and_then(|p| tether_toolchain::installed_program(&[p])) else {
                return Err(LocateError::NoModule {
                    id: id.to_string(),
                    python: python.display().to_string(),
                    why,
                    module: module.clone(),
                });
            };
            interpreter.push_str(&format!(
                "; it has no {module}, so tether's own adapter runs: {}",
                adapter.display()
            ));
            own_adapter = Some(adapter);
        }
        found.interpreter = Some(interpreter);
        found.python = Some(python.display().to_string());
    }
    found.argv = match own_adapter {
        Some(adapter) => vec![adapter.display().to_string()],
        None => command(&kind, found.python.as_deref(), true)?,
    };
    if kind.rust_formatters && found.root.join("Cargo.toml").exists() {
        found.init_commands = rust_formatters(&found.root).await;
    }
    Ok(found)
}

/// The `launch` arguments for `program` under `found`'s adapter, from its template; an
/// adapter without one is refused, naming what to add.
pub fn launch_args(found: &Found, program: &Path, args: &[String]) -> Result<Value, LocateError> {
    let id = &found.id;
    let Some(launch) = &found.kind.launch else {
        return Err(LocateError::NoLaunch { id: id.clone() });
    };
    let values = Values {
        program: Some(program),
        args,
        cwd: &found.root,
        port: None,
        python: found.python.as_deref(),
        init_commands: &found.init_commands,
    };
    template::render(launch, &values).map_err(|cause| LocateError::Template {
        id: id.clone(),
        template: Context::Launch.key(),
        cause,
    })
}

/// The adapter to attach with when none is named: the one whose markers the workspace root
/// holds, if exactly one attacher's does.
pub fn attach_adapter(catalog: &Catalog, workspace: &Path) -> Result<String, LocateError> {
    let marked: Vec<&str> = catalog
        .attachers()
        .filter(|kind| kind.markers.iter().any(|m| workspace.join(m).exists()))
        .map(|kind| kind.id.as_str())
        .collect();
    match marked.as_slice() {
        [one] => Ok(one.to_string()),
        _ => Err(LocateError::WhichAttacher {
            howto: catalog.attach_howto(),
        }),
    }
}

/// `a, b and c`.
pub(crate) fn listed(names: &[impl AsRef<str>]) -> String {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    match names.as_slice() {
        [] => "no adapter".into(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The adapter for attaching on a port: one whose port speaks DAP is spoken to there (no
/// command), another is started here and connects to the program itself.
pub async fn for_attach(
    catalog: &Catalog,
    id: &str,
    workspace: &Path,
) -> Result<Found, LocateError> {
    let Some(kind) = catalog.get(id).filter(|k| k.attach.is_some()) else {
        return Err(LocateError::CannotAttach {
            id: id.to_string(),
            able: catalog.attachers().map(|a| a.id.clone()).collect(),
            howto: catalog.attach_howto(),
        });
    };
    let mut found = Found {
        id: id.to_string(),
        kind: kind.clone(),
        argv: Vec::new(),
        root: workspace.to_path_buf(),
        python: None,
        interpreter: None,
        init_commands: Vec::new(),
    };
    if kind.attach_over_port {
        return Ok(found);
    }
    needs_command(kind)?;
    if kind.uses_python() {
        let (python, why) = tether_toolchain::project_python(workspace)
            .ok_or_else(|| LocateError::NoPython { id: id.to_string() })?;
        found.interpreter = Some(format!("{} ({why})", python.display()));
        found.python = Some(python.display().to_string());
    }
    found.argv = command(kind, found.python.as_deref(), false)?;
    if kind.rust_formatters && workspace.join("Cargo.toml").exists() {
        found.init_commands = rust_formatters(workspace).await;
    }
    Ok(found)
}

/// The `attach` arguments for a debuggee waiting on `port`, from the adapter's template.
pub fn attach_args(found: &Found, port: u16) -> Result<Value, LocateError> {
    let id = &found.id;
    let attach = found
        .kind
        .attach
        .as_ref()
        .ok_or_else(|| LocateError::NoAttach { id: id.clone() })?;
    let values = Values {
        program: None,
        args: &[],
        cwd: &found.root,
        port: Some(port),
        python: found.python.as_deref(),
        init_commands: &found.init_commands,
    };
    template::render(attach, &values).map_err(|cause| LocateError::Template {
        id: id.clone(),
        template: Context::Attach.key(),
        cause,
    })
}

/// What `adapters` says: per adapter, whether it can be used here and why (not).
pub async fn report(catalog: &Catalog, workspace: &Path) -> String {
    let mut out = Vec::new();
    for kind in catalog.iter() {
        let id = &kind.id;
        let here = workspace.join(".");
        out.push(
            match find_with(catalog, id, &here, workspace, false).await {
                Ok(found) if kind.user => format!(
                    "{id}: ready ({}; from [debug.adapters.{id}]{})",
                    found.argv.join(" "),
                    match (&kind.launch, &kind.attach) {
                        (Some(_), _) => "",
                        (None, Some(_)) => "; no `launch` table: it can only attach",
                        (None, None) => "; no `launch` table: launching is refused",
                    }
                ),
                Ok(found) => format!(
                    "{id}: ready ({})",
                    found.interpreter.unwrap_or_else(|| found.argv.join(" "))
                ),
                Err(why) => why.to_string(),
            },
        );
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn found(catalog: &Catalog, id: &str, argv: &[&str], init: &[&str]) -> Found {
        Found {
            id: id.into(),
            kind: catalog.get(id).unwrap().clone(),
            argv: argv.iter().map(|a| a.to_string()).collect(),
            root: PathBuf::from("/w"),
            python: (id == "debugpy").then(|| argv[0].to_string()),
            interpreter: None,
            init_commands: init.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// The built-in templates send what the adapters were sent before they were data.
    #[test]
    fn built_in_templates_send_what_each_adapter_expects() {
        let catalog = Catalog::builtin().unwrap();
        let (program, args) = (Path::new("/w/src/main.x"), ["a".to_string()]);
        let py = found(&catalog, "debugpy", &["/w/.venv/bin/python", "-m"], &[]);
        assert_eq!(
            launch_args(&py, program, &args).unwrap(),
            json!({"request": "launch", "name": "tether", "type": "python",
                "program": program, "args": args, "cwd": "/w",
                "console": "internalConsole", "justMyCode": true,
                "python": ["/w/.venv/bin/python"]})
        );
        assert_eq!(
            attach_args(&py, 5678).unwrap(),
            json!({"request": "attach", "name": "tether", "justMyCode": true})
        );
        let lldb = found(&catalog, "lldb", &["lldb-dap"], &["command source x"]);
        assert_eq!(
            launch_args(&lldb, program, &args).unwrap(),
            json!({"request": "launch", "name": "tether", "program": program, "args": args,
                "cwd": "/w", "stopOnEntry": false, "initCommands": ["command source x"]})
        );
        assert_eq!(
            attach_args(&lldb, 1234).unwrap(),
            json!({"request": "attach", "name": "tether", "initCommands": ["command source x"],
                "gdb-remote-port": 1234, "gdb-remote-hostname": "127.0.0.1"})
        );
        let delve = found(&catalog, "delve", &["dlv"], &[]);
        assert_eq!(
            launch_args(&delve, program, &args).unwrap(),
            json!({"request": "launch", "name": "tether", "mode": "debug",
                "program": "/w/src", "args": args, "cwd": "/w"})
        );
        assert_eq!(
            attach_args(&delve, 1).unwrap(),
            json!({"request": "attach", "name": "tether", "mode": "remote"})
        );
        let dart = found(&catalog, "dart", &["dart"], &[]);
        assert_eq!(
            launch_args(&dart, program, &args).unwrap(),
            json!({"request": "launch", "name": "tether", "program": program, "args": args,
                "cwd": "/w"})
        );
        assert!(attach_args(&dart, 1).is_err());
    }

    #[test]
    fn commands_fill_binary_and_python() {
        let catalog = Catalog::builtin().unwrap();
        let py = command(catalog.get("debugpy").unwrap(), Some("/p/python"), true);
        assert_eq!(py.unwrap(), ["/p/python", "-m", "debugpy.adapter"]);
        let missing = Catalog::merged(
            &[(
                "delve".to_string(),
                crate::AdapterOverride {
                    binaries: Some(vec!["no-such-dlv-here".into()]),
                    ..Default::default()
                },
            )]
            .into(),
        )
        .unwrap();
        let err = command(missing.get("delve").unwrap(), None, true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "delve: a project marker is there, but none of no-such-dlv-here is on PATH"
        );
        let err = command(missing.get("delve").unwrap(), None, false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "delve: none of no-such-dlv-here is on PATH"
        );
    }

    #[test]
    fn attach_is_offered_by_the_entries_with_an_attach_table() {
        let catalog = Catalog::builtin().unwrap();
        assert_eq!(listed(&["a", "b", "c"]), "a, b and c");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = rt
            .block_on(for_attach(&catalog, "dart", Path::new("/")))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("attach by port is built for debugpy, lldb and delve, not `dart`"),
            "{err}"
        );
        let over = rt
            .block_on(for_attach(&catalog, "delve", Path::new("/")))
            .unwrap();
        assert!(over.argv.is_empty(), "delve's port speaks DAP itself");
    }
}
