//! The Debug Adapter Protocol messages tether sends and reads, as serde structs. What we send
//! omits unset fields (debugpy refuses `null`s); what we read is lenient, as adapters are: a
//! missing field takes its default, and a body that does not fit at all reads as empty.

use std::path::Path;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request tether sends, naming its command, its arguments and its answer's body together,
/// so a command cannot be sent with another's arguments or read as another's answer.
pub trait Request {
    /// The command, as the protocol names it.
    const COMMAND: &'static str;
    /// What it is sent with.
    type Arguments: Serialize;
    /// Its answer's body, read leniently (see [`read`]): [`IgnoredAny`] when tether reads none.
    type Response: DeserializeOwned + Default;
}

/// Declares each request as a type of its own, implementing [`Request`].
macro_rules! requests {
    ($($(#[$doc:meta])* $name:ident = $command:literal ($arguments:ty) -> $response:ty;)*) => {
        $(
            $(#[$doc])*
            pub enum $name {}

            impl Request for $name {
                const COMMAND: &'static str = $command;
                type Arguments = $arguments;
                type Response = $response;
            }
        )*
    };
}

requests! {
    /// Opens every session.
    Initialize = "initialize" (InitializeArguments) -> Capabilities;
    /// Starts the program, from the adapter's `launch` template.
    Launch = "launch" (Value) -> IgnoredAny;
    /// Joins a program waiting on a port, from the adapter's `attach` template.
    Attach = "attach" (Value) -> IgnoredAny;
    /// Sets one file's breakpoints.
    SetBreakpoints = "setBreakpoints" (SetBreakpointsArguments) -> SetBreakpointsResponse;
    /// Sets the functions the catalog breaks in.
    SetFunctionBreakpoints = "setFunctionBreakpoints" (SetFunctionBreakpointsArguments)
        -> IgnoredAny;
    /// Turns on the exception filters.
    SetExceptionBreakpoints = "setExceptionBreakpoints" (SetExceptionBreakpointsArguments)
        -> IgnoredAny;
    /// Ends configuration: the program may run.
    ConfigurationDone = "configurationDone" (NoArguments) -> IgnoredAny;
    /// Runs to the next stop.
    Continue = "continue" (ThreadArguments) -> IgnoredAny;
    /// Steps over a line.
    Next = "next" (ThreadArguments) -> IgnoredAny;
    /// Steps into a call.
    StepIn = "stepIn" (ThreadArguments) -> IgnoredAny;
    /// Runs until the function returns.
    StepOut = "stepOut" (ThreadArguments) -> IgnoredAny;
    /// Stops a thread.
    Pause = "pause" (ThreadArguments) -> IgnoredAny;
    /// Lists the threads.
    Threads = "threads" (NoArguments) -> ThreadsResponse;
    /// A thread's frames.
    StackTrace = "stackTrace" (StackTraceArguments) -> StackTraceResponse;
    /// A frame's scopes.
    Scopes = "scopes" (ScopesArguments) -> ScopesResponse;
    /// A reference's children.
    Variables = "variables" (VariablesArguments) -> VariablesResponse;
    /// Evaluates an expression in a frame.
    Evaluate = "evaluate" (EvaluateArguments) -> EvaluateResponse;
    /// Ends the session.
    Disconnect = "disconnect" (DisconnectArguments) -> IgnoredAny;
}

/// Reads an answer's or event's body; one that does not fit reads as the empty default.
pub fn read<T: DeserializeOwned + Default>(body: Value) -> T {
    serde_json::from_value(body).unwrap_or_else(|e| {
        tracing::debug!("a DAP body that does not fit: {e}");
        T::default()
    })
}

/// `initialize`'s arguments: who we are and how we count.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeArguments {
    #[serde(rename = "clientID")]
    pub client_id: &'static str,
    pub client_name: &'static str,
    #[serde(rename = "adapterID")]
    pub adapter_id: String,
    pub lines_start_at1: bool,
    pub columns_start_at1: bool,
    pub path_format: &'static str,
    pub supports_variable_type: bool,
    pub supports_run_in_terminal_request: bool,
}

/// What the adapter says it can do, of what tether uses.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Capabilities {
    /// Whether it takes `cancel` for a request we gave up on.
    pub supports_cancel_request: bool,
    /// The exception filters it offers.
    pub exception_breakpoint_filters: Vec<ExceptionFilter>,
}

/// One exception filter an adapter offers.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ExceptionFilter {
    /// Its id, as `setExceptionBreakpoints` names it.
    pub filter: String,
}

