//! The `[lsp]` section of `tether.toml`: deadlines, and overrides of the catalog kept in two
//! tables, as helix keeps them: servers by id, and which servers each language prefers.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::catalog::{Language, LanguageData, ServerData, ServerEntry, apply, builtin};
use crate::settings::{
    AUTO_INSTALL, BASELINE_MS, CHECK_TIMEOUT, INIT_TIMEOUT, OUTSIDE_FILES_MAX, PREVIEW,
    READ_SURFACES_BUILD, REQUEST_TIMEOUT, SEVERITIES, WAIT_MS, WATCH_FOLDERS_MAX,
};

/// Settings of the language-server capability, with the catalog merged in.
#[derive(Debug, Clone)]
pub struct LspConfig {
    /// Every server, by id: the built-in ones with their overrides, and added ones.
    pub servers: BTreeMap<String, ServerEntry>,
    /// Every language, by id: its extensions and the servers to try in order (the first
    /// available wins).
    pub languages: BTreeMap<String, Language>,
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
    /// Whether staged changes are previewed on the servers (`[lsp.diagnostics] preview`).
    pub preview: bool,
    /// Folders the outside-edit watch takes at most (`watch_folders_max`).
    pub watch_folders_max: usize,
    /// Files of one burst of outside changes diagnosed at most (`outside_files_max`).
    pub outside_files_max: usize,
    /// Whether the plan and readonly surfaces of a trusted workspace may run build scripts,
    /// proc macros and cargo check (`read_surfaces_build`), which can write anywhere.
    pub read_surfaces_build: bool,
    /// Whether a missing server with a built-in recipe is installed on first need
    /// (`auto_install`, the user's file only).
    pub auto_install: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Section {
    request_timeout_s: Option<u64>,
    init_timeout_s: Option<u64>,
    check_timeout_s: Option<u64>,
    read_surfaces_build: Option<bool>,
    auto_install: Option<bool>,
    watch_folders_max: Option<u64>,
    outside_files_max: Option<u64>,
    #[serde(default)]
    servers: BTreeMap<String, ServerData>,
    #[serde(default)]
    languages: BTreeMap<String, LanguageData>,
    diagnostics: Option<DiagnosticsSection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DiagnosticsSection {
    wait_ms: Option<u64>,
    baseline_ms: Option<u64>,
    severities: Option<Vec<String>>,
    preview: Option<bool>,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            servers: builtin(),
            languages: crate::catalog::builtin_languages(),
            request_timeout: Duration::from_secs(REQUEST_TIMEOUT.default_number()),
            init_timeout: Duration::from_secs(INIT_TIMEOUT.default_number()),
            check_timeout: Duration::from_secs(CHECK_TIMEOUT.default_number()),
            write_wait: Duration::from_millis(WAIT_MS.default_number()),
            write_baseline: Duration::from_millis(BASELINE_MS.default_number()),
            write_severities: crate::ledger::Severities(
                SEVERITIES.choices(None).unwrap_or_default(),
            ),
            preview: PREVIEW.flag(None),
            read_surfaces_build: READ_SURFACES_BUILD.flag(None),
            auto_install: AUTO_INSTALL.flag(None),
            watch_folders_max: WATCH_FOLDERS_MAX.default_number() as usize,
            outside_files_max: OUTSIDE_FILES_MAX.default_number() as usize,
        }
    }
}

