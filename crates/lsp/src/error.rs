//! Why a language-server step did not happen, with its cause kept whole: a request's engine
//! error, the OS error of a spawn or a watch, the JSON error of a message that cannot be
//! written. Each message still reads as one sentence a model can act on.

use std::path::PathBuf;
use std::sync::Arc;

use tether_proc::ProcError;
use tether_rpc::RpcError;

use crate::server::RequestError;

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.as_ref().map(|c| c as _)
    }
}

/// Why a language-server step did not happen. Cloned to every call that waited on one start.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    /// A request that got no answer (the server's error, no answer in time, its end).
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A request of tether's own (not a model's) that got no answer in time or at all.
    #[error(transparent)]
    Peer(RpcError),
    /// A notification that could not be sent: the connection is gone.
    #[error("{server}: {cause}")]
    Unsent {
        /// The server's id.
        server: String,
        /// The engine's error.
        #[source]
        cause: RpcError,
    },
    /// A message whose parameters cannot be written as JSON.
    #[error("cannot write {method}'s params: {cause}")]
    Params {
        /// The LSP method.
        method: String,
        /// What serde said.
        #[source]
        cause: Arc<serde_json::Error>,
    },
    /// A path that makes no valid URI.
    #[error("{} makes no valid URI ({text}): {reason}", path.display())]
    Uri {
        /// The path.
        path: PathBuf,
        /// Our encoder's text for it.
        text: String,
        /// What the URI parser said.
        reason: String,
    },
    /// The server's program could not be started.
    #[error(transparent)]
    Spawn(Arc<ProcError>),
    /// A project checker (`cargo check`) that could not run or did not finish.
    #[error("{}", checker_text(.0))]
    Checker(Arc<ProcError>),
    /// A step of one server's that failed, with the server's id before it.
    #[error("{server}: {cause}")]
    Of {
        /// The server's id.
        server: String,
        /// What failed.
        #[source]
        cause: Box<LspError>,
    },
    /// The server did not complete its handshake; the text quotes its last words.
    #[error("{text}")]
    Handshake {
        /// The engine's error for `initialize`.
        #[source]
        cause: RpcError,
        /// The server's id and the error, with the tail of its stderr.
        text: String,
    },
    /// The OS refused what the watch for outside edits needs (inotify, a pipe, a thread).
    #[error("{what}: {cause}")]
    Watch {
        /// Which resource.
        what: &'static str,
        /// The OS error.
        #[source]
        cause: Arc<std::io::Error>,
    },
    /// The watch for outside edits could not start.
    #[error("cannot watch for outside edits: {0}")]
    Unwatched(Box<LspError>),
    /// The OS refused to watch a folder.
    #[error("{0}")]
    Folder(crate::inotify::Refused),
    /// No server in the catalog can serve the language here; a reason per candidate.
    #[error("no language server can serve {lang} here:\n- {}", reasons.join("\n- "))]
    Unavailable {
        /// The language.
        lang: String,
        /// Why each candidate cannot.
        reasons: Vec<String>,
    },
    /// The server ended; its state says how (the exit, its last words).
    #[error("{server} is {state}")]
    Ended {
        /// The server's id.
        server: String,
        /// Its state now, as `lsp status` says it.
        state: String,
    },
    /// The server did not answer within the wait; the text says how long, and what the
    /// server was doing meanwhile.
    #[error("{0}")]
    NoAnswer(String),
    /// tether declines to go on, and says why and what to do (a server that crashed a moment
    /// ago, a workspace that configures what an untrusted run may not use).
    #[error("{0}")]
    Refused(String),
    /// The server answered, but not with an answer tether can use (an edit outside the text,
    /// diagnostics not published in time).
    #[error("{0}")]
    Unusable(String),
}

/// A checker's failure, with what to change when it ran out of time.
fn checker_text(e: &ProcError) -> String {
    match e {
        ProcError::Deadline { .. } => {
            format!("{e}; its process group was killed (raise [lsp] check_timeout_s)")
        }
        _ => e.to_string(),
    }
}

impl LspError {
    /// tether's own refusal, with what to do.
    pub fn refused(text: impl Into<String>) -> Self {
        LspError::Refused(text.into())
    }

    /// An answer tether cannot use, said with why.
    pub fn unusable(text: impl Into<String>) -> Self {
        LspError::Unusable(text.into())
    }

    /// The error with the server's id before it, for a step that did not say whose it was.
    pub fn of_server(self, server: &str) -> Self {
        LspError::Of {
            server: server.to_string(),
            cause: Box::new(self),
        }
    }
}

impl From<LspError> for tether_tool::ToolError {
    fn from(e: LspError) -> Self {
        tether_tool::ToolError::failed(e.to_string())
    }
}

impl From<RequestError> for tether_tool::ToolError {
    fn from(e: RequestError) -> Self {
        tether_tool::ToolError::failed(e.to_string())
    }
}
