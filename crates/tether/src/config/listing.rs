//! `tether doctor`'s listing of settings: every defined key with the value this run uses and
//! the file it came from, derived from the settings' definitions.

use tether_tool::Kind;

use super::Config;
use super::table::lookup;
use crate::settings::{APPROVAL, user_only};

impl Config {
    /// One line per setting (tables left to their capability's own report): `key = value
    /// (where from)`, and what a workspace file set that is not used, and why.
    pub fn listing(&self) -> Vec<String> {
        let trusted = self.workspace_trusted_now();
        let mut lines = Vec::new();
        let all = &self.settings;
        for s in all.iter().copied() {
            if matches!(s.kind, Kind::Table { .. }) {
                continue;
            }
            let ws = lookup(&self.workspace, s.key);
            let user = lookup(&self.user, s.key);
            // Untrusted, a workspace's `approval` counts only when it tightens to "ask".
            let tightens = s.key == APPROVAL.key && ws.and_then(|v| v.as_str()) == Some("ask");
            let ws_used = ws.is_some()
                && match s.key == APPROVAL.key {
                    true => tightens || trusted,
                    false => tether_tool::inert(all, s.key) || (trusted && !user_only(all, s.key)),
                };
            let (value, from) = match (ws, user) {
                (Some(v), _) if ws_used => (v.to_string(), "workspace"),
                (_, Some(v)) => (v.to_string(), "user"),
                _ => (s.default_text(), "default"),
            };
            let unused = match ws {
                Some(v) if !ws_used => {
                    let why = match user_only(all, s.key) {
                        true => "only the user's file may set it",
                        false => "held back until `tether trust`",
                    };
                    format!("; the workspace's {v} is not used: {why}")
                }
                _ => String::new(),
            };
            lines.push(format!("{} = {value} ({from}{unused})", s.key));
        }
        lines
    }
}
