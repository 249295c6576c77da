use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use tether_tool::Surface;

use crate::{Config, ConfigSource, Run};

/// Interpreters later tools need, with the flag that prints their version.
const INTERPRETERS: &[(&str, &str)] = &[("node", "--version")];

/// What a run on this machine would have: config files, trust, guarded settings, tools by
/// tier, and the interpreters found or missing.
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
    let _ = writeln!(
        out,
        "\ngrammars (bundled, for ast_grep, ast_edit and the syntax check): {}",
        tether_structural::Lang::ids().join(", ")
    );
    let _ = writeln!(out, "\ninterpreters:");
    let _ = writeln!(
        out,
        "  {}",
        tether_kernel::report(root, config.workspace_trusted()).await
    );
    for (name, flag) in INTERPRETERS {
        let _ = writeln!(out, "  {}", probe(name, flag, root).await);
    }
    let _ = writeln!(out, "\nlanguage servers (started on first use):");
    match tether_lsp::LspConfig::from_section(config.get("lsp")) {
        Ok(lsp) => {
            for line in tether_lsp::catalog_report(&lsp) {
                let _ = writeln!(out, "  {line}");
            }
        }
        Err(why) => {
            let _ = writeln!(out, "  the [lsp] section is refused: {why}");
        }
    }
    let _ = writeln!(out, "\nworkers (vibe mode):");
    for line in tether_workers::report(config.get("workers")) {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out, "\ndebug adapters (for the workspace root):");
    match tether_dap::DebugConfig::from_section(config.get("debug")) {
        Ok(debug) => {
            for line in tether_dap::adapters_report(root, &debug.adapters)
                .await
                .lines()
            {
                let _ = writeln!(out, "  {line}");
            }
        }
        Err(why) => {
            let _ = writeln!(out, "  the [debug] section is refused: {why}");
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
        let state = if item.honoured {
            "used"
        } else {
            "UNTRUSTED: reported, not used"
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
}

/// Finds `name` on PATH outside the workspace and runs it from `/`, so that nothing the
/// repository ships runs, and nothing in it is read as the program's own config.
async fn probe(name: &str, flag: &str, root: &Path) -> String {
    let Some(path) = tether_proc::which_outside(name, root) else {
        return format!("{name}: missing (not on PATH outside the workspace)");
    };
    let spec = tether_proc::ChildSpec {
        argv: vec![path.display().to_string(), flag.to_string()],
        cwd: Some("/".into()),
        env: Vec::new(),
    };
    match tether_proc::run_with_deadline(&spec, Duration::from_secs(5)).await {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let version = text.lines().next().unwrap_or("").trim();
            format!("{name}: found at {} ({version})", path.display())
        }
        Err(e) => format!("{name}: found at {} but {e}", path.display()),
    }
}
