//! The requests tether asks a server, each typed once: lsp-types gives its method and its
//! parameters, so the two cannot disagree, and [`Ask::answer`] reads the answer into
//! tether's own lenient shape (a server's answer is read as servers send it, not as the spec
//! says).

use lsp_types::request as req;
use serde_json::Value;

use crate::protocol::{self, CodeAction, Symbol, WorkspaceEdit};

/// A request tether sends, with how its answer is read.
pub trait Ask: req::Request {
    /// What the answer is read as.
    type Answer;
    /// Reads the answer; one that does not fit reads as empty.
    fn answer(value: Value) -> Self::Answer;
}

/// Implements [`Ask`] for requests whose answer is kept as JSON (read later, by a reader that
/// takes each of the shapes the spec allows).
macro_rules! kept_as_json {
    ($($request:ty),*) => {$(
        impl Ask for $request {
            type Answer = Value;
            fn answer(value: Value) -> Value {
                value
            }
        }
    )*};
}

kept_as_json!(
    Barrier,
    req::DocumentDiagnosticRequest,
    req::ExecuteCommand,
    req::FoldingRangeRequest,
    req::GotoDefinition,
    req::GotoTypeDefinition,
    req::GotoImplementation,
    req::References,
    req::HoverRequest,
    req::PrepareRenameRequest
);

impl Ask for req::Rename {
    type Answer = WorkspaceEdit;
    fn answer(value: Value) -> WorkspaceEdit {
        protocol::read(value)
    }
}

impl Ask for req::WillRenameFiles {
    type Answer = WorkspaceEdit;
    fn answer(value: Value) -> WorkspaceEdit {
        protocol::read(value)
    }
}

/// Each offered action kept as sent, for `codeAction/resolve` and `lsp_fix`, beside what it
/// reads as.
impl Ask for req::CodeActionRequest {
    type Answer = Vec<(Value, CodeAction)>;
    fn answer(value: Value) -> Vec<(Value, CodeAction)> {
        protocol::many::<Value>(value)
            .into_iter()
            .filter(Value::is_object)
            .map(|raw| (raw.clone(), protocol::read(raw)))
            .collect()
    }
}

impl Ask for req::CodeActionResolveRequest {
    type Answer = Value;
    fn answer(value: Value) -> Value {
        value
    }
}

impl Ask for req::WorkspaceSymbolRequest {
    type Answer = Vec<Symbol>;
    fn answer(value: Value) -> Vec<Symbol> {
        protocol::many(value)
    }
}

impl Ask for req::DocumentSymbolRequest {
    type Answer = Vec<Symbol>;
    fn answer(value: Value) -> Vec<Symbol> {
        protocol::many(value)
    }
}

/// A method no server knows: its answer (an error, at once) comes after everything the server
/// sent before it.
pub enum Barrier {}

impl req::Request for Barrier {
    type Params = Value;
    type Result = Value;
    const METHOD: &'static str = "tether/barrier";
}
