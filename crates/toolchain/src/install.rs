//! Servers tether installs itself, each in a folder of its own under the user's data folder
//! (`servers/NAME/VERSION`), through its ecosystem's own installer and never globally:
//! npm with a prefix, pip into a private virtual environment, `cargo install --root`, `go
//! install` with its own GOBIN and GOPATH; Debian's archive alone installs system-wide, with
//! apt-get as root (or through sudo), and only when the user asks for that. `installed.toml`
//! beside them is the only record a lookup reads, written last, so an install cut off half-way
//! is never found.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tether_proc::{ChildSpec, ProcError, run_with_deadline};

/// How long one installer may run.
const INSTALL_DEADLINE: Duration = Duration::from_secs(600);
/// How long an install waits for another one (another front end, the same server) to end.
const WAIT_FOR_OTHERS: Duration = Duration::from_secs(660);
/// The installer's output lines a failure quotes.
const QUOTED_LINES: usize = 12;

/// Where a server comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Registry {
    /// The npm registry, installed with `npm install --prefix`.
    Npm,
    /// PyPI, installed with pip into a virtual environment of its own.
    Pip,
    /// The Rust crate registry, with `cargo install --root`.
    Cargo,
    /// The Go module proxy, with `go install`.
    Go,
    /// Debian's archive, with `apt-get install`: system-wide, as root or through sudo.
    Apt,
}

impl Registry {
    /// The program that installs from it.
    fn installer(self) -> &'static str {
        match self {
            Registry::Npm => "npm",
            Registry::Pip => "python3",
            Registry::Cargo => "cargo",
            Registry::Go => "go",
            Registry::Apt => "apt-get",
        }
    }

    /// Whether it installs for the whole system rather than into tether's folder.
    pub fn system_wide(self) -> bool {
        self == Registry::Apt
    }

    /// What to install when the installer is missing.
    fn installer_hint(self) -> &'static str {
        match self {
            Registry::Npm => "install Node.js, which brings npm",
            Registry::Pip => "install Python 3 with its venv module (Debian: python3-venv)",
            Registry::Cargo => "install Rust with rustup",
            Registry::Go => "install Go",
            Registry::Apt => "Debian's packages install on Debian and Ubuntu only",
        }
    }
}

impl std::fmt::Display for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Registry::Npm => "npm",
            Registry::Pip => "pip",
            Registry::Cargo => "cargo",
            Registry::Go => "go",
            Registry::Apt => "apt",
        })
    }
}

/// How a catalog entry is installed: the package, its registry and the version tether pins.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// The registry.
    pub from: Registry,
    /// The package (npm, pip, cargo) or module path (go).
    pub package: String,
    /// The version installed unless another is asked for.
    pub version: String,
    /// Packages installed beside it, as the registry names them with their versions
    /// (`typescript@5`).
    #[serde(default)]
    pub with: Vec<String>,
}

/// One installed server, as `installed.toml` records it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Installed {
    /// The version installed.
    pub version: String,
    /// The registry it came from.
    pub from: Registry,
    /// The package.
    pub package: String,
    /// The folder its programs are in.
    pub bin: PathBuf,
    /// Each program it was installed for, with the SHA-256 of the file it runs.
    pub programs: BTreeMap<String, String>,
}

