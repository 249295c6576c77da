//! What kind of file a path names, where more than one part of tether asks the same question.

use std::path::Path;

/// Whether `path` is a configuration file (TOML, YAML, JSON, INI) by its extension: no
/// language server checks these, so a write of one says so, and its syntax check is all it gets.
pub fn is_config_file(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        matches!(
            e.to_ascii_lowercase().as_str(),
            "toml" | "yaml" | "yml" | "json" | "jsonc" | "ini" | "cfg"
        )
    })
}

/// A folder that tools generate rather than people write: what a search or the watch for
/// outside edits leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeneratedFolder {
    /// Named `node_modules`.
    NodeModules,
    /// It holds a `pyvenv.cfg`: a Python virtual environment.
    VirtualEnv,
    /// It holds a `CACHEDIR.TAG` with the standard signature (cargo's `target/`, say).
    Cache,
}

/// The signature a `CACHEDIR.TAG` starts with (the Cache Directory Tagging Specification).
const CACHEDIR_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Which kind of generated folder `dir` is, if any.
pub fn generated_folder(dir: &Path) -> Option<GeneratedFolder> {
    if dir.file_name().is_some_and(|n| n == "node_modules") {
        return Some(GeneratedFolder::NodeModules);
    }
    if dir.join("pyvenv.cfg").is_file() {
        return Some(GeneratedFolder::VirtualEnv);
    }
    let tagged = std::fs::File::open(dir.join("CACHEDIR.TAG")).is_ok_and(|file| {
        let mut head = Vec::with_capacity(CACHEDIR_SIGNATURE.len());
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, CACHEDIR_SIGNATURE.len() as u64),
            &mut head,
        )
        .is_ok()
            && head == CACHEDIR_SIGNATURE
    });
    tagged.then_some(GeneratedFolder::Cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_files_by_extension() {
        for yes in ["a.toml", "b.YML", "c.json", "d/e.ini", "setup.cfg"] {
            assert!(is_config_file(Path::new(yes)), "{yes}");
        }
        for no in ["a.rs", "b.md", "toml", "c.tomlx"] {
            assert!(!is_config_file(Path::new(no)), "{no}");
        }
    }
}
