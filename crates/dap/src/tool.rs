//! The `debug` tool: one session per conversation, driven by SPEC 5's operations.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::render::{self, MAX_CHILDREN, MAX_FRAMES};
use crate::session::{Limits, Session, Where};

/// What the tool can do, as SPEC 5 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Which adapters can be used here, and why the others cannot.
    Adapters,
    /// Whether a session runs, and where it is stopped.
    Status,
    /// Sets a file's breakpoints (`file`, `lines`); empty lines clear it.
    Breakpoints,
    /// Starts `program` and runs it to the first stop.
    Launch,
    /// Attaches to a running debuggee (`port`).
    Attach,
    /// Runs to the next stop.
    Continue,
    /// Stops the program where it is.
    Pause,
    /// One step over calls.
    StepOver,
    /// One step into a call.
    StepIn,
    /// Runs until the current function returns.
    StepOut,
    /// Thread ids and names.
    Threads,
    /// The frames of a thread, capped at 30.
    Stack,
    /// The scopes of a frame (`frame_id`).
    Scopes,
    /// The children of a reference, capped at 50.
    Variables,
    /// Evaluates `expression` in a frame.
    Evaluate,
    /// The program's output so far, bounded.
    Output,
    /// Ends the session and kills the adapter and the program.
    Terminate,
}

/// The `debug` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugArgs {
    /// The operation.
    pub action: Action,
    /// breakpoints: the file, relative to the workspace.
    #[serde(default, alias = "path")]
    pub file: Option<String>,
    /// breakpoints: 1-based lines; empty clears the file.
    #[serde(default)]
    pub lines: Option<Vec<usize>>,
    /// launch: the program, relative to the workspace.
    #[serde(default)]
    pub program: Option<String>,
    /// launch: its arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// launch, attach: the adapter (debugpy, lldb, delve), when the program or the
    /// workspace does not decide it.
    #[serde(default)]
    pub adapter: Option<String>,
    /// attach: the port the debuggee waits on (debugpy --listen, lldb-server gdbserver, or
    /// dlv --headless).
    #[serde(default)]
    pub port: Option<u16>,
    /// continue, pause, steps, stack: the thread (default: the stopped one).
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// scopes, evaluate: a frame id from `stack`.
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// variables: a reference from `scopes` or `variables`.
    #[serde(default)]
    pub reference: Option<i64>,
    /// evaluate: the expression.
    #[serde(default)]
    pub expression: Option<String>,
}

/// The run's debug sessions, one per conversation, and breakpoints set before a launch.
pub struct Sessions {
    pub(crate) live: tokio::sync::Mutex<HashMap<String, Arc<Session>>>,
    pub(crate) breakpoints: Mutex<HashMap<String, BTreeMap<PathBuf, Vec<usize>>>>,
    pub(crate) limits: Limits,
    pub(crate) ttl: std::time::Duration,
    /// `[debug.adapters]`.
    pub(crate) adapters: crate::catalog::Overrides,
    /// The conversation of a run that names none (`tether serve` without `--conversation`).
    pub(crate) fallback: String,
}

/// The `debug` tool.
pub struct DebugTool {
    pub(crate) sessions: Arc<Sessions>,
}

fn need<'a, T>(value: &'a Option<T>, what: &str, action: &str) -> Result<&'a T, ToolError> {
    value
        .as_ref()
        .ok_or_else(|| ToolError::invalid(format!("`{action}` needs `{what}`")))
}

impl Tool for DebugTool {
    type Args = DebugArgs;

