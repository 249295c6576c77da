//! What `tether install` can install: the catalog's servers that carry a recipe, with the
//! languages they serve, as the user's config (and a trusted workspace's) leaves them, and the
//! built-in debug adapters that carry one; and the languages a workspace's files are in, for
//! `--for-workspace`.

use std::collections::BTreeSet;
use std::path::Path;

use tether_toolchain::Recipe;

use crate::{Config, ConfigError};

/// One server `tether install` can install.
#[derive(Debug, Clone)]
pub struct Installable {
    /// Its catalog id.
    pub id: String,
    /// How it is installed.
    pub recipe: Recipe,
    /// The program a run starts (the command's first word).
    pub program: String,
    /// The languages that list it, in catalog order.
    pub languages: Vec<String>,
    /// The languages it runs beside another server of (ruff beside Python's type checker).
    pub beside: Vec<String>,
    /// Those languages' file extensions and whole file names (`yml`, `Dockerfile`), which a
    /// model may give instead of the language's name.
    pub files: Vec<String>,
}

/// Files looked at, at most, to tell a workspace's languages.
const FILES_LOOKED_AT: usize = 50_000;

/// The `[lsp]` catalog as the user's config (and a trusted workspace's) leaves it.
fn lsp_config(root: &Path, user_dir: &Path) -> Result<tether_lsp::LspConfig, ConfigError> {
    let config = Config::load(root, user_dir)?;
    tether_lsp::LspConfig::from_section(config.get("lsp"))
        .map_err(|why| ConfigError::new(&config.source_of("lsp"), Some("lsp"), why))
}

/// Every server with a recipe, by id.
pub fn installable(root: &Path, user_dir: &Path) -> Result<Vec<Installable>, ConfigError> {
    let lsp = lsp_config(root, user_dir)?;
    Ok(lsp
        .servers
        .values()
        .filter_map(|entry| {
            let recipe = entry.install.clone()?;
            let program = entry.command.first()?.clone();
            let serving: Vec<_> = lsp
                .languages
                .values()
                .filter(|l| l.servers.contains(&entry.id))
                .collect();
            let beside = lsp
                .languages
                .values()
                .filter(|l| l.alongside.contains(&entry.id))
                .map(|l| l.id.to_string())
                .collect();
            Some(Installable {
                id: entry.id.clone(),
                recipe,
                program,
                languages: serving.iter().map(|l| l.id.to_string()).collect(),
                beside,
                files: serving
                    .iter()
                    .flat_map(|l| l.extensions.iter().chain(&l.file_names).cloned())
                    .collect(),
            })
        })
        .chain(installable_adapters())
        .collect())
}

/// Every debug adapter of the built-in catalog with a recipe: its id, and the extensions of the
/// programs it debugs as its files.
fn installable_adapters() -> Vec<Installable> {
    let Ok(catalog) = tether_dap::Catalog::builtin() else {
        return Vec::new();
    };
    catalog
        .iter()
        .filter_map(|adapter| {
            let recipe = adapter.install.clone()?;
            let program = adapter.installed_program.clone()?;
            Some(Installable {
                id: adapter.id.clone(),
                recipe,
                program,
                languages: vec![format!("debugging: {}", adapter.summary.clone()?)],
                beside: Vec::new(),
                files: Vec::new(),
            })
        })
        .collect()
}

/// The languages of the files under `root` (what git would not ignore), by catalog id.
pub fn languages_present(root: &Path, user_dir: &Path) -> Result<BTreeSet<String>, ConfigError> {
    let lsp = lsp_config(root, user_dir)?;
    let mut found = BTreeSet::new();
    let walk = ignore::WalkBuilder::new(root).hidden(true).build();
    for entry in walk.flatten().take(FILES_LOOKED_AT) {
        if entry.file_type().is_some_and(|t| t.is_file())
            && let Some(lang) = lsp.language_of(entry.path())
        {
            found.insert(lang.to_string());
        }
    }
    Ok(found)
}
