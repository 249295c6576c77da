//! The `[lsp]` section of `tether.toml`: deadlines, and overrides of the catalog kept in two
//! tables, as helix keeps them: servers by id, and which servers each language prefers.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::catalog::{LANGUAGES, ServerEntry, builtin};

/// Settings of the language-server capability, with the catalog merged in.
#[derive(Debug, Clone)]
pub struct LspConfig {
    /// Every server, by id: the built-in ones with their overrides, and added ones.
    pub servers: BTreeMap<String, ServerEntry>,
    /// For each language, the servers to try in order; the first available wins.
    pub languages: BTreeMap<String, Vec<String>>,
    /// How long one request may wait for its answer.
    pub request_timeout: Duration,
    /// How long a server may take to answer `initialize`.
    pub init_timeout: Duration,
    /// How long `diagnostics "*"` lets a project checker run.
    pub check_timeout: Duration,
    /// How long a write waits for its diagnostics (`[lsp.diagnostics] wait_ms`).
    pub write_wait: Duration,
    /// How long the baseline before a write may take (`[lsp.diagnostics] baseline_ms`).
    pub write_baseline: Duration,
    /// Which severities a write's report counts (`[lsp.diagnostics] severities`).
    pub write_severities: crate::ledger::Severities,
    /// Whether the plan and readonly surfaces of a trusted workspace may run build scripts,
    /// proc macros and cargo check (`read_surfaces_build`), which can write anywhere.
    pub read_surfaces_build: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Section {
    request_timeout_s: Option<u64>,
    init_timeout_s: Option<u64>,
    check_timeout_s: Option<u64>,
    read_surfaces_build: Option<bool>,
    #[serde(default)]
    servers: BTreeMap<String, ServerOverride>,
    #[serde(default)]
    languages: BTreeMap<String, LanguageOverride>,
    diagnostics: Option<DiagnosticsSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticsSection {
    wait_ms: Option<u64>,
    baseline_ms: Option<u64>,
    severities: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerOverride {
    command: Option<Vec<String>>,
    binaries: Option<Vec<String>>,
    root_markers: Option<Vec<String>>,
    settings: Option<toml::Value>,
    init_options: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LanguageOverride {
    servers: Vec<String>,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            servers: builtin(),
            languages: LANGUAGES
                .iter()
                .map(|(lang, _, servers)| {
                    (
                        lang.to_string(),
                        servers.iter().map(|s| s.to_string()).collect(),
                    )
                })
                .collect(),
            request_timeout: Duration::from_secs(30),
            init_timeout: Duration::from_secs(60),
            check_timeout: Duration::from_secs(300),
            write_wait: Duration::from_millis(3000),
            write_baseline: Duration::from_millis(1000),
            write_severities: crate::ledger::Severities::default(),
            read_surfaces_build: false,
        }
    }
}

fn seconds(key: &str, value: Option<u64>, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(0) => Err(format!(
            "[lsp]: `{key} = 0`: give a number of seconds from 1 to 3600"
        )),
        Some(s) if s > 3600 => Err(format!(
            "[lsp]: `{key} = {s}`: give a number of seconds from 1 to 3600"
        )),
        Some(s) => Ok(Duration::from_secs(s)),
    }
}

fn json(value: toml::Value) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl LspConfig {
    /// Reads the section (absent means the catalog as built in); an error names the key.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, String> {
        let mut config = LspConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let s: Section = section
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| format!("[lsp]: {}", e.message()))?;
        config.request_timeout = seconds(
            "request_timeout_s",
            s.request_timeout_s,
            config.request_timeout,
        )?;
        config.init_timeout = seconds("init_timeout_s", s.init_timeout_s, config.init_timeout)?;
        config.read_surfaces_build = s.read_surfaces_build.unwrap_or(false);
        config.check_timeout = seconds("check_timeout_s", s.check_timeout_s, config.check_timeout)?;
        if let Some(d) = s.diagnostics {
            let ms = |key: &str, v: Option<u64>, default: Duration| match v {
                None => Ok(default),
                Some(ms) if (1..=600_000).contains(&ms) => Ok(Duration::from_millis(ms)),
                Some(ms) => Err(format!(
                    "[lsp.diagnostics]: `{key} = {ms}`: give milliseconds from 1 to 600000"
                )),
            };
            config.write_wait = ms("wait_ms", d.wait_ms, config.write_wait)?;
            config.write_baseline = ms("baseline_ms", d.baseline_ms, config.write_baseline)?;
            if let Some(list) = d.severities {
                let names = crate::ledger::SEVERITY_NAMES;
                if let Some(bad) = list.iter().find(|s| !names.contains(&s.as_str())) {
                    return Err(format!(
                        "[lsp.diagnostics]: severities: `{bad}` is not one of {}",
                        names.join(", ")
                    ));
                }
                config.write_severities = crate::ledger::Severities(list);
            }
        }
        for (id, o) in s.servers {
            let entry = match config.servers.remove(&id) {
                Some(known) => known,
                None => {
                    let command = o.command.clone().filter(|c| !c.is_empty()).ok_or_else(|| {
                        format!(
                            "[lsp.servers.{id}]: a server the catalog does not know needs \
                             `command = [\"program\", \"args\"...]`; known ids: {}",
                            builtin().keys().cloned().collect::<Vec<_>>().join(", ")
                        )
                    })?;
                    ServerEntry {
                        id: id.clone(),
                        binaries: vec![command[0].clone()],
                        command,
                        root_markers: Vec::new(),
                        settings: Value::Null,
                        init_options: Value::Null,
                    }
                }
            };
            config.servers.insert(id, apply(entry, o)?);
        }
        for (lang, o) in s.languages {
            if let Some(unknown) = o.servers.iter().find(|s| !config.servers.contains_key(*s)) {
                return Err(format!(
                    "[lsp.languages.{lang}]: server `{unknown}` is neither in the catalog nor in \
                     [lsp.servers]"
                ));
            }
            config.languages.insert(lang, o.servers);
        }
        Ok(config)
    }
}