impl Installed {
    /// Programs whose file is no longer the one installed (changed or gone).
    pub fn changed(&self) -> Vec<String> {
        self.programs
            .iter()
            .filter(|(name, hash)| sha256_of(&self.bin.join(name)).as_deref() != Some(hash))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// Why a server was not installed, said with what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The installer itself is missing.
    #[error("{program} is not on PATH, and installing from {from} needs it: {hint}")]
    NoInstaller {
        /// The registry.
        from: Registry,
        /// The installer.
        program: &'static str,
        /// What to install.
        hint: &'static str,
    },
    /// The registry could not be reached.
    #[error(
        "the {from} registry could not be reached, so {package} was not installed: check the \
         network and any proxy setting, then run the same command again. The installer said:\n{said}"
    )]
    Unreachable {
        /// The registry.
        from: Registry,
        /// The package.
        package: String,
        /// The installer's last lines.
        said: String,
    },
    /// The registry has no such package or version.
    #[error(
        "the {from} registry has no {package} {version}: `tether install --list` shows the \
         pinned versions. The installer said:\n{said}"
    )]
    NotFound {
        /// The registry.
        from: Registry,
        /// The package.
        package: String,
        /// The version asked for.
        version: String,
        /// The installer's last lines.
        said: String,
    },
    /// The disk filled up.
    #[error(
        "the disk holding {} is full, so {package} was not installed (nothing of it was \
         kept): free some space and run the same command again",
        .dir.display()
    )]
    DiskFull {
        /// The servers folder.
        dir: PathBuf,
        /// The package.
        package: String,
    },
    /// The installer failed another way (a package that does not build).
    #[error("`{command}` failed, so {package} was not installed (nothing of it was kept):\n{said}")]
    Failed {
        /// The command, as a shell would show it.
        command: String,
        /// The package.
        package: String,
        /// The installer's last lines.
        said: String,
    },
    /// The installer could not be run, or ran past its deadline.
    #[error("installing {package}: {cause}")]
    Run {
        /// The package.
        package: String,
        /// Why.
        #[source]
        cause: ProcError,
    },
    /// The package installed, but without the program the catalog runs.
    #[error(
        "{package} {version} installed, but it has no `{program}` in {}: the catalog's \
         recipe does not fit this version; give another with `--version`",
        .bin.display()
    )]
    NoProgram {
        /// The package.
        package: String,
        /// The version.
        version: String,
        /// The program looked for.
        program: String,
        /// Where it was looked for.
        bin: PathBuf,
    },
    /// A system-wide install, and neither root nor sudo without a password.
    #[error(
        "{package} comes from Debian's archive and installs system-wide, which needs root: run \
         the same command as root, or where `sudo -n true` succeeds"
    )]
    NeedsRoot {
        /// The package.
        package: String,
    },
    /// Another install held the servers folder for too long.
    #[error(
        "another tether has been installing into {} for more than {} s; wait for it, or end it",
        .dir.display(), .waited.as_secs()
    )]
    Busy {
        /// The servers folder.
        dir: PathBuf,
        /// How long this one waited.
        waited: Duration,
    },
    /// A file of the servers folder could not be read or written.
    #[error("{what} {}: {cause}", .path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        cause: std::io::Error,
    },
    /// `installed.toml` is not tether's.
    #[error("{} cannot be read ({reason}); move it aside and install again", .path.display())]
    Record {
        /// The file.
        path: PathBuf,
        /// What the TOML reader said.
        reason: String,
    },
}

/// The folder of the user's installed servers: `$TETHER_DATA_DIR/servers`, else
/// `$XDG_DATA_HOME/tether/servers`, else `~/.local/share/tether/servers`.
pub fn servers_dir() -> PathBuf {
    let data = match (
        std::env::var_os("TETHER_DATA_DIR"),
        std::env::var_os("XDG_DATA_HOME"),
    ) {
        (Some(dir), _) => PathBuf::from(dir),
        (None, Some(xdg)) if Path::new(&xdg).is_absolute() => PathBuf::from(xdg).join("tether"),
        _ => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
            .join(".local/share/tether"),
    };
    data.join("servers")
}

/// What `installed.toml` in `dir` records, by server name; nothing when there is none.
pub fn installed_in(dir: &Path) -> Result<BTreeMap<String, Installed>, InstallError> {
    let path = dir.join("installed.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(cause) => {
            return Err(InstallError::Io {
                what: "reading",
                path,
                cause,
            });
        }
    };
    toml::from_str(&text).map_err(|e: toml::de::Error| InstallError::Record {
        path,
        reason: e.message().to_string(),
    })
}

