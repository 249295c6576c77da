//! The one-shot front ends over a run, the same whether the run lives in this process or in
//! the warm host: `tether call TOOL ARGS` and `tether call --stdin`.

use serde_json::{Value, json};
use tether::{Run, Surface, ToolError};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::images::text_with_saved_images;
use crate::wire::{MAX_LINE, Printed, read_line_capped};

/// How long a run's capabilities get to stop politely when its front end ends.
pub const SHUTDOWN_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);

/// How long `call --stdin` waits at its end for late answers its results promised.
const SETTLE_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// `tether call TOOL ARGS` over `run`, which it ends: what to print and the exit code.
/// `gone` is cancelled when no one is left to print it for (the front end died).
pub async fn call_once(
    run: &Run,
    surface: Surface,
    tool: &str,
    args: &str,
    gone: CancellationToken,
) -> Printed {
    let args = match parse_args(run, tool, args) {
        Ok(args) => args,
        Err(usage) => {
            run.shutdown(SHUTDOWN_BUDGET).await;
            return Printed {
                stderr: format!("tether: {usage}\n"),
                code: 2,
                ..Printed::default()
            };
        }
    };
    let result = run.runtime().call(surface, tool, args, gone).await;
    run.shutdown(SHUTDOWN_BUDGET).await;
    match result {
        Ok(out) => {
            let root = run.runtime().workspace().root().to_path_buf();
            let mut printed = Printed {
                stdout: format!("{}\n", text_with_saved_images(&out, &root).0),
                ..Printed::default()
            };
            let pending = run.runtime().pending_staged();
            if !pending.is_empty() {
                printed.stderr = format!(
                    "tether: note: this one-call run ends now, so staged edit {} is dropped; \
                     stage and resolve in one run with `tether call --stdin` or `tether serve`\n",
                    pending.join(", ")
                );
            }
            printed
        }
        Err(e) if e.is_usage() => Printed {
            stderr: format!("tether: {e}\n"),
            code: 2,
            ..Printed::default()
        },
        Err(e) => Printed {
            stdout: format!("error: {e}\n"),
            code: 1,
            ..Printed::default()
        },
    }
}

/// Parses a call's JSON arguments; when they are not a JSON object, the usage error has the
/// same form as any other bad argument, quoting the tool's fields.
fn parse_args(run: &Run, tool: &str, text: &str) -> Result<Value, ToolError> {
    let value: Result<Value, _> = serde_json::from_str(text);
    match value {
        Ok(v @ Value::Object(_)) => Ok(v),
        other => {
            let detail = match other {
                Err(e) => format!("the arguments are not valid JSON ({e})"),
                Ok(_) => "the arguments must be a JSON object".to_string(),
            };
            let expected = run
                .runtime()
                .tools(Surface::Agent)
                .into_iter()
                .find(|s| s.name == tool)
                .map(|s| tether_tool::describe_schema(&s.input_schema))
                .unwrap_or_else(|| "a JSON object of the tool's arguments".into());
            Err(ToolError::BadArgs {
                tool: tool.to_string(),
                detail,
                expected,
            })
        }
    }
}

/// `tether call --stdin` over `run`, which it ends: one JSON call per input line, one JSON
/// result per output line, then the notices still owed. Returns what goes to stderr and the
/// exit code (2 when a line was misused, 1 when a call failed).
pub async fn call_lines(
    run: &Run,
    surface: Surface,
    input: impl AsyncBufRead + Unpin,
    mut output: impl AsyncWrite + Unpin,
    gone: CancellationToken,
) -> Printed {
    let mut worst = 0u8;
    let mut input = input;
    let mut n = 0;
    loop {
        let next = tokio::select! {
            next = read_line_capped(&mut input, MAX_LINE) => next,
            _ = gone.cancelled() => break,
        };
        let line = match next {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                // What is left of an overlong line cannot be told from the next call: the
                // input ends here, said on a result line of its own.
                worst = 2;
                let said = format!(
                    "error: line {} is not read: {e}; no later line was read",
                    n + 1
                );
                let _ = say(
                    &mut output,
                    &json!({"tool": "", "ok": false, "usage_error": true, "text": said}),
                )
                .await;
                break;
            }
        };
        n += 1;
        if line.trim().is_empty() {
            continue;
        }
        let (tool, result) = one_line(run, surface, &line, n, gone.clone()).await;
        if gone.is_cancelled() {
            break;
        }
        let record = match result {
            Ok(out) => {
                let root = run.runtime().workspace().root();
                let (text, saved) = text_with_saved_images(&out, root);
                match saved.is_empty() {
                    true => json!({"tool": tool, "ok": true, "text": text}),
                    false => json!({"tool": tool, "ok": true, "text": text, "images": saved}),
                }
            }
            Err(e) => {
                worst = worst.max(if e.is_usage() { 2 } else { 1 });
                json!({"tool": tool, "ok": false, "usage_error": e.is_usage(), "text": format!("error: {e}")})
            }
        };
        if say(&mut output, &record).await.is_err() {
            break;
        }
    }
    if gone.is_cancelled() {
        run.shutdown(SHUTDOWN_BUDGET).await;
        return Printed::default();
    }
    // A result may have promised a late answer as a notice on a later result; there is none
    // after the last line, so the run waits for what is owed (bounded) and prints it.
    run.settle(SETTLE_BUDGET).await;
    let (notices, dropped) = run.runtime().notices().drain();
    if !notices.is_empty() {
        let mut lines: Vec<String> = notices.iter().map(|n| n.line()).collect();
        if dropped > 0 {
            lines.push(format!("({dropped} older notices were dropped)"));
        }
        let _ = say(&mut output, &json!({"notices": lines.join("\n")})).await;
    }
    run.shutdown(SHUTDOWN_BUDGET).await;
    let mut printed = Printed {
        code: worst,
        ..Printed::default()
    };
    let pending = run.runtime().pending_staged();
    if !pending.is_empty() {
        printed.stderr = format!(
            "tether: note: staged edit {} was never resolved and is dropped as this run ends; \
             add a line such as {{\"tool\": \"resolve\", \"args\": {{\"edit_id\": \"{}\", \
             \"action\": \"accept\"}}}} to the same input\n",
            pending.join(", "),
            pending[0]
        );
    }
    printed
}

/// Runs one input line's call; the tool's name (empty when the line names none) and result.
async fn one_line(
    run: &Run,
    surface: Surface,
    line: &str,
    n: usize,
    cancel: CancellationToken,
) -> (String, Result<tether::ToolOutput, ToolError>) {
    let bad = |detail: String| ToolError::BadArgs {
        tool: "call --stdin".into(),
        detail,
        expected: "{\"tool\": string (required), \"args\": object}".into(),
    };
    match serde_json::from_str::<Value>(line) {
        Ok(call) => match (call["tool"].as_str(), call.get("args")) {
            (Some(tool), args) => {
                let args = args.cloned().unwrap_or(json!({}));
                let r = run.runtime().call(surface, tool, args, cancel).await;
                (tool.to_string(), r)
            }
            (None, _) => (
                String::new(),
                Err(bad(format!("line {n} has no \"tool\" string"))),
            ),
        },
        Err(e) => (
            String::new(),
            Err(bad(format!("line {n} is not JSON ({e})"))),
        ),
    }
}

async fn say(output: &mut (impl AsyncWrite + Unpin), record: &Value) -> std::io::Result<()> {
    let mut line = record.to_string();
    line.push('\n');
    output.write_all(line.as_bytes()).await?;
    output.flush().await
}