/// A source file, by path.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Source {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `setBreakpoints`'s arguments: one file's lines.
#[derive(Serialize)]
pub struct SetBreakpointsArguments {
    pub source: Source,
    pub breakpoints: Vec<SourceBreakpoint>,
}

impl SetBreakpointsArguments {
    /// The breakpoints of `file` at `lines` (1-based).
    pub fn new(file: &Path, lines: &[usize]) -> Self {
        SetBreakpointsArguments {
            source: Source {
                path: Some(file.to_string_lossy().into_owned()),
            },
            breakpoints: lines
                .iter()
                .map(|&line| SourceBreakpoint { line })
                .collect(),
        }
    }
}

/// One line to break at.
#[derive(Serialize)]
pub struct SourceBreakpoint {
    pub line: usize,
}

/// `setBreakpoints`' answer: one entry per line asked, in order.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SetBreakpointsResponse {
    pub breakpoints: Vec<Breakpoint>,
}

/// What the adapter made of one breakpoint.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Breakpoint {
    pub verified: bool,
    /// Where it was placed, when that differs from the line asked.
    pub line: Option<u64>,
    /// Why it is not verified.
    pub message: Option<String>,
}

/// `setFunctionBreakpoints`' arguments.
#[derive(Serialize)]
pub struct SetFunctionBreakpointsArguments {
    pub breakpoints: Vec<FunctionBreakpoint>,
}

/// A function to break in, by name.
#[derive(Serialize)]
pub struct FunctionBreakpoint {
    pub name: String,
}

/// `setExceptionBreakpoints`' arguments.
#[derive(Serialize)]
pub struct SetExceptionBreakpointsArguments {
    pub filters: Vec<String>,
}

/// Arguments for a request that takes none (`threads`, `configurationDone`): `{}`.
#[derive(Serialize)]
pub struct NoArguments {}

/// Arguments naming a thread: `continue`, `next`, `stepIn`, `stepOut`, `pause`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadArguments {
    pub thread_id: i64,
}

/// `disconnect`'s arguments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectArguments {
    pub terminate_debuggee: bool,
}

/// `threads`' answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ThreadsResponse {
    pub threads: Vec<Thread>,
}

/// One thread of the program.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Thread {
    pub id: i64,
    pub name: String,
}

/// `stackTrace`'s arguments: the top `levels` frames of a thread.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceArguments {
    pub thread_id: i64,
    pub start_frame: usize,
    pub levels: usize,
}

/// `stackTrace`'s answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StackTraceResponse {
    pub stack_frames: Vec<StackFrame>,
    /// How many frames there are in all, when the adapter says.
    pub total_frames: Option<u64>,
}

/// One frame of a stack.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct StackFrame {
    pub id: i64,
    pub name: Option<String>,
    pub source: Option<Source>,
    pub line: u64,
}

impl StackFrame {
    /// The frame's file, when it has one.
    pub fn path(&self) -> Option<&str> {
        self.source.as_ref()?.path.as_deref()
    }
}

/// `scopes`' arguments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopesArguments {
    pub frame_id: i64,
}

/// `scopes`' answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ScopesResponse {
    pub scopes: Vec<Scope>,
}

/// One scope of a frame (locals, globals, registers).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Scope {
    pub name: Option<String>,
    pub variables_reference: i64,
}

/// `variables`' arguments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariablesArguments {
    pub variables_reference: i64,
}

/// `variables`' answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct VariablesResponse {
    pub variables: Vec<Variable>,
}

/// One variable, with the reference that lists its children (0: none).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Variable {
    pub name: Option<String>,
    pub value: String,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub variables_reference: i64,
}

/// `evaluate`'s arguments.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArguments {
    pub expression: String,
    pub frame_id: i64,
    pub context: String,
}