/// Where tether installed the first of `programs` it installed a server for whose file is
/// still there; the record is read once for all of them.
pub fn installed_program<S: AsRef<str>>(programs: &[S]) -> Option<PathBuf> {
    let all = installed_in(&servers_dir()).ok()?;
    programs.iter().find_map(|program| {
        let program = program.as_ref();
        all.values()
            .filter(|i| i.programs.contains_key(program))
            .map(|i| i.bin.join(program))
            .find(|p| p.is_file())
    })
}

/// The error of an I/O step on `path`, for `map_err`.
fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError {
    let path = path.to_path_buf();
    move |cause| InstallError::Io { what, path, cause }
}

/// Installs the server `name` by `recipe` (at `version`, else the recipe's), for the
/// `programs` the catalog runs, into `dir`. One install at a time per folder: another waits,
/// and finds the server installed when it was the same one. `progress` hears each step.
pub async fn install(
    dir: &Path,
    name: &str,
    recipe: &Recipe,
    version: Option<&str>,
    programs: &[String],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Installed, InstallError> {
    let version = version.unwrap_or(&recipe.version).to_string();
    std::fs::create_dir_all(dir).map_err(io("making", dir))?;
    let _held = hold(dir, progress).await?;
    let mut all = installed_in(dir)?;
    if let Some(done) = all.get(name)
        && done.version == version
        && done.changed().is_empty()
    {
        return Ok(done.clone());
    }
    let program = recipe.from.installer();
    if which::which(program).is_err() {
        return Err(InstallError::NoInstaller {
            from: recipe.from,
            program,
            hint: recipe.from.installer_hint(),
        });
    }
    let home = dir.join(name).join(&version);
    // Whatever is there is not recorded, so no lookup uses it: a cut-off install's leavings.
    if home.exists() {
        std::fs::remove_dir_all(&home).map_err(io("clearing", &home))?;
    }
    std::fs::create_dir_all(&home).map_err(io("making", &home))?;
    let place = match recipe.from.system_wide() {
        true => "system-wide, with apt-get".to_string(),
        false => format!("into {}", home.display()),
    };
    progress(&format!(
        "installing {name} ({} {} {version}) {place}",
        recipe.from, recipe.package
    ));
    let bin = match run_installer(dir, &home, recipe, &version).await {
        Ok(bin) => bin,
        Err(e) => {
            discard(&home);
            return Err(e);
        }
    };
    let mut hashes = BTreeMap::new();
    for program in programs {
        let Some(hash) = sha256_of(&bin.join(program)) else {
            discard(&home);
            return Err(InstallError::NoProgram {
                package: recipe.package.clone(),
                version,
                program: program.clone(),
                bin,
            });
        };
        hashes.insert(program.clone(), hash);
    }
    let entry = Installed {
        version,
        from: recipe.from,
        package: recipe.package.clone(),
        bin,
        programs: hashes,
    };
    let replaced = all.insert(name.to_string(), entry.clone());
    if let Err(e) = record(dir, &all) {
        // Not recorded, so never found: its files go too.
        discard(&home);
        let _ = std::fs::remove_file(dir.join(".installed.toml.next"));
        return Err(match e {
            InstallError::Io { cause, .. } if cause.raw_os_error() == Some(28) => {
                InstallError::DiskFull {
                    dir: dir.to_path_buf(),
                    package: recipe.package.clone(),
                }
            }
            other => other,
        });
    }
    // The version it replaces goes once the record no longer names it.
    if let Some(old) = replaced
        && old.version != entry.version
    {
        let _ = std::fs::remove_dir_all(dir.join(name).join(&old.version));
    }
    Ok(entry)
}

/// Removes an install that was not recorded, and its server's folder when nothing else is in
/// it: what is not recorded is never found, and is not left to fill the disk.
fn discard(home: &Path) {
    let _ = std::fs::remove_dir_all(home);
    if let Some(server) = home.parent() {
        let _ = std::fs::remove_dir(server);
    }
}

/// Removes the server `name`: its record first, then its files. `None` when it was not
/// installed.
pub async fn uninstall(
    dir: &Path,
    name: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<Installed>, InstallError> {
    let _held = hold(dir, progress).await?;
    let mut all = installed_in(dir)?;
    let Some(gone) = all.remove(name) else {
        return Ok(None);
    };
    record(dir, &all)?;
    let folder = dir.join(name);
    std::fs::remove_dir_all(&folder).map_err(|cause| InstallError::Io {
        what: "removing",
        path: folder,
        cause,
    })?;
    Ok(Some(gone))
}

/// Writes `installed.toml` whole: to a file beside it, then renamed over it.
fn record(dir: &Path, all: &BTreeMap<String, Installed>) -> Result<(), InstallError> {
    let path = dir.join("installed.toml");
    let text = toml::to_string(all).map_err(|e| InstallError::Record {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let next = dir.join(".installed.toml.next");
    std::fs::write(&next, text).map_err(io("writing", &next))?;
    std::fs::rename(&next, &path).map_err(io("replacing", &path))
}

/// Holds the servers folder for one install: an exclusive lock on a file in it, taken
/// without blocking a thread and given up when the returned file is dropped.
async fn hold(dir: &Path, progress: &(dyn Fn(&str) + Sync)) -> Result<std::fs::File, InstallError> {
    use rustix::fs::{FlockOperation, flock};
    let path = dir.join(".install.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|cause| InstallError::Io {
            what: "opening",
            path: path.clone(),
            cause,
        })?;
    let start = tokio::time::Instant::now();
    let mut said = false;
    loop {
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(rustix::io::Errno::WOULDBLOCK) => {}
            Err(e) => {
                return Err(InstallError::Io {
                    what: "locking",
                    path,
                    cause: e.into(),
                });
            }
        }
        if start.elapsed() > WAIT_FOR_OTHERS {
            return Err(InstallError::Busy {
                dir: dir.to_path_buf(),
                waited: start.elapsed(),
            });
        }
        if !said {
            progress("another tether is installing into the same folder; waiting for it");
            said = true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs the registry's installer into `home`; the folder its programs land in.
async fn run_installer(
    dir: &Path,
    home: &Path,
    recipe: &Recipe,
    version: &str,
) -> Result<PathBuf, InstallError> {
    let package = &recipe.package;
    let with = recipe.with.iter().cloned();
    let home_text = home.display().to_string();
    let (steps, bin): (Vec<Vec<String>>, PathBuf) = match recipe.from {
        Registry::Npm => {
            let mut argv: Vec<String> = [
                "npm",
                "install",
                "--prefix",
                &home_text,
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
            ]
            .map(String::from)
            .into();
            argv.push(format!("{package}@{version}"));
            argv.extend(with);
            (vec![argv], home.join("node_modules/.bin"))
        }
        Registry::Pip => {
            let python = home.join("bin/python").display().to_string();
            let mut pip: Vec<String> = [
                python.as_str(),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "--quiet",
            ]
            .map(String::from)
            .into();
            pip.push(format!("{package}=={version}"));
            pip.extend(with);
            let venv = ["python3", "-m", "venv", &home_text]
                .map(String::from)
                .into();
            (vec![venv, pip], home.join("bin"))
        }
        Registry::Cargo => {
            let argv = [
                "cargo",
                "install",
                "--locked",
                "--root",
                &home_text,
                "--version",
                version,
                package,
            ]
            .map(String::from)
            .into();
            (vec![argv], home.join("bin"))
        }
        Registry::Go => {
            let argv = vec![
                "go".into(),
                "install".into(),
                format!("{package}@{version}"),
            ];
            (vec![argv], home.join("bin"))
        }
        Registry::Apt => {
            let sudo: Vec<String> = match as_root(package).await? {
                true => Vec::new(),
                false => vec!["sudo".into(), "-n".into()],
            };
            let mut update = sudo.clone();
            update.extend(["apt-get", "update", "-qq"].map(String::from));
            let mut argv = sudo;
            argv.extend(
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends"].map(String::from),
            );
            argv.push(format!("{package}={version}"));
            argv.extend(with);
            (vec![update, argv], PathBuf::from("/usr/bin"))
        }
    };
    // What the earlier steps said: apt-get update only warns when it cannot reach the archive,
    // and the install that fails after it must be judged by that too.
    let mut earlier = String::new();
    for argv in steps {
        let mut env = vec![];
        if recipe.from == Registry::Go {
            env.push(("GOBIN".into(), home.join("bin").display().to_string()));
            env.push(("GOPATH".into(), home.join("go").display().to_string()));
            env.push(("GOFLAGS".into(), "-modcacherw".into()));
        }
        if recipe.from == Registry::Apt {
            env.push(("DEBIAN_FRONTEND".into(), "noninteractive".into()));
        }
        let spec = ChildSpec {
            argv: argv.clone(),
            cwd: Some(home.to_path_buf()),
            env,
        };
        let out = run_with_deadline(&spec, INSTALL_DEADLINE)
            .await
            .map_err(|cause| InstallError::Run {
                package: package.clone(),
                cause,
            })?;
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() {
            return Err(classify(dir, recipe, version, &argv, &earlier, &said));
        }
        earlier.push_str(&said);
    }
    Ok(bin)
}

/// Whether this process is root (apt-get runs as is), else whether sudo runs it without a
/// password; neither is [`InstallError::NeedsRoot`].
async fn as_root(package: &str) -> Result<bool, InstallError> {
    if rustix::process::geteuid().is_root() {
        return Ok(true);
    }
    let spec = ChildSpec {
        argv: ["sudo", "-n", "true"].map(String::from).into(),
        cwd: None,
        env: Vec::new(),
    };
    match run_with_deadline(&spec, Duration::from_secs(10)).await {
        Ok(out) if out.status.success() => Ok(false),
        _ => Err(InstallError::NeedsRoot {
            package: package.to_string(),
        }),
    }
}

/// Which failure the installer's words describe: those of the failed step, `said`, and where
/// it found no package, those of the steps before it, `earlier`.
fn classify(
    dir: &Path,
    recipe: &Recipe,
    version: &str,
    argv: &[String],
    earlier: &str,
    said: &str,
) -> InstallError {
    let quoted = last_lines(said, QUOTED_LINES);
    let package = recipe.package.clone();
    let has = |words: &[&str]| words.iter().any(|w| said.contains(w));
    if has(&["ENOSPC", "No space left on device"]) {
        return InstallError::DiskFull {
            dir: dir.to_path_buf(),
            package,
        };
    }
    let unreachable = [
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ETIMEDOUT",
        "ECONNRESET",
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Could not fetch URL",
        "dial tcp",
        "failed to query replaced source registry",
        "network failure",
        "module lookup disabled",
        "Temporary failure resolving",
        "Could not resolve",
        "Could not connect to",
        "Unable to connect to",
    ];
    if has(&unreachable) {
        return InstallError::Unreachable {
            from: recipe.from,
            package,
            said: quoted,
        };
    }
    if has(&[
        "E404",
        "ETARGET",
        "No matching version",
        "No matching distribution found",
        "Could not find a version that satisfies",
        "could not find `",
        "unknown revision",
        "Unable to locate package",
        "' was not found",
    ]) {
        // A package index the step before could not refresh (apt-get update only warns) says
        // nothing of what the registry has.
        if unreachable.iter().any(|w| earlier.contains(w)) {
            return InstallError::Unreachable {
                from: recipe.from,
                package,
                said: last_lines(&format!("{earlier}{said}"), QUOTED_LINES),
            };
        }
        return InstallError::NotFound {
            from: recipe.from,
            package,
            version: version.to_string(),
            said: quoted,
        };
    }
    InstallError::Failed {
        command: argv.join(" "),
        package,
        said: quoted,
    }
}

/// The last `n` non-empty lines of `text`.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The SHA-256 of the file `path` names (through links), in hex.
fn sha256_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let digest = Sha256::digest(&bytes);
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}
