//! The crate's errors: [`DapError`] for a session and the adapter it speaks to, and
//! [`LocateError`] for why an adapter cannot be used for a program here. Each Display is the
//! sentence the model reads, so the wording is part of the behaviour.

use std::time::Duration;

use tether_proc::ProcError;
use tether_rpc::RpcError;
use tether_tool::ToolError;

/// What went wrong starting, or speaking to, a debug adapter.
#[derive(Debug, thiserror::Error)]
pub enum DapError {
    /// The request's arguments did not become JSON.
    #[error("`{command}` not sent: its arguments are not JSON ({cause})")]
    Arguments {
        command: &'static str,
        #[source]
        cause: serde_json::Error,
    },
    /// The request could not be written: the connection had ended, or its write failed.
    #[error("`{command}` not sent: {}", unsent(.cause))]
    NotSent {
        command: &'static str,
        #[source]
        cause: RpcError,
    },
    /// The adapter answered with a failure: its message, and the detail its body gave.
    #[error("`{command}` failed: {message}{}", then(.detail))]
    Failed {
        command: &'static str,
        message: String,
        detail: Option<String>,
    },
    /// No answer came: the deadline passed, the request was cancelled, or the adapter went away.
    #[error("{}", unanswered(.cause))]
    Request {
        command: &'static str,
        #[source]
        cause: RpcError,
    },
    /// The adapter's process did not start.
    #[error("{adapter}: {cause}")]
    Spawn {
        adapter: String,
        #[source]
        cause: ProcError,
    },
    /// The adapter started without the pipes it is spoken to over.
    #[error(
        "{adapter}: the adapter started without pipes to talk to it; check that `{command}` \
         runs as a debug adapter"
    )]
    NoPipes { adapter: String, command: String },
    /// A TCP adapter did not say where to connect in time.
    #[error("printed no address to connect to within {} ms", .after.as_millis())]
    NoAddress { after: Duration },
    /// The address took no connection in time.
    #[error("{address} did not accept a connection in time")]
    ConnectTimeout { address: String },
    /// The address a TCP adapter announced refused the connection.
    #[error("cannot connect to {address}: {cause}")]
    Connect {
        address: String,
        #[source]
        cause: std::io::Error,
    },
    /// Nothing listens on the port asked to attach to.
    #[error("nothing to attach to at {address}: {cause}")]
    NothingToAttach {
        address: String,
        #[source]
        cause: std::io::Error,
    },
    /// Starting a session failed: which adapter, with the last lines of its stderr when any.
    #[error("{}", tether_proc::with_stderr_tail(&format!("{adapter}: {cause}"), .stderr))]
    Start {
        adapter: String,
        stderr: Vec<String>,
        #[source]
        cause: Box<DapError>,
    },
    /// The adapter never said it takes configuration.
    #[error("{adapter} sent no `initialized` within {} ms", .after.as_millis())]
    NotInitialized { adapter: String, after: Duration },
    /// A pause with no thread named found none to pause.
    #[error("the adapter lists no threads")]
    NoThreads,
    /// The adapter is gone, which is why the request failed.
    #[error("the {adapter} adapter ended ({why}): {cause}")]
    Ended {
        adapter: String,
        why: String,
        #[source]
        cause: Box<DapError>,
    },
}

/// Why a request was not sent, in the words of the failure itself.
fn unsent(cause: &RpcError) -> String {
    match cause {
        RpcError::Write { error, .. } => error.clone(),
        RpcError::Closed { why, .. } => why.clone(),
        other => other.to_string(),
    }
}

/// `: detail`, or nothing when there is none.
fn then(detail: &Option<String>) -> String {
    detail.as_ref().map_or(String::new(), |d| format!(": {d}"))
}

/// Why a request sent got no answer's body.
fn unanswered(cause: &RpcError) -> String {
    match cause {
        RpcError::Closed { why, .. } => format!("the adapter went away: {why}"),
        other => other.to_string(),
    }
}

