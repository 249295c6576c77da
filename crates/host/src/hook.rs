//! Agent hooks (`tether hook claude|codex`): an edit made by the agent's own tool is reported
//! like a tether write. PreToolUse takes the baseline, PostToolUse reports what the edit
//! brought, and each agent session is a run of its own in the host, keyed by its session id.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tether::AgentEdit;
use tether::Run;
use tether_base::lock;

use crate::host::Host;
use crate::wire::Printed;

/// How long a PreToolUse waits for the session's servers to start, so the first edit has a
/// baseline; past it the edit is still reported, labelled as having none.
const WARM_WAIT: Duration = Duration::from_secs(10);
/// How long a shell command's event waits for what the command changed on disk to be read and
/// diagnosed, so it is told with the command and not with a later event; what takes longer
/// follows as a notice.
const SHELL_WAIT: Duration = Duration::from_secs(5);

/// One agent session's run and the edits whose start it saw.
struct Session {
    run: Arc<Run>,
    /// When the session's last event came; a session quiet for the host's idle time ends.
    last_event: std::sync::Mutex<std::time::Instant>,
    warm: tokio::sync::watch::Receiver<bool>,
    /// Set once a warm-up outlasted [`WARM_WAIT`]: a server stuck starting is not waited for
    /// again on every later event.
    stuck_warming: std::sync::atomic::AtomicBool,
    /// By tool use id: the files an edit named and what was known before it.
    begun: std::sync::Mutex<HashMap<String, (Vec<String>, AgentEdit)>>,
}

/// Agent sessions a host keeps a run for at once; a new one past this ends the session whose
/// last event is oldest (each run holds descriptors, and 10,000 session ids must not end the
/// host).
const MAX_SESSIONS: usize = 64;
/// Sessions ended to make room that are remembered, so their next event can say so.
const MAX_REMEMBERED: usize = 4096;

