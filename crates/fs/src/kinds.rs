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
