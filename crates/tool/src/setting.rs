//! Settings as data. Each crate lists the `tether.toml` keys it reads once, as [`Setting`]s;
//! the range checks and their messages, the keys a workspace file may set before it is
//! trusted, `tether doctor`'s listing and the README's table are all derived from those lists.

use std::fmt::Display;
use std::time::Duration;

use serde::de::DeserializeOwned;

/// Why a `tether.toml` section cannot be used, said for the person who edits the file: each
/// message names the key at fault and what it may be instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingError {
    /// The section does not fit its shape (an unknown key, a wrong type), as the TOML reader
    /// said it, after the section's name.
    #[error("[{section}]: {message}")]
    Shape {
        /// Such as `lsp`.
        section: String,
        /// The TOML reader's own words.
        message: String,
    },
    /// A value outside what its key allows; the text names the key, the value and what is
    /// allowed.
    #[error("{0}")]
    Refused(String),
    /// A rule of the capability's own (a server the catalog does not know needs a command).
    #[error("{0}")]
    Rule(String),
}

impl SettingError {
    /// A capability's own rule, broken.
    pub fn rule(text: impl Into<String>) -> Self {
        SettingError::Rule(text.into())
    }
}

/// Which files may set a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// Any file, a workspace's own before it is trusted: it runs nothing and widens nothing.
    Anywhere,
    /// The user's file, or a workspace's once the user trusted it (`tether trust`).
    Trusted,
    /// The user's file only, since it loosens what even a trusted repository may do.
    User,
}

impl Scope {
    /// How the README's table names it.
    pub fn describe(self) -> &'static str {
        match self {
            Scope::Anywhere => "any file",
            Scope::Trusted => "user, or trusted workspace",
            Scope::User => "user only",
        }
    }
}

/// The values a setting takes, with its default. Numbers run from 1 to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// Whole seconds.
    Seconds {
        /// When unset.
        default: u64,
        /// The largest accepted.
        max: u64,
    },
    /// Milliseconds.
    Millis {
        /// When unset.
        default: u64,
        /// The largest accepted.
        max: u64,
    },
    /// Mebibytes.
    Mib {
        /// When unset.
        default: u64,
        /// The largest accepted.
        max: u64,
    },
    /// A plain count.
    Count {
        /// When unset.
        default: u64,
        /// The largest accepted.
        max: u64,
    },
    /// `true` or `false`.
    Flag {
        /// When unset.
        default: bool,
    },
    /// One word of a fixed set.
    Choice {
        /// When unset.
        default: &'static str,
        /// The words accepted.
        of: &'static [&'static str],
    },
    /// A list of words of a fixed set.
    Choices {
        /// When unset.
        default: &'static [&'static str],
        /// The words accepted.
        of: &'static [&'static str],
    },
    /// A list of folders.
    Paths,
    /// A table (or tables, one per `<id>`) whose fields its owner checks; it names commands or
    /// files, so it is never inert.
    Table {
        /// Its fields, for the README.
        fields: &'static str,
    },
}

/// One key of `tether.toml`: where it lives, what it does, what it takes and who may set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The dotted key, such as `lsp.diagnostics.wait_ms` (`<id>` for a table per name).
    pub key: &'static str,
    /// What it does, in one line.
    pub doc: &'static str,
    /// The values it takes, with the default.
    pub kind: Kind,
    /// Which files may set it.
    pub scope: Scope,
}

impl Setting {
    /// A setting of `kind` at `key`.
    pub const fn new(key: &'static str, kind: Kind, scope: Scope, doc: &'static str) -> Self {
        Setting {
            key,
            doc,
            kind,
            scope,
        }
    }

