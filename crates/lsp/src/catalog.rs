//! The servers tether knows, which languages each serves, how to start it and where its
//! projects begin: `catalog.toml`, embedded, read once. A workspace or user `tether.toml`
//! overrides and extends it with the same keys (`[lsp.servers.ID]`, `[lsp.languages.ID]`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};
use tether_base::lock;

use serde::Deserialize;
use serde_json::Value;
use tether_tool::SettingError;

/// The built-in catalog's text.
const CATALOG: &str = include_str!("../catalog.toml");

/// One language server as the catalog describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerEntry {
    /// Its id, as `[lsp.servers.ID]` and `status` name it.
    pub id: String,
    /// The command; `argv[0]` is replaced by the first of `binaries` found on PATH.
    pub command: Vec<String>,
    /// Candidate names for `argv[0]`, in order.
    pub binaries: Vec<String>,
    /// Files or folders whose presence marks a project root for this server.
    pub root_markers: Vec<String>,
    /// What `workspace/configuration` is answered with (looked up by section).
    pub settings: Value,
    /// `initializationOptions` sent at initialize.
    pub init_options: Value,
    /// How the server behaves, which the code keys on instead of its id.
    pub behaviour: Behaviour,
    /// How `tether install` installs it, if it can.
    pub install: Option<tether_toolchain::Recipe>,
}

/// What sets a server apart, as flags (see `catalog.toml` for each one's meaning).
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Behaviour {
    /// A check runs on save apart from the server's analysis, and a write awaits it.
    pub separate_check: bool,
    /// Merged into `initializationOptions` over any override: the options under which the
    /// server works one job at a time, in queue order, which the check's flush relies on.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub in_order_init: Value,
    /// The server says when it has loaded the project, and answers wait for that.
    pub announces_loading: bool,
    /// How a write knows the server is done with it (see [`Done`]).
    pub done: Done,
    /// For a server with `done = "quiet"`: how long with no progress and no publication counts
    /// as done, in ms ([`DEFAULT_QUIET_MS`] when not given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// The server forwards tsserver requests (`typescript.tsserverRequest`): with `done =
    /// "pull"`, a file's diagnostics are asked of tsserver, which computes them when asked.
    pub tsserver_pull: bool,
    /// The separate check stops reporting warnings once there are errors (rustc's lints), so
    /// a warning gone while errors stand was not checked again, not fixed.
    pub warnings_silenced_by_errors: bool,
    /// The log messages (`*`: any text) that say the server has listed the project's files;
    /// from then on its queries search every file when asked (pyright), whole while its
    /// diagnostics pass still runs.
    pub listed_files_log: Vec<String>,
    /// Folder names (`*`: any text) whose files the server never lists (pyright's automatic
    /// exclusions): their creation leaves its listing as it was.
    pub unlisted_dirs: Vec<String>,
    /// What of the project's code the server can run, when it can (build scripts, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builds: Option<String>,
    /// Merged into `initializationOptions` when running the project's code is not allowed.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub builds_off_init: Value,
    /// Merged into `initializationOptions` when it is.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub builds_on_init: Value,
    /// Untrusted, the server runs on a toolchain chosen outside the workspace.
    pub toolchain_pins: bool,
    /// Untrusted, TypeScript comes from a global install, never the project's node_modules.
    pub global_tsserver: bool,
    /// The dotted settings key that names the Python interpreter the server asks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interpreter_setting: Option<String>,
    /// Variables set when the workspace is not trusted.
    pub untrusted_env: BTreeMap<String, String>,
    /// The server reports no problems (it answers questions only): a write says so at once
    /// rather than waiting for a publication that never comes.
    pub no_problems: bool,
    /// The files that include a changed one are checked again only when it is saved
    /// (clangd), so a preview of unsaved text cannot say what it does to them.
    pub dependents_on_save: bool,
}

/// How a write knows a server has finished with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Done {
    /// It answers `textDocument/diagnostic` for any file from the current texts: the written
    /// file and the files that import it are pulled, and those answers are final.
    Pull,
    /// Its publication for the written document's version is final for that file; what it
    /// publishes for other files is followed.
    Publish,
    /// Nothing better is known: the publication for the version, then `quiet_ms` with no
    /// progress and no publication.
    #[default]
    Quiet,
}

impl Done {
    /// How `status` names it.
    pub fn describe(self, quiet_ms: u64) -> String {
        match self {
            Done::Pull => "done when its pulled answers come".into(),
            Done::Publish => "done when it publishes for the written version".into(),
            Done::Quiet => format!("done after {quiet_ms} ms quiet (catalog `quiet_ms`)"),
        }
    }
}

/// The quiet window of a server the catalog knows no better signal for.
pub const DEFAULT_QUIET_MS: u64 = 300;