    fn name(&self) -> &'static str {
        "debug"
    }

    fn description(&self) -> String {
        "Drive a debugger (Python via debugpy; C, C++ and Rust programs via lldb; Go via delve; Dart via dart debug_adapter). Set `breakpoints` (file, lines), then \
         `launch` (program, args): it runs to the first stop and shows the reason, the top \
         frames, the source line and the locals. Then `continue`, `step_over`, `step_in`, \
         `step_out`, `stack`, `scopes` (frame_id), `variables` (reference), `evaluate` \
         (expression, frame_id), `threads`, `output`, `pause`, `terminate`. `attach` (port, adapter) joins a program \
         waiting on a port. Frame ids and \
         references are valid until the program runs again. `adapters` says what can be \
         debugged here."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn concurrency(&self, args: &DebugArgs) -> Concurrency {
        // `pause` and `terminate` must reach a program that a `continue` is waiting on.
        match args.action {
            Action::Pause | Action::Terminate | Action::Adapters => Concurrency::Free,
            _ => Concurrency::Session("debug".into()),
        }
    }

    async fn call(&self, cx: &CallCx, args: DebugArgs) -> Result<ToolOutput, ToolError> {
        let conversation = cx
            .conversation()
            .unwrap_or(&self.sessions.fallback)
            .to_string();
        let root = cx.workspace().root().to_path_buf();
        if args.action == Action::Adapters {
            let report = crate::catalog::report(&root, &self.sessions.adapters).await;
            return Ok(ToolOutput::text(report));
        }
        let work = match waits_for(&args) {
            Some(what) => {
                cx.progress_while(self.sessions.act(cx, &conversation, &root, args), |t| {
                    format!("{what} ({} s)", t.as_secs())
                })
                .await
            }
            None => self.sessions.act(cx, &conversation, &root, args).await,
        };
        Ok(ToolOutput::text(work?))
    }
}

/// What a call that makes the program run waits for, said in its progress reports, so a
/// client with a short timeout knows a `continue` that takes a while is alive.
fn waits_for(args: &DebugArgs) -> Option<String> {
    match args.action {
        Action::Launch => Some(format!(
            "launching {} and waiting for it to stop",
            args.program.as_deref().unwrap_or("the program")
        )),
        Action::Attach => Some(format!(
            "attaching to port {} and waiting for the program to stop",
            args.port.map_or("?".into(), |p| p.to_string())
        )),
        Action::Continue => Some("waiting for the program to stop".into()),
        Action::StepOver | Action::StepIn | Action::StepOut => {
            Some("waiting for the step to end".into())
        }
        Action::Adapters
        | Action::Status
        | Action::Breakpoints
        | Action::Pause
        | Action::Threads
        | Action::Stack
        | Action::Scopes
        | Action::Variables
        | Action::Evaluate
        | Action::Output
        | Action::Terminate => None,
    }
}

impl Sessions {
    async fn current(&self, conversation: &str) -> Result<Option<Arc<Session>>, ToolError> {
        let mut live = self.live.lock().await;
        let Some(session) = live.get(conversation).cloned() else {
            return Ok(None);
        };
        if session.began.elapsed() > self.ttl {
            live.remove(conversation);
            drop(live);
            session.end().await;
            return Err(ToolError::failed(format!(
                "the debug session on {} reached its time limit ({} s, `[debug] ttl_s`) and \
                 was terminated; launch again",
                session.program.display(),
                self.ttl.as_secs()
            )));
        }
        Ok(Some(session))
    }

