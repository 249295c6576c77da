//! `tether install` and `tether uninstall`: language servers put in tether's own data folder
//! by their ecosystem's installer, never globally, where every run finds them before PATH.

use std::collections::BTreeSet;
use std::path::Path;

use tether::Installable;
use tether_toolchain::{Installed, install, installed_in, servers_dir, uninstall};

use crate::{Exit, usage};

/// One line to standard output; a closed pipe is not an error worth a panic.
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// What `tether install` was asked.
pub(crate) struct Asked {
    pub names: Vec<String>,
    pub list: bool,
    pub for_workspace: bool,
    pub update: bool,
    pub version: Option<String>,
    /// System-wide installs (Debian's archive) are allowed.
    pub system: bool,
}

/// Runs `tether install`.
pub(crate) async fn install_command(root: &Path, asked: Asked) -> Result<(), Exit> {
    let all = tether::installable(root, &tether::Config::user_dir())
        .map_err(|e| Exit(2, e.to_string()))?;
    let dir = servers_dir();
    let installed = installed_in(&dir).map_err(|e| Exit(1, e.to_string()))?;
    if asked.list {
        list(&all, &installed);
        return Ok(());
    }
    let mut chosen: Vec<&Installable> = Vec::new();
    for name in &asked.names {
        chosen.push(pick(&all, name)?);
    }
    if asked.for_workspace {
        let needed = tether::languages_present(root, &tether::Config::user_dir())
            .map_err(|e| Exit(2, e.to_string()))?;
        for item in &all {
            // A server run beside another (ruff) is wanted wherever its language is.
            let beside = item.beside.iter().any(|l| needed.contains(l));
            let serves = beside || item.languages.iter().any(|l| needed.contains(l));
            let first = beside
                || needed.iter().any(|l| {
                    all.iter()
                        .find(|i| i.languages.contains(l))
                        .is_some_and(|i| i.id == item.id)
                });
            if serves && first && !installed.contains_key(&item.id) && !on_path(item) {
                // Installed system-wide only when the user says so.
                match item.recipe.from.system_wide() && !asked.system {
                    true => say(&format!(
                        "{}: left out: it installs system-wide from Debian's archive; give \
                         --system to allow that",
                        item.id
                    )),
                    false => chosen.push(item),
                }
            }
        }
        if chosen.is_empty() {
            say(
                "nothing to install: every language of this workspace that tether can install a server for has one",
            );
            return Ok(());
        }
    }
    if asked.update {
        for item in &all {
            if installed
                .get(&item.id)
                .is_some_and(|i| i.version != item.recipe.version)
            {
                chosen.push(item);
            }
        }
        if chosen.is_empty() {
            say("every installed server is at its pinned version");
            return Ok(());
        }
    }
    if chosen.is_empty() {
        return Err(usage(
            "name what to install (`tether install yaml`), or give --for-workspace, --update or --list",
        ));
    }
    if asked.version.is_some() && chosen.len() > 1 {
        return Err(usage("--version applies to one server: name only one"));
    }
    let mut failed = 0;
    let mut seen = BTreeSet::new();
    for item in chosen {
        if !seen.insert(item.id.clone()) {
            continue;
        }
        if item.recipe.from.system_wide() && !asked.system {
            failed += 1;
            eprintln!(
                "tether: {}: it comes from Debian's archive (package {}), which installs \
                 system-wide with apt-get, not into tether's folder: give --system to allow that",
                item.id, item.recipe.package
            );
            continue;
        }
        let progress = |line: &str| eprintln!("tether: {line}");
        let version = asked.version.as_deref();
        match install(
            &dir,
            &item.id,
            &item.recipe,
            version,
            std::slice::from_ref(&item.program),
            &progress,
        )
        .await
        {
            Ok(done) => say(&installed_line(&item.id, &done)),
            Err(e) => {
                failed += 1;
                eprintln!("tether: {}: {e}", item.id);
            }
        }
    }
    match failed {
        0 => Ok(()),
        n => Err(Exit(
            1,
            format!("{n} of the servers asked for were not installed (above: why)"),
        )),
    }
}

