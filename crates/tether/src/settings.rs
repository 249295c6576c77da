//! Every `tether.toml` key in one list: the run's own (approval, vibe, `[ask]`, `[files]`)
//! defined here, each capability's from its crate. The inert keys, doctor's listing and the
//! README's table are derived from it.

use tether_tool::{Kind, Scope, Setting};

/// `approval`: a workspace file may tighten it to `ask` untrusted (see `Config::approval`).
pub(crate) const APPROVAL: Setting = Setting::new(
    "approval",
    Kind::Choice {
        default: "never",
        of: &["never", "ask"],
    },
    Scope::Anywhere,
    "`ask`: write and exec calls need a yes on a question card; an untrusted workspace file \
     may tighten it to `ask`, never loosen it",
);
/// `vibe`: it runs agent CLIs, so a workspace file needs trust.
pub(crate) const VIBE: Setting = Setting::new(
    "vibe",
    Kind::Flag { default: false },
    Scope::Trusted,
    "register the background-worker tools, as `tether serve --vibe` does",
);
/// `[ask] timeout_s`.
pub(crate) const ASK_TIMEOUT: Setting = Setting::new(
    "ask.timeout_s",
    Kind::Seconds {
        default: 1800,
        max: 86_400,
    },
    Scope::Anywhere,
    "how long a question or approval card waits",
);
/// `[files] read_roots`: it widens what `read` may open.
pub(crate) const READ_ROOTS: Setting = Setting::new(
    "files.read_roots",
    Kind::Paths,
    Scope::Trusted,
    "extra folders `read` may open; a relative one starts at the file that set it",
);

/// `[host] enabled`: whether `tether call` and the agent hooks use the warm host.
pub(crate) const HOST_ENABLED: Setting = Setting::new(
    "host.enabled",
    Kind::Flag { default: true },
    Scope::Trusted,
    "`tether call` and the agent hooks attach to the workspace's warm host (`false`: every \
     front end starts its own servers)",
);
/// `[host] serve`: `tether serve` attaches only when asked, until the host has proven itself.
pub(crate) const HOST_SERVE: Setting = Setting::new(
    "host.serve",
    Kind::Flag { default: false },
    Scope::Trusted,
    "`tether serve` attaches to the warm host too, as `tether serve --host` does",
);
/// `[host] idle_exit_s`.
pub(crate) const HOST_IDLE_EXIT: Setting = Setting::new(
    "host.idle_exit_s",
    Kind::Seconds {
        default: 600,
        max: 86_400,
    },
    Scope::Trusted,
    "how long the warm host waits with nothing attached before it exits",
);

/// The run's own keys.
const RUN: &[Setting] = &[
    APPROVAL,
    VIBE,
    ASK_TIMEOUT,
    READ_ROOTS,
    HOST_ENABLED,
    HOST_SERVE,
    HOST_IDLE_EXIT,
];

/// Every key of `tether.toml`, in the README's order: the run's own, then each built-in
/// capability's, as it declares them.
pub fn settings() -> Vec<&'static Setting> {
    static ALL: std::sync::OnceLock<Vec<&'static Setting>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        let capabilities = crate::builder::builtin_capabilities(true);
        RUN.iter()
            .chain(capabilities.iter().flat_map(|c| c.settings()))
            .collect()
    })
    .clone()
}

/// The README's settings table, derived from [`settings`].
pub fn settings_table() -> String {
    tether_tool::markdown_table(&settings())
}

/// Whether only the user's own file may set `key`, trusted workspace or not, by `settings`.
pub(crate) fn user_only(settings: &[&Setting], key: &str) -> bool {
    settings
        .iter()
        .any(|s| s.scope == Scope::User && s.covers(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_the_documented_inert_ones_are_derived() {
        let all = settings();
        let mut keys: Vec<&str> = all.iter().map(|s| s.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), all.len(), "a key is defined twice");
        let anywhere: Vec<&str> = all
            .iter()
            .filter(|s| s.scope == Scope::Anywhere)
            .map(|s| s.key)
            .collect();
        assert_eq!(
            anywhere,
            [
                "approval",
                "ask.timeout_s",
                "structural.cache_mb",
                "structural.syntax_check"
            ]
        );
        assert!(user_only(&settings(), "lsp.read_surfaces_build"));
        let inert = |key| tether_tool::inert(&settings(), key);
        assert!(!inert("lsp.servers.rust.command") && !inert("eval.sandbox.prefix"));
    }

    /// The README's table is this list; when a setting changes, run this with `TETHER_BLESS=1`.
    #[test]
    fn the_readme_settings_table_is_up_to_date() {
        let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let (begin, end) = (
            "<!-- settings table: begin -->\n",
            "<!-- settings table: end -->",
        );
        let expected = settings_table();
        if let Err(why) = tether_base::generated_part(readme.as_ref(), begin, end, &expected) {
            panic!("{why}");
        }
    }
}