    async fn act(
        &self,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        args: DebugArgs,
    ) -> Result<String, ToolError> {
        let session = self.current(conversation).await?;
        let none = || {
            ToolError::invalid("no debug session runs: set `breakpoints`, then `launch` a program")
        };
        match args.action {
            Action::Adapters => Ok(crate::catalog::report(root, &self.adapters).await),
            Action::Status => Ok(match session {
                Some(s) => status(&s, root).await,
                None => "no debug session runs".into(),
            }),
            Action::Breakpoints => {
                let file = need(&args.file, "file", "breakpoints")?;
                let lines = args.lines.clone().unwrap_or_default();
                if let Some(bad) = lines.iter().find(|l| **l == 0) {
                    return Err(ToolError::invalid(format!(
                        "line {bad}: lines are 1-based; the first line is 1"
                    )));
                }
                let abs = cx.workspace().resolve_read(file)?;
                if !abs.is_file() {
                    return Err(not_a_file(cx, file, "a source file's").await);
                }
                self.breakpoints
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(conversation.to_string())
                    .or_default()
                    .insert(abs.clone(), lines.clone());
                match session {
                    Some(s) => s
                        .set_breakpoints(&abs, &lines)
                        .await
                        .map_err(ToolError::failed),
                    None => Ok(format!(
                        "{file}: {} set; sent to the adapter at launch",
                        tether_tool::counted(lines.len(), "breakpoint")
                    )),
                }
            }
            Action::Launch => self.launch(cx, conversation, root, &args, session).await,
            Action::Attach => self.attach(cx, conversation, root, &args, session).await,
            Action::Output => {
                let s = session.ok_or_else(none)?;
                s.catch_up().await;
                let (text, cut) = s.output();
                Ok(match (text.is_empty(), cut) {
                    (true, _) => "no output yet".into(),
                    (false, 0) => text,
                    (false, n) => format!(
                        "(the first {n} bytes were dropped; the last 64 KiB are kept)\n{text}"
                    ),
                })
            }
            Action::Terminate => {
                let s = session.ok_or_else(none)?;
                self.live.lock().await.remove(conversation);
                s.end().await;
                s.catch_up().await;
                Ok(match s.attached() {
                    true if s.adapter.id == "delve" => "detached; a headless dlv server ends \
                        the program it started unless it runs with --accept-multiclient"
                        .to_string(),
                    true => "detached: the program attached to was left running".to_string(),
                    false => format!(
                        "terminated the session on {}; the adapter and the program are gone",
                        s.program.strip_prefix(root).unwrap_or(&s.program).display()
                    ),
                })
            }
            _ => {
                let s = session.ok_or_else(none)?;
                stopped_ops(&s, cx.workspace(), &args).await
            }
        }
    }

    /// Attaches to a program waiting for a debugger on `port` (see
    /// [`crate::catalog::ATTACH_HOWTO`]); the program is not ours to kill at the end.
    async fn attach(
        &self,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        args: &DebugArgs,
        session: Option<Arc<Session>>,
    ) -> Result<String, ToolError> {
        if let Some(s) = session {
            return Err(ToolError::invalid(format!(
                "a debug session already runs ({}); `terminate` it before attaching",
                status(&s, root).await
            )));
        }
        let port = *need(&args.port, "port", "attach")?;
        let id = match &args.adapter {
            Some(id) => id.clone(),
            None => crate::catalog::attach_adapter(root)
                .map_err(ToolError::invalid)?
                .to_string(),
        };
        let found = crate::catalog::for_attach(&id, root, &self.adapters)
            .await
            .map_err(ToolError::invalid)?;
        let attach = crate::catalog::attach_args(&found, port);
        let target = root.join(format!("(the program on port {port})"));
        let session = match found.argv.is_empty() {
            true => Session::connect(found, port, target, root.to_path_buf(), self.limits).await,
            false => Session::start(found, target, root.to_path_buf(), self.limits).await,
        }
        .map_err(|e| {
            ToolError::failed(format!(
                "{e}\nthe program must wait on the port: {}",
                crate::catalog::ATTACH_HOWTO
            ))
        })?;
        let said = format!("attached to port {port} under {id}");
        self.begin(
            conversation,
            cx.workspace(),
            session,
            "attach",
            attach,
            said,
        )
        .await
    }

    /// The breakpoints set for `conversation`, to send at launch or attach.
    fn pending_breakpoints(&self, conversation: &str) -> Vec<(PathBuf, Vec<usize>)> {
        self.breakpoints
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(conversation)
            .map(|m| m.iter().map(|(p, l)| (p.clone(), l.clone())).collect())
            .unwrap_or_default()
    }