/// `evaluate`'s answer.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EvaluateResponse {
    pub result: String,
    pub variables_reference: i64,
}

/// The events a session acts on.
#[derive(Debug)]
pub enum Event {
    /// The adapter takes configuration (breakpoints) now.
    Initialized,
    /// The program stopped.
    Stopped(StoppedEvent),
    /// The program runs again.
    Continued,
    /// The program ended, with its exit code.
    Exited(ExitedEvent),
    /// The session ended.
    Terminated,
    /// The program or the adapter wrote something.
    Output(OutputEvent),
    /// An event tether does not act on.
    Other,
}

impl Event {
    /// The event named `name` with its `body`.
    pub fn read(name: &str, body: Value) -> Event {
        match name {
            "initialized" => Event::Initialized,
            "stopped" => Event::Stopped(read(body)),
            "continued" => Event::Continued,
            "exited" => Event::Exited(read(body)),
            "terminated" => Event::Terminated,
            "output" => Event::Output(read(body)),
            _ => Event::Other,
        }
    }
}

/// Why and where the program stopped.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StoppedEvent {
    pub reason: Option<String>,
    /// More about the reason (an exception's message).
    pub text: Option<String>,
    pub thread_id: Option<i64>,
}

/// How the program ended.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ExitedEvent {
    pub exit_code: Option<i64>,
}

/// Text the program or adapter wrote, and where (`stdout`, `stderr`, `console`, ...).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct OutputEvent {
    pub category: Option<String>,
    pub output: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn what_we_send_is_named_as_the_protocol_names_it_and_omits_nothing_set() {
        let init = InitializeArguments {
            client_id: "tether",
            client_name: "tether",
            adapter_id: "lldb".into(),
            lines_start_at1: true,
            columns_start_at1: true,
            path_format: "path",
            supports_variable_type: true,
            supports_run_in_terminal_request: false,
        };
        let sent = serde_json::to_value(init).unwrap_or_default();
        assert_eq!(sent["clientID"], "tether");
        assert_eq!(sent["adapterID"], "lldb");
        assert_eq!(sent["linesStartAt1"], true);
        assert_eq!(sent["supportsRunInTerminalRequest"], false);
        let breakpoints = SetBreakpointsArguments::new(Path::new("/w/a.py"), &[3, 9]);
        assert_eq!(
            serde_json::to_value(breakpoints).unwrap_or_default(),
            json!({"source": {"path": "/w/a.py"}, "breakpoints": [{"line": 3}, {"line": 9}]})
        );
        assert_eq!(
            serde_json::to_value(NoArguments {}).unwrap_or_default(),
            json!({})
        );
        let resumes = [
            Continue::COMMAND,
            Next::COMMAND,
            StepIn::COMMAND,
            StepOut::COMMAND,
        ];
        assert_eq!(resumes, ["continue", "next", "stepIn", "stepOut"]);
    }

    #[test]
    fn what_we_read_is_lenient() {
        let frames: StackTraceResponse =
            read(json!({"stackFrames": [{"id": 4, "line": 2, "extra": true}, {"name": "f"}]}));
        assert_eq!(frames.total_frames, None);
        assert_eq!(frames.stack_frames[0].id, 4);
        assert_eq!(frames.stack_frames[0].path(), None);
        assert_eq!(frames.stack_frames[1].name.as_deref(), Some("f"));
        let broken: ThreadsResponse = read(json!({"threads": "none"}));
        assert!(broken.threads.is_empty());
        // An answer tether does not read is taken whatever it holds.
        let _: IgnoredAny = read(json!({"allThreadsContinued": true}));
        let none: EvaluateResponse = read(Value::Null);
        assert_eq!((none.result.as_str(), none.variables_reference), ("", 0));
        let Event::Stopped(stopped) = Event::read(
            "stopped",
            json!({"reason": "exception", "text": "boom", "threadId": 1}),
        ) else {
            panic!("not a stop")
        };
        assert_eq!(stopped.thread_id, Some(1));
        assert!(matches!(Event::read("module", json!({})), Event::Other));
    }
}