/// A language files are mapped to, by extension, and the servers it prefers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Language {
    /// Its id, as `[lsp.languages.ID]` names it.
    pub id: &'static str,
    /// File extensions, without the dot.
    pub extensions: Vec<String>,
    /// Whole file names of files with no telling extension (`Dockerfile`, `CMakeLists.txt`).
    pub file_names: Vec<String>,
    /// The servers to try in order; the first available wins.
    pub servers: Vec<String>,
    /// Servers run beside the one chosen, each for its own findings (a linter beside a type
    /// checker), each reported under its own name.
    pub alongside: Vec<String>,
    /// The LSP `languageId` of its files.
    pub language_id: String,
    /// The exceptions to `language_id`, by extension.
    pub language_ids: BTreeMap<String, String>,
    /// The `ast_grep` languages of its files.
    pub grammars: Vec<String>,
}

impl Language {
    /// Whether `path` is a file of this language: by its extension, or its whole name.
    pub fn covers(&self, path: &std::path::Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = path.extension().and_then(|e| e.to_str());
        self.file_names.iter().any(|n| n == name)
            || ext.is_some_and(|ext| self.extensions.iter().any(|e| e == ext))
    }

    /// The LSP `languageId` of `path`, a file of this language.
    pub fn language_id_of(&self, path: &std::path::Path) -> &str {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        self.language_ids
            .get(ext)
            .map_or(self.language_id.as_str(), String::as_str)
    }
}

/// A server entry as written in the catalog or a `tether.toml`: every key optional, so an
/// override names only what it changes. Other keys are behaviour flags, checked by name.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ServerData {
    pub command: Option<Vec<String>>,
    pub binaries: Option<Vec<String>>,
    pub root_markers: Option<Vec<String>>,
    /// A project kind whose markers tether keeps in one place (`python`).
    pub project: Option<String>,
    pub settings: Option<toml::Value>,
    pub init_options: Option<toml::Value>,
    /// How `tether install` installs it.
    pub install: Option<tether_toolchain::Recipe>,
    #[serde(flatten)]
    pub behaviour: toml::Table,
}

/// A language as written in the catalog or a `tether.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LanguageData {
    pub extensions: Option<Vec<String>>,
    pub file_names: Option<Vec<String>>,
    pub servers: Option<Vec<String>>,
    pub alongside: Option<Vec<String>>,
    pub language_id: Option<String>,
    pub language_ids: Option<BTreeMap<String, String>>,
    pub grammars: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogData {
    languages: BTreeMap<String, LanguageData>,
    servers: BTreeMap<String, ServerData>,
    checkers: Vec<Checker>,
}

/// A checker as the catalog describes it (`[[checkers]]` in catalog.toml).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Checker {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) markers: Vec<String>,
    pub(crate) project: Option<String>,
    pub(crate) command: Vec<String>,
    #[serde(default)]
    pub(crate) binaries: Vec<String>,
    pub(crate) reader: String,
    pub(crate) narrower: Option<Narrower>,
}

/// A second, narrower run: what it leaves out, and its command.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Narrower {
    pub(crate) without: String,
    pub(crate) command: Vec<String>,
}

/// The built-in catalog, parsed once.
struct Catalog {
    languages: BTreeMap<String, Language>,
    servers: BTreeMap<String, ServerEntry>,
    checkers: Vec<Checker>,
}

fn catalog() -> &'static Catalog {
    static PARSED: OnceLock<Catalog> = OnceLock::new();
    PARSED.get_or_init(|| {
        // The catalog is part of the source: a mistake in it fails every test at once.
        #[allow(clippy::expect_used)]
        let data: CatalogData = toml::from_str(CATALOG).expect("catalog.toml is valid");
        let mut servers = BTreeMap::new();
        for (id, entry) in data.servers {
            let base = ServerEntry {
                id: id.clone(),
                ..ServerEntry::default()
            };
            #[allow(clippy::expect_used)]
            let entry = apply(base, entry).expect("catalog.toml's servers are valid");
            servers.insert(id, entry);
        }
        let mut languages = BTreeMap::new();
        for (id, data) in data.languages {
            languages.insert(id.clone(), language(Language::default(), &id, data));
        }
        Catalog {
            languages,
            servers,
            checkers: data.checkers,
        }
    })
}

/// The built-in servers, by id.
pub fn builtin() -> BTreeMap<String, ServerEntry> {
    catalog().servers.clone()
}

/// The programs the checkers start: each command's first word, its narrower's, and every
/// listed binary.
pub(crate) fn checker_programs() -> Vec<String> {
    let mut names = Vec::new();
    for checker in checkers() {
        names.extend(checker.command.first().cloned());
        names.extend(
            checker
                .narrower
                .iter()
                .filter_map(|n| n.command.first().cloned()),
        );
        names.extend(checker.binaries.iter().cloned());
    }
    names
}

/// The project checkers `diagnostics "*"` runs, in order.
pub(crate) fn checkers() -> &'static [Checker] {
    &catalog().checkers
}

/// The built-in languages, by id.
pub fn builtin_languages() -> BTreeMap<String, Language> {
    catalog().languages.clone()
}

