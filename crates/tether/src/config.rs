use std::path::{Path, PathBuf};

use tether_tool::ApprovalPolicy;
use toml::{Table, Value};

use crate::trust::{TrustState, TrustStore, Untrusted};

/// Settings an untrusted workspace file may set, because they run nothing and widen nothing.
/// Every other workspace setting (commands, binaries, probes, templates, read roots, whatever
/// a later capability adds) is held back until the user trusts this exact file.
const INERT_KEYS: &[&str] = &[
    "approval",
    "ask.timeout_s",
    "structural.cache_mb",
    "structural.syntax_check",
];

/// A config file that cannot be used: which file, which key (when one is to blame), and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}{reason}", .file.display(), .key.as_ref().map(|k| format!("`{k}`: ")).unwrap_or_default())]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// The dotted key at fault, if one is.
    pub key: Option<String>,
    /// What is wrong and what is allowed.
    pub reason: String,
}

impl ConfigError {
    pub(crate) fn new(file: &Path, key: Option<&str>, reason: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            key: key.map(str::to_string),
            reason: reason.into(),
        }
    }
}

/// Which file a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigSource {
    /// The user's own `tether.toml`: always trusted.
    User(PathBuf),
    /// The workspace's `tether.toml`: it came with the repository.
    Workspace(PathBuf),
}

/// A setting that runs something or widens access, with whether this run honours it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    /// Dotted key, such as `lsp.servers.rust.command`.
    pub key: String,
    /// The value as written, for display.
    pub value: String,
    /// The workspace file that set it.
    pub source: ConfigSource,
    /// False when the workspace is untrusted: the value is reported, never used.
    pub honoured: bool,
}

/// `tether.toml` from the user's config folder and the workspace root, merged key by key
/// (the workspace wins), except that commands and read roots from an untrusted workspace
/// file are held back.
#[derive(Debug, Clone)]
pub struct Config {
    user: Table,
    workspace: Table,
    merged: Table,
    root: PathBuf,
    user_dir: PathBuf,
    files: Vec<ConfigSource>,
    trust: TrustState,
    /// The user's config folder lies inside the workspace, so its files count as workspace files.
    user_inside: bool,
}