/// Runs `tether uninstall`.
pub(crate) async fn uninstall_command(names: &[String]) -> Result<(), Exit> {
    if names.is_empty() {
        return Err(usage(
            "name what to remove: `tether uninstall yaml-language-server`",
        ));
    }
    let dir = servers_dir();
    let progress = |line: &str| eprintln!("tether: {line}");
    let mut missing = Vec::new();
    for name in names {
        match uninstall(&dir, name, &progress).await {
            Ok(Some(gone)) if gone.from.system_wide() => say(&format!(
                "{name} is no longer tether's record; its Debian package stays on the system \
                 (`apt-get remove {}` removes it)",
                gone.package
            )),
            Ok(Some(gone)) => say(&format!(
                "removed {name} {} from {}",
                gone.version,
                dir.join(name).display()
            )),
            Ok(None) => missing.push(name.clone()),
            Err(e) => return Err(Exit(1, format!("{name}: {e}"))),
        }
    }
    match missing.is_empty() {
        true => Ok(()),
        false => {
            let have: Vec<String> = installed_in(&dir)
                .map(|m| m.into_keys().collect())
                .unwrap_or_default();
            Err(Exit(
                1,
                format!(
                    "not installed by tether: {}; installed: {}",
                    missing.join(", "),
                    if have.is_empty() {
                        "none".into()
                    } else {
                        have.join(", ")
                    }
                ),
            ))
        }
    }
}

/// The server a name means: a server id, else a language's first installable server, else
/// that of the language whose files have the name as extension or name (`yml`, `.yml`).
fn pick<'a>(all: &'a [Installable], name: &str) -> Result<&'a Installable, Exit> {
    if let Some(item) = all.iter().find(|i| i.id == name) {
        return Ok(item);
    }
    if let Some(item) = all.iter().find(|i| i.languages.iter().any(|l| l == name)) {
        return Ok(item);
    }
    let file = name.trim_start_matches('.');
    if let Some(item) = all
        .iter()
        .find(|i| i.files.iter().any(|f| f.eq_ignore_ascii_case(file)))
    {
        return Ok(item);
    }
    let known: Vec<&str> = all.iter().map(|i| i.id.as_str()).collect();
    Err(usage(format!(
        "tether has no recipe for `{name}`; it installs: {} (or name a language they serve; \
         `tether install --list` shows both)",
        known.join(", ")
    )))
}

/// `--list`: one line per installable server.
fn list(all: &[Installable], installed: &std::collections::BTreeMap<String, Installed>) {
    for item in all {
        let state = match installed.get(&item.id) {
            Some(done) => {
                let changed = done.changed();
                let mut line = installed_line(&item.id, done);
                if done.version != item.recipe.version {
                    line.push_str(&format!(
                        "; {} is pinned now (`tether install --update`)",
                        item.recipe.version
                    ));
                }
                if !changed.is_empty() {
                    line.push_str(&format!(
                        "; changed since installed: {} (install it again)",
                        changed.join(", ")
                    ));
                }
                line
            }
            None => {
                let path = which::which(&item.program).ok();
                format!(
                    "{}: not installed ({} {} {}){}",
                    item.id,
                    item.recipe.from,
                    item.recipe.package,
                    item.recipe.version,
                    path.map_or(String::new(), |p| format!(
                        "; {} runs from PATH",
                        p.display()
                    ))
                )
            }
        };
        let beside = item.beside.iter().map(|l| format!("beside {l}"));
        let serves: Vec<String> = item.languages.iter().cloned().chain(beside).collect();
        say(&format!("{state}  [{}]", serves.join(", ")));
    }
}

fn installed_line(id: &str, done: &Installed) -> String {
    format!(
        "{id}: {} {} installed in {}",
        done.package,
        done.version,
        done.bin.display()
    )
}

fn on_path(item: &Installable) -> bool {
    which::which(&item.program).is_ok()
}
