use std::path::{Path, PathBuf};

/// Where the user's trust decisions live: workspace roots with the fingerprint of the
/// `tether.toml` each had when trusted, in `trusted.toml` under the user's config folder.
/// Only the user writes it (tools may not), never a workspace file.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct TrustFile {
    /// Roots trusted before trust covered the config's content; they must be trusted again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roots: Vec<PathBuf>,
    #[serde(default, rename = "workspace")]
    workspaces: Vec<TrustEntry>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct TrustEntry {
    root: PathBuf,
    /// Fingerprint of the workspace `tether.toml` when it was trusted (see
    /// [`crate::toml_file::fingerprint`]).
    config: String,
}

/// Whether a workspace's current config is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    /// Trusted with this exact `tether.toml`.
    Trusted,
    /// Trusted once, but its `tether.toml` changed since (a pull, or the agent): trust again.
    Changed,
    /// Never trusted.
    Untrusted,
}

impl TrustStore {
    /// The store in `config_dir` (see [`crate::Config::user_dir`]).
    pub fn new(config_dir: &Path) -> Self {
        TrustStore {
            file: config_dir.join("trusted.toml"),
        }
    }

    /// Whether `root` (canonical), with its config fingerprinted as `config`, was trusted with
    /// `tether trust`. A trust list that cannot be read trusts nothing (and says why in the
    /// log; `doctor` shows it too).
    pub fn state(&self, root: &Path, config: &str) -> TrustState {
        match self.load() {
            Ok(file) => {
                let mut known = file.roots.iter().any(|r| r == root);
                for e in file.workspaces.iter().filter(|e| e.root == root) {
                    if e.config == config {
                        return TrustState::Trusted;
                    }
                    known = true;
                }
                if known {
                    TrustState::Changed
                } else {
                    TrustState::Untrusted
                }
            }
            Err(e) => {
                tracing::warn!("{e}");
                TrustState::Untrusted
            }
        }
    }

    /// Whether `root` is trusted with the `tether.toml` it has now.
    pub fn is_trusted(&self, root: &Path) -> bool {
        match crate::toml_file::fingerprint(root) {
            Ok(f) => self.state(root, &f) == TrustState::Trusted,
            Err(_) => false,
        }
    }

    /// Marks `root` as trusted, so commands its `tether.toml` defines may run. Refuses to
    /// rewrite a trust list it cannot read, so no earlier decision is lost.
    pub fn trust(&self, root: &Path) -> Result<bool, String> {
        if !root.is_dir() {
            return Err(format!(
                "{} is not a folder; trust the workspace root",
                root.display()
            ));
        }
        let config = crate::toml_file::fingerprint(root).map_err(|e| e.to_string())?;
        let mut file = self.load()?;
        if self.state(root, &config) == TrustState::Trusted {
            return Ok(false);
        }
        file.roots.retain(|r| r != root);
        file.workspaces.retain(|e| e.root != root);
        file.workspaces.push(TrustEntry {
            root: root.to_path_buf(),
            config,
        });
        self.save(&file)?;
        Ok(true)
    }

    /// Removes `root` from the trust list, so commands its `tether.toml` defines stop running;
    /// `Ok(false)` when it was not there (nothing is written then). Like [`TrustStore::trust`],
    /// it refuses to rewrite a list it cannot read.
    pub fn revoke(&self, root: &Path) -> Result<bool, String> {
        let mut file = self.load()?;
        let before = file.roots.len() + file.workspaces.len();
        file.roots.retain(|r| r != root);
        file.workspaces.retain(|e| e.root != root);
        if file.roots.len() + file.workspaces.len() == before {
            return Ok(false);
        }
        self.save(&file)?;
        Ok(true)
    }

    /// Replaces the list on disk in one rename, so a crash leaves the old or the new list.
    fn save(&self, file: &TrustFile) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot write {}: {e}", self.file.display());
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = toml::to_string(file).map_err(|e| e.to_string())?;
        let tmp = self.file.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.file).map_err(io)?;
        Ok(())
    }

    /// Whether the trust list can be read; `Err` says what is wrong with it.
    pub fn check(&self) -> Result<(), String> {
        self.load().map(drop)
    }

    /// The file behind the store, for messages.
    pub fn path(&self) -> &Path {
        &self.file
    }

    fn load(&self) -> Result<TrustFile, String> {
        match std::fs::read_to_string(&self.file) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
                format!(
                    "the trust list {} does not parse ({e}); fix or delete it",
                    self.file.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(e) => Err(format!(
                "cannot read the trust list {}: {e}",
                self.file.display()
            )),
        }
    }
}

/// A value from a workspace file that must not be acted on until the user trusts the
/// workspace. Only this crate can open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted<T> {
    value: T,
    trusted: bool,
}

impl<T> Untrusted<T> {
    pub(crate) fn new(value: T, trusted: bool) -> Self {
        Untrusted { value, trusted }
    }

    /// The value if the workspace is trusted (or it came from the user's own file).
    pub fn get(&self) -> Option<&T> {
        self.trusted.then_some(&self.value)
    }

    /// The value for display only (doctor, status): never to be executed.
    pub fn shown(&self) -> &T {
        &self.value
    }

    /// Whether [`Untrusted::get`] will give the value.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn revoking_removes_current_and_old_style_entries_and_says_whether_there_were_any() {
        let cfg = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let kept = other.path().canonicalize().unwrap();
        let store = TrustStore::new(cfg.path());
        assert!(!store.revoke(&root).unwrap());
        assert!(!store.path().exists(), "nothing to revoke writes nothing");
        assert!(store.trust(&root).unwrap());
        assert!(store.trust(&kept).unwrap());
        assert!(store.is_trusted(&root));
        assert!(store.revoke(&root).unwrap());
        assert!(!store.is_trusted(&root));
        assert!(store.is_trusted(&kept));
        assert!(!store.revoke(&root).unwrap());

        let legacy = format!("roots = [{:?}]\n", root.display().to_string());
        std::fs::write(store.path(), legacy).unwrap();
        assert!(store.revoke(&root).unwrap());
        assert!(
            !std::fs::read_to_string(store.path())
                .unwrap()
                .contains("roots")
        );

        std::fs::write(store.path(), "roots = [").unwrap();
        assert!(
            store
                .revoke(&root)
                .unwrap_err()
                .contains("fix or delete it")
        );
        assert_eq!(std::fs::read_to_string(store.path()).unwrap(), "roots = [");
    }
}
