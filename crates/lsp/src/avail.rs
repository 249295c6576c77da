//! Whether a server can serve a file, decided at call time as an intersection: a root marker
//! between the file and the workspace root, AND a binary that resolves. When only one holds,
//! the answer names the missing half.

use std::path::{Path, PathBuf};

use crate::catalog::ServerEntry;
use crate::config::LspConfig;

/// A server that can start for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The catalog id.
    pub id: String,
    /// The project root: the top-most folder inside the workspace holding a marker.
    pub root: PathBuf,
    /// The command, `argv[0]` resolved to the binary found.
    pub argv: Vec<String>,
}

/// The server for a file of `lang`, or why none can start (one line per candidate).
pub fn find(
    config: &LspConfig,
    lang: &str,
    file: &Path,
    workspace: &Path,
    trusted: bool,
) -> Result<Found, Vec<String>> {
    let mut why = Vec::new();
    let candidates = config
        .languages
        .get(lang)
        .map(|l| l.servers.clone())
        .unwrap_or_default();
    if candidates.is_empty() {
        why.push(format!("no server is configured for {lang}"));
    }
    for id in candidates {
        let Some(entry) = config.servers.get(&id) else {
            continue;
        };
        let root = find_root(entry, file, workspace);
        let binary = resolve(entry, workspace, trusted);
        match (root, binary) {
            (Some(root), Ok(binary)) => {
                let mut argv = entry.command.clone();
                argv[0] = binary.to_string_lossy().into_owned();
                return Ok(Found { id, root, argv });
            }
            (Some(_), Err(missing)) if entry.root_markers.is_empty() => {
                why.push(match entry.binaries == [id.clone()] {
                    true => missing.to_string(),
                    false => format!("{id}: {missing}"),
                });
            }
            (Some(root), Err(missing)) => why.push(format!(
                "{id}: {} found at {}, but {missing}",
                marker_at(entry, &root),
                shown(&root, workspace)
            )),
            (None, Ok(binary)) => why.push(format!(
                "{id}: {} is installed, but no root marker ({}) lies between {} and the \
                 workspace root",
                binary.display(),
                entry.root_markers.join(", "),
                shown(file.parent().unwrap_or(workspace), workspace)
            )),
            (None, Err(missing)) => why.push(format!(
                "{id}: no root marker ({}) and {missing}",
                entry.root_markers.join(", ")
            )),
        }
    }
    Err(why)
}

/// The built-in catalog as docs/languages.md shows it: one row per language, with its
/// servers and how `tether install` installs each.
pub fn languages_table() -> String {
    let servers = crate::catalog::builtin();
    let mut out = String::from(
        "| language | files | servers (first found runs) | `tether install` |\n\
         |---|---|---|---|\n",
    );
    for lang in crate::catalog::builtin_languages().values() {
        let recipes: Vec<String> = lang
            .servers
            .iter()
            .chain(&lang.alongside)
            .filter_map(|id| {
                let r = servers.get(id)?.install.as_ref()?;
                Some(format!("`{id}`: {} {} {}", r.from, r.package, r.version))
            })
            .collect();
        let files: Vec<String> = (lang.extensions.iter().map(|e| format!("`.{e}`")))
            .chain(lang.file_names.iter().map(|n| format!("`{n}`")))
            .collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            lang.id,
            files.join(" "),
            match lang.alongside.is_empty() {
                true => lang.servers.join(", "),
                false => format!(
                    "{}; beside it: {}",
                    lang.servers.join(", "),
                    lang.alongside.join(", ")
                ),
            },
            match recipes.is_empty() {
                true => "none: install it yourself".to_string(),
                false => recipes.join("; "),
            },
        ));
    }
    out
}

/// One line per catalog server: the binary it would run, or why none is found, and the
/// languages that use it. Nothing is started.
pub fn catalog_report(config: &LspConfig) -> Vec<String> {
    config
        .servers
        .values()
        .map(|entry| {
            let langs: Vec<String> = config
                .languages
                .iter()
                .filter_map(|(lang, l)| match l.alongside.contains(&entry.id) {
                    true => Some(format!("beside {lang}")),
                    false => l.servers.contains(&entry.id).then(|| lang.clone()),
                })
                .collect();
            // The copy a run would start: one `tether install` recorded, then PATH.
            let installed = tether_toolchain::installed_program(&entry.binaries);
            let found = entry.binaries.iter().find_map(|b| which::which(b).ok());
            let what = match (installed, found) {
                (Some(path), _) => format!("installed by tether: {}", path.display()),
                (None, Some(path)) => format!("found: {}", path.display()),
                (None, None) if entry.binaries.len() == 1 => {
                    format!("missing: {} is not on PATH", entry.binaries[0])
                }
                (None, None) => {
                    format!("missing: none of {} is on PATH", entry.binaries.join(", "))
                }
            };
            let used = match langs.as_slice() {
                [] => "no language uses it".to_string(),
                l => l.join(", "),
            };
            format!("{:<28} {what} ({used})", entry.id)
        })
        .collect()
}

/// Entries looked at, at most, when `status` looks for files no server can serve.
const STATUS_WALK: usize = 5_000;

