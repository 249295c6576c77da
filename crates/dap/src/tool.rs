//! The `debug` tool: one session per conversation, driven by SPEC 5's operations.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput};

use crate::op::{Attach, Launch, Live, Op, Resume, Start};
use crate::sessions::Sessions;

/// What the tool can do, as SPEC 5 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

impl Action {
    /// The name the model gives it, as its arguments spell it.
    pub fn name(self) -> String {
        let name = serde_json::to_value(self).unwrap_or_default();
        name.as_str().unwrap_or("?").to_string()
    }
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

/// The `debug` tool.
pub struct DebugTool {
    pub(crate) sessions: Arc<Sessions>,
}

impl Tool for DebugTool {
    type Args = DebugArgs;

    fn name(&self) -> &'static str {
        "debug"
    }

    fn description(&self) -> String {
        format!(
            "Drive a debugger ({}). Set `breakpoints` (file, lines), then \
             `launch` (program, args): it runs to the first stop and shows the reason, the top \
             frames, the source line and the locals. Then `continue`, `step_over`, `step_in`, \
             `step_out`, `stack`, `scopes` (frame_id), `variables` (reference), `evaluate` \
             (expression, frame_id), `threads`, `output`, `pause`, `terminate`. `attach` (port, adapter) joins a program \
             waiting on a port. Frame ids and \
             references are valid until the program runs again. `adapters` says what can be \
             debugged here.",
            self.sessions.catalog.summaries()
        )
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

    fn preview(&self, args: &DebugArgs) -> Preview {
        let mut summary = format!("debug {}", args.action.name());
        if let Some(program) = &args.program {
            let given = args.args.as_deref().unwrap_or_default().join(" ");
            summary = format!("{summary}: run {program} {given}")
                .trim_end()
                .to_string();
        }
        let paths = args.program.iter().chain(&args.file).cloned().collect();
        Preview::new(summary, paths)
    }

    async fn call(&self, cx: &CallCx, args: DebugArgs) -> Result<ToolOutput, ToolError> {
        let conversation = cx
            .conversation()
            .unwrap_or(&self.sessions.fallback)
            .to_string();
        let root = cx.workspace().root().to_path_buf();
        let op = op_of(args)?;
        if let Op::Adapters = op {
            let report = crate::locate::report(&self.sessions.catalog, &root).await;
            return Ok(ToolOutput::text(report));
        }
        let work = match op.waits_for() {
            Some(what) => {
                cx.progress_while(self.sessions.act(cx, &conversation, &root, op), |t| {
                    format!("{what} ({} s)", t.as_secs())
                })
                .await
            }
            None => self.sessions.act(cx, &conversation, &root, op).await,
        };
        Ok(ToolOutput::text(work?))
    }
}

/// The operation `args` ask for; an error names the argument it lacks.
fn op_of(args: DebugArgs) -> Result<Op, ToolError> {
    let name = args.action.name();
    let need = |what: &str| ToolError::invalid(format!("`{name}` needs `{what}`"));
    let thread = args.thread_id;
    let resume = |how| Ok(Op::Live(Live::Resume { how, thread }));
    match args.action {
        Action::Adapters => Ok(Op::Adapters),
        Action::Status => Ok(Op::Status),
        Action::Breakpoints => Ok(Op::Breakpoints {
            file: args.file.ok_or_else(|| need("file"))?,
            lines: args.lines.unwrap_or_default(),
        }),
        Action::Launch => Ok(Op::Start(Start::Launch(Launch {
            program: args.program.ok_or_else(|| need("program"))?,
            args: args.args.unwrap_or_default(),
            adapter: args.adapter,
        }))),
        Action::Attach => Ok(Op::Start(Start::Attach(Attach {
            port: args.port.ok_or_else(|| need("port"))?,
            adapter: args.adapter,
        }))),
        Action::Output => Ok(Op::Output),
        Action::Terminate => Ok(Op::Terminate),
        Action::Continue => resume(Resume::Continue),
        Action::StepOver => resume(Resume::StepOver),
        Action::StepIn => resume(Resume::StepIn),
        Action::StepOut => resume(Resume::StepOut),
        Action::Pause => Ok(Op::Live(Live::Pause { thread })),
        Action::Threads => Ok(Op::Live(Live::Threads)),
        Action::Stack => Ok(Op::Live(Live::Stack { thread })),
        Action::Scopes => Ok(Op::Live(Live::Scopes {
            frame_id: args.frame_id.ok_or_else(|| need("frame_id"))?,
        })),
        Action::Variables => Ok(Op::Live(Live::Variables {
            reference: args.reference.ok_or_else(|| need("reference"))?,
        })),
        Action::Evaluate => Ok(Op::Live(Live::Evaluate {
            expression: args.expression.ok_or_else(|| need("expression"))?,
            frame_id: args.frame_id,
        })),
    }
}
