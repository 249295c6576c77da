//! The `[structural]` section of `tether.toml`, owned here beside what it configures.

use serde::Deserialize;
use tether_tool::{Kind, Scope, Setting};

use crate::budget::{Limits, REWRITE_BUDGET, TIME_BUDGET};

/// `[structural] cache_mb`: it bounds memory only, so a workspace may set it untrusted. 512
/// holds the trees of cargo (258k lines), effect (323k) and x/tools (200k) whole and about
/// nine tenths of Django's (474k) (`scripts/bench-large --section 5`).
const CACHE_MB: Setting = Setting::new(
    "structural.cache_mb",
    Kind::Mib {
        default: 512,
        max: 64 * 1024,
    },
    Scope::Anywhere,
    "memory budget of the per-run tree cache (least recently used go first)",
);
/// `[structural] syntax_check`.
const SYNTAX_CHECK: Setting = Setting::new(
    "structural.syntax_check",
    Kind::Flag { default: true },
    Scope::Anywhere,
    "report the syntax errors a write introduced",
);
/// `[structural] time_budget_secs`: a call the model waits for.
const TIME_BUDGET_SECS: Setting = Setting::new(
    "structural.time_budget_secs",
    Kind::Seconds {
        default: TIME_BUDGET.as_secs(),
        max: 600,
    },
    Scope::Trusted,
    "how long one `ast_grep` or `ast_edit` call may search",
);
/// `[structural] rewrite_budget_mb`: the staged change is held in memory.
const REWRITE_BUDGET_MB: Setting = Setting::new(
    "structural.rewrite_budget_mb",
    Kind::Mib {
        default: (REWRITE_BUDGET >> 20) as u64,
        max: 1024,
    },
    Scope::Trusted,
    "new file content one `ast_edit` may stage",
);

/// The `[structural]` keys, for the README, doctor and the inert-key list.
pub const SETTINGS: &[Setting] = &[CACHE_MB, SYNTAX_CHECK, TIME_BUDGET_SECS, REWRITE_BUDGET_MB];

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
            cache_mb: CACHE_MB.default_number() as usize,
            syntax_check: SYNTAX_CHECK.flag(None),
            time_budget_secs: TIME_BUDGET_SECS.default_number(),
            rewrite_budget_mb: REWRITE_BUDGET_MB.default_number() as usize,
        }
    }
}

impl StructuralConfig {
    /// Reads the section (absent means defaults); the error names the key and what is allowed.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, tether_tool::SettingError> {
        let Some(section) = section else {
            return Ok(Self::default());
        };
        let config: StructuralConfig = tether_tool::parse_section("structural", section)?;
        CACHE_MB.number(Some(config.cache_mb as u64))?;
        TIME_BUDGET_SECS.number(Some(config.time_budget_secs))?;
        REWRITE_BUDGET_MB.number(Some(config.rewrite_budget_mb as u64))?;
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

    fn parse(text: &str) -> Result<StructuralConfig, tether_tool::SettingError> {
        let table: toml::Table = text.parse().unwrap();
        StructuralConfig::from_section(table.get("structural"))
    }

    #[test]
    fn defaults_values_and_mistakes() {
        assert_eq!(parse("").unwrap(), StructuralConfig::default());
        let c = parse("[structural]\ncache_mb = 64\nsyntax_check = false\n").unwrap();
        assert_eq!((c.cache_mb, c.syntax_check), (64, false));
        let e = parse("[structural]\ncache_size = 64\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field `cache_size`"), "{e}");
        let e = parse("[structural]\ncache_mb = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 1 to 65536"), "{e}");
        let e = parse("[structural]\nsyntax_check = \"yes\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("syntax_check") || e.contains("bool"), "{e}");
    }

    #[test]
    fn budgets_default_to_the_documented_constants_and_are_bounded() {
        assert_eq!(StructuralConfig::default().limits(), Limits::default());
        let c = parse("[structural]\ntime_budget_secs = 5\nrewrite_budget_mb = 2\n").unwrap();
        let limits = c.limits();
        assert_eq!(limits.time, std::time::Duration::from_secs(5));
        assert_eq!(limits.rewrite_bytes, 2 << 20);
        let e = parse("[structural]\ntime_budget_secs = 0\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 1 to 600"), "{e}");
        let e = parse("[structural]\nrewrite_budget_mb = 100000\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 1 to 1024"), "{e}");
    }
}
