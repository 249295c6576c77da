//! The `[debug]` keys, each defined once; `DebugConfig` reads them through these definitions.

use tether_tool::{Kind, Scope, Setting};

/// `[debug] ttl_s`.
pub(crate) const TTL: Setting = Setting::new(
    "debug.ttl_s",
    Kind::Seconds {
        default: 30 * 60,
        max: 86_400,
    },
    Scope::Trusted,
    "a session's hard time to live",
);
/// `[debug] stop_wait_s`.
pub(crate) const STOP_WAIT: Setting = Setting::new(
    "debug.stop_wait_s",
    Kind::Seconds {
        default: 30,
        max: 86_400,
    },
    Scope::Trusted,
    "how long launch, continue and the steps wait for a stop",
);
/// `[debug] request_timeout_s`: a request's deadline, bounded as `[lsp]`'s is.
pub(crate) const REQUEST_TIMEOUT: Setting = Setting::new(
    "debug.request_timeout_s",
    Kind::Seconds {
        default: 15,
        max: 3600,
    },
    Scope::Trusted,
    "each request's deadline",
);
/// `[debug.adapters.<id>]`, checked where the catalog is merged.
const ADAPTERS: Setting = Setting::new(
    "debug.adapters.<id>",
    Kind::Table {
        fields: "a catalog entry's keys: `command`, `markers`, `extensions`, `launch`, ...",
    },
    Scope::Trusted,
    "a new adapter, or keys of a built-in one's entry replaced (see Debugger)",
);

/// Every `[debug]` key.
pub const SETTINGS: &[Setting] = &[TTL, STOP_WAIT, REQUEST_TIMEOUT, ADAPTERS];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    fn parse(text: &str) -> Result<crate::DebugConfig, tether_tool::SettingError> {
        let table: toml::Table = text.parse().unwrap();
        crate::DebugConfig::from_section(table.get("debug"))
    }

    #[test]
    fn a_request_deadline_is_bounded_as_the_language_servers_is() {
        let c = parse("[debug]\nrequest_timeout_s = 3600\nttl_s = 86400\n").unwrap();
        assert_eq!(c.request.as_secs(), 3600);
        let e = parse("[debug]\nrequest_timeout_s = 3601\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[debug]: `request_timeout_s = 3601`: give seconds from 1 to 3600"
        );
        let e = parse("[debug]\nttl = 1\n").unwrap_err().to_string();
        assert!(e.starts_with("[debug]: unknown field `ttl`"), "{e}");
    }
}
