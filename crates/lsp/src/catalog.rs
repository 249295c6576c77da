//! The servers tether knows, which languages each serves, how to start it and where its
//! projects begin. A workspace or user `tether.toml` overrides and extends it (`[lsp]`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// One language server as the catalog describes it.
#[derive(Debug, Clone, PartialEq)]
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
}

/// The languages tether maps files to, by extension, and the servers each prefers, in order.
pub const LANGUAGES: &[(&str, &[&str], &[&str])] = &[
    ("rust", &["rs"], &["rust-analyzer"]),
    (
        "python",
        &["py", "pyi"],
        &["basedpyright", "pyright", "ty", "pylsp"],
    ),
    (
        "c",
        &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        &["clangd"],
    ),
    (
        "typescript",
        &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"],
        &["typescript-language-server"],
    ),
    ("go", &["go"], &["gopls"]),
    ("dart", &["dart"], &["dart"]),
];

/// The language a file belongs to, by its extension.
pub fn language_of(path: &std::path::Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?;
    LANGUAGES
        .iter()
        .find(|(_, exts, _)| exts.contains(&ext))
        .map(|(lang, _, _)| *lang)
}

/// The LSP `languageId` of a file of `lang`.
pub fn language_id(lang: &str, path: &std::path::Path) -> &'static str {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match (lang, ext) {
        ("c", "c" | "h") => "c",
        ("c", _) => "cpp",
        ("typescript", "tsx") => "typescriptreact",
        ("typescript", "js" | "mjs" | "cjs") => "javascript",
        ("typescript", "jsx") => "javascriptreact",
        ("rust", _) => "rust",
        ("python", _) => "python",
        ("go", _) => "go",
        ("dart", _) => "dart",
        _ => "typescript",
    }
}

fn entry(id: &str, command: &[&str], binaries: &[&str], markers: &[&str]) -> ServerEntry {
    ServerEntry {
        id: id.into(),
        command: command.iter().map(|s| s.to_string()).collect(),
        binaries: binaries.iter().map(|s| s.to_string()).collect(),
        root_markers: markers.iter().map(|s| s.to_string()).collect(),
        settings: Value::Null,
        init_options: Value::Null,
    }
}

const PYTHON_MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "pyrightconfig.json",
];

/// The built-in catalog, by id.
pub fn builtin() -> BTreeMap<String, ServerEntry> {
    let mut rust = entry(
        "rust-analyzer",
        &["rust-analyzer"],
        &["rust-analyzer"],
        &["Cargo.toml"],
    );
    // Offline, the sysroot's own `cargo metadata` fails and std goes unresolved; rust-analyzer
    // then reads the sysroot's sources directly.
    rust.init_options = json!({"checkOnSave": true, "cargo": {"sysrootQueryMetadata": false}});
    // Every file of the project is checked, so a change that breaks an importer says so.
    let mut pyright = entry(
        "pyright",
        &["pyright-langserver", "--stdio"],
        &["pyright-langserver"],
        PYTHON_MARKERS,
    );
    pyright.settings = json!({"python": {"analysis": {"diagnosticMode": "workspace"}}});
    let mut based = entry(
        "basedpyright",
        &["basedpyright-langserver", "--stdio"],
        &["basedpyright-langserver"],
        PYTHON_MARKERS,
    );
    based.settings = json!({"basedpyright": {"analysis": {"diagnosticMode": "workspace"}}});
    let servers = [
        rust,
        entry(
            "clangd",
            &["clangd"],
            &[
                "clangd",
                "clangd-22",
                "clangd-21",
                "clangd-20",
                "clangd-19",
                "clangd-18",
            ],
            &[
                "compile_commands.json",
                "compile_flags.txt",
                "CMakeLists.txt",
            ],
        ),
        pyright,
        based,
        entry("ty", &["ty", "server"], &["ty"], PYTHON_MARKERS),
        entry("pylsp", &["pylsp"], &["pylsp"], PYTHON_MARKERS),
        entry(
            "typescript-language-server",
            &["typescript-language-server", "--stdio"],
            &["typescript-language-server"],
            &["package.json", "tsconfig.json", "jsconfig.json"],
        ),
        entry("gopls", &["gopls"], &["gopls"], &["go.mod"]),
        entry(
            "dart",
            &["dart", "language-server"],
            &["dart"],
            &["pubspec.yaml"],
        ),
    ];
    servers.into_iter().map(|s| (s.id.clone(), s)).collect()
}
