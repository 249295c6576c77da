//! The debug adapters as data: the embedded `catalog.toml`, with each user `[debug.adapters.ID]`
//! merged over it. Code asks an adapter's flags and templates, never its id, so adding an
//! adapter is one entry (see "How to add a debug adapter" in docs/architecture.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use tether_tool::SettingError;

use crate::template::{self, Context};

/// The built-in entries, in the order `adapters` lists them.
const BUILT_IN: &str = include_str!("../catalog.toml");

/// How tether speaks DAP with an adapter it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TransportKind {
    /// Over the adapter's stdin and stdout.
    #[default]
    Stdio,
    /// Over TCP, at the address the adapter prints on stdout (see `announce`).
    Tcp,
}

/// One adapter as the catalog file or a user's `[debug.adapters.ID]` gives it. Every key is
/// optional, so a user entry names only what it changes; a key given replaces the built-in's
/// (a table whole).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdapterOverride {
    /// What it debugs, for the tool's description ("Go via delve").
    pub summary: Option<String>,
    /// Program extensions that pick it when no `adapter` is named (without the dot).
    pub extensions: Option<Vec<String>>,
    /// Whether it debugs native (ELF) programs: one picks it, and is a project of its own.
    pub native: Option<bool>,
    /// Files that mark a project it debugs; the nearest one's folder is where it runs.
    pub markers: Option<Vec<String>>,
    /// A project kind whose markers tether keeps in one place (`python`), instead of `markers`.
    pub project: Option<String>,
    /// Candidate binaries for `{binary}`, first on PATH wins.
    pub binaries: Option<Vec<String>>,
    /// The whole command that runs the adapter; may use `{binary}` and `{python}`.
    pub command: Option<Vec<String>>,
    /// A module the project's `{python}` must import, checked before the adapter starts.
    pub python_module: Option<String>,
    /// `stdio` (the default) or `tcp`.
    pub transport: Option<TransportKind>,
    /// With `tcp`: the text of the stdout line naming where to connect, with `{address}`
    /// (host:port) or `{port}` where it stands.
    pub announce: Option<String>,
    /// The arguments of DAP's `launch` request, with placeholders.
    pub launch: Option<toml::Table>,
    /// The arguments of DAP's `attach` request for a program waiting on `{port}`.
    pub attach: Option<toml::Table>,
    /// How a program is made to wait on a port for this adapter, said when attaching fails.
    pub attach_howto: Option<String>,
    /// Whether the port speaks DAP itself (no adapter of ours starts), rather than the adapter
    /// starting here and connecting to it.
    pub attach_over_port: Option<bool>,
    /// Exception filters to turn on, when the adapter offers them.
    pub exception_filters: Option<Vec<String>>,
    /// Function breakpoints set in every session.
    pub function_breakpoints: Option<Vec<String>>,
    /// Whether a Cargo project's sessions load Rust's lldb formatters (`{init_commands}`).
    pub rust_formatters: Option<bool>,
    /// The `context` of an `evaluate` request (default `watch`).
    pub evaluate_context: Option<String>,
    /// What `terminate` says after detaching, when the program is not simply left running.
    pub detach_note: Option<String>,
    /// How `tether install` installs it (see the language servers' catalog).
    pub install: Option<tether_toolchain::Recipe>,
    /// The program its install records: found there first, and for an adapter that runs
    /// under the project's Python, run instead when that interpreter lacks its module.
    pub installed_program: Option<String>,
}

/// Every user entry, by adapter id.
pub type Overrides = BTreeMap<String, AdapterOverride>;

/// An adapter's transport, compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// stdin and stdout.
    Stdio,
    /// TCP at the address read from the stdout line matching `announce`.
    Tcp { announce: String },
}

/// One adapter, merged and checked: what the rest of the crate reads.
#[derive(Debug, Clone)]
pub struct Adapter {
    pub id: String,
    /// Added by `[debug.adapters.ID]`, with no built-in entry under it.
    pub user: bool,
    pub summary: Option<String>,
    pub extensions: Vec<String>,
    pub native: bool,
    pub markers: Vec<String>,
    pub binaries: Vec<String>,
    /// Empty when a user entry gave none (said when it is used).
    pub command: Vec<String>,
    pub python_module: Option<String>,
    pub transport: Transport,
    pub launch: Option<Value>,
    pub attach: Option<Value>,
    pub attach_howto: Option<String>,
    pub attach_over_port: bool,
    pub exception_filters: Vec<String>,
    pub function_breakpoints: Vec<String>,
    pub rust_formatters: bool,
    pub evaluate_context: String,
    pub detach_note: Option<String>,
    pub install: Option<tether_toolchain::Recipe>,
    pub installed_program: Option<String>,
}

