use std::path::{Path, PathBuf};

use tether_tool::ApprovalPolicy;
use toml::{Table, Value};

use crate::trust::{TrustStore, Untrusted};

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
    trusted: bool,
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
    pub fn load(root: &Path, user_dir: &Path) -> Result<Self, String> {
        let mut files = Vec::new();
        let user_file = user_dir.join("tether.toml");
        let user = read_table(&user_file)?;
        if user.is_some() {
            files.push(ConfigSource::User(user_file));
        }
        let ws_file = root.join("tether.toml");
        let workspace = read_table(&ws_file)?;
        if workspace.is_some() {
            files.push(ConfigSource::Workspace(ws_file));
        }
        let (user, workspace) = (user.unwrap_or_default(), workspace.unwrap_or_default());
        let mut merged = user.clone();
        merge(&mut merged, &workspace);
        let trusted = TrustStore::new(user_dir).is_trusted(root);
        Ok(Config {
            user,
            workspace,
            merged,
            root: root.to_path_buf(),
            user_dir: user_dir.to_path_buf(),
            files,
            trusted,
        })
    }

    /// The files that were found, user first.
    pub fn files(&self) -> &[ConfigSource] {
        &self.files
    }

    /// Whether the user trusted this workspace.
    pub fn workspace_trusted(&self) -> bool {
        self.trusted
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

    /// The approval policy. A workspace file may tighten it to `ask`, but loosen it to
    /// `never` only once trusted.
    pub fn approval(&self) -> Result<ApprovalPolicy, String> {
        let parse = |t: &Table, file: PathBuf| -> Result<Option<ApprovalPolicy>, String> {
            match t.get("approval") {
                None => Ok(None),
                Some(Value::String(s)) if s == "never" => Ok(Some(ApprovalPolicy::Never)),
                Some(Value::String(s)) if s == "ask" => Ok(Some(ApprovalPolicy::Ask)),
                Some(other) => Err(format!(
                    "{}: `approval = {other}` is not valid; use \"never\" or \"ask\"",
                    file.display()
                )),
            }
        };
        let user = parse(&self.user, self.user_dir.join("tether.toml"))?.unwrap_or_default();
        Ok(
            match parse(&self.workspace, self.root.join("tether.toml"))? {
                Some(ApprovalPolicy::Ask) => ApprovalPolicy::Ask,
                Some(p) if self.trusted => p,
                _ => user,
            },
        )
    }

    /// Extra folders `read` may look into (`[files] read_roots`): `~` is expanded and a
    /// relative path is taken from the folder of the file that set it.
    pub fn read_roots(&self) -> Result<Vec<PathBuf>, String> {
        const KEY: &str = "files.read_roots";
        let (value, base, file) = match (lookup(&self.workspace, KEY), lookup(&self.user, KEY)) {
            (Some(v), _) if self.trusted => (v, &self.root, self.root.join("tether.toml")),
            (_, Some(v)) => (v, &self.user_dir, self.user_dir.join("tether.toml")),
            _ => return Ok(Vec::new()),
        };
        let Some(items) = value.as_array() else {
            return Err(format!(
                "{}: `{KEY}` must be a list of paths",
                file.display()
            ));
        };
        items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(|p| base.join(expand_home(p)))
                    .ok_or_else(|| {
                        format!(
                            "{}: `{KEY}` holds {v}, which is not a path string",
                            file.display()
                        )
                    })
            })
            .collect()
    }

    /// A command (an argv list) at dotted `key`, held back if an untrusted workspace set it.
    pub fn command(&self, key: &str) -> Option<Untrusted<Vec<String>>> {
        let argv: Vec<String> = lookup(&self.merged, key)?
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let from_workspace = self.workspace_value(key).is_some();
        Some(Untrusted::new(argv, self.trusted || !from_workspace))
    }

    /// Every setting from the workspace file that needs trust: each `command` key and
    /// `files.read_roots`.
    pub fn guarded(&self) -> Vec<Loaded> {
        let Some(ConfigSource::Workspace(file)) = self
            .files
            .iter()
            .find(|f| matches!(f, ConfigSource::Workspace(_)))
        else {
            return Vec::new();
        };
        let mut keys = Vec::new();
        collect_guarded(&self.workspace, "", &mut keys);
        keys.into_iter()
            .map(|(key, value)| Loaded {
                key,
                value,
                source: ConfigSource::Workspace(file.clone()),
                honoured: self.trusted,
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

fn read_table(path: &Path) -> Result<Option<Table>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .parse::<Table>()
            .map(Some)
            .map_err(|e| format!("{} does not parse: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
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
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(t) => collect_guarded(t, &key, out),
            _ if k == "command" || key == "files.read_roots" => out.push((key, v.to_string())),
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
    fn workspace_wins_key_by_key() {
        let (u, w) = setup("[a]\nx = 1\ny = 2\n", "[a]\ny = 3\n");
        let c = Config::load(w.path(), u.path()).unwrap();
        assert_eq!(c.get("a.x").unwrap().as_integer(), Some(1));
        assert_eq!(c.get("a.y").unwrap().as_integer(), Some(3));
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
        let e = Config::load(w.path(), u.path()).unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
        std::fs::write(w.path().join("tether.toml"), "").unwrap();
        let c = Config::load(w.path(), u.path()).unwrap();
        let e = c.approval().unwrap_err();
        assert!(
            e.contains("\"never\" or \"ask\"") && e.contains(&u.path().display().to_string()),
            "{e}"
        );
    }
}
