//! The `[structural]` section of `tether.toml`, owned here beside what it configures.

use serde::Deserialize;

/// The largest tree cache budget accepted, in MiB (64 GiB).
const MAX_CACHE_MB: usize = 64 * 1024;

/// Settings of structural search and the syntax check.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StructuralConfig {
    /// Memory budget of the per-run tree cache, in MiB (default 512).
    pub cache_mb: usize,
    /// Whether writes report the syntax errors they introduced (default true).
    pub syntax_check: bool,
}

impl Default for StructuralConfig {
    fn default() -> Self {
        StructuralConfig {
            cache_mb: 512,
            syntax_check: true,
        }
    }
}

impl StructuralConfig {
    /// Reads the section (absent means defaults); the error names the key and what is allowed.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, String> {
        let Some(section) = section else {
            return Ok(Self::default());
        };
        let config: StructuralConfig = section
            .clone()
            .try_into()
            .map_err(|e: toml::de::Error| format!("[structural]: {}", e.message()))?;
        if !(1..=MAX_CACHE_MB).contains(&config.cache_mb) {
            return Err(format!(
                "[structural]: `cache_mb = {}` must be a number of MiB from 1 to {MAX_CACHE_MB}",
                config.cache_mb
            ));
        }
        Ok(config)
    }

    /// The cache budget in bytes.
    pub fn cache_bytes(&self) -> usize {
        self.cache_mb << 20
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StructuralConfig, String> {
        let table: toml::Table = text.parse().unwrap();
        StructuralConfig::from_section(table.get("structural"))
    }

    #[test]
    fn defaults_values_and_mistakes() {
        assert_eq!(parse("").unwrap(), StructuralConfig::default());
        let c = parse("[structural]\ncache_mb = 64\nsyntax_check = false\n").unwrap();
        assert_eq!((c.cache_mb, c.syntax_check), (64, false));
        let e = parse("[structural]\ncache_size = 64\n").unwrap_err();
        assert!(e.contains("unknown field `cache_size`"), "{e}");
        let e = parse("[structural]\ncache_mb = 0\n").unwrap_err();
        assert!(e.contains("from 1 to 65536"), "{e}");
        let e = parse("[structural]\nsyntax_check = \"yes\"\n").unwrap_err();
        assert!(e.contains("syntax_check") || e.contains("bool"), "{e}");
    }
}
