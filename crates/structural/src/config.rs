//! The `[structural]` section of `tether.toml`, owned here beside what it configures.

use serde::Deserialize;

use crate::budget::{Limits, REWRITE_BUDGET, TIME_BUDGET};

/// The largest tree cache budget accepted, in MiB (64 GiB).
const MAX_CACHE_MB: usize = 64 * 1024;

/// The longest time budget accepted, in seconds: a call the model waits for.
const MAX_TIME_BUDGET_SECS: u64 = 600;

/// The largest rewrite budget accepted, in MiB: the staged change is held in memory.
const MAX_REWRITE_BUDGET_MB: usize = 1024;

/// Settings of structural search and the syntax check.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StructuralConfig {
    /// Memory budget of the per-run tree cache, in MiB (default 512).
    pub cache_mb: usize,
    /// Whether writes report the syntax errors they introduced (default true).
    pub syntax_check: bool,
    /// Seconds one `ast_grep` or `ast_edit` call may search before it stops (default 60).
    pub time_budget_secs: u64,
    /// MiB of new file content one `ast_edit` may stage (default 64).
    pub rewrite_budget_mb: usize,
}

impl Default for StructuralConfig {
    fn default() -> Self {
        StructuralConfig {
            cache_mb: 512,
            syntax_check: true,
            time_budget_secs: TIME_BUDGET.as_secs(),
            rewrite_budget_mb: REWRITE_BUDGET >> 20,
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
        if !(1..=MAX_TIME_BUDGET_SECS).contains(&config.time_budget_secs) {
            return Err(format!(
                "[structural]: `time_budget_secs = {}` must be a number of seconds from 1 to \
                 {MAX_TIME_BUDGET_SECS}",
                config.time_budget_secs
            ));
        }
        if !(1..=MAX_REWRITE_BUDGET_MB).contains(&config.rewrite_budget_mb) {
            return Err(format!(
                "[structural]: `rewrite_budget_mb = {}` must be a number of MiB from 1 to \
                 {MAX_REWRITE_BUDGET_MB}",
                config.rewrite_budget_mb
            ));
        }
        Ok(config)
    }

    /// The bounds of each `ast_grep` and `ast_edit` call.
    pub fn limits(&self) -> Limits {
        Limits {
            time: std::time::Duration::from_secs(self.time_budget_secs),
            rewrite_bytes: self.rewrite_budget_mb << 20,
        }
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

    #[test]
    fn budgets_default_to_the_documented_constants_and_are_bounded() {
        assert_eq!(StructuralConfig::default().limits(), Limits::default());
        let c = parse("[structural]\ntime_budget_secs = 5\nrewrite_budget_mb = 2\n").unwrap();
        let limits = c.limits();
        assert_eq!(limits.time, std::time::Duration::from_secs(5));
        assert_eq!(limits.rewrite_bytes, 2 << 20);
        let e = parse("[structural]\ntime_budget_secs = 0\n").unwrap_err();
        assert!(e.contains("from 1 to 600"), "{e}");
        let e = parse("[structural]\nrewrite_budget_mb = 100000\n").unwrap_err();
        assert!(e.contains("from 1 to 1024"), "{e}");
    }
}