impl LspConfig {
    /// The language a file belongs to, by its extension: a configured one first, then the
    /// catalog's.
    pub fn language_of(&self, path: &std::path::Path) -> Option<&'static str> {
        // A whole file name (compose.yaml) is more telling than its extension.
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let by_name = self
            .languages
            .values()
            .find(|l| l.file_names.iter().any(|n| n == name));
        by_name
            .or_else(|| self.languages.values().find(|l| l.covers(path)))
            .map(|l| l.id)
    }

    /// The catalog as the servers run beside the chosen ones see it: each language's
    /// `alongside` servers as its only ones; `None` when no language has any.
    pub fn beside(&self) -> Option<LspConfig> {
        if self.languages.values().all(|l| l.alongside.is_empty()) {
            return None;
        }
        let mut beside = self.clone();
        for language in beside.languages.values_mut() {
            language.servers = std::mem::take(&mut language.alongside);
        }
        Some(beside)
    }

    /// The language `id`, configured or built in.
    pub fn language(&self, id: &str) -> Option<&Language> {
        self.languages.get(id)
    }

    /// Reads the section (absent means the catalog as built in); an error names the key.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, tether_tool::SettingError> {
        let mut config = LspConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let s: Section = tether_tool::parse_section("lsp", section)?;
        config.request_timeout = REQUEST_TIMEOUT.duration(s.request_timeout_s)?;
        config.init_timeout = INIT_TIMEOUT.duration(s.init_timeout_s)?;
        config.read_surfaces_build = READ_SURFACES_BUILD.flag(s.read_surfaces_build);
        config.auto_install = AUTO_INSTALL.flag(s.auto_install);
        config.check_timeout = CHECK_TIMEOUT.duration(s.check_timeout_s)?;
        config.watch_folders_max = WATCH_FOLDERS_MAX.number(s.watch_folders_max)? as usize;
        config.outside_files_max = OUTSIDE_FILES_MAX.number(s.outside_files_max)? as usize;
        if let Some(d) = s.diagnostics {
            config.write_wait = WAIT_MS.duration(d.wait_ms)?;
            config.write_baseline = BASELINE_MS.duration(d.baseline_ms)?;
            config.write_severities = crate::ledger::Severities(SEVERITIES.choices(d.severities)?);
            config.preview = PREVIEW.flag(d.preview);
        }
        for (id, data) in s.servers {
            let entry = match config.servers.remove(&id) {
                Some(known) => known,
                None if data.command.as_ref().is_some_and(|c| !c.is_empty()) => ServerEntry {
                    id: id.clone(),
                    ..ServerEntry::default()
                },
                None => {
                    return Err(tether_tool::SettingError::rule(format!(
                        "[lsp.servers.{id}]: a server the catalog does not know needs \
                         `command = [\"program\", \"args\"...]`; known ids: {}",
                        builtin().keys().cloned().collect::<Vec<_>>().join(", ")
                    )));
                }
            };
            config.servers.insert(id, apply(entry, data)?);
        }
        for (id, data) in s.languages {
            let known = config.languages.remove(&id);
            if known.is_none()
                && data.extensions.as_ref().is_none_or(Vec::is_empty)
                && data.file_names.as_ref().is_none_or(Vec::is_empty)
            {
                return Err(tether_tool::SettingError::rule(format!(
                    "[lsp.languages.{id}]: a language the catalog does not know needs \
                     `extensions = [\"ext\", ...]` (or `file_names = [\"Name\", ...]`) and \
                     `servers = [\"id\", ...]`; known languages: {}",
                    config
                        .languages
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            let lang = crate::catalog::language(known.unwrap_or_default(), &id, data);
            if let Some(unknown) = lang
                .servers
                .iter()
                .find(|s| !config.servers.contains_key(*s))
            {
                return Err(tether_tool::SettingError::rule(format!(
                    "[lsp.languages.{id}]: server `{unknown}` is neither in the catalog nor in \
                     [lsp.servers]"
                )));
            }
            config.languages.insert(id, lang);
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn parse(text: &str) -> Result<LspConfig, tether_tool::SettingError> {
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
        assert_eq!(c.languages["python"].servers, ["pyright"]);
        assert_eq!(c.languages["rust"].servers, ["rust-analyzer"]);
    }

    #[test]
    fn mistakes_name_the_key_and_what_is_allowed() {
        let err = parse("[lsp.servers.nope]\nbinaries = [\"x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("[lsp.servers.nope]") && err.contains("command"),
            "{err}"
        );
        let err = parse("[lsp.languages.go]\nservers = [\"gopls2\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`gopls2`"), "{err}");
        let err = parse("[lsp]\ncheck_timeout_s = 0\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("check_timeout_s = 0"), "{err}");
        let err = parse("[lsp]\ntimeout = 1\n").unwrap_err().to_string();
        assert!(err.contains("unknown field `timeout`"), "{err}");
        let err = parse("[lsp.diagnostics]\nseverities = [\"errors\"]\n")
            .unwrap_err()
            .to_string();
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