impl Adapter {
    /// Whether its command or templates need the project's interpreter.
    pub fn uses_python(&self) -> bool {
        let named = |v: &Option<Value>| v.as_ref().is_some_and(template::mentions_python);
        self.command.iter().any(|c| c.contains("{python}"))
            || named(&self.launch)
            || named(&self.attach)
    }
}

/// The catalog a run uses: the built-in entries with the user's merged over them.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    adapters: Vec<Arc<Adapter>>,
}

impl Catalog {
    /// The built-in entries alone.
    pub fn builtin() -> Result<Catalog, SettingError> {
        Catalog::merged(&Overrides::new())
    }

    /// The built-in entries with `overrides` merged over them, user-added ones after; a
    /// wrong key, type or placeholder says which entry and what is allowed.
    pub fn merged(overrides: &Overrides) -> Result<Catalog, SettingError> {
        let mut entries = builtin_entries()?;
        for (id, given) in overrides {
            match entries.iter_mut().find(|(known, _, _)| known == id) {
                Some((_, entry, _)) => merge(entry, given.clone()),
                None => entries.push((id.clone(), given.clone(), true)),
            }
        }
        let adapters = entries
            .into_iter()
            .map(|(id, entry, user)| compile(id, entry, user).map(Arc::new))
            .collect::<Result<_, _>>()?;
        Ok(Catalog { adapters })
    }

    /// Every adapter, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Adapter>> {
        self.adapters.iter()
    }

    /// The adapter `id`.
    pub fn get(&self, id: &str) -> Option<&Arc<Adapter>> {
        self.adapters.iter().find(|a| a.id == id)
    }

    /// Every id, for messages.
    pub fn ids(&self) -> Vec<&str> {
        self.adapters.iter().map(|a| a.id.as_str()).collect()
    }

    /// The adapter a program's file asks for: the first whose extensions hold its extension,
    /// else, for a native program, the first native adapter; `None` when the file does not say.
    pub fn for_program(&self, program: &Path) -> Option<&Arc<Adapter>> {
        let ext = program.extension().and_then(|e| e.to_str());
        let by_ext = ext.and_then(|ext| {
            self.adapters
                .iter()
                .find(|a| a.extensions.iter().any(|e| e == ext))
        });
        by_ext.or_else(|| {
            crate::locate::is_elf(program)
                .then(|| self.adapters.iter().find(|a| a.native))
                .flatten()
        })
    }

    /// The adapters that can attach to a port, in order.
    pub fn attachers(&self) -> impl Iterator<Item = &Arc<Adapter>> {
        self.adapters.iter().filter(|a| a.attach.is_some())
    }

    /// How a debuggee waits on a port for each adapter that can attach to one.
    pub fn attach_howto(&self) -> String {
        let ways: Vec<String> = self
            .attachers()
            .filter_map(|a| Some(format!("{}: {}", a.id, a.attach_howto.as_ref()?)))
            .collect();
        ways.join("; ")
    }

    /// What the debugger covers, for the tool's description: each summary, in order.
    pub fn summaries(&self) -> String {
        let all: Vec<&str> = self.iter().filter_map(|a| a.summary.as_deref()).collect();
        all.join("; ")
    }
}

/// The catalog file's entries, in order, as (id, entry, added by the user).
fn builtin_entries() -> Result<Vec<(String, AdapterOverride, bool)>, SettingError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        adapter: Vec<toml::Table>,
    }
    let broken = |e: &dyn std::fmt::Display| {
        SettingError::rule(format!("the built-in debug catalog is broken: {e}"))
    };
    let file: File = toml::from_str(BUILT_IN).map_err(|e| broken(&e))?;
    file.adapter
        .into_iter()
        .map(|mut table| {
            let id = match table.remove("id") {
                Some(toml::Value::String(id)) => id,
                _ => return Err(broken(&"an entry has no `id`")),
            };
            let entry = AdapterOverride::deserialize(table).map_err(|e| broken(&e))?;
            Ok((id, entry, false))
        })
        .collect()
}