    async fn launch(
        &self,
        cx: &CallCx,
        conversation: &str,
        root: &std::path::Path,
        args: &DebugArgs,
        session: Option<Arc<Session>>,
    ) -> Result<String, ToolError> {
        if let Some(s) = session {
            return Err(ToolError::invalid(format!(
                "a debug session already runs ({}); `terminate` it before launching another",
                status(&s, root).await
            )));
        }
        let program = need(&args.program, "program", "launch")?;
        let abs = cx.workspace().resolve_read(program)?;
        if !abs.is_file() {
            return Err(not_a_file(cx, program, "the program's").await);
        }
        let id = match (&args.adapter, crate::catalog::adapter_for(&abs)) {
            (Some(id), _) => id.clone(),
            (None, Some(id)) => id.to_string(),
            (None, None) => {
                return Err(ToolError::invalid(format!(
                    "cannot tell which adapter debugs {program}: name one with `adapter` \
                     (debugpy, lldb, delve, dart), or launch the built program itself"
                )));
            }
        };
        let found = crate::catalog::find(&id, &abs, root, &self.adapters)
            .await
            .map_err(ToolError::failed)?;
        let interpreter = found.interpreter.clone();
        let launch =
            crate::catalog::launch_args(&found, &abs, &args.args.clone().unwrap_or_default());
        let session = Session::start(found, abs.clone(), root.to_path_buf(), self.limits)
            .await
            .map_err(ToolError::failed)?;
        let said = format!(
            "launched {program} under {}{}",
            session.adapter.id,
            interpreter.map_or(String::new(), |i| format!(" with {i}"))
        );
        self.begin(
            conversation,
            cx.workspace(),
            session,
            "launch",
            launch,
            said,
        )
        .await
    }

    /// Launches or attaches (`command`) a started session with the breakpoints set so far,
    /// keeps it for `conversation`, and shows `said`, the breakpoints and the first stop.
    async fn begin(
        &self,
        conversation: &str,
        ws: &tether_fs::Workspace,
        session: Session,
        command: &str,
        args: Value,
        said: String,
    ) -> Result<String, ToolError> {
        let session = Arc::new(session);
        let breakpoints = self.pending_breakpoints(conversation);
        let verified = match session.launch(command, args, &breakpoints).await {
            Ok(verified) => verified,
            Err(e) => {
                session.end().await;
                return Err(ToolError::failed(match command {
                    "attach" => format!(
                        "{e}\nthe program must wait on the port: {}",
                        crate::catalog::ATTACH_HOWTO
                    ),
                    _ => e,
                }));
            }
        };
        self.live
            .lock()
            .await
            .insert(conversation.to_string(), session.clone());
        let mut out = vec![said];
        out.extend(verified.into_iter().map(|s| format!("breakpoints: {s}")));
        out.push(snapshot(&session, ws).await);
        Ok(out.join("\n"))
    }
}

/// What a session is doing, in a line.
async fn status(s: &Session, root: &std::path::Path) -> String {
    s.catch_up().await;
    let at = match s.where_now() {
        Where::Running => "running".to_string(),
        Where::Stopped { thread, reason } => format!("stopped ({reason}) on thread {thread}"),
        Where::Ended(code) => format!(
            "ended{}",
            code.map_or(String::new(), |c| format!(" with exit code {c}"))
        ),
    };
    let program = s
        .program
        .strip_prefix(root)
        .unwrap_or(&s.program)
        .display()
        .to_string();
    format!(
        "{} session on {program}: {at}, for {} s",
        s.adapter.id,
        s.began.elapsed().as_secs()
    )
}