fn apply(mut entry: ServerEntry, o: ServerOverride) -> Result<ServerEntry, String> {
    if let Some(command) = o.command {
        if command.is_empty() {
            return Err(format!("[lsp.servers.{}]: `command` is empty", entry.id));
        }
        if o.binaries.is_none() {
            entry.binaries = vec![command[0].clone()];
        }
        entry.command = command;
    }
    if let Some(binaries) = o.binaries {
        entry.binaries = binaries;
    }
    if let Some(markers) = o.root_markers {
        entry.root_markers = markers;
    }
    if let Some(settings) = o.settings {
        entry.settings = json(settings);
    }
    if let Some(init) = o.init_options {
        entry.init_options = json(init);
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(text: &str) -> Result<LspConfig, String> {
        let table: toml::Table = text.parse().unwrap();
        LspConfig::from_section(table.get("lsp"))
    }

    #[test]
    fn overrides_extend_and_reorder_the_catalog() {
        let c = parse(
            "[lsp]\nrequest_timeout_s = 5\n[lsp.servers.clangd]\nbinaries = [\"clangd-19\"]\n\
             [lsp.servers.mine]\ncommand = [\"my-ls\", \"--stdio\"]\nroot_markers = [\"x.toml\"]\n\
             [lsp.languages.python]\nservers = [\"pyright\"]\n",
        )
        .unwrap();
        assert_eq!(c.request_timeout, Duration::from_secs(5));
        assert_eq!(c.servers["clangd"].binaries, ["clangd-19"]);
        assert_eq!(c.servers["clangd"].command, ["clangd"]);
        assert_eq!(c.servers["mine"].binaries, ["my-ls"]);
        assert_eq!(c.languages["python"], ["pyright"]);
        assert_eq!(c.languages["rust"], ["rust-analyzer"]);
    }

    #[test]
    fn mistakes_name_the_key_and_what_is_allowed() {
        let err = parse("[lsp.servers.nope]\nbinaries = [\"x\"]\n").unwrap_err();
        assert!(
            err.contains("[lsp.servers.nope]") && err.contains("command"),
            "{err}"
        );
        let err = parse("[lsp.languages.go]\nservers = [\"gopls2\"]\n").unwrap_err();
        assert!(err.contains("`gopls2`"), "{err}");
        let err = parse("[lsp]\ncheck_timeout_s = 0\n").unwrap_err();
        assert!(err.contains("check_timeout_s = 0"), "{err}");
        let err = parse("[lsp]\ntimeout = 1\n").unwrap_err();
        assert!(err.contains("unknown field `timeout`"), "{err}");
        let err = parse("[lsp.diagnostics]\nseverities = [\"errors\"]\n").unwrap_err();
        assert!(
            err.contains("`errors` is not one of error, warning"),
            "{err}"
        );
    }

    #[test]
    fn a_write_counts_errors_and_warnings_unless_told_otherwise() {
        let c = parse("[lsp]\nrequest_timeout_s = 5\n").unwrap();
        assert_eq!(c.write_severities.0, ["error", "warning"]);
        let c = parse("[lsp.diagnostics]\nseverities = [\"error\", \"hint\"]\n").unwrap();
        assert_eq!(c.write_severities.0, ["error", "hint"]);
    }
}
