//! `tether hook --install claude|codex`: writes the agent's hook configuration, showing the
//! change as a diff first. Entries tether wrote before are replaced, the rest left as found.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The tools whose edits Claude Code's hooks report, and the shell besides after an edit.
const CLAUDE_EDITS: &str = "Edit|Write|MultiEdit|NotebookEdit";
/// How long the agent lets the hook run, in seconds.
const HOOK_TIMEOUT_S: u64 = 60;

/// Where the configuration goes and what it becomes: (file, old text, new text, note).
pub struct Plan {
    pub file: PathBuf,
    pub old: String,
    pub new: String,
    pub note: Option<&'static str>,
}

/// The plan for `agent`, for the workspace at `root` (Claude Code's project settings) or the
/// user's own settings with `user`.
pub fn plan(agent: &str, root: &Path, user: bool) -> Result<Plan, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find tether itself: {e}"))?;
    let command = |agent: &str| format!("{} hook {agent}", shell_quote(&exe.to_string_lossy()));
    match agent {
        "claude" => {
            let file = if user {
                home()?.join(".claude/settings.json")
            } else {
                root.join(".claude/settings.json")
            };
            let old = read(&file)?;
            let new = claude_settings(&old, &command("claude"))
                .map_err(|e| format!("{} is not a JSON object: {e}", file.display()))?;
            Ok(Plan {
                file,
                old,
                new,
                note: None,
            })
        }
        "codex" => {
            let dir = match std::env::var_os("CODEX_HOME") {
                Some(d) => PathBuf::from(d),
                None => home()?.join(".codex"),
            };
            let file = dir.join("config.toml");
            let old = read(&file)?;
            let new = codex_config(&old, &command("codex"));
            // A config that would no longer parse is not written; Codex would refuse it.
            if let Err(e) = new.parse::<toml::Table>() {
                return Err(format!(
                    "{} would not be valid TOML with tether's hooks appended ({e}); add the \
                     hook tables from the README by hand",
                    file.display()
                ));
            }
            Ok(Plan {
                file,
                old,
                new,
                note: Some(
                    "Codex runs a hook it has not seen only once you trust it: review it with \
                     /hooks in the codex terminal UI (or run `codex exec \
                     --dangerously-bypass-hook-trust`)",
                ),
            })
        }
        other => Err(format!("unknown agent {other:?}: use claude or codex")),
    }
}

/// The unified diff of the plan, as `diff -u` would print it.
pub fn diff(plan: &Plan) -> String {
    let name = plan.file.display().to_string();
    similar::TextDiff::from_lines(&plan.old, &plan.new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}

/// Writes the plan's file (and its folder).
pub fn write(plan: &Plan) -> Result<(), String> {
    if let Some(dir) = plan.file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    std::fs::write(&plan.file, &plan.new)
        .map_err(|e| format!("cannot write {}: {e}", plan.file.display()))
}

fn home() -> Result<PathBuf, String> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| "HOME is not set".to_string())
}

fn read(file: &Path) -> Result<String, String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", file.display())),
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Claude Code's settings with tether's PreToolUse and PostToolUse entries, replacing any
/// earlier ones of tether's.
fn claude_settings(old: &str, command: &str) -> Result<String, String> {
    let mut settings: Value = match old.trim() {
        "" => json!({}),
        text => serde_json::from_str(text).map_err(|e| e.to_string())?,
    };
    let root = settings
        .as_object_mut()
        .ok_or("its top level is not an object")?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or("its \"hooks\" is not an object")?;
    for (event, matcher) in [
        ("PreToolUse", CLAUDE_EDITS.to_string()),
        ("PostToolUse", format!("{CLAUDE_EDITS}|Bash")),
    ] {
        let list = hooks.entry(event).or_insert_with(|| json!([]));
        let list = list
            .as_array_mut()
            .ok_or(format!("its hooks.{event} is not a list"))?;
        list.retain(|group| !is_ours(group, "claude"));
        list.push(json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}],
        }));
    }
    let mut text = serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Whether a hook group is one tether wrote for `agent`.
fn is_ours(group: &Value, agent: &str) -> bool {
    let tail = format!(" hook {agent}");
    group["hooks"].as_array().is_some_and(|hooks| {
        hooks.iter().any(|h| {
            h["command"]
                .as_str()
                .is_some_and(|c| c.ends_with(&tail) || c.contains(&format!("{tail} ")))
        })
    })
}

/// Codex's config.toml with tether's hook tables appended, after removing the ones tether
/// appended before (the block between its two marker comments).
fn codex_config(old: &str, command: &str) -> String {
    const BEGIN: &str = "# tether hooks: begin";
    const END: &str = "# tether hooks: end";
    let mut kept = String::new();
    let mut inside = false;
    for line in old.lines() {
        match line.trim() {
            BEGIN => inside = true,
            END => inside = false,
            _ if !inside => {
                kept.push_str(line);
                kept.push('\n');
            }
            _ => {}
        }
    }
    if !kept.is_empty() && !kept.ends_with("\n\n") {
        kept.push('\n');
    }
    let quoted = toml::Value::String(command.to_string()).to_string();
    kept.push_str(BEGIN);
    kept.push('\n');
    for (event, matcher) in [
        ("PreToolUse", "^(apply_patch|Edit|Write)$"),
        ("PostToolUse", "^(apply_patch|Edit|Write|Bash)$"),
    ] {
        kept.push_str(&format!(
            "[[hooks.{event}]]\nmatcher = \"{matcher}\"\n[[hooks.{event}.hooks]]\n\
             type = \"command\"\ncommand = {quoted}\ntimeout = {HOOK_TIMEOUT_S}\n"
        ));
    }
    kept.push_str(END);
    kept.push('\n');
    kept
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn claude_settings_keep_what_was_there_and_replace_tethers_own() {
        let old = r#"{"model": "x", "hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "/old/tether hook claude"}]}
        ]}}"#;
        let new: Value =
            serde_json::from_str(&claude_settings(old, "/t hook claude").unwrap()).unwrap();
        assert_eq!(new["model"], "x");
        let post = new["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2, "{post:?}");
        assert_eq!(post[0]["hooks"][0]["command"], "lint");
        assert_eq!(post[1]["hooks"][0]["command"], "/t hook claude");
        assert_eq!(new["hooks"]["PreToolUse"][0]["matcher"], CLAUDE_EDITS);
        // Installing twice changes nothing more.
        let again = claude_settings(&new.to_string(), "/t hook claude").unwrap();
        assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), new);
        assert!(claude_settings("[1]", "x").is_err());
    }

    #[test]
    fn codex_config_is_valid_toml_and_installing_twice_keeps_one_block() {
        let old = "model = \"gpt-5.5\"\n";
        let once = codex_config(old, "/t hook codex");
        let twice = codex_config(&once, "/t hook codex");
        assert_eq!(once, twice);
        let parsed: toml::Table = toml::from_str(&once).unwrap();
        assert_eq!(parsed["model"].as_str(), Some("gpt-5.5"));
        let post = &parsed["hooks"]["PostToolUse"][0];
        assert_eq!(post["hooks"][0]["command"].as_str(), Some("/t hook codex"));
        assert_eq!(
            post["matcher"].as_str(),
            Some("^(apply_patch|Edit|Write|Bash)$")
        );
    }
}
