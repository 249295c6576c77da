//! The `debug` tool's operations, each with what it needs (the tool turns its arguments into one,
//! checked, once): the sessions and the operations on a live session take only these.

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

/// How a stopped program is made to run (each a DAP request of its own: `continue`, `next`,
/// `stepIn`, `stepOut`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resume {
    Continue,
    StepOver,
    StepIn,
    StepOut,
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
