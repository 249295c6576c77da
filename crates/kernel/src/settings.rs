//! The `[eval]` keys, each defined once; `EvalConfig` reads them through these definitions.

use tether_tool::{Kind, Scope, Setting};

/// `[eval] idle_timeout_s`.
pub(crate) const IDLE_TIMEOUT: Setting = Setting::new(
    "eval.idle_timeout_s",
    Kind::Seconds {
        default: 300,
        max: 86_400,
    },
    Scope::Trusted,
    "a cell silent this long is interrupted",
);
/// `[eval] start_timeout_s`: a child's start, bounded as `[lsp] init_timeout_s` is.
pub(crate) const START_TIMEOUT: Setting = Setting::new(
    "eval.start_timeout_s",
    Kind::Seconds {
        default: 30,
        max: 3600,
    },
    Scope::Trusted,
    "how long a kernel may take to start",
);
/// `[eval.sandbox]`: commands, so never before trust.
const SANDBOX: Setting = Setting::new(
    "eval.sandbox",
    Kind::Table {
        fields: "`prefix`, `probe` (commands)",
    },
    Scope::Trusted,
    "the command prefix kernels start under when its probe exits 0",
);

/// Every `[eval]` key.
pub const SETTINGS: &[Setting] = &[IDLE_TIMEOUT, START_TIMEOUT, SANDBOX];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    fn parse(text: &str) -> Result<crate::EvalConfig, tether_tool::SettingError> {
        let table: toml::Table = text.parse().unwrap();
        crate::EvalConfig::from_section(table.get("eval"))
    }

    #[test]
    fn a_kernel_start_is_bounded_as_a_server_start_is() {
        let c = parse("[eval]\nidle_timeout_s = 86400\nstart_timeout_s = 3600\n").unwrap();
        assert_eq!((c.idle.as_secs(), c.start.as_secs()), (86_400, 3600));
        let e = parse("[eval]\nstart_timeout_s = 3601\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[eval]: `start_timeout_s = 3601`: give seconds from 1 to 3600"
        );
    }
}