impl Config {
    /// The user's config folder: `$TETHER_CONFIG_DIR`, else `$XDG_CONFIG_HOME/tether`, else
    /// `~/.config/tether`.
    pub fn user_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("TETHER_CONFIG_DIR") {
            return PathBuf::from(dir);
        }
        if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
            return PathBuf::from(dir).join("tether");
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        home.join(".config").join("tether")
    }

    /// Tether's state folder (journals of interrupted writes, run locks):
    /// `$TETHER_STATE_DIR`, else `$XDG_STATE_HOME/tether`, else `~/.local/state/tether`.
    pub fn state_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os("TETHER_STATE_DIR") {
            return PathBuf::from(dir);
        }
        if let Some(dir) = std::env::var_os("XDG_STATE_HOME") {
            return PathBuf::from(dir).join("tether");
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        home.join(".local").join("state").join("tether")
    }

    /// Loads both files for the canonical workspace `root`; a file that does not parse is an
    /// error naming the file and the line.
    ///
    /// A user config folder inside the workspace is the agent's to write, so its file counts
    /// as a workspace file and its trust list is ignored.
    pub fn load(root: &Path, user_dir: &Path) -> Result<Self, ConfigError> {
        let mut files = Vec::new();
        let user_inside = lies_inside(user_dir, root);
        let user_file = user_dir.join("tether.toml");
        let user = read_table(&user_file)?;
        if user.is_some() {
            files.push(match user_inside {
                true => ConfigSource::Workspace(user_file),
                false => ConfigSource::User(user_file),
            });
        }
        let ws_file = root.join("tether.toml");
        let ws_bytes = read_workspace_file(&ws_file)?;
        let workspace = ws_bytes
            .as_deref()
            .map(|b| parse_table(&ws_file, b))
            .transpose()?;
        if workspace.is_some() {
            files.push(ConfigSource::Workspace(ws_file));
        }
        let (mut user, mut workspace) = (user.unwrap_or_default(), workspace.unwrap_or_default());
        if user_inside {
            let mut both = std::mem::take(&mut user);
            merge(&mut both, &workspace);
            workspace = both;
        }
        let trust = match user_inside {
            true => TrustState::Untrusted,
            false => TrustStore::new(user_dir).state(root, &fingerprint_of(ws_bytes.as_deref())),
        };
        let trusted = trust == TrustState::Trusted;
        let mut merged = user.clone();
        merge(
            &mut merged,
            &match trusted {
                true => workspace.clone(),
                false => inert_only(&workspace, ""),
            },
        );
        Ok(Config {
            user,
            workspace,
            merged,
            root: root.to_path_buf(),
            user_dir: user_dir.to_path_buf(),
            files,
            trust,
            user_inside,
        })
    }

    /// Whether the user's config folder lies inside the workspace (so it is not trusted).
    pub fn user_dir_inside_workspace(&self) -> bool {
        self.user_inside
    }

    /// Where trust stands for this workspace's current config.
    pub fn trust_state(&self) -> TrustState {
        self.trust
    }

    /// The files that were found, user first.
    pub fn files(&self) -> &[ConfigSource] {
        &self.files
    }

    /// Whether the user trusted this workspace with its current `tether.toml`.
    pub fn workspace_trusted(&self) -> bool {
        self.workspace_trusted_now()
    }

    fn workspace_trusted_now(&self) -> bool {
        self.trust == TrustState::Trusted
    }

    /// The folder holding the user's file and the trust list.
    pub fn dir(&self) -> &Path {
        &self.user_dir
    }

    /// The file that set the merged value at `key` (the workspace file wins), for messages.
    pub fn source_of(&self, key: &str) -> PathBuf {
        match self.workspace_value(key) {
            Some(_) => self.root.join("tether.toml"),
            None => self.user_dir.join("tether.toml"),
        }
    }

    /// How long a question or approval card waits for the human (`[ask] timeout_s`, default
    /// 1,800 s).
    pub fn ask_timeout(&self) -> Result<std::time::Duration, ConfigError> {
        let Some(section) = self.get("ask") else {
            return Ok(std::time::Duration::from_secs(1800));
        };
        let file = self.source_of("ask");
        let bad = |why: String| ConfigError::new(&file, Some("ask"), why);
        let Value::Table(table) = section else {
            return Err(bad("[ask] must be a table".into()));
        };
        if let Some(key) = table.keys().find(|k| *k != "timeout_s") {
            return Err(bad(format!(
                "unknown key `{key}`; [ask] has only `timeout_s`"
            )));
        }
        match table.get("timeout_s") {
            None => Ok(std::time::Duration::from_secs(1800)),
            Some(Value::Integer(n)) if (1..=86_400).contains(n) => {
                Ok(std::time::Duration::from_secs(*n as u64))
            }
            Some(other) => Err(bad(format!(
                "`timeout_s = {other}`: give seconds from 1 to 86400"
            ))),
        }
    }

    /// The approval policy. A workspace file may tighten it to `ask`, but loosen it to
    /// `never` only once trusted.
    pub fn approval(&self) -> Result<ApprovalPolicy, ConfigError> {
        let parse = |t: &Table, file: PathBuf| -> Result<Option<ApprovalPolicy>, ConfigError> {
            match t.get("approval") {
                None => Ok(None),
                Some(Value::String(s)) if s == "never" => Ok(Some(ApprovalPolicy::Never)),
                Some(Value::String(s)) if s == "ask" => Ok(Some(ApprovalPolicy::Ask)),
                Some(other) => Err(ConfigError::new(
                    &file,
                    Some("approval"),
                    format!("{other} is not valid; use \"never\" or \"ask\""),
                )),
            }
        };
        let user = parse(&self.user, self.user_dir.join("tether.toml"))?.unwrap_or_default();
        Ok(
            match parse(&self.workspace, self.root.join("tether.toml"))? {
                Some(ApprovalPolicy::Ask) => ApprovalPolicy::Ask,
                Some(p) if self.workspace_trusted_now() => p,
                _ => user,
            },
        )
    }

    /// Extra folders `read` may look into (`[files] read_roots`): `~` is expanded and a
    /// relative path is taken from the folder of the file that set it.
    pub fn read_roots(&self) -> Result<Vec<PathBuf>, ConfigError> {
        const KEY: &str = "files.read_roots";
        let (value, base, file) = match (lookup(&self.workspace, KEY), lookup(&self.user, KEY)) {
            (Some(v), _) if self.workspace_trusted_now() => {
                (v, &self.root, self.root.join("tether.toml"))
            }
            (_, Some(v)) => (v, &self.user_dir, self.user_dir.join("tether.toml")),
            _ => return Ok(Vec::new()),
        };
        let Some(items) = value.as_array() else {
            return Err(ConfigError::new(
                &file,
                Some(KEY),
                "must be a list of paths",
            ));
        };
        items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(|p| base.join(expand_home(p)))
                    .ok_or_else(|| {
                        ConfigError::new(&file, Some(KEY), format!("holds {v}, not a path string"))
                    })
            })
            .collect()
    }

    /// A command (an argv list) at dotted `key`, held back if an untrusted workspace set it.
    pub fn command(&self, key: &str) -> Option<Untrusted<Vec<String>>> {
        let value = self
            .workspace_value(key)
            .or_else(|| lookup(&self.user, key))?;
        let argv: Vec<String> = value
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let from_workspace = self.workspace_value(key).is_some();
        Some(Untrusted::new(
            argv,
            self.workspace_trusted_now() || !from_workspace,
        ))
    }

    /// Every setting from a workspace file that needs trust: all but the inert ones.
    pub fn guarded(&self) -> Vec<Loaded> {
        let Some(file) = self.files.iter().rev().find_map(|f| match f {
            ConfigSource::Workspace(p) => Some(p.clone()),
            ConfigSource::User(_) => None,
        }) else {
            return Vec::new();
        };
        let mut keys = Vec::new();
        collect_guarded(&self.workspace, "", &mut keys);
        keys.into_iter()
            .map(|(key, value)| Loaded {
                key,
                value,
                source: ConfigSource::Workspace(file.clone()),
                honoured: self.workspace_trusted_now(),
            })
            .collect()
    }

    /// The merged value at a dotted key, for sections owned by other crates.
    pub fn get(&self, key: &str) -> Option<&Value> {
        lookup(&self.merged, key)
    }

    fn workspace_value(&self, key: &str) -> Option<&Value> {
        lookup(&self.workspace, key)
    }
}

