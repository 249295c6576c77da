//! The operations on a live session: those that make the program run and wait for its next
//! stop, and those that read it while it is stopped.

use serde_json::{Value, json};
use tether_tool::ToolError;

use crate::render::{self, MAX_CHILDREN, MAX_FRAMES};
use crate::session::{Session, Where};
use crate::tool::{Action, DebugArgs, need};

/// Operations that need the program stopped (or that make it run).
pub(crate) async fn stopped_ops(
    s: &Session,
    ws: &tether_fs::Workspace,
    args: &DebugArgs,
) -> Result<String, ToolError> {
    let root = ws.root();
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
        // Reaches a program a `continue` waits on (pause is not serialized behind it); both
        // then show the same stop.
        Action::Pause => match s.pause(args.thread_id).await.map_err(failed)? {
            false => Ok("already stopped".into()),
            true => Ok(snapshot(s, ws).await),
        },
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
            // The catalog's context: debugpy's repl also runs statements, lldb's would take
            // lldb commands.
            let context = s.adapter.kind.evaluate_context.as_str();
            let args = json!({"expression": expression, "frameId": frame, "context": context});
            let mut answer = [s.ask("evaluate", args).await.map_err(failed)?];
            s.mint(&mut answer, "variablesReference");
            let [answer] = answer;
            let reference = answer["variablesReference"].as_i64().unwrap_or(0);
            // A statement (`x = 1` in debugpy's repl) answers an empty result.
            let value = match answer["result"].as_str().unwrap_or("") {
                "" => "(no value)".to_string(),
                result => render::value(result),
            };
            Ok(match reference {
                0 => value,
                r => format!("{value}  [reference {r}]"),
            })
        }
        _ => Err(ToolError::invalid("not an operation on a running session")),
    }
}

/// A stale or unknown frame id or reference is refused with what to do instead.
fn stale(what: &str, id: i64) -> ToolError {
    ToolError::invalid(format!(
        "{what} {id} is stale or unknown: ids are valid only until the program runs again; \
         call `stack` (then `scopes`) for current ones"
    ))
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
pub(crate) async fn snapshot(s: &Session, ws: &tether_fs::Workspace) -> String {
    let root = ws.root();
    let now = s.wait_for_stop().await;
    // Ended under this call (`terminate`, the time to live): why, not what the adapter's
    // last words made of it.
    if let Some(why) = s.ended() {
        return why;
    }
    match now {
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
            let frames = stack(s, thread).await.map(|(f, _)| f).unwrap_or_default();
            let mut out = vec![match (reason.as_str(), frames.first()) {
                ("pause", Some(top)) => {
                    format!("paused at {} (thread {thread})", render::place(top, root))
                }
                _ => format!("stopped: {reason} (thread {thread})"),
            }];
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
