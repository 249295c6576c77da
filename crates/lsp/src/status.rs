//! What `lsp` `status` says: each running server with its state and what it offers, the
//! languages whose server cannot start and why, and what the run's edits left broken.

use std::path::Path;

use crate::catalog::Language;
use crate::server::Server;
use crate::supervisor::Supervisor;

/// One running server as `status` shows it: what runs, its state, what it offers.
pub(crate) async fn server_line(s: &Server, workspace: &Path) -> String {
    let mut line = format!(
        "{} for {} ({}): {}, positions in {}",
        s.id,
        crate::avail::shown(&s.root, workspace),
        s.argv.join(" "),
        s.state().await,
        s.encoding.name()
    );
    line.push_str(&format!("; {}", offers(s)));
    if s.workspace_mode {
        line.push_str(&format!("; has reported on {} files", s.files_reported()));
    }
    if let Some(health) = s.health() {
        line.push_str(&format!("; {health}"));
    }
    if let Some(r) = &s.restricted {
        line.push_str(&format!("; restricted: {r}"));
    }
    if let Some(losses) = s.store_losses() {
        line.push_str(&format!("; {losses}"));
    }
    line
}

pub(crate) async fn status(servers: &Supervisor) -> String {
    let mut out = Vec::new();
    let running = servers.running().await;
    let workspace = servers.workspace();
    for (id, root) in servers.starting().await {
        out.push(format!(
            "{id} for {}: starting (initialize not answered yet)",
            crate::avail::shown(&root, workspace)
        ));
    }
    if running.is_empty() && out.is_empty() {
        out.push(
            "no language server runs yet; each starts on the first call for its language"
                .to_string(),
        );
    }
    for s in &running {
        out.push(server_line(s, workspace).await);
    }
    // Servers whose project marker is at the root but that cannot start, and why.
    let probe = workspace.join("probe");
    // Languages a running server serves, and those already said to be unavailable.
    let cfg = servers.config();
    let served = |l: &Language| running.iter().any(|s| l.servers.contains(&s.id));
    let mut told: Vec<&'static str> = cfg
        .languages
        .values()
        .filter(|l| served(l))
        .map(|l| l.id)
        .collect();
    for language in cfg.languages.values() {
        let lang = language.id;
        let marked = language.servers.iter().any(|id| {
            cfg.servers
                .get(id)
                .is_some_and(|e| e.root_markers.iter().any(|m| workspace.join(m).exists()))
        });
        if !marked || served(language) {
            continue;
        }
        if let Err(why) = crate::avail::find(cfg, lang, &probe, workspace, servers.trusted()) {
            out.push(format!("{lang}: unavailable:\n  - {}", why.join("\n  - ")));
            told.push(lang);
        }
    }
    // Files of a language whose server is installed but finds no project marker above them.
    let (cfg, root, trusted) = (
        servers.config().clone(),
        workspace.to_path_buf(),
        servers.trusted(),
    );
    let look = move || crate::avail::unserved(&cfg, &root, trusted, &told);
    for (lang, file, why) in tokio::task::spawn_blocking(look).await.unwrap_or_default() {
        out.push(format!(
            "{lang}: unavailable for {} (and files like it):\n  - {}",
            crate::avail::shown(&file, workspace),
            why.join("\n  - ")
        ));
    }
    if !servers.trusted() {
        out.push(
            "this workspace is not trusted, so no language server runs anything it ships or \
             configures: no binary inside it, no build scripts, proc macros or cargo check, \
             no toolchain file, cargo wrapper or PATH entry of its own; run `tether trust` to \
             lift that. (`eval` and `debug`, exec-tier tools, do run its .venv's python and \
             the programs they are given.)"
                .into(),
        );
    } else if !servers.builds() {
        out.push(
            "this run serves a read-only surface: build scripts, proc macros and cargo check \
             stay off; `[lsp] read_surfaces_build = true` in the user config allows them"
                .into(),
        );
    }
    if !servers.held_back().is_empty() {
        out.push(format!(
            "held back until `tether trust`, from the workspace's tether.toml: {}",
            servers.held_back().join(", ")
        ));
    }
    out.join("\n")
}

/// The problems this run's writes introduced that are still open, for the agent to see
/// before it says it is done.
/// Problems listed per file in `status`'s list of what this run broke.
const INTRODUCED_PER_FILE: usize = 5;

pub(crate) fn introduced(ledger: &crate::ledger::Ledger, workspace: &std::path::Path) -> String {
    let open = ledger.introduced();
    if open.is_empty() {
        return String::new();
    }
    let total: usize = open.iter().map(|(_, f)| f.len()).sum();
    let mut out = vec![format!(
        "\nstill open, introduced since the run began by its writes or by edits outside tether: \
         {}, in {}:",
        tether_tool::counted(total, "problem"),
        tether_tool::counted(open.len(), "file")
    )];
    // A few per file, so every file shows; the rest are counted.
    for (path, findings) in &open {
        let shown = crate::render::shown(path, workspace);
        for f in findings.iter().take(INTRODUCED_PER_FILE) {
            out.push(format!("  {shown}:{}  {}", f.line, f.text));
        }
        if findings.len() > INTRODUCED_PER_FILE {
            let more = findings.len() - INTRODUCED_PER_FILE;
            out.push(format!("  {shown}: … and {more} more"));
        }
    }
    out.join("\n")
}

/// What a server announced it can do, and what kind of diagnostics it gives.
fn offers(server: &crate::server::Server) -> String {
    let caps = &server.capabilities;
    let names = [
        (caps.hover_provider.on, "hover"),
        (caps.definition_provider.on, "definition"),
        (caps.type_definition_provider.on, "type_definition"),
        (caps.implementation_provider.on, "implementation"),
        (caps.references_provider.on, "references"),
        (caps.document_symbol_provider.on, "symbols"),
        (caps.workspace_symbol_provider.on, "workspace symbols"),
        (caps.code_action_provider.on, "code_actions"),
        (caps.rename_provider.on, "rename"),
    ];
    let offered: Vec<&str> = names
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
    let pulls = &caps.diagnostic_provider;
    let diagnostics = match (pulls.on, pulls.options.workspace_diagnostics) {
        _ if server.workspace_mode => "diagnostics for every file of the workspace",
        _ if server.separate_check => "diagnostics for open files, and cargo check's on save",
        (true, true) => "diagnostics for the whole workspace",
        (true, false) => "diagnostics pulled per file",
        (false, _) => "diagnostics published for open files only",
    };
    let done = server.done.describe(server.quiet.as_millis() as u64);
    format!(
        "offers {}; {diagnostics}; a write is {done}",
        offered.join(", ")
    )
}