fn read_table(path: &Path) -> Result<Option<Table>, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => parse_table(path, &bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::new(path, None, format!("cannot read it: {e}"))),
    }
}

fn parse_table(path: &Path, bytes: &[u8]) -> Result<Table, ConfigError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ConfigError::new(path, None, "it is not UTF-8 text"))?;
    text.parse::<Table>()
        .map_err(|e| ConfigError::new(path, None, format!("it does not parse: {e}")))
}

/// Reads the workspace `tether.toml`, which must be a regular file inside the root: a symlink
/// (say, to /etc/passwd) or a FIFO is refused before anything is read from it.
fn read_workspace_file(path: &Path) -> Result<Option<Vec<u8>>, ConfigError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |what: &str| {
        ConfigError::new(
            path,
            None,
            format!(
                "it is {what}; a workspace tether.toml must be a regular file inside the \
                 workspace root (replace it with a real file, or remove it)"
            ),
        )
    };
    let unreadable =
        |e: std::io::Error| ConfigError::new(path, None, format!("cannot read it: {e}"));
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("a symlink"));
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(unreadable)?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Err(refuse("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(unreadable)?;
    Ok(Some(bytes))
}

/// The fingerprint trust is tied to: a hash of the workspace `tether.toml`'s bytes, or `none`
/// when there is no such file.
pub(crate) fn fingerprint(root: &Path) -> Result<String, ConfigError> {
    Ok(fingerprint_of(
        read_workspace_file(&root.join("tether.toml"))?.as_deref(),
    ))
}

fn fingerprint_of(bytes: Option<&[u8]>) -> String {
    match bytes {
        Some(b) => format!("xxh3-{}", tether_fs::hash_bytes(b)),
        None => "none".into(),
    }
}

/// Whether `dir` (which may not exist yet) lies inside the canonical `root`.
fn lies_inside(dir: &Path, root: &Path) -> bool {
    let mut probe = dir.to_path_buf();
    let mut tail = Vec::new();
    loop {
        if let Ok(real) = probe.canonicalize() {
            let full: PathBuf = tail.iter().rev().fold(real, |p, c| p.join(c));
            return full.starts_with(root);
        }
        match (probe.file_name().map(|n| n.to_owned()), probe.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                probe = parent.to_path_buf();
            }
            _ => return false,
        }
    }
}

