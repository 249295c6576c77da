//! `tether hook --install claude|codex`: writes the agent's hook configuration, showing the
//! change as a diff first. Only tether's own entries are replaced; every other byte of the
//! user's file stays as it was, and the file is replaced whole or not at all.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::json_text::{self, Edits, Kind};

/// The tools whose edits Claude Code's hooks report, and the shell besides after an edit.
const CLAUDE_EDITS: &str = "Edit|Write|MultiEdit|NotebookEdit";
/// How long the agent lets the hook run, in seconds.
const HOOK_TIMEOUT_S: u64 = 60;
/// The comments around the block tether owns in Codex's config.toml.
const CODEX_BEGIN: &str = "# tether hooks: begin";
const CODEX_END: &str = "# tether hooks: end";

/// Where the configuration goes and what it becomes.
pub struct Plan {
    pub file: PathBuf,
    pub old: String,
    pub new: String,
    /// The tether the hooks run, and why that one.
    pub program: PathBuf,
    pub program_note: &'static str,
    pub note: Option<&'static str>,
}

/// The plan for `agent`, for the workspace at `root` (Claude Code's project settings) or the
/// user's own settings with `user`; `follow` lets a settings file that is a link be written
/// through.
pub fn plan(agent: &str, root: &Path, user: bool, follow: bool) -> Result<Plan, String> {
    let (program, program_note) = hook_program()?;
    let command = |agent: &str| format!("{} hook {agent}", shell_quote(&program.to_string_lossy()));
    match agent {
        "claude" => {
            let file = if user {
                home()?.join(".claude/settings.json")
            } else {
                root.join(".claude/settings.json")
            };
            let file = through_link(file, follow)?;
            let old = read(&file)?;
            let new = claude_settings(&old, &command("claude"))
                .map_err(|e| format!("{} was not changed: {e}", file.display()))?;
            Ok(Plan {
                file,
                old,
                new,
                program,
                program_note,
                note: None,
            })
        }
        "codex" => {
            let dir = match std::env::var_os("CODEX_HOME") {
                Some(d) => PathBuf::from(d),
                None => home()?.join(".codex"),
            };
            let file = through_link(dir.join("config.toml"), follow)?;
            let old = read(&file)?;
            let new = codex_config(&old, &command("codex"))
                .map_err(|e| format!("{} was not changed: {e}", file.display()))?;
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
                program,
                program_note,
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

/// The file to write for `file`: itself, or with `follow` the file a link there names. A
/// link is never written through silently: it may be another application's file.
fn through_link(file: PathBuf, follow: bool) -> Result<PathBuf, String> {
    let is_link = std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(file);
    }
    let target = std::fs::canonicalize(&file).map_err(|e| {
        format!(
            "{} is a symbolic link whose target cannot be read ({e}); replace the link with a \
             file",
            file.display()
        )
    })?;
    if follow {
        return Ok(target);
    }
    Err(format!(
        "{} is a symbolic link to {}; tether does not rewrite a file through a link unasked. \
         Run again with --follow to change {} itself, or replace the link with a file",
        file.display(),
        target.display(),
        target.display()
    ))
}

/// The tether the hooks should run: the one on PATH when it is this same program (a build
/// folder's binary goes away with `cargo clean`), else this binary.
fn hook_program() -> Result<(PathBuf, &'static str), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find tether itself: {e}"))?;
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("tether"))
        .find(|candidate| candidate.is_file());
    match on_path {
        Some(found) if same_program(&found, &exe) => Ok((found, "the `tether` found on PATH")),
        Some(_) => Ok((
            exe,
            "this binary: the `tether` first on PATH is another program",
        )),
        None => Ok((
            exe,
            "this binary, as no `tether` is on PATH: the hooks fail if it is removed (by \
             `cargo clean`, say); install tether onto PATH and run --install again",
        )),
    }
}

/// Whether two paths hold the same program: one file, or copies byte for byte.
fn same_program(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (a.canonicalize(), b.canonicalize())
        && x == y
    {
        return true;
    }
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    size(a).is_some() && size(a) == size(b) && std::fs::read(a).ok() == std::fs::read(b).ok()
}

/// The unified diff of the plan, as `diff -u` would print it.
pub fn diff(plan: &Plan) -> String {
    let name = plan.file.display().to_string();
    similar::TextDiff::from_lines(&plan.old, &plan.new)
        .unified_diff()
        .header(&name, &name)
        .to_string()
}

/// Writes the plan's file (and its folder) whole: a temporary file beside it, renamed over
/// it, so a full disk or a crash leaves the user's file as it was.
pub fn write(plan: &Plan) -> Result<(), String> {
    let file = &plan.file;
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(".{name}.tether-{}", std::process::id()));
    let mode = std::fs::metadata(file).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let written = (|| -> std::io::Result<()> {
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp)?;
        out.write_all(plan.new.as_bytes())?;
        out.set_permissions(std::fs::Permissions::from_mode(mode))?;
        out.sync_all()
    })();
    let outcome = match written {
        Err(e) => Err(format!(
            "cannot write {} ({e}); it was left as it was",
            file.display()
        )),
        Ok(()) if read(file).ok().as_deref() != Some(plan.old.as_str()) => Err(format!(
            "{} changed while tether was preparing its change; it was left as it is now: run \
             --install again",
            file.display()
        )),
        Ok(()) => std::fs::rename(&temp, file).map_err(|e| {
            format!(
                "cannot replace {} ({e}); it was left as it was",
                file.display()
            )
        }),
    };
    if outcome.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    outcome
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
/// earlier ones of tether's; every other byte of `old` is kept.
fn claude_settings(old: &str, command: &str) -> Result<String, String> {
    let ours = |matcher: String| {
        json!({
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}],
        })
    };
    let events = [
        ("PreToolUse", ours(CLAUDE_EDITS.to_string())),
        ("PostToolUse", ours(format!("{CLAUDE_EDITS}|Bash"))),
    ];
    if old.trim().is_empty() {
        let hooks: serde_json::Map<String, Value> = events
            .into_iter()
            .map(|(event, group)| (event.to_string(), json!([group])))
            .collect();
        let mut text =
            serde_json::to_string_pretty(&json!({ "hooks": hooks })).map_err(|e| e.to_string())?;
        text.push('\n');
        return Ok(text);
    }
    let root = json_text::parse(old).map_err(|e| format!("it is not JSON ({e})"))?;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err("its top level is not an object".into());
    }
    let mut edits = Edits::default();
    let Some(hooks) = root.member("hooks") else {
        let hooks: serde_json::Map<String, Value> = events
            .into_iter()
            .map(|(event, group)| (event.to_string(), json!([group])))
            .collect();
        edits.add_members(old, &root, &[("hooks", Value::Object(hooks))]);
        return Ok(edits.apply(old));
    };
    if !matches!(hooks.kind, Kind::Object(_)) {
        return Err("its \"hooks\" is not an object".into());
    }
    let mut missing = Vec::new();
    for (event, group) in events {
        let Some(list) = hooks.member(event) else {
            missing.push((event, json!([group])));
            continue;
        };
        let groups = list
            .elements()
            .ok_or(format!("its hooks.{event} is not a list"))?;
        let mut gone = Vec::new();
        for (i, existing) in groups.iter().enumerate() {
            let Some(entries) = existing.member("hooks").and_then(|h| h.elements()) else {
                continue;
            };
            let mine: Vec<usize> = (0..entries.len())
                .filter(|&k| {
                    serde_json::from_str::<Value>(&old[entries[k].span.clone()])
                        .is_ok_and(|entry| is_ours(&entry, "claude"))
                })
                .collect();
            match mine.len() {
                0 => {}
                n if n == entries.len() => gone.push(i),
                _ => edits.remove(existing.member("hooks").unwrap_or(existing), &mine),
            }
        }
        edits.remove(list, &gone);
        edits.push(old, list, &gone, &group);
    }
    edits.add_members(old, hooks, &missing);
    Ok(edits.apply(old))
}