/// For each language with files in the workspace (the first [`STATUS_WALK`] entries, ignores
/// applied) that no server can serve, other than those in `skip`: the language, a file, and
/// why, as a call on that file would say it.
pub fn unserved(
    config: &LspConfig,
    workspace: &Path,
    trusted: bool,
    skip: &[&str],
) -> Vec<(&'static str, PathBuf, Vec<String>)> {
    let mut seen: Vec<&str> = skip.to_vec();
    let mut out = Vec::new();
    let walk = ignore::WalkBuilder::new(workspace).build();
    for entry in walk.flatten().take(STATUS_WALK) {
        let path = entry.path();
        let Some(lang) = config.language_of(path) else {
            continue;
        };
        if seen.contains(&lang) || !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        seen.push(lang);
        if let Err(why) = find(config, lang, path, workspace, trusted) {
            out.push((lang, path.to_path_buf(), why));
        }
    }
    out
}

/// The top-most folder from the file's folder up to the workspace root that holds a marker.
pub fn find_root(entry: &ServerEntry, file: &Path, workspace: &Path) -> Option<PathBuf> {
    // A language with no project file (YAML, shell scripts) is served from the workspace root.
    if entry.root_markers.is_empty() {
        return Some(workspace.to_path_buf());
    }
    let mut found = None;
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        if entry.root_markers.iter().any(|m| d.join(m).exists()) {
            found = Some(d.to_path_buf());
        }
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    found
}

/// Why a server's binary is not run.
#[derive(Debug)]
enum Missing {
    /// It lies inside an untrusted workspace.
    Inside(PathBuf),
    /// None of these names is on PATH; the server's id when `tether install` can install it.
    NotOnPath(Vec<String>, Option<String>),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::Inside(p) => write!(
                f,
                "{} lies inside this untrusted workspace, so it is not run (run `tether trust` \
                 to allow it)",
                p.display()
            ),
            Missing::NotOnPath(names, installs) => {
                match names.len() {
                    1 => write!(f, "{} is not on PATH", names.join(", "))?,
                    _ => write!(f, "none of {} is on PATH", names.join(", "))?,
                }
                match installs {
                    Some(id) => write!(f, " (`tether install {id}` installs it for tether alone)"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The first candidate binary tether installed, else the first on PATH. In an untrusted
/// workspace, one inside the workspace does not count: it came with the repository.
fn resolve(entry: &ServerEntry, workspace: &Path, trusted: bool) -> Result<PathBuf, Missing> {
    if entry.install.is_some()
        && let Some(path) = tether_toolchain::installed_program(&entry.binaries)
            .filter(|p| trusted || !p.starts_with(workspace))
    {
        return Ok(path);
    }
    let mut inside = None;
    for name in &entry.binaries {
        if let Ok(path) = which::which(name) {
            if !trusted && path.starts_with(workspace) {
                inside = Some(path);
                continue;
            }
            return Ok(path);
        }
    }
    Err(match inside {
        Some(p) => Missing::Inside(p),
        None => Missing::NotOnPath(
            entry.binaries.clone(),
            entry.install.as_ref().map(|_| entry.id.clone()),
        ),
    })
}

fn marker_at(entry: &ServerEntry, root: &Path) -> String {
    entry
        .root_markers
        .iter()
        .find(|m| root.join(m).exists())
        .cloned()
        .unwrap_or_default()
}

/// A folder as the model sees it: relative to the workspace, `.` for the root.
pub fn shown(dir: &Path, workspace: &Path) -> String {
    match dir.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// docs/languages.md shows the catalog as it is; when an entry changes, run this with
    /// `TETHER_BLESS=1`.
    #[test]
    fn the_languages_page_is_up_to_date() {
        let page = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/languages.md");
        let (begin, end) = (
            "<!-- languages table: begin -->\n",
            "<!-- languages table: end -->",
        );
        let expected = super::languages_table();
        if let Err(why) = tether_base::generated_part(page.as_ref(), begin, end, &expected) {
            panic!("{why}");
        }
    }

    fn config_with(id: &str, binaries: &[&str]) -> LspConfig {
        let mut c = LspConfig::default();
        let entry = c.servers.get_mut(id).unwrap();
        entry.binaries = binaries.iter().map(|s| s.to_string()).collect();
        c
    }

    #[test]
    fn the_top_most_marker_wins_and_each_missing_half_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("crates/a/src")).unwrap();
        std::fs::write(ws.join("Cargo.toml"), "").unwrap();
        std::fs::write(ws.join("crates/a/Cargo.toml"), "").unwrap();
        let file = ws.join("crates/a/src/lib.rs");
        // `sh` stands in for a binary that exists.
        let found = find(
            &config_with("rust-analyzer", &["sh"]),
            "rust",
            &file,
            &ws,
            true,
        )
        .unwrap();
        assert_eq!(found.root, ws);
        assert!(found.argv[0].ends_with("/sh"), "{:?}", found.argv);
        let why = find(
            &config_with("rust-analyzer", &["no-such-ra"]),
            "rust",
            &file,
            &ws,
            true,
        )
        .unwrap_err();
        assert_eq!(
            why,
            ["rust-analyzer: Cargo.toml found at ., but no-such-ra is not on PATH"]
        );
        let py = ws.join("crates/a/src/x.py");
        let mut c = config_with("pyright", &["sh"]);
        c.languages.get_mut("python").unwrap().servers = vec!["pyright".into()];
        let why = find(&c, "python", &py, &ws, true).unwrap_err();
        assert!(
            why[0].starts_with("pyright: /") && why[0].contains("no root marker"),
            "{why:?}"
        );
        assert!(
            why[0].contains("between crates/a/src and the workspace root"),
            "{why:?}"
        );
    }
}