/// The part of `table` an untrusted workspace may set (see [`INERT_KEYS`]).
fn inert_only(table: &Table, prefix: &str) -> Table {
    let mut out = Table::new();
    for (k, v) in table {
        let key = match prefix {
            "" => k.clone(),
            p => format!("{p}.{k}"),
        };
        match v {
            Value::Table(t) => {
                let inner = inert_only(t, &key);
                if !inner.is_empty() {
                    out.insert(k.clone(), Value::Table(inner));
                }
            }
            _ if INERT_KEYS.contains(&key.as_str()) => {
                out.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    out
}

/// Merges `over` into `base` key by key; tables merge recursively, anything else is replaced.
fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

fn collect_guarded(table: &Table, prefix: &str, out: &mut Vec<(String, String)>) {
    for (k, v) in table {
        let key = match prefix {
            "" => k.clone(),
            p => format!("{p}.{k}"),
        };
        match v {
            Value::Table(t) => collect_guarded(t, &key, out),
            _ if !INERT_KEYS.contains(&key.as_str()) => out.push((key, v.to_string())),
            _ => {}
        }
    }
}

fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(user: &str, ws: &str) -> (tempfile::TempDir, tempfile::TempDir) {
        let u = tempfile::tempdir().unwrap();
        let w = tempfile::tempdir().unwrap();
        std::fs::write(u.path().join("tether.toml"), user).unwrap();
        std::fs::write(w.path().join("tether.toml"), ws).unwrap();
        (u, w)
    }

    #[test]
    fn workspace_wins_key_by_key_once_trusted() {
        let (u, w) = setup(
            "[a]\nx = 1\ny = 2\n[structural]\ncache_mb = 5\n",
            "[a]\ny = 3\n[structural]\ncache_mb = 7\n",
        );
        let root = w.path().canonicalize().unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.get("a.y").unwrap().as_integer(), Some(2), "held back");
        assert_eq!(c.get("structural.cache_mb").unwrap().as_integer(), Some(7));
        assert_eq!(c.guarded()[0].key, "a.y");
        TrustStore::new(u.path()).trust(&root).unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.get("a.x").unwrap().as_integer(), Some(1));
        assert_eq!(c.get("a.y").unwrap().as_integer(), Some(3));
    }

    #[test]
    fn trust_covers_the_config_content() {
        let (u, w) = setup("", "[lsp.servers.rust]\nbinaries = [\"ra\"]\n");
        let root = w.path().canonicalize().unwrap();
        TrustStore::new(u.path()).trust(&root).unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.trust_state(), TrustState::Trusted);
        assert!(c.get("lsp.servers.rust.binaries").is_some());
        std::fs::write(
            w.path().join("tether.toml"),
            "[lsp.servers.rust]\nbinaries = [\"/tmp/evil\"]\n",
        )
        .unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.trust_state(), TrustState::Changed);
        assert!(c.get("lsp.servers.rust.binaries").is_none());
        assert!(!c.guarded()[0].honoured);
    }

    #[test]
    fn a_user_config_folder_inside_the_workspace_is_not_trusted() {
        let w = tempfile::tempdir().unwrap();
        let root = w.path().canonicalize().unwrap();
        let user = root.join(".config/tether");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join("tether.toml"), "[files]\nread_roots = [\"/\"]\n").unwrap();
        TrustStore::new(&user).trust(&root).unwrap();
        let c = Config::load(&root, &user).unwrap();
        assert!(c.user_dir_inside_workspace());
        assert!(!c.workspace_trusted());
        assert_eq!(c.read_roots().unwrap(), Vec::<PathBuf>::new());
    }

    #[test]
    fn a_workspace_config_symlink_is_refused_unread() {
        let (u, w) = setup("", "");
        std::fs::remove_file(w.path().join("tether.toml")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", w.path().join("tether.toml")).unwrap();
        let e = Config::load(w.path(), u.path()).unwrap_err().to_string();
        assert!(
            e.contains("is a symlink") && e.contains("regular file"),
            "{e}"
        );
        assert!(!e.contains("root:"), "{e}");
    }

    #[test]
    fn workspace_commands_need_trust() {
        let (u, w) = setup(
            "[lsp.servers.py]\ncommand = [\"pyright\"]\n",
            "[lsp.servers.rust]\ncommand = [\"evil\", \"--x\"]\n",
        );
        let root = w.path().canonicalize().unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        let cmd = c.command("lsp.servers.rust.command").unwrap();
        assert_eq!(cmd.get(), None);
        assert_eq!(cmd.shown(), &vec!["evil".to_string(), "--x".to_string()]);
        assert!(c.command("lsp.servers.py.command").unwrap().get().is_some());
        assert!(!c.guarded()[0].honoured);

        TrustStore::new(u.path()).trust(&root).unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert!(
            c.command("lsp.servers.rust.command")
                .unwrap()
                .get()
                .is_some()
        );
        assert!(c.guarded()[0].honoured);
    }

    #[test]
    fn untrusted_workspace_can_tighten_but_not_loosen_approval_or_widen_reads() {
        let (u, w) = setup(
            "approval = \"ask\"\n[files]\nread_roots = [\"/usr\"]\n",
            "approval = \"never\"\n[files]\nread_roots = [\"/\"]\n",
        );
        let root = w.path().canonicalize().unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.approval().unwrap(), ApprovalPolicy::Ask);
        assert_eq!(c.read_roots().unwrap(), vec![PathBuf::from("/usr")]);
        TrustStore::new(u.path()).trust(&root).unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.approval().unwrap(), ApprovalPolicy::Never);
        assert_eq!(c.read_roots().unwrap(), vec![PathBuf::from("/")]);
    }

    #[test]
    fn an_untrusted_workspace_may_tighten_approval_to_ask() {
        let (u, w) = setup("approval = \"never\"\n", "approval = \"ask\"\n");
        let root = w.path().canonicalize().unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert!(!c.workspace_trusted());
        assert_eq!(c.approval().unwrap(), ApprovalPolicy::Ask);
    }

    #[test]
    fn a_tilde_in_read_roots_is_the_home_folder() {
        let (u, w) = setup("[files]\nread_roots = [\"~/lib\"]\n", "");
        let root = w.path().canonicalize().unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
        assert_eq!(c.read_roots().unwrap(), vec![home.join("lib")]);
    }

    #[test]
    fn relative_read_roots_start_at_the_file_that_set_them() {
        let (u, w) = setup("", "[files]\nread_roots = [\"../lib\"]\n");
        let root = w.path().canonicalize().unwrap();
        TrustStore::new(u.path()).trust(&root).unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.read_roots().unwrap(), vec![root.join("../lib")]);
        std::fs::write(
            u.path().join("tether.toml"),
            "[files]\nread_roots = [\"mine\"]\n",
        )
        .unwrap();
        std::fs::write(w.path().join("tether.toml"), "").unwrap();
        let c = Config::load(&root, u.path()).unwrap();
        assert_eq!(c.read_roots().unwrap(), vec![u.path().join("mine")]);
    }

    #[test]
    fn bad_files_and_values_are_explained() {
        let (u, w) = setup("approval = 3\n", "[x\n");
        let e = Config::load(w.path(), u.path()).unwrap_err().to_string();
        assert!(e.contains("does not parse"), "{e}");
        std::fs::write(w.path().join("tether.toml"), "").unwrap();
        let c = Config::load(w.path(), u.path()).unwrap();
        let e = c.approval().unwrap_err().to_string();
        assert!(
            e.contains("\"never\" or \"ask\"") && e.contains(&u.path().display().to_string()),
            "{e}"
        );
    }
}
