use std::fmt::Write as _;
use std::path::Path;

use tether_tool::Surface;

use crate::{Config, ConfigSource, Run};

/// What a run on this machine would have: config files, trust, every setting and where it
/// came from, tools by tier, and what each capability reports (interpreters, servers, ...).
pub async fn doctor_report(run: &Run, root: &Path) -> String {
    let mut out = String::new();
    let config = run.config();
    let _ = writeln!(out, "tether {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(out, "workspace: {}", root.display());
    config_section(&mut out, config);
    for report in run.recovered() {
        let _ = writeln!(out, "recovered on start: {report}");
    }
    let _ = writeln!(out, "\ntools:");
    for spec in run.runtime().tools(Surface::Agent) {
        let surfaces = if Surface::Plan.admits(spec.tier) {
            "agent, plan, readonly"
        } else {
            "agent only"
        };
        let _ = writeln!(
            out,
            "  {:<12} {:<5} ({surfaces})",
            spec.name,
            spec.tier.as_str()
        );
    }
    // Each capability says what it needs from this machine (grammars, interpreters,
    // servers, adapters, worker CLIs), so doctor names none of them.
    let trusted = config.workspace_trusted();
    for capability in run.installed() {
        for section in capability.doctor(root, trusted).await {
            let _ = writeln!(out, "\n{}:", section.heading);
            for line in section.lines {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    out
}

fn config_section(out: &mut String, config: &Config) {
    let _ = writeln!(out, "user config folder: {}", config.dir().display());
    if config.files().is_empty() {
        let _ = writeln!(out, "config files: none (defaults apply)");
    }
    for file in config.files() {
        let (kind, path) = match file {
            ConfigSource::User(p) => ("user", p),
            ConfigSource::Workspace(p) => ("workspace", p),
        };
        let _ = writeln!(out, "config file ({kind}): {}", path.display());
    }
    let trusted = match config.trust_state() {
        crate::TrustState::Trusted => "yes (with its current tether.toml)".to_string(),
        crate::TrustState::Changed => "no: its tether.toml changed since it was trusted (a pull, \
             or the agent); review the file, then run `tether trust` again"
            .to_string(),
        crate::TrustState::Untrusted => "no (run `tether trust` in the workspace to allow the \
             commands and other settings its tether.toml defines)"
            .to_string(),
    };
    if config.user_dir_inside_workspace() {
        let _ = writeln!(
            out,
            "user config folder {} lies inside the workspace, so its files count as workspace \
             files and its trust list is ignored; set TETHER_CONFIG_DIR to a folder outside",
            config.dir().display()
        );
    }
    let _ = writeln!(out, "workspace trusted: {trusted}");
    for item in config.guarded() {
        let state = match (item.honoured, item.user_only) {
            (true, _) => "used",
            (false, true) => "user config only: reported, not used",
            (false, false) => "UNTRUSTED: reported, not used",
        };
        let _ = writeln!(out, "  {} = {} ({state})", item.key, item.value);
    }
    if let Err(e) = crate::TrustStore::new(config.dir()).check() {
        let _ = writeln!(out, "trust list: {e}");
    }
    match config.read_roots() {
        Ok(roots) => {
            for r in roots {
                let state = if r.is_dir() { "ok" } else { "MISSING: skipped" };
                let _ = writeln!(out, "read root: {} ({state})", r.display());
            }
        }
        Err(e) => {
            let _ = writeln!(out, "read roots: {e}");
        }
    }
    match config.approval() {
        Ok(p) => {
            let name = match p {
                tether_tool::ApprovalPolicy::Ask => "ask",
                _ => "never",
            };
            let _ = writeln!(out, "approval: {name}");
        }
        Err(e) => {
            let _ = writeln!(out, "approval: {e}");
        }
    }
    let _ = writeln!(out, "settings (the README's table says what each does):");
    for line in config.listing() {
        let _ = writeln!(out, "  {line}");
    }
}