    /// The section it sits in (`lsp.diagnostics`), empty at the top level.
    pub fn section(&self) -> &'static str {
        self.key.rsplit_once('.').map_or("", |(s, _)| s)
    }

    /// Its own name within the section (`wait_ms`).
    pub fn name(&self) -> &'static str {
        self.key.rsplit_once('.').map_or(self.key, |(_, n)| n)
    }

    /// Whether a dotted key from a file is this setting, or lies inside it when it is a table
    /// (`lsp.servers.clangd.binaries` lies in `lsp.servers.<id>`).
    pub fn covers(&self, key: &str) -> bool {
        let mut mine = self.key.split('.');
        let mut theirs = key.split('.');
        loop {
            match (mine.next(), theirs.next()) {
                (None, None) => return true,
                (None, Some(_)) => return matches!(self.kind, Kind::Table { .. }),
                (Some(_), None) => return false,
                (Some("<id>"), Some(_)) => {}
                (Some(a), Some(b)) if a == b => {}
                _ => return false,
            }
        }
    }

    /// The default as TOML would write it (`30`, `"never"`), or `none` when unset means empty.
    pub fn default_text(&self) -> String {
        match self.kind {
            Kind::Seconds { default, .. }
            | Kind::Millis { default, .. }
            | Kind::Mib { default, .. }
            | Kind::Count { default, .. } => default.to_string(),
            Kind::Flag { default } => default.to_string(),
            Kind::Choice { default, .. } => format!("\"{default}\""),
            Kind::Choices { default, .. } => format!("[{}]", quoted(default, ", ")),
            Kind::Paths | Kind::Table { .. } => "none".into(),
        }
    }

    /// The values it accepts, for the README and for messages.
    pub fn allowed(&self) -> String {
        match self.kind {
            Kind::Seconds { max, .. } => format!("seconds from 1 to {max}"),
            Kind::Millis { max, .. } => format!("milliseconds from 1 to {max}"),
            Kind::Mib { max, .. } => format!("MiB from 1 to {max}"),
            Kind::Count { max, .. } => format!("a number from 1 to {max}"),
            Kind::Flag { .. } => "true or false".into(),
            Kind::Choice { of, .. } => one_of(of),
            Kind::Choices { of, .. } => format!("a list of {}", one_of(of)),
            Kind::Paths => "a list of folders (`~/` is the home folder)".into(),
            Kind::Table { fields } => format!("a table: {fields}"),
        }
    }

    /// The one message for a value it does not accept: `[lsp]: \`check_timeout_s = 0\`: give
    /// seconds from 1 to 3600`.
    pub fn refuse(&self, value: impl Display) -> SettingError {
        let verb = match self.kind {
            Kind::Choice { .. } | Kind::Choices { .. } => "use",
            _ => "give",
        };
        let place = match self.section() {
            "" => String::new(),
            s => format!("[{s}]: "),
        };
        SettingError::Refused(format!(
            "{place}`{} = {value}`: {verb} {}",
            self.name(),
            self.allowed()
        ))
    }

    /// Its default number (0 for a setting that is not a number).
    pub const fn default_number(&self) -> u64 {
        match self.kind {
            Kind::Seconds { default, .. }
            | Kind::Millis { default, .. }
            | Kind::Mib { default, .. }
            | Kind::Count { default, .. } => default,
            _ => 0,
        }
    }

    /// A number from its file (`None` when unset), checked against the range; its default when
    /// unset. For the four numeric kinds only.
    pub fn number(&self, given: Option<u64>) -> Result<u64, SettingError> {
        let (default, max) = match self.kind {
            Kind::Seconds { default, max }
            | Kind::Millis { default, max }
            | Kind::Mib { default, max }
            | Kind::Count { default, max } => (default, max),
            _ => {
                return Err(SettingError::rule(format!(
                    "`{}` is not a number setting",
                    self.key
                )));
            }
        };
        match given {
            None => Ok(default),
            Some(n) if (1..=max).contains(&n) => Ok(n),
            Some(n) => Err(self.refuse(n)),
        }
    }

    /// [`Setting::number`] as a duration, for seconds and milliseconds.
    pub fn duration(&self, given: Option<u64>) -> Result<Duration, SettingError> {
        let n = self.number(given)?;
        Ok(match self.kind {
            Kind::Millis { .. } => Duration::from_millis(n),
            _ => Duration::from_secs(n),
        })
    }

    /// A flag from its file, or its default.
    pub fn flag(&self, given: Option<bool>) -> bool {
        match self.kind {
            Kind::Flag { default } => given.unwrap_or(default),
            _ => given.unwrap_or(false),
        }
    }

    /// One word of its set, or its default.
    pub fn choice(&self, given: Option<&str>) -> Result<&'static str, SettingError> {
        let Kind::Choice { default, of } = self.kind else {
            return Err(SettingError::rule(format!(
                "`{}` is not a choice setting",
                self.key
            )));
        };
        match given {
            None => Ok(default),
            Some(word) => of
                .iter()
                .copied()
                .find(|w| *w == word)
                .ok_or_else(|| self.refuse(format!("\"{word}\""))),
        }
    }

    /// Words of its set, or its default; the message names the first word it does not know.
    pub fn choices(&self, given: Option<Vec<String>>) -> Result<Vec<String>, SettingError> {
        let Kind::Choices { default, of } = self.kind else {
            return Err(SettingError::rule(format!(
                "`{}` is not a list setting",
                self.key
            )));
        };
        let Some(list) = given else {
            return Ok(default.iter().map(|s| s.to_string()).collect());
        };
        match list.iter().find(|w| !of.contains(&w.as_str())) {
            None => Ok(list),
            Some(bad) => Err(SettingError::Refused(format!(
                "{}`{}`: `{bad}` is not one of {}",
                match self.section() {
                    "" => String::new(),
                    s => format!("[{s}]: "),
                },
                self.name(),
                of.join(", ")
            ))),
        }
    }

    /// Checks a raw value from a file: its type, and for a number its range. Tables are their
    /// owner's to check.
    pub fn check(&self, value: &toml::Value) -> Result<(), SettingError> {
        use toml::Value as V;
        match (self.kind, value) {
            (
                Kind::Seconds { .. } | Kind::Millis { .. } | Kind::Mib { .. } | Kind::Count { .. },
                V::Integer(n),
            ) => u64::try_from(*n)
                .map_err(|_| self.refuse(n))
                .and_then(|n| self.number(Some(n)).map(drop)),
            (Kind::Flag { .. }, V::Boolean(_)) | (Kind::Table { .. }, _) => Ok(()),
            (Kind::Choice { .. }, V::String(s)) => self.choice(Some(s)).map(drop),
            (Kind::Choices { .. }, V::Array(items)) => {
                let words: Option<Vec<String>> =
                    items.iter().map(|v| v.as_str().map(String::from)).collect();
                match words {
                    Some(words) => self.choices(Some(words)).map(drop),
                    None => Err(self.refuse(value)),
                }
            }
            (Kind::Paths, V::Array(items)) if items.iter().all(V::is_str) => Ok(()),
            _ => Err(self.refuse(value)),
        }
    }
}