/// Whether a hook entry is one tether wrote for `agent`: exactly a program named `tether`
/// followed by `hook AGENT`, never another tool whose command merely mentions those words.
fn is_ours(entry: &Value, agent: &str) -> bool {
    let Some(words) = entry["command"].as_str().and_then(shell_words) else {
        return false;
    };
    matches!(words.as_slice(), [program, hook, named]
        if hook == "hook" && named == agent
            && Path::new(program).file_name().is_some_and(|n| n == "tether"))
}

/// A command line split into words as a POSIX shell would (quotes and backslashes), or
/// `None` when a quote is left open or the line uses anything more than that.
fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            ';' | '&' | '|' | '<' | '>' | '$' | '`' | '(' | ')' | '\n' => return None,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// Codex's config.toml with tether's hook tables appended, after removing the ones tether
/// appended before (the block between its two marker comments). A begin marker with no end
/// is refused: what follows it is the user's, and guessing where the block ended loses it.
fn codex_config(old: &str, command: &str) -> Result<String, String> {
    let mut kept = String::new();
    let mut begun_at = None;
    for (n, line) in old.lines().enumerate() {
        match (line.trim(), begun_at) {
            (CODEX_BEGIN, Some(at)) => {
                return Err(format!(
                    "tether's begin marker `{CODEX_BEGIN}` is on line {} and again on line {} \
                     with no `{CODEX_END}` between; put the end marker back after tether's \
                     tables (or delete the block by hand) and run --install again",
                    at + 1,
                    n + 1
                ));
            }
            (CODEX_BEGIN, None) => begun_at = Some(n),
            (CODEX_END, _) => begun_at = None,
            (_, None) => {
                kept.push_str(line);
                kept.push('\n');
            }
            (_, Some(_)) => {}
        }
    }
    if let Some(at) = begun_at {
        return Err(format!(
            "tether's begin marker `{CODEX_BEGIN}` is on line {} but `{CODEX_END}` is missing, \
             so where tether's tables end is unknown; put the end marker back after them (or \
             delete them by hand) and run --install again",
            at + 1
        ));
    }
    if !kept.is_empty() && !kept.ends_with("\n\n") {
        kept.push('\n');
    }
    let quoted = toml::Value::String(command.to_string()).to_string();
    kept.push_str(CODEX_BEGIN);
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
    kept.push_str(CODEX_END);
    kept.push('\n');
    Ok(kept)
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
            serde_json::from_str(&claude_settings(old, "/t/tether hook claude").unwrap()).unwrap();
        assert_eq!(new["model"], "x");
        let post = new["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2, "{post:?}");
        assert_eq!(post[0]["hooks"][0]["command"], "lint");
        assert_eq!(post[1]["hooks"][0]["command"], "/t/tether hook claude");
        assert_eq!(new["hooks"]["PreToolUse"][0]["matcher"], CLAUDE_EDITS);
        // Installing twice changes nothing more.
        let once = claude_settings(old, "/t/tether hook claude").unwrap();
        assert_eq!(
            claude_settings(&once, "/t/tether hook claude").unwrap(),
            once
        );
        assert!(claude_settings("[1]", "x").is_err());
        assert!(claude_settings("{\"hooks\": {\"PreToolUse\": 3}}", "x").is_err());
    }

    #[test]
    fn only_tethers_own_entries_are_taken_out_and_the_users_text_is_kept() {
        let old = r#"{
  "limit": 123456789012345678901234567890,
  "ratio": 1.50,
  "hooks": {
    "PreToolUse": [
      {"matcher": "Edit", "hooks": [
        {"type": "command", "command": "my-check --strict"},
        {"type": "command", "command": "'/old build/tether' hook claude"}
      ]},
      {"matcher": "Write", "hooks": [{"type": "command", "command": "/opt/other hook claude"}]},
      {"matcher": "Write", "hooks": [{"type": "command", "command": "tether hook claude --x"}]}
    ]
  }
}
"#;
        let new = claude_settings(old, "/t/tether hook claude").unwrap();
        assert!(
            new.starts_with("{\n  \"limit\": 123456789012345678901234567890,\n  \"ratio\": 1.50,"),
            "{new}"
        );
        let parsed: Value = serde_json::from_str(&new).unwrap();
        let pre = parsed["hooks"]["PreToolUse"].as_array().unwrap();
        let commands: Vec<Vec<&str>> = pre
            .iter()
            .map(|g| {
                g["hooks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| h["command"].as_str().unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(
            commands,
            [
                vec!["my-check --strict"],
                vec!["/opt/other hook claude"],
                vec!["tether hook claude --x"],
                vec!["/t/tether hook claude"],
            ]
        );
        assert_eq!(
            parsed["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "/t/tether hook claude"
        );
    }

    #[test]
    fn shell_words_split_as_a_shell_would() {
        assert_eq!(
            shell_words("'/a b/tether' hook claude").unwrap(),
            ["/a b/tether", "hook", "claude"]
        );
        assert_eq!(shell_words(r#"/x\ y "q\"r" "#).unwrap(), ["/x y", "q\"r"]);
        assert!(shell_words("'open").is_none());
        assert!(shell_words("tether hook claude; rm -rf x").is_none());
    }

    #[test]
    fn codex_config_is_valid_toml_and_installing_twice_keeps_one_block() {
        let old = "model = \"gpt-5.5\"\n";
        let once = codex_config(old, "/t hook codex").unwrap();
        let twice = codex_config(&once, "/t hook codex").unwrap();
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

    #[test]
    fn a_codex_block_with_no_end_marker_is_refused_not_cut_short() {
        let old = format!(
            "{CODEX_BEGIN}\n[[hooks.PreToolUse]]\nmatcher = \"x\"\n[profiles.work]\nmodel = \"o3\"\n"
        );
        let err = codex_config(&old, "/t hook codex").unwrap_err();
        assert!(
            err.contains("is on line 1 but `# tether hooks: end` is missing"),
            "{err}"
        );
    }
}