/// The hook sessions a host keeps, one run per agent session.
#[derive(Default)]
pub(crate) struct Sessions {
    by_id: std::sync::Mutex<HashMap<String, Arc<Session>>>,
    ended_for_room: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl Sessions {
    /// How many agent sessions have a run here.
    pub(crate) fn len(&self) -> usize {
        lock(&self.by_id).len()
    }

    /// The surface of each session's run, sorted.
    pub(crate) fn surfaces(&self) -> Vec<String> {
        let mut surfaces: Vec<String> = lock(&self.by_id)
            .keys()
            .filter_map(|k| k.split(':').nth(1).map(str::to_string))
            .collect();
        surfaces.sort();
        surfaces
    }

    /// Ends every session's run.
    pub(crate) async fn end_all(&self) {
        let all: Vec<Arc<Session>> = lock(&self.by_id).drain().map(|(_, s)| s).collect();
        for s in all {
            s.run.shutdown(crate::front::SHUTDOWN_BUDGET).await;
        }
    }

    /// Ends the sessions that had no event for `idle`, as an agent session that ended
    /// without a SessionEnd event (killed, or hooks configured without it) would never do.
    pub(crate) async fn end_idle(&self, idle: Duration) {
        let quiet: Vec<Arc<Session>> = {
            let mut by_id = lock(&self.by_id);
            let keys: Vec<String> = by_id
                .iter()
                .filter(|(_, s)| lock(&s.last_event).elapsed() >= idle)
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter().filter_map(|k| by_id.remove(k)).collect()
        };
        for s in quiet {
            s.run.shutdown(crate::front::SHUTDOWN_BUDGET).await;
        }
    }

    async fn end(&self, key: &str) {
        let gone = lock(&self.by_id).remove(key);
        if let Some(s) = gone {
            s.run.shutdown(crate::front::SHUTDOWN_BUDGET).await;
        }
    }
}

/// The fields of a hook event tether reads; both agents send these names.
#[derive(Deserialize)]
struct Event {
    session_id: String,
    hook_event_name: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    tool_use_id: Option<String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
}

/// What a tool call means for the files.
enum Touch {
    /// A file tool that edits these files.
    Files(Vec<String>),
    /// A shell command: what it changed is seen by the watch.
    Shell,
    /// Anything else.
    Nothing,
}

/// The events whose answer may carry context for the model; every other kind is answered
/// with nothing (its schema has no `hookSpecificOutput`), and notices wait for the next of these.
const TOOL_EVENTS: [&str; 2] = ["PreToolUse", "PostToolUse"];

/// Answers one hook event in the agent's own output form.
pub(crate) async fn handle(
    host: &Host,
    agent: &str,
    surface: &str,
    event: Value,
    block: bool,
) -> Printed {
    if !matches!(agent, "claude" | "codex") {
        return not_read(format!("unknown agent {agent:?}: use claude or codex"));
    }
    let name = event["hook_event_name"].as_str().unwrap_or_default();
    let event: Event = match serde_json::from_value(event.clone()) {
        Ok(e) => e,
        Err(e) => {
            let why = format!(
                "the hook event is not one tether reads ({e}); it needs session_id and \
                 hook_event_name, as Claude Code and Codex send them"
            );
            return match TOOL_EVENTS.contains(&name) {
                true => context(name, &unchecked(&why), false),
                false => not_read(why),
            };
        }
    };
    let key = format!("{agent}:{surface}:{}", event.session_id);
    if event.hook_event_name == "SessionEnd" {
        host.hooks.end(&key).await;
        return Printed::default();
    }
    if !TOOL_EVENTS.contains(&name) {
        return Printed::default();
    }
    let (session, reopened) = match session(host, &key, surface) {
        Ok(s) => s,
        Err(why) => return context(&event.hook_event_name, &unchecked(&why), false),
    };
    let cwd = event.cwd.clone().unwrap_or_else(|| host.place.root.clone());
    let touch = touch(&event, &cwd);
    let id = event
        .tool_use_id
        .clone()
        .unwrap_or_else(|| format!("{}:{}", event.tool_name, event.tool_input));
    let mut said = Vec::new();
    if reopened {
        said.push(format!(
            "this session's run was ended to make room for newer sessions (a host keeps at \
             most {MAX_SESSIONS}); it starts afresh, so what was known before this event is not"
        ));
    }
    let mut new_errors = 0;
    match (event.hook_event_name.as_str(), &touch) {
        ("PreToolUse", Touch::Files(paths)) => {
            use std::sync::atomic::Ordering::Relaxed;
            if !session.stuck_warming.load(Relaxed) {
                let mut warm = session.warm.clone();
                let waited = tokio::time::timeout(WARM_WAIT, warm.wait_for(|done| *done)).await;
                session.stuck_warming.store(waited.is_err(), Relaxed);
            }
            let (edit, _) = session.run.runtime().agent_edit_begin(paths).await;
            let mut begun = lock(&session.begun);
            // An earlier edit of these files whose PostToolUse never came (the tool failed, or
            // was denied) is over: what it held is let go.
            begun.retain(|_, (named, _)| !named.iter().any(|n| paths.contains(n)));
            begun.insert(id, (paths.clone(), edit));
        }
        ("PostToolUse", Touch::Files(paths)) => {
            let begun = lock(&session.begun).remove(&id).map(|(_, edit)| edit);
            let report = session.run.runtime().agent_edit_end(paths, begun).await;
            new_errors = report.new_errors;
            said.extend(report.text);
            if !report.skipped.is_empty() {
                said.push(format!("not checked: {}", report.skipped.join("; ")));
            }
        }
        ("PostToolUse", Touch::Shell) => session.run.settle(SHELL_WAIT).await,
        _ => {}
    }
    said.extend(session.run.runtime().notices().drain_block());
    if said.is_empty() {
        return Printed::default();
    }
    let text = format!("tether: {}", said.join("\n"));
    let blocking = block && new_errors > 0 && event.hook_event_name == "PostToolUse";
    context(&event.hook_event_name, &text, blocking)
}

/// The session's run, opened (and its servers started in the background) on first need; and
/// whether it was ended before to make room, so the model can be told.
fn session(host: &Host, key: &str, surface: &str) -> Result<(Arc<Session>, bool), String> {
    // Held while a new session's run is built (that is synchronous), so two events of one
    // agent session never open two runs.
    let mut by_id = lock(&host.hooks.by_id);
    if let Some(s) = by_id.get(key) {
        *lock(&s.last_event) = std::time::Instant::now();
        return Ok((s.clone(), false));
    }
    if by_id.len() >= MAX_SESSIONS
        && let Some(oldest) = by_id
            .iter()
            .min_by_key(|(_, s)| *lock(&s.last_event))
            .map(|(k, _)| k.clone())
        && let Some(ended) = by_id.remove(&oldest)
    {
        let mut remembered = lock(&host.hooks.ended_for_room);
        remembered.push_back(oldest);
        if remembered.len() > MAX_REMEMBERED {
            remembered.pop_front();
        }
        tokio::spawn(async move { ended.run.shutdown(crate::front::SHUTDOWN_BUDGET).await });
    }
    let reopened = {
        let mut remembered = lock(&host.hooks.ended_for_room);
        let before = remembered.len();
        remembered.retain(|k| k != key);
        remembered.len() != before
    };
    let conversation = key.to_string();
    let (run, _) = host.open(surface, |b| {
        b.conversation(conversation).prompt_reports(true)
    })?;
    let run = Arc::new(run);
    let (done, warm) = tokio::sync::watch::channel(false);
    let warming = run.clone();
    tokio::spawn(async move {
        warming.warm().await;
        let _ = done.send(true);
    });
    let session = Arc::new(Session {
        run,
        last_event: std::sync::Mutex::new(std::time::Instant::now()),
        warm,
        stuck_warming: Default::default(),
        begun: std::sync::Mutex::default(),
    });
    by_id.insert(key.to_string(), session.clone());
    Ok((session, reopened))
}

/// Which files the event's tool edits: Claude Code's file tools name one path, Codex's
/// apply_patch names them in its patch headers (relative to the session's folder).
fn touch(event: &Event, cwd: &Path) -> Touch {
    let input = &event.tool_input;
    match event.tool_name.as_str() {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" if input.get("command").is_none() => {
            let path = input["file_path"]
                .as_str()
                .or_else(|| input["notebook_path"].as_str());
            match path {
                Some(p) => Touch::Files(vec![cwd.join(p).to_string_lossy().into_owned()]),
                None => Touch::Nothing,
            }
        }
        "apply_patch" | "Edit" | "Write" => {
            let patch = input["command"]
                .as_str()
                .or_else(|| input["patch"].as_str())
                .or_else(|| input["input"].as_str())
                .unwrap_or_default();
            Touch::Files(
                tether::patch_paths(patch)
                    .into_iter()
                    .map(|p| cwd.join(p).to_string_lossy().into_owned())
                    .collect(),
            )
        }
        "Bash" | "shell" | "exec_command" | "local_shell" => Touch::Shell,
        _ => Touch::Nothing,
    }
}

