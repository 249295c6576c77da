//! The `[lsp]` keys, each defined once; `config.rs` reads them through these definitions and
//! the tether crate derives the README's table, doctor's listing and the inert keys from them.

use tether_tool::{Kind, Scope, Setting};

/// `[lsp] request_timeout_s`.
pub(crate) const REQUEST_TIMEOUT: Setting = Setting::new(
    "lsp.request_timeout_s",
    Kind::Seconds {
        default: 30,
        max: 3600,
    },
    Scope::Trusted,
    "each request's deadline",
);
/// `[lsp] init_timeout_s`.
pub(crate) const INIT_TIMEOUT: Setting = Setting::new(
    "lsp.init_timeout_s",
    Kind::Seconds {
        default: 60,
        max: 3600,
    },
    Scope::Trusted,
    "how long a server may take to answer `initialize`",
);
/// `[lsp] check_timeout_s`.
pub(crate) const CHECK_TIMEOUT: Setting = Setting::new(
    "lsp.check_timeout_s",
    Kind::Seconds {
        default: 300,
        max: 3600,
    },
    Scope::Trusted,
    "`diagnostics \"*\"`: the checker's group is killed after this",
);
/// `[lsp] read_surfaces_build`: it lets a read-only run write (build scripts), so only the
/// user's own file may set it.
pub(crate) const READ_SURFACES_BUILD: Setting = Setting::new(
    "lsp.read_surfaces_build",
    Kind::Flag { default: false },
    Scope::User,
    "let plan and readonly runs of a trusted workspace run build scripts, proc macros and cargo check",
);
/// `[lsp] auto_install`: an install runs a registry's code, so only the user's own file may
/// turn it on.
pub(crate) const AUTO_INSTALL: Setting = Setting::new(
    "lsp.auto_install",
    Kind::Flag { default: false },
    Scope::User,
    "install a missing server on first need, in the background, from the built-in catalog's recipe (`tether install`; never from Debian's archive)",
);
/// `[lsp] watch_folders_max`: the outside-edit watch takes one inotify watch per folder, and
/// the system's limit is shared with every other program of the user.
pub(crate) const WATCH_FOLDERS_MAX: Setting = Setting::new(
    "lsp.watch_folders_max",
    Kind::Count {
        default: 20_000,
        max: 1_000_000,
    },
    Scope::Trusted,
    "folders the watch for outside edits takes at most; `status` names those left out",
);
/// `[lsp] outside_files_max`: each changed file asked about costs the server a check, and a
/// branch switch of 20,000 files kept gopls busy for more than 15 minutes.
pub(crate) const OUTSIDE_FILES_MAX: Setting = Setting::new(
    "lsp.outside_files_max",
    Kind::Count {
        default: 200,
        max: 1_000_000,
    },
    Scope::Trusted,
    "files of one burst of outside changes (a branch switch) diagnosed at most; the notice counts the rest as not diagnosed",
);
/// `[lsp.diagnostics] wait_ms`.
pub(crate) const WAIT_MS: Setting = Setting::new(
    "lsp.diagnostics.wait_ms",
    Kind::Millis {
        default: 3000,
        max: 600_000,
    },
    Scope::Trusted,
    "how long a write waits for its diagnostics",
);
/// `[lsp.diagnostics] baseline_ms`.
pub(crate) const BASELINE_MS: Setting = Setting::new(
    "lsp.diagnostics.baseline_ms",
    Kind::Millis {
        default: 1000,
        max: 600_000,
    },
    Scope::Trusted,
    "how long the look before a write may take",
);
/// `[lsp.diagnostics] preview`.
pub(crate) const PREVIEW: Setting = Setting::new(
    "lsp.diagnostics.preview",
    Kind::Flag { default: true },
    Scope::Trusted,
    "whether a staged change (ast_edit, or a write tool's dry_run) says what it would bring, judged by the language servers on the unsaved text",
);
/// `[lsp.diagnostics] severities`.
pub(crate) const SEVERITIES: Setting = Setting::new(
    "lsp.diagnostics.severities",
    Kind::Choices {
        default: &["error", "warning"],
        of: &crate::ledger::SEVERITY_NAMES,
    },
    Scope::Trusted,
    "which severities a write's report counts",
);
/// `[lsp.servers.<id>]`, checked where the catalog is merged.
const SERVERS: Setting = Setting::new(
    "lsp.servers.<id>",
    Kind::Table {
        fields: "a catalog server's keys: `command`, `binaries`, `root_markers`, `settings`, ...",
    },
    Scope::Trusted,
    "a catalog server changed, or a new one (see Language servers)",
);
/// `[lsp.languages.<id>]`, checked where the catalog is merged.
const LANGUAGES: Setting = Setting::new(
    "lsp.languages.<id>",
    Kind::Table {
        fields: "a catalog language's keys: `extensions`, `servers` (in order), ...",
    },
    Scope::Trusted,
    "a catalog language changed (which servers it tries; the first available wins), or a new one",
);

/// Every `[lsp]` key.
pub const SETTINGS: &[Setting] = &[
    WATCH_FOLDERS_MAX,
    OUTSIDE_FILES_MAX,
    REQUEST_TIMEOUT,
    INIT_TIMEOUT,
    CHECK_TIMEOUT,
    READ_SURFACES_BUILD,
    AUTO_INSTALL,
    WAIT_MS,
    BASELINE_MS,
    PREVIEW,
    SEVERITIES,
    SERVERS,
    LANGUAGES,
];
