use std::path::{Path, PathBuf};

/// Where the user's trust decisions live: a list of workspace roots in `trusted.toml` under
/// the user's config folder. Only the user writes it, never a workspace file.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct TrustFile {
    #[serde(default)]
    roots: Vec<PathBuf>,
}

impl TrustStore {
    /// The store in `config_dir` (see [`crate::Config::user_dir`]).
    pub fn new(config_dir: &Path) -> Self {
        TrustStore {
            file: config_dir.join("trusted.toml"),
        }
    }

    /// Whether `root` (canonical) was trusted with `tether trust`.
    pub fn is_trusted(&self, root: &Path) -> bool {
        self.load().roots.iter().any(|r| r == root)
    }

    /// Marks `root` as trusted, so commands its `tether.toml` defines may run.
    pub fn trust(&self, root: &Path) -> std::io::Result<bool> {
        let mut file = self.load();
        if file.roots.iter().any(|r| r == root) {
            return Ok(false);
        }
        file.roots.push(root.to_path_buf());
        if let Some(dir) = self.file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = toml::to_string(&file).map_err(std::io::Error::other)?;
        std::fs::write(&self.file, text)?;
        Ok(true)
    }

    /// The file behind the store, for messages.
    pub fn path(&self) -> &Path {
        &self.file
    }

    fn load(&self) -> TrustFile {
        std::fs::read_to_string(&self.file)
            .ok()
            .and_then(|t| toml::from_str(&t).ok())
            .unwrap_or_default()
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