/// The agent's form for context the model reads: `hookSpecificOutput.additionalContext`
/// (Claude Code and Codex spell it alike); with `blocking`, the decision that turns it into a
/// blocking message after the edit, whose reason is then the report, said once.
fn context(event_name: &str, text: &str, blocking: bool) -> Printed {
    let out = match blocking {
        true => json!({"decision": "block", "reason": text}),
        false => json!({
            "hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}
        }),
    };
    Printed {
        stdout: format!("{out}\n"),
        ..Printed::default()
    }
}

/// What the model reads when tether could not look at the edit at all.
fn unchecked(why: &str) -> String {
    format!("tether could not check this edit: {why}")
}

/// The hook's answer when no host could take the event: the model is told the edit went
/// unchecked, rather than hearing nothing, which would read as clean.
pub fn unreachable(event: &Value, why: &str) -> Printed {
    match event["hook_event_name"].as_str() {
        Some(name) if TOOL_EVENTS.contains(&name) => context(name, &unchecked(why), false),
        _ => Printed {
            stderr: format!("tether: {why}\n"),
            ..Printed::default()
        },
    }
}

/// The answer to an event tether could not read: a non-blocking error (exit 1), which both
/// agents show to the user and go on; exit 2 would block the agent's turn on tether's account.
pub fn not_read(why: String) -> Printed {
    Printed {
        stderr: format!("tether: {why}\n"),
        code: 1,
        ..Printed::default()
    }
}

/// The files an event's tool edits, resolved against the event's `cwd` (or `cwd` given), so a
/// front end can find the project they belong to before it attaches.
pub fn edited_files(event: &Value, cwd: &Path) -> Vec<PathBuf> {
    let Ok(event) = serde_json::from_value::<Event>(event.clone()) else {
        return Vec::new();
    };
    let cwd = event.cwd.clone().unwrap_or_else(|| cwd.to_path_buf());
    match touch(&event, &cwd) {
        Touch::Files(files) => files.into_iter().map(PathBuf::from).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn blocking_says_the_report_once_as_the_reason() {
        let printed = context("PostToolUse", "1 new problem", true);
        let out: Value = serde_json::from_str(&printed.stdout).unwrap();
        assert_eq!(out["decision"], "block");
        assert_eq!(out["reason"], "1 new problem");
        // Said once: the reason is what the model reads, with no copy beside it.
        assert!(out.get("hookSpecificOutput").is_none(), "{out}");
        let quiet: Value = serde_json::from_str(&context("PreToolUse", "x", false).stdout).unwrap();
        assert!(quiet.get("decision").is_none());
    }
}
