//! Reading the two `tether.toml` files: the workspace's must be a regular file inside the root,
//! and trust is tied to a fingerprint of its bytes.

use std::path::{Path, PathBuf};

use toml::Table;

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
    pub(crate) fn new(file: &Path, key: Option<&str>, reason: impl std::fmt::Display) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            key: key.map(str::to_string),
            reason: reason.to_string(),
        }
    }
}

/// The user's file, if there is one.
pub(crate) fn read_table(path: &Path) -> Result<Option<Table>, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => parse_table(path, &bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError::new(path, None, format!("cannot read it: {e}"))),
    }
}

/// A file's bytes as a TOML table; the error names the file and the line.
pub(crate) fn parse_table(path: &Path, bytes: &[u8]) -> Result<Table, ConfigError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| ConfigError::new(path, None, "it is not UTF-8 text"))?;
    text.parse::<Table>()
        .map_err(|e| ConfigError::new(path, None, format!("it does not parse: {e}")))
}

/// Reads the workspace `tether.toml`, which must be a regular file inside the root: a symlink
/// (say, to /etc/passwd) or a FIFO is refused before anything is read from it.
pub(crate) fn read_workspace_file(path: &Path) -> Result<Option<Vec<u8>>, ConfigError> {
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

pub(crate) fn fingerprint_of(bytes: Option<&[u8]>) -> String {
    match bytes {
        Some(b) => format!("xxh3-{}", tether_fs::hash_bytes(b)),
        None => "none".into(),
    }
}

/// Whether `dir` (which may not exist yet) lies inside the canonical `root`.
pub(crate) fn lies_inside(dir: &Path, root: &Path) -> bool {
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

/// `~/x` as a path under the home folder.
pub(crate) fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}