/// A session's failure is the tool's failure, not the caller's mistake.
impl From<DapError> for ToolError {
    fn from(e: DapError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// Why an adapter cannot debug a program here, or attach to one: what is missing and what to
/// do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// The catalog has no such adapter.
    #[error("no adapter `{id}`: known are {}", .known.join(", "))]
    Unknown { id: String, known: Vec<String> },
    /// A user's entry gave no command.
    #[error("[debug.adapters.{id}] needs a `command` (the adapter and its arguments)")]
    NoCommand { id: String },
    /// The command names `{binary}` with no binaries to fill it.
    #[error("[debug.adapters.{id}]: `command` names {{binary}} but no `binaries` are listed")]
    NoBinaries { id: String },
    /// A user's entry gave no markers for its projects.
    #[error("[debug.adapters.{id}] needs `markers` (files that mark its projects)")]
    NoMarkers { id: String },
    /// No marker lies between the program and the workspace root.
    #[error("{id}: no {} from {from}", .markers.join(" or "))]
    NoProject {
        id: String,
        markers: Vec<String>,
        /// Where the search began, as said (`src up to the workspace root`).
        from: String,
    },
    /// No interpreter for an adapter that runs under Python.
    #[error("{id}: no python3 on PATH")]
    NoPython { id: String },
    /// The interpreter lacks the adapter's module.
    #[error(
        "{id}: {python} ({why}) has no {module}: install it there (`{python} -m pip install \
         {module}`), or give tether its own copy (`tether install {id}`)"
    )]
    NoModule {
        id: String,
        python: String,
        /// Why that interpreter was chosen.
        why: &'static str,
        module: String,
    },
    /// None of the adapter's binaries is on PATH; `marked` when a project marker was found.
    #[error(
        "{id}: {}none of {names} is on PATH",
        if *.marked { "a project marker is there, but " } else { "" }
    )]
    NotOnPath {
        id: String,
        names: String,
        marked: bool,
    },
    /// The adapter has no `launch` template.
    #[error(
        "{id}: no launch template: `[debug.adapters.{id}]` needs a `launch` table, the \
         arguments of DAP's `launch` request with {{program}}, {{args}} and {{cwd}} where the \
         adapter takes them (docs/architecture.md: \"How to add a debug adapter\")"
    )]
    NoLaunch { id: String },
    /// The adapter has no `attach` template.
    #[error("{id}: no `attach` table")]
    NoAttach { id: String },
    /// A template names a value this launch or attach does not have.
    #[error("{id} {template}: {cause}")]
    Template {
        id: String,
        /// `launch` or `attach`.
        template: &'static str,
        #[source]
        cause: NoValue,
    },
    /// No adapter named, and the workspace does not decide one.
    #[error(
        "cannot tell which adapter to attach with: name one with `adapter` (the program must \
         wait on the port: {howto})"
    )]
    WhichAttacher { howto: String },
    /// The adapter named cannot attach by port.
    #[error(
        "attach by port is built for {}, not `{id}`; the program must wait on the port: {howto}",
        crate::locate::listed(.able)
    )]
    CannotAttach {
        id: String,
        able: Vec<String>,
        howto: String,
    },
}

/// A placeholder with no value where its template is filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{{{0}}} has no value here")]
pub struct NoValue(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_the_sentences_the_model_was_shown() {
        let unsent = DapError::NotSent {
            command: "next",
            cause: RpcError::Write {
                method: "next".into(),
                error: "Broken pipe (os error 32)".into(),
            },
        };
        assert_eq!(
            unsent.to_string(),
            "`next` not sent: Broken pipe (os error 32)"
        );
        let ended = DapError::Ended {
            adapter: "lldb".into(),
            why: "its output ended".into(),
            cause: Box::new(unsent),
        };
        assert_eq!(
            ended.to_string(),
            "the lldb adapter ended (its output ended): `next` not sent: Broken pipe (os error 32)"
        );
        let start = |stderr: &[&str]| DapError::Start {
            adapter: "delve".into(),
            stderr: stderr.iter().map(|l| l.to_string()).collect(),
            cause: Box::new(DapError::NoAddress {
                after: Duration::from_secs(2),
            }),
        };
        assert_eq!(
            start(&[]).to_string(),
            "delve: printed no address to connect to within 2000 ms"
        );
        assert_eq!(
            start(&["", "bad flag"]).to_string(),
            "delve: printed no address to connect to within 2000 ms; its stderr ended with:\nbad \
             flag"
        );
        let binaries = LocateError::NoBinaries { id: "mine".into() };
        assert_eq!(
            binaries.to_string(),
            "[debug.adapters.mine]: `command` names {binary} but no `binaries` are listed"
        );
        let template = LocateError::Template {
            id: "mine".into(),
            template: "attach",
            cause: NoValue("program".into()),
        };
        assert_eq!(
            template.to_string(),
            "mine attach: {program} has no value here"
        );
        let unknown = LocateError::Unknown {
            id: "gdb".into(),
            known: vec!["debugpy".into(), "lldb".into()],
        };
        assert_eq!(
            unknown.to_string(),
            "no adapter `gdb`: known are debugpy, lldb"
        );
    }
}