/// Reads a config section into its serde shape; the message names the section, then what
/// serde found (an unknown key, a wrong type).
pub fn parse_section<T: DeserializeOwned>(
    name: &str,
    section: &toml::Value,
) -> Result<T, SettingError> {
    section
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| SettingError::Shape {
            section: name.to_string(),
            message: e.message().to_string(),
        })
}

/// The settings a workspace file may set before it is trusted.
pub fn inert(settings: &[&Setting], key: &str) -> bool {
    settings
        .iter()
        .any(|s| s.scope == Scope::Anywhere && s.covers(key))
}

/// The README's settings table, one row per setting in the order given.
pub fn markdown_table(settings: &[&Setting]) -> String {
    let mut out = String::from(
        "| key | default | allowed | set by | what it does |\n|---|---|---|---|---|\n",
    );
    for s in settings {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            s.key,
            match s.default_text().as_str() {
                "none" => "none".to_string(),
                d => format!("`{d}`"),
            },
            s.allowed().replace('|', "\\|"),
            s.scope.describe(),
            s.doc.replace('|', "\\|")
        ));
    }
    out
}

fn quoted(words: &[&str], sep: &str) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\""))
        .collect::<Vec<_>>()
        .join(sep)
}

/// `"a" or "b"`, `"a", "b" or "c"`.
fn one_of(words: &[&str]) -> String {
    match words.split_last() {
        None => String::new(),
        Some((last, [])) => format!("\"{last}\""),
        Some((last, rest)) => format!("{} or \"{last}\"", quoted(rest, ", ")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const SECS: Setting = Setting::new(
        "debug.ttl_s",
        Kind::Seconds {
            default: 1800,
            max: 86_400,
        },
        Scope::Trusted,
        "a session's time to live",
    );
    const MS: Setting = Setting::new(
        "lsp.diagnostics.wait_ms",
        Kind::Millis {
            default: 3000,
            max: 600_000,
        },
        Scope::Trusted,
        "wait",
    );
    const MIB: Setting = Setting::new(
        "structural.cache_mb",
        Kind::Mib {
            default: 512,
            max: 65_536,
        },
        Scope::Anywhere,
        "cache",
    );
    const COUNT: Setting = Setting::new(
        "workers.max_concurrent",
        Kind::Count {
            default: 4,
            max: 64,
        },
        Scope::Trusted,
        "slots",
    );
    const FLAG: Setting = Setting::new(
        "vibe",
        Kind::Flag { default: false },
        Scope::Trusted,
        "vibe",
    );
    const CHOICE: Setting = Setting::new(
        "approval",
        Kind::Choice {
            default: "never",
            of: &["never", "ask"],
        },
        Scope::Anywhere,
        "approval",
    );
    const CHOICES: Setting = Setting::new(
        "lsp.diagnostics.severities",
        Kind::Choices {
            default: &["error", "warning"],
            of: &["error", "warning", "information", "hint"],
        },
        Scope::Trusted,
        "counted",
    );
    const PATHS: Setting = Setting::new("files.read_roots", Kind::Paths, Scope::Trusted, "roots");
    const TABLE: Setting = Setting::new(
        "lsp.servers.<id>",
        Kind::Table {
            fields: "command, binaries",
        },
        Scope::Trusted,
        "servers",
    );

    #[test]
    fn one_message_per_kind() {
        let cases = [
            (
                SECS.number(Some(0)),
                "[debug]: `ttl_s = 0`: give seconds from 1 to 86400",
            ),
            (
                MS.number(Some(600_001)),
                "[lsp.diagnostics]: `wait_ms = 600001`: give milliseconds from 1 to 600000",
            ),
            (
                MIB.number(Some(0)),
                "[structural]: `cache_mb = 0`: give MiB from 1 to 65536",
            ),
            (
                COUNT.number(Some(65)),
                "[workers]: `max_concurrent = 65`: give a number from 1 to 64",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got.unwrap_err().to_string(), want);
        }
        assert_eq!(
            FLAG.check(&toml::Value::String("yes".into()))
                .unwrap_err()
                .to_string(),
            "`vibe = \"yes\"`: give true or false"
        );
        assert_eq!(
            CHOICE.choice(Some("Ask")).unwrap_err().to_string(),
            "`approval = \"Ask\"`: use \"never\" or \"ask\""
        );
        assert_eq!(
            CHOICES
                .choices(Some(vec!["error".into(), "errors".into()]))
                .unwrap_err()
                .to_string(),
            "[lsp.diagnostics]: `severities`: `errors` is not one of error, warning, \
             information, hint"
        );
        assert_eq!(
            PATHS
                .check(&toml::Value::Integer(3))
                .unwrap_err()
                .to_string(),
            "[files]: `read_roots = 3`: give a list of folders (`~/` is the home folder)"
        );
        assert_eq!(
            CHOICE
                .check(&toml::Value::Integer(3))
                .unwrap_err()
                .to_string(),
            "`approval = 3`: use \"never\" or \"ask\""
        );
        assert_eq!(
            SECS.check(&toml::Value::Integer(-1))
                .unwrap_err()
                .to_string(),
            "[debug]: `ttl_s = -1`: give seconds from 1 to 86400"
        );
    }

    #[test]
    fn defaults_when_unset_and_values_when_valid() {
        assert_eq!(SECS.duration(None).unwrap(), Duration::from_secs(1800));
        assert_eq!(MS.duration(Some(5)).unwrap(), Duration::from_millis(5));
        assert!(FLAG.check(&toml::Value::Boolean(true)).is_ok());
        assert_eq!(CHOICE.choice(None).unwrap(), "never");
        assert_eq!(CHOICES.choices(None).unwrap(), ["error", "warning"]);
        assert_eq!(CHOICES.default_text(), "[\"error\", \"warning\"]");
        assert_eq!(TABLE.default_text(), "none");
    }

    #[test]
    fn a_table_setting_covers_its_fields_and_only_anywhere_keys_are_inert() {
        assert!(TABLE.covers("lsp.servers.clangd.binaries"));
        assert!(TABLE.covers("lsp.servers.clangd"));
        assert!(!TABLE.covers("lsp.languages.python.servers"));
        assert!(!SECS.covers("debug.ttl_s.x"));
        let all = [&SECS, &MIB, &CHOICE, &TABLE];
        assert!(inert(&all, "structural.cache_mb"));
        assert!(inert(&all, "approval"));
        assert!(!inert(&all, "debug.ttl_s"));
        assert!(!inert(&all, "lsp.servers.x.command"));
        assert!(!inert(&all, "unknown.key"));
    }
}