/// A language id as a `&'static str`, kept once per distinct name (a run's languages are
/// few, and tasks that outlive a call carry them).
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = lock(&NAMES);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// `base` with what `data` says laid over it.
pub(crate) fn language(mut base: Language, id: &str, data: LanguageData) -> Language {
    base.id = intern(id);
    if let Some(v) = data.extensions {
        base.extensions = v
            .into_iter()
            .map(|e| e.trim_start_matches('.').to_string())
            .collect();
    }
    if let Some(v) = data.file_names {
        base.file_names = v;
    }
    if let Some(v) = data.servers {
        base.servers = v;
    }
    if let Some(v) = data.alongside {
        base.alongside = v;
    }
    if let Some(v) = data.language_id {
        base.language_id = v;
    }
    if base.language_id.is_empty() {
        base.language_id = id.to_string();
    }
    if let Some(v) = data.language_ids {
        base.language_ids = v;
    }
    if let Some(v) = data.grammars {
        base.grammars = v;
    }
    base
}

fn json(value: toml::Value) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// `entry` with what `data` says laid over it; `Err` names a key that is wrong.
pub(crate) fn apply(mut entry: ServerEntry, data: ServerData) -> Result<ServerEntry, SettingError> {
    let id = entry.id.clone();
    if let Some(command) = data.command {
        if command.is_empty() {
            return Err(SettingError::rule(format!(
                "[lsp.servers.{id}]: `command` is empty"
            )));
        }
        if data.binaries.is_none() {
            entry.binaries = vec![command[0].clone()];
        }
        entry.command = command;
    }
    if let Some(binaries) = data.binaries {
        entry.binaries = binaries;
    }
    if let Some(kind) = data.project.as_deref() {
        let markers = tether_toolchain::project_markers(kind).ok_or_else(|| {
            SettingError::rule(format!(
                "[lsp.servers.{id}]: `project = \"{kind}\"` is not a project kind tether \
                 knows; give `root_markers = [...]` instead, or `project = \"python\"`"
            ))
        })?;
        entry.root_markers = markers.iter().map(|m| m.to_string()).collect();
    }
    if let Some(markers) = data.root_markers {
        entry.root_markers = markers;
    }
    if let Some(settings) = data.settings {
        entry.settings = json(settings);
    }
    if let Some(init) = data.init_options {
        entry.init_options = json(init);
    }
    if let Some(recipe) = data.install {
        entry.install = Some(recipe);
    }
    if !data.behaviour.is_empty() {
        let flags = data.behaviour;
        // Flags laid over the entry's own: start from them as a table, replace what is given.
        let mut table = toml::Table::try_from(&entry.behaviour).unwrap_or_default();
        table.extend(flags);
        entry.behaviour = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| SettingError::Shape {
                section: format!("lsp.servers.{id}"),
                message: e.message().to_string(),
            })?;
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {

    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_checkers_programs_are_each_command_and_binary() {
        let programs = checker_programs();
        for name in ["cargo", "pyright", "basedpyright", "tsc", "go", "dart"] {
            assert!(programs.iter().any(|p| p == name), "{name}: {programs:?}");
        }
    }

    #[test]
    fn the_catalog_reads_and_every_language_names_known_servers() {
        let servers = builtin();
        for lang in builtin_languages().values() {
            assert!(!lang.extensions.is_empty(), "{}", lang.id);
            for s in lang.servers.iter().chain(&lang.alongside) {
                assert!(servers.contains_key(s), "{} names {s}", lang.id);
            }
        }
        let ra = &servers["rust-analyzer"];
        assert!(ra.behaviour.separate_check && ra.behaviour.announces_loading);
        assert_eq!(ra.binaries, ["rust-analyzer"]);
        assert_eq!(
            servers["pyright"].root_markers,
            tether_toolchain::PYTHON_PROJECT_MARKERS
        );
        assert_eq!(
            servers["gopls"].behaviour.untrusted_env["GOTOOLCHAIN"],
            "local"
        );
        let c = &builtin_languages()["c"];
        assert_eq!(c.language_id_of(std::path::Path::new("a.h")), "c");
        assert_eq!(c.language_id_of(std::path::Path::new("a.cc")), "cpp");
        assert_eq!(
            crate::LspConfig::default().language_of(std::path::Path::new("x/y.tsx")),
            Some("typescript")
        );
    }

    #[test]
    fn an_override_changes_only_what_it_names() {
        let ra = builtin()["rust-analyzer"].clone();
        let data: ServerData = toml::from_str("separate_check = false\n").unwrap();
        let changed = apply(ra.clone(), data).unwrap();
        assert!(!changed.behaviour.separate_check);
        assert!(changed.behaviour.announces_loading);
        assert_eq!(changed.command, ra.command);
        let bad: Result<ServerData, _> = toml::from_str("separate_checks = true\n");
        let err = apply(ra, bad.unwrap()).unwrap_err().to_string();
        assert!(err.contains("separate_checks"), "{err}");
    }
}
