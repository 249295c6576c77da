//! A `debug` call's arguments turned once into the operation they ask for, each with what it
//! needs checked: the sessions and the operations on a live session take only this.

use tether_tool::ToolError;

use crate::tool::{Action, DebugArgs};

/// One operation of the `debug` tool.
pub(crate) enum Op {
    Adapters,
    Status,
    /// Sets `file`'s breakpoints to `lines` (1-based; none clears them).
    Breakpoints {
        file: String,
        lines: Vec<usize>,
    },
    Start(Start),
    Output,
    Terminate,
    /// An operation on a live session.
    Live(Live),
}

/// How a session begins.
pub(crate) enum Start {
    Launch(Launch),
    Attach(Attach),
}

/// Starts `program` with `args` under `adapter` (or the one its kind decides).
pub(crate) struct Launch {
    pub program: String,
    pub args: Vec<String>,
    pub adapter: Option<String>,
}

/// Joins a program waiting for a debugger on `port`.
pub(crate) struct Attach {
    pub port: u16,
    pub adapter: Option<String>,
}

/// The DAP request that begins a session.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Begin {
    Launch,
    Attach,
}

impl Begin {
    pub(crate) fn command(self) -> &'static str {
        match self {
            Begin::Launch => "launch",
            Begin::Attach => "attach",
        }
    }
}

/// How a stopped program is made to run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
    Continue,
    StepOver,
    StepIn,
    StepOut,
}

impl Resume {
    /// The DAP request.
    pub(crate) fn command(self) -> &'static str {
        match self {
            Resume::Continue => "continue",
            Resume::StepOver => "next",
            Resume::StepIn => "stepIn",
            Resume::StepOut => "stepOut",
        }
    }
}

/// The operations on a live session, which run the program or read it while it is stopped;
/// `thread` is the one asked for, else the stopped one.
pub(crate) enum Live {
    Resume {
        how: Resume,
        thread: Option<i64>,
    },
    Pause {
        thread: Option<i64>,
    },
    Threads,
    Stack {
        thread: Option<i64>,
    },
    Scopes {
        frame_id: i64,
    },
    Variables {
        reference: i64,
    },
    Evaluate {
        expression: String,
        frame_id: Option<i64>,
    },
}

impl Op {
    /// The operation `args` ask for; an error names the argument it lacks.
    pub(crate) fn of(args: DebugArgs) -> Result<Op, ToolError> {
        let name = serde_json::to_value(args.action).unwrap_or_default();
        let name = name.as_str().unwrap_or("?").to_string();
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

    /// What a call that makes the program run waits for, said in its progress reports, so a
    /// client with a short timeout knows a `continue` that takes a while is alive.
    pub(crate) fn waits_for(&self) -> Option<String> {
        match self {
            Op::Start(Start::Launch(Launch { program, .. })) => {
                Some(format!("launching {program} and waiting for it to stop"))
            }
            Op::Start(Start::Attach(Attach { port, .. })) => Some(format!(
                "attaching to port {port} and waiting for the program to stop"
            )),
            Op::Live(Live::Resume {
                how: Resume::Continue,
                ..
            }) => Some("waiting for the program to stop".into()),
            Op::Live(Live::Resume { .. }) => Some("waiting for the step to end".into()),
            Op::Adapters
            | Op::Status
            | Op::Breakpoints { .. }
            | Op::Output
            | Op::Terminate
            | Op::Live(_) => None,
        }
    }
}
