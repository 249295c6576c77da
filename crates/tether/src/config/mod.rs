//! `tether.toml` from the user's config folder and the workspace root, merged key by key, with
//! what the workspace file sets held back until it is trusted (which keys may be set before
//! that is derived from the settings' definitions in [`crate::settings`]).

mod listing;
mod table;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use tether_tool::{ApprovalPolicy, Setting, SettingError};
use toml::{Table, Value};

use crate::settings::{APPROVAL, ASK_TIMEOUT, READ_ROOTS, VIBE, user_only};
pub use crate::toml_file::ConfigError;
use crate::toml_file::{
    expand_home, fingerprint_of, lies_inside, parse_table, read_table, read_workspace_file,
};
use crate::trust::{TrustState, TrustStore, Untrusted};
use table::{leaves, lookup, merge, only};

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
    /// False when the workspace is untrusted, or when only the user's file may set the key:
    /// the value is reported, never used.
    pub honoured: bool,
    /// Only the user's own file may set this key, so no workspace file is ever honoured for it.
    pub user_only: bool,
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
    /// Every key defined: the built-in ones and those of a host's own capabilities, so a
    /// host's setting gets the same trust rules as a built-in one.
    settings: Vec<&'static Setting>,
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
        Self::load_with(root, user_dir, &[])
    }

    /// [`Config::load`], knowing the settings of a host's own capabilities (`own`) as well as
    /// the built-in ones.
    pub fn load_with(
        root: &Path,
        user_dir: &Path,
        own: &[&'static Setting],
    ) -> Result<Self, ConfigError> {
        let mut settings = crate::settings::settings();
        settings.extend_from_slice(own);
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
        // Untrusted, a workspace file sets only inert keys; trusted, all but the user's own.
        let keep = |key: &str| match trusted {
            true => !user_only(&settings, key),
            false => tether_tool::inert(&settings, key),
        };
        merge(&mut merged, &only(&workspace, "", &keep));
        Ok(Config {
            user,
            workspace,
            merged,
            root: root.to_path_buf(),
            user_dir: user_dir.to_path_buf(),
            files,
            settings,
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

    /// How long a question or approval card waits for the human (`[ask] timeout_s`).
    pub fn ask_timeout(&self) -> Result<std::time::Duration, ConfigError> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Ask {
            timeout_s: Option<u64>,
        }
        let Some(section) = self.get("ask") else {
            return Ok(ASK_TIMEOUT.duration(None).unwrap_or_default());
        };
        let bad = |why: SettingError| ConfigError::new(&self.source_of("ask"), Some("ask"), why);
        let ask: Ask = tether_tool::parse_section("ask", section).map_err(bad)?;
        ASK_TIMEOUT.duration(ask.timeout_s).map_err(bad)
    }

    /// The `[host]` section: when front ends attach to the warm host, and how long it idles.
    pub fn host(&self) -> Result<HostSettings, ConfigError> {
        use crate::settings::{HOST_ENABLED, HOST_IDLE_EXIT, HOST_SERVE};
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Host {
            enabled: Option<bool>,
            serve: Option<bool>,
            idle_exit_s: Option<u64>,
        }
        let Some(section) = self.get("host") else {
            return Ok(HostSettings {
                enabled: HOST_ENABLED.flag(None),
                serve: HOST_SERVE.flag(None),
                idle_exit: HOST_IDLE_EXIT.duration(None).unwrap_or_default(),
            });
        };
        let bad = |why: SettingError| ConfigError::new(&self.source_of("host"), Some("host"), why);
        let host: Host = tether_tool::parse_section("host", section).map_err(bad)?;
        Ok(HostSettings {
            enabled: HOST_ENABLED.flag(host.enabled),
            serve: HOST_SERVE.flag(host.serve),
            idle_exit: HOST_IDLE_EXIT.duration(host.idle_exit_s).map_err(bad)?,
        })
    }

    /// Whether vibe mode is on (`vibe = true`); a workspace file's needs trust.
    pub fn vibe(&self) -> Result<bool, ConfigError> {
        let Some(value) = self.get(VIBE.key) else {
            return Ok(VIBE.flag(None));
        };
        VIBE.check(value)
            .map_err(|why| ConfigError::new(&self.source_of(VIBE.key), Some(VIBE.key), why))?;
        Ok(VIBE.flag(value.as_bool()))
    }

    /// The approval policy. A workspace file may tighten it to `ask`, but loosen it to
    /// `never` only once trusted.
    pub fn approval(&self) -> Result<ApprovalPolicy, ConfigError> {
        let parse = |t: &Table, file: PathBuf| -> Result<Option<ApprovalPolicy>, ConfigError> {
            let Some(value) = t.get(APPROVAL.key) else {
                return Ok(None);
            };
            let bad = |why: SettingError| ConfigError::new(&file, Some(APPROVAL.key), why);
            APPROVAL.check(value).map_err(bad)?;
            Ok(Some(match value.as_str() {
                Some("ask") => ApprovalPolicy::Ask,
                _ => ApprovalPolicy::Never,
            }))
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
        let key = READ_ROOTS.key;
        let (value, base, file) = match (lookup(&self.workspace, key), lookup(&self.user, key)) {
            (Some(v), _) if self.workspace_trusted_now() => {
                (v, &self.root, self.root.join("tether.toml"))
            }
            (_, Some(v)) => (v, &self.user_dir, self.user_dir.join("tether.toml")),
            _ => return Ok(Vec::new()),
        };
        READ_ROOTS
            .check(value)
            .map_err(|why| ConfigError::new(&file, Some(key), why))?;
        Ok(value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .map(|p| base.join(expand_home(p)))
            .collect())
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

    /// Every setting from a workspace file that needs trust (all but the inert ones), and
    /// whether it is used.
    pub fn guarded(&self) -> Vec<Loaded> {
        let Some(file) = self.files.iter().rev().find_map(|f| match f {
            ConfigSource::Workspace(p) => Some(p.clone()),
            ConfigSource::User(_) => None,
        }) else {
            return Vec::new();
        };
        let mut keys = Vec::new();
        leaves(&self.workspace, "", &mut keys);
        keys.into_iter()
            .filter(|(key, _)| !tether_tool::inert(&self.settings, key))
            .map(|(key, value)| Loaded {
                honoured: self.workspace_trusted_now() && !user_only(&self.settings, &key),
                user_only: user_only(&self.settings, &key),
                key,
                value,
                source: ConfigSource::Workspace(file.clone()),
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

/// When front ends attach to the workspace's warm host (`[host]`).
#[derive(Debug, Clone, Copy)]
pub struct HostSettings {
    /// `tether call` and the hooks attach.
    pub enabled: bool,
    /// `tether serve` attaches too.
    pub serve: bool,
    /// How long the host waits with nothing attached before it exits.
    pub idle_exit: std::time::Duration,
}
