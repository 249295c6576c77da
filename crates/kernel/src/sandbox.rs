//! `[eval.sandbox]`: a command prefix kernels start under when its probe succeeds. tether never
//! starts a sandbox itself; it only enters one that is already there.

use std::time::Duration;

use serde::Deserialize;
use tether_tool::SettingError;

/// How long the probe may take before the sandbox counts as absent.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// The configured sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sandbox {
    /// Put before the interpreter's own command (`["bwrap", …]`).
    pub prefix: Vec<String>,
    /// Succeeds when the sandbox can be entered; by default the prefix running `true`.
    #[serde(default)]
    pub probe: Vec<String>,
}

/// Where a kernel is about to start.
pub enum Placement {
    /// Inside the sandbox: the prefix to put first.
    Inside(Vec<String>),
    /// On the host, and why (empty when no sandbox is configured).
    Host(String),
}

impl Sandbox {
    /// Checks the section's shape; an empty prefix says what to give.
    pub fn validate(&self) -> Result<(), SettingError> {
        if self.prefix.is_empty() || self.prefix[0].trim().is_empty() {
            return Err(SettingError::rule(
                "[eval.sandbox]: `prefix` is empty: give the command kernels start under, e.g. \
                 prefix = [\"bwrap\", \"--dev-bind\", \"/\", \"/\", \"--unshare-net\"]",
            ));
        }
        Ok(())
    }

    fn probe_argv(&self) -> Vec<String> {
        match self.probe.is_empty() {
            true => self.prefix.iter().cloned().chain(["true".into()]).collect(),
            false => self.probe.clone(),
        }
    }

    /// Runs the probe: inside when it exits 0 within its limit, else the host and why.
    pub async fn place(&self) -> Placement {
        let probe = self.probe_argv();
        let shown = probe.join(" ");
        match tether_proc::output_with_deadline(&probe, PROBE_LIMIT).await {
            Ok(out) if out.status.success() => Placement::Inside(self.prefix.clone()),
            Ok(out) => {
                let said = String::from_utf8_lossy(&out.stderr);
                let last = said.lines().last().unwrap_or("").trim();
                Placement::Host(format!(
                    "the sandbox probe `{shown}` failed ({}{}{last})",
                    out.status,
                    if last.is_empty() { "" } else { ": " }
                ))
            }
            Err(e) => Placement::Host(format!("the sandbox probe `{shown}` did not run: {e}")),
        }
    }
}
