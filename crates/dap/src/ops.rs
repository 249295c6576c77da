//! The operations on a live session: those that make the program run and wait for its next
//! stop, and those that read it while it is stopped.

use tether_tool::ToolError;

use crate::error::DapError;
use crate::op::{Live, Resume};
use crate::protocol as dap;
use crate::render::{self, MAX_CHILDREN, MAX_FRAMES};
use crate::session::{Minted, Session, Where};

/// Operations that need the program stopped (or that make it run).
pub(crate) async fn stopped_ops(
    s: &Session,
    ws: &tether_fs::Workspace,
    op: Live,
) -> Result<String, ToolError> {
    let root = ws.root();
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
    let running =
        || ToolError::invalid("the program is running: `pause` it first, or wait with `continue`");
    match op {
        Live::Resume { how, thread } => {
            if stopped_thread.is_none() && how == Resume::Continue {
                // Still running from before: wait again.
                return Ok(snapshot(s, ws).await);
            }
            let thread = thread.or(stopped_thread).ok_or_else(running)?;
            s.resume(how, thread).await?;
            Ok(snapshot(s, ws).await)
        }
        // Reaches a program a `continue` waits on (pause is not serialized behind it); both
        // then show the same stop.
        Live::Pause { thread } => match s.pause(thread).await? {
            false => Ok("already stopped".into()),
            true => Ok(snapshot(s, ws).await),
        },
        Live::Threads => {
            let answer = s.call::<dap::Threads>(dap::NoArguments {}).await?;
            let lines: Vec<String> = answer
                .threads
                .iter()
                .map(|t| format!("{}  {}", t.id, t.name))
                .collect();
            Ok(lines.join("\n"))
        }
        Live::Stack { thread } => {
            let thread = thread.or(stopped_thread).ok_or_else(running)?;
            let (frames, total) = stack(s, thread).await?;
            let mut lines: Vec<String> = frames.iter().map(|f| render::frame(f, root)).collect();
            if total > frames.len() {
                lines.push(format!(
                    "… {} more frames, cut at {MAX_FRAMES}",
                    total - frames.len()
                ));
            }
            Ok(lines.join("\n"))
        }
        Live::Scopes { frame_id: public } => {
            stopped_thread.ok_or_else(running)?;
            let frame = s.frame(public).ok_or_else(|| stale("frame id", public))?;
            let args = dap::ScopesArguments { frame_id: frame };
            let mut answer = s.call::<dap::Scopes>(args).await?;
            let scopes = &mut answer.scopes;
            s.mint(
                Minted::Reference,
                scopes.iter_mut().map(|x| &mut x.variables_reference),
            );
            let lines: Vec<String> = scopes
                .iter()
                .map(|x| {
                    let name = x.name.as_deref().unwrap_or("?");
                    format!("{name}  [reference {}]", x.variables_reference)
                })
                .collect();
            Ok(lines.join("\n"))
        }
        Live::Variables { reference: public } => {
            stopped_thread.ok_or_else(running)?;
            let reference = s
                .reference(public)
                .ok_or_else(|| stale("reference", public))?;
            let args = dap::VariablesArguments {
                variables_reference: reference,
            };
            let mut answer = s.call::<dap::Variables>(args).await?;
            let text = minted_variables(s, &mut answer.variables);
            Ok(if text.is_empty() {
                "(no variables)".into()
            } else {
                text
            })
        }
        Live::Evaluate {
            expression,
            frame_id,
        } => {
            let thread = stopped_thread.ok_or_else(running)?;
            let public = match frame_id {
                Some(f) => f,
                None => {
                    let (frames, _) = stack(s, thread).await?;
                    frames.first().map_or(0, |f| f.id)
                }
            };
            let frame = s.frame(public).ok_or_else(|| stale("frame id", public))?;
            // The catalog's context: debugpy's repl also runs statements, lldb's would take
            // lldb commands.
            let context = s.adapter.kind.evaluate_context.clone();
            let args = dap::EvaluateArguments {
                expression,
                frame_id: frame,
                context,
            };
            let mut answer = s.call::<dap::Evaluate>(args).await?;
            s.mint(Minted::Reference, [&mut answer.variables_reference]);
            let reference = answer.variables_reference;
            // A statement (`x = 1` in debugpy's repl) answers an empty result.
            let value = match answer.result.as_str() {
                "" => "(no value)".to_string(),
                result => render::value(result),
            };
            Ok(match reference {
                0 => value,
                r => format!("{value}  [reference {r}]"),
            })
        }
    }
}

/// A stale or unknown frame id or reference is refused with what to do instead.
fn stale(what: &str, id: i64) -> ToolError {
    ToolError::invalid(format!(
        "{what} {id} is stale or unknown: ids are valid only until the program runs again; \
         call `stack` (then `scopes`) for current ones"
    ))
}

/// The shown variables with their references handed out, rendered.
fn minted_variables(s: &Session, items: &mut [dap::Variable]) -> String {
    let shown = items.len().min(MAX_CHILDREN);
    s.mint(
        Minted::Reference,
        items[..shown]
            .iter_mut()
            .map(|v| &mut v.variables_reference),
    );
    render::variables(items)
}

/// The top frames of `thread`, capped, with how many there are in all; their ids are handed out.
async fn stack(s: &Session, thread: i64) -> Result<(Vec<dap::StackFrame>, usize), DapError> {
    let args = dap::StackTraceArguments {
        thread_id: thread,
        start_frame: 0,
        levels: MAX_FRAMES,
    };
    let mut answer = s.call::<dap::StackTrace>(args).await?;
    let mut frames = std::mem::take(&mut answer.stack_frames);
    let total = answer.total_frames.map_or(frames.len(), |t| t as usize);
    s.mint(Minted::Frame, frames.iter_mut().map(|f| &mut f.id));
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
            let line = top.line;
            if let Some(path) = top.path()
                && let Some(text) = render::source_line(ws, path, line).await
            {
                out.push(format!("  > {line}: {text}"));
            }
            let public = top.id;
            let frame = s.frame(public).unwrap_or(0);
            let scopes = s.call::<dap::Scopes>(dap::ScopesArguments { frame_id: frame });
            if let Ok(scopes) = scopes.await
                && let Some(locals) = scopes.scopes.first()
                && let Ok(mut vars) = s
                    .call::<dap::Variables>(dap::VariablesArguments {
                        variables_reference: locals.variables_reference,
                    })
                    .await
            {
                let text = minted_variables(s, &mut vars.variables);
                let name = locals.name.as_deref().unwrap_or("locals");
                out.push(format!("{name} (frame #{public}):"));
                out.push(text);
            }
            out.join("\n")
        }
    }
}