/// Operations that need the program stopped (or that make it run).
async fn stopped_ops(
    s: &Session,
    ws: &tether_fs::Workspace,
    args: &DebugArgs,
) -> Result<String, ToolError> {
    let root = ws.root();
    s.catch_up().await;
    let failed = ToolError::failed;
    let stopped_thread = match s.where_now() {
        Where::Stopped { thread, .. } => Some(thread),
        Where::Ended(code) => {
            return Err(ToolError::invalid(format!(
                "the program has ended{}: read `output`, or `terminate` and launch again",
                code.map_or(String::new(), |c| format!(" with exit code {c}"))
            )));
        }
        Where::Running => None,
    };
    let thread = args.thread_id.or(stopped_thread);
    let running =
        || ToolError::invalid("the program is running: `pause` it first, or wait with `continue`");
    match args.action {
        Action::Continue | Action::StepOver | Action::StepIn | Action::StepOut => {
            let command = match args.action {
                Action::Continue => "continue",
                Action::StepOver => "next",
                Action::StepIn => "stepIn",
                _ => "stepOut",
            };
            if stopped_thread.is_none() && args.action == Action::Continue {
                // Still running from before: wait again.
                return Ok(snapshot(s, ws).await);
            }
            let thread = thread.ok_or_else(running)?;
            s.resume(command, thread).await.map_err(failed)?;
            Ok(snapshot(s, ws).await)
        }
        Action::Pause => {
            if stopped_thread.is_some() {
                return Ok("already stopped".into());
            }
            let thread = match thread {
                Some(t) => t,
                None => first_thread(s).await.map_err(failed)?,
            };
            s.ask("pause", json!({"threadId": thread}))
                .await
                .map_err(failed)?;
            Ok(snapshot(s, ws).await)
        }
        Action::Threads => {
            let answer = s.ask("threads", json!({})).await.map_err(failed)?;
            let threads = answer["threads"].as_array().cloned().unwrap_or_default();
            let lines: Vec<String> = threads
                .iter()
                .map(|t| format!("{}  {}", t["id"], t["name"].as_str().unwrap_or("")))
                .collect();
            Ok(lines.join("\n"))
        }
        Action::Stack => {
            let thread = thread.ok_or_else(running)?;
            let (frames, total) = stack(s, thread).await.map_err(failed)?;
            let mut lines: Vec<String> = frames.iter().map(|f| render::frame(f, root)).collect();
            if total > frames.len() {
                lines.push(format!(
                    "… {} more frames, cut at {MAX_FRAMES}",
                    total - frames.len()
                ));
            }
            Ok(lines.join("\n"))
        }
        Action::Scopes => {
            stopped_thread.ok_or_else(running)?;
            let public = *need(&args.frame_id, "frame_id", "scopes")?;
            let frame = s.frame(public).ok_or_else(|| stale("frame id", public))?;
            let answer = s
                .ask("scopes", json!({"frameId": frame}))
                .await
                .map_err(failed)?;
            let mut scopes = answer["scopes"].as_array().cloned().unwrap_or_default();
            s.mint(&mut scopes, "variablesReference");
            let lines: Vec<String> = scopes
                .iter()
                .map(|x| {
                    format!(
                        "{}  [reference {}]",
                        x["name"].as_str().unwrap_or("?"),
                        x["variablesReference"]
                    )
                })
                .collect();
            Ok(lines.join("\n"))
        }
        Action::Variables => {
            stopped_thread.ok_or_else(running)?;
            let public = *need(&args.reference, "reference", "variables")?;
            let reference = s
                .reference(public)
                .ok_or_else(|| stale("reference", public))?;
            let answer = s
                .ask("variables", json!({"variablesReference": reference}))
                .await
                .map_err(failed)?;
            let mut items = answer["variables"].as_array().cloned().unwrap_or_default();
            let shown = items.len().min(MAX_CHILDREN);
            s.mint(&mut items[..shown], "variablesReference");
            let text = render::variables(&items);
            Ok(if text.is_empty() {
                "(no variables)".into()
            } else {
                text
            })
        }
        Action::Evaluate => {
            let thread = stopped_thread.ok_or_else(running)?;
            let expression = need(&args.expression, "expression", "evaluate")?;
            let public = match args.frame_id {
                Some(f) => f,
                None => {
                    let (frames, _) = stack(s, thread).await.map_err(failed)?;
                    frames.first().and_then(|f| f["id"].as_i64()).unwrap_or(0)
                }
            };
            let frame = s.frame(public).ok_or_else(|| stale("frame id", public))?;
            // debugpy's repl also runs statements; lldb's would take lldb commands.
            let context = if s.adapter.id == "debugpy" {
                "repl"
            } else {
                "watch"
            };
            let args = json!({"expression": expression, "frameId": frame, "context": context});
            let mut answer = [s.ask("evaluate", args).await.map_err(failed)?];
            s.mint(&mut answer, "variablesReference");
            let [answer] = answer;
            let reference = answer["variablesReference"].as_i64().unwrap_or(0);
            let value = render::value(answer["result"].as_str().unwrap_or(""));
            Ok(match reference {
                0 => value,
                r => format!("{value}  [reference {r}]"),
            })
        }
        _ => Err(ToolError::invalid("not an operation on a running session")),
    }
}