/// Lays the keys `given` names over `entry`.
fn merge(entry: &mut AdapterOverride, given: AdapterOverride) {
    macro_rules! over {
        ($($key:ident),* $(,)?) => { $( if given.$key.is_some() { entry.$key = given.$key; } )* };
    }
    over!(
        summary,
        extensions,
        native,
        markers,
        project,
        binaries,
        command,
        python_module,
        transport,
        announce,
        launch,
        attach,
        attach_howto,
        attach_over_port,
        exception_filters,
        function_breakpoints,
        rust_formatters,
        evaluate_context,
        detach_note,
        install,
        installed_program,
    );
}

/// Checks a merged entry and fills in defaults.
fn compile(id: String, e: AdapterOverride, user: bool) -> Result<Adapter, SettingError> {
    let at = format!("[debug.adapters.{id}]");
    let transport = match (e.transport.unwrap_or_default(), e.announce) {
        (TransportKind::Stdio, _) => Transport::Stdio,
        (TransportKind::Tcp, Some(announce))
            if announce.contains("{address}") != announce.contains("{port}") =>
        {
            Transport::Tcp { announce }
        }
        (TransportKind::Tcp, _) => {
            return Err(SettingError::rule(format!(
                "{at}: `transport = \"tcp\"` needs `announce`, the text of the line the adapter \
                 prints with `{{address}}` or `{{port}}` where the address stands (e.g. \
                 \"listening at: {{address}}\")"
            )));
        }
    };
    let command = e.command.unwrap_or_default();
    template::check_command(&command)
        .map_err(|why| SettingError::rule(format!("{at} command: {why}")))?;
    let table = |t: Option<toml::Table>, what: Context| -> Result<Option<Value>, SettingError> {
        let Some(t) = t else { return Ok(None) };
        let in_table =
            |why: &dyn std::fmt::Display| SettingError::rule(format!("{at} {}: {why}", what.key()));
        let value = serde_json::to_value(t).map_err(|e| in_table(&e))?;
        template::check(&value, what).map_err(|why| in_table(&why))?;
        Ok(Some(value))
    };
    let launch = table(e.launch, Context::Launch)?;
    let attach = table(e.attach, Context::Attach)?;
    if let Some(module) = &e.python_module
        && !module
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        return Err(SettingError::rule(format!(
            "{at}: `python_module = {module:?}` is not a module name"
        )));
    }
    Ok(Adapter {
        id,
        user,
        summary: e.summary,
        extensions: e.extensions.unwrap_or_default(),
        native: e.native.unwrap_or(false),
        markers: match (e.markers, e.project.as_deref()) {
            (Some(markers), _) => markers,
            (None, Some(kind)) => tether_toolchain::project_markers(kind)
                .ok_or_else(|| {
                    SettingError::rule(format!(
                        "{at}: `project = {kind:?}` is not a project kind tether knows; give \
                         `markers = [...]`, or `project = \"python\"`"
                    ))
                })?
                .iter()
                .map(|m| m.to_string())
                .collect(),
            (None, None) => Vec::new(),
        },
        binaries: e.binaries.unwrap_or_default(),
        command,
        python_module: e.python_module,
        transport,
        launch,
        attach,
        attach_howto: e.attach_howto,
        attach_over_port: e.attach_over_port.unwrap_or(false),
        exception_filters: e.exception_filters.unwrap_or_default(),
        function_breakpoints: e.function_breakpoints.unwrap_or_default(),
        rust_formatters: e.rust_formatters.unwrap_or(false),
        evaluate_context: e.evaluate_context.unwrap_or_else(|| "watch".into()),
        detach_note: e.detach_note,
        install: e.install,
        installed_program: e.installed_program,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn user(text: &str) -> Overrides {
        #[derive(Deserialize)]
        struct Debug {
            adapters: Overrides,
        }
        toml::from_str::<Debug>(text).unwrap().adapters
    }

    #[test]
    fn the_built_in_catalog_parses_in_order() {
        let catalog = Catalog::builtin().unwrap();
        assert_eq!(catalog.ids(), ["debugpy", "lldb", "delve", "dart"]);
        assert_eq!(
            catalog.summaries(),
            "Python via debugpy; C, C++ and Rust programs via lldb; Go via delve; Dart via \
             dart debug_adapter"
        );
        let howto = catalog.attach_howto();
        assert!(
            howto.starts_with("debugpy: `python -m debugpy --listen"),
            "{howto}"
        );
        assert!(howto.contains("; lldb: `lldb-server gdbserver 127.0.0.1:PORT ./program`"));
        assert!(howto.ends_with("delve: `dlv exec --headless --listen=127.0.0.1:PORT ./program`"));
        let delve = catalog.get("delve").unwrap();
        assert_eq!(
            delve.transport,
            Transport::Tcp {
                announce: "listening at: {address}".into()
            }
        );
        assert!(!delve.user && delve.attach_over_port);
        let lldb = catalog.get("lldb").unwrap();
        assert!(lldb.native && lldb.rust_formatters && !lldb.attach_over_port);
        assert_eq!(lldb.function_breakpoints, ["rust_panic"]);
        assert_eq!(catalog.get("debugpy").unwrap().evaluate_context, "repl");
        assert_eq!(catalog.get("dart").unwrap().evaluate_context, "watch");
        assert!(catalog.get("debugpy").unwrap().uses_python());
        assert!(!lldb.uses_python());
    }

    #[test]
    fn a_user_entry_replaces_only_the_keys_it_names() {
        let catalog = Catalog::merged(&user(
            "[adapters.lldb]\ncommand = [\"env\", \"lldb-dap\"]\nmarkers = [\"Makefile\"]\n",
        ))
        .unwrap();
        let lldb = catalog.get("lldb").unwrap();
        assert_eq!(lldb.command, ["env", "lldb-dap"]);
        assert_eq!(lldb.markers, ["Makefile"]);
        assert!(lldb.launch.is_some() && lldb.rust_formatters && !lldb.user);
        assert_eq!(catalog.ids(), ["debugpy", "lldb", "delve", "dart"]);
        // Python's project markers are the list every part of tether uses.
        let debugpy = catalog.get("debugpy").unwrap();
        assert_eq!(debugpy.markers, tether_toolchain::PYTHON_PROJECT_MARKERS);
        let bad = Catalog::merged(&user(
            "[adapters.mine]\ncommand = [\"x\"]\nproject = \"ruby\"\n",
        ));
        assert!(bad.is_err_and(|e| {
            e.to_string()
                .contains("`project = \"ruby\"` is not a project kind")
        }));
    }

    #[test]
    fn a_new_adapter_comes_after_the_built_in_ones_with_plain_defaults() {
        let catalog = Catalog::merged(&user(
            "[adapters.mine]\ncommand = [\"my-dap\"]\nmarkers = [\"my.toml\"]\n",
        ))
        .unwrap();
        let mine = catalog.get("mine").unwrap();
        assert!(mine.user && mine.launch.is_none() && mine.attach.is_none());
        assert_eq!(mine.transport, Transport::Stdio);
        assert_eq!(mine.evaluate_context, "watch");
        assert!(mine.function_breakpoints.is_empty() && mine.exception_filters.is_empty());
        assert_eq!(catalog.ids().last(), Some(&"mine"));
        assert_eq!(catalog.attachers().count(), 3);
    }

    #[test]
    fn wrong_entries_say_what_is_wrong() {
        let tcp = Catalog::merged(&user("[adapters.t]\ntransport = \"tcp\"\n"))
            .unwrap_err()
            .to_string();
        assert!(tcp.contains("[debug.adapters.t]: `transport = \"tcp\"` needs `announce`"));
        let typo = Catalog::merged(&user(
            "[adapters.t]\ncommand = [\"x\"]\n[adapters.t.launch]\nprogram = \"{prgram}\"\n",
        ))
        .unwrap_err()
        .to_string();
        assert!(
            typo.contains("[debug.adapters.t] launch: unknown placeholder {prgram}"),
            "{typo}"
        );
        let port = Catalog::merged(&user(
            "[adapters.t]\n[adapters.t.launch]\nport = \"{port}\"\n",
        ))
        .unwrap_err()
        .to_string();
        assert!(port.contains("{port} has no value in `launch`"), "{port}");
    }
}