/// `file` is not a file: said with the workspace files most like it.
async fn not_a_file(cx: &CallCx, file: &str, whose: &str) -> ToolError {
    let (ws, wanted) = (cx.workspace().clone(), file.to_string());
    let near = tokio::task::spawn_blocking(move || {
        tether_fs::suggest::similar_paths(&ws, &wanted, tether_fs::suggest::Kind::File)
    })
    .await
    .unwrap_or_default();
    ToolError::invalid(format!(
        "{file} is not a file of the workspace{}; give {whose} path from the workspace root",
        tether_fs::suggest::did_you_mean(&near)
    ))
}

/// A stale or unknown frame id or reference is refused with what to do instead.
fn stale(what: &str, id: i64) -> ToolError {
    ToolError::invalid(format!(
        "{what} {id} is stale or unknown: ids are valid only until the program runs again; \
         call `stack` (then `scopes`) for current ones"
    ))
}

async fn first_thread(s: &Session) -> Result<i64, String> {
    let answer = s.ask("threads", json!({})).await?;
    answer["threads"][0]["id"]
        .as_i64()
        .ok_or_else(|| "the adapter lists no threads".into())
}

/// The top frames of `thread`, capped, with how many there are in all; their ids are handed out.
async fn stack(s: &Session, thread: i64) -> Result<(Vec<Value>, usize), String> {
    let args = json!({"threadId": thread, "startFrame": 0, "levels": MAX_FRAMES});
    let answer = s.ask("stackTrace", args).await?;
    let mut frames = answer["stackFrames"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = answer["totalFrames"]
        .as_u64()
        .map_or(frames.len(), |t| t as usize);
    s.mint(&mut frames, "id");
    let total = total.max(frames.len());
    Ok((frames, total))
}

/// After the program ran: where it stopped (the reason, the top frames, the source line and
/// the locals), that it ended (exit code and output tail), or that it still runs.
async fn snapshot(s: &Session, ws: &tether_fs::Workspace) -> String {
    let root = ws.root();
    match s.wait_for_stop().await {
        Where::Running => format!(
            "the program is still running after {} s: `pause` it, read `output`, or \
             `continue` to wait again",
            s.limits.stop_wait.as_secs()
        ),
        Where::Ended(code) => {
            let (text, _) = s.output();
            let tail: String = {
                let lines: Vec<&str> = text.lines().collect();
                lines[lines.len().saturating_sub(20)..].join("\n")
            };
            format!(
                "the program exited{}\noutput (last lines):\n{tail}",
                code.map_or(String::new(), |c| format!(" with code {c}"))
            )
        }
        Where::Stopped { thread, reason } => {
            let mut out = vec![format!("stopped: {reason} (thread {thread})")];
            let Ok((frames, _)) = stack(s, thread).await else {
                return out.join("\n");
            };
            out.extend(
                frames
                    .iter()
                    .take(5)
                    .map(|f| format!("  {}", render::frame(f, root))),
            );
            let Some(top) = frames.first() else {
                return out.join("\n");
            };
            if let (Some(path), Some(line)) = (top["source"]["path"].as_str(), top["line"].as_u64())
                && let Some(text) = render::source_line(ws, path, line).await
            {
                out.push(format!("  > {line}: {text}"));
            }
            let public = top["id"].as_i64().unwrap_or(0);
            let frame = s.frame(public).unwrap_or(0);
            if let Ok(scopes) = s.ask("scopes", json!({"frameId": frame})).await
                && let Some(locals) = scopes["scopes"].get(0)
                && let Some(reference) = locals["variablesReference"].as_i64()
                && let Ok(vars) = s
                    .ask("variables", json!({"variablesReference": reference}))
                    .await
            {
                let mut items = vars["variables"].as_array().cloned().unwrap_or_default();
                let shown = items.len().min(MAX_CHILDREN);
                s.mint(&mut items[..shown], "variablesReference");
                let text = render::variables(&items);
                out.push(format!(
                    "{} (frame #{public}):",
                    locals["name"].as_str().unwrap_or("locals")
                ));
                out.push(text);
            }
            out.join("\n")
        }
    }
}
