//! The questions `lsp` asks about the symbol at a place (definition, type definition,
//! implementation, references, hover), as one table, so a question's request, capability and
//! name cannot disagree.

use lsp_types as lsp;
use lsp_types::request as req;
use serde_json::Value;
use tether_tool::ToolError;
use tokio_util::sync::CancellationToken;

use crate::protocol::{Offered, ServerCapabilities};
use crate::server::{RequestError, Server};
use crate::tool::{Action, action_name};

/// The questions about the symbol at a place, as one table: each one's request, the
/// capability that offers it, its name, and what to ask when a server does not offer it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Navigate {
    Definition,
    TypeDefinition,
    Implementation,
    References,
    Hover,
}

/// One row of the table: the question, the `lsp` action that asks it, the capability that
/// offers it, and what to ask when a server does not offer it.
struct Row {
    nav: Navigate,
    action: Action,
    provider: fn(&ServerCapabilities) -> &Offered,
    instead: &'static str,
}

const ASK_HOVER_OR_REFERENCES: &str = "ask `hover` or `references` instead";

/// Every question, once.
const TABLE: [Row; 5] = [
    Row {
        nav: Navigate::Definition,
        action: Action::Definition,
        provider: |c| &c.definition_provider,
        instead: ASK_HOVER_OR_REFERENCES,
    },
    Row {
        nav: Navigate::TypeDefinition,
        action: Action::TypeDefinition,
        provider: |c| &c.type_definition_provider,
        instead: "ask `hover` for the type, then `definition` on its name",
    },
    Row {
        nav: Navigate::Implementation,
        action: Action::Implementation,
        provider: |c| &c.implementation_provider,
        instead: "ask `references` on the interface or base method (its overrides and \
                  implementations are among them), or `definition` on a call",
    },
    Row {
        nav: Navigate::References,
        action: Action::References,
        provider: |c| &c.references_provider,
        instead: ASK_HOVER_OR_REFERENCES,
    },
    Row {
        nav: Navigate::Hover,
        action: Action::Hover,
        provider: |c| &c.hover_provider,
        instead: ASK_HOVER_OR_REFERENCES,
    },
];

impl Navigate {
    /// Its row: the table lists the questions in the order they are declared.
    fn row(self) -> &'static Row {
        let row = &TABLE[self as usize];
        debug_assert!(row.nav == self, "TABLE is out of the declared order");
        row
    }

    pub(crate) fn action(self) -> Action {
        self.row().action
    }

    pub(crate) fn provider(self, caps: &ServerCapabilities) -> &Offered {
        (self.row().provider)(caps)
    }

    /// What to ask instead when a server does not offer it.
    pub(crate) fn instead(self) -> &'static str {
        self.row().instead
    }

    /// Asks the question at `position`; each request's method and parameters come from its
    /// lsp-types type.
    pub(crate) async fn ask(
        self,
        server: &Server,
        position: &lsp::TextDocumentPositionParams,
        cancel: &CancellationToken,
    ) -> Result<Value, RequestError> {
        let goto = || lsp::GotoDefinitionParams {
            text_document_position_params: position.clone(),
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        match self {
            Navigate::Definition => server.call::<req::GotoDefinition>(goto(), cancel).await,
            Navigate::TypeDefinition => {
                server.call::<req::GotoTypeDefinition>(goto(), cancel).await
            }
            Navigate::Implementation => {
                server.call::<req::GotoImplementation>(goto(), cancel).await
            }
            Navigate::References => {
                let params = lsp::ReferenceParams {
                    text_document_position: position.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                    context: lsp::ReferenceContext {
                        include_declaration: true,
                    },
                };
                server.call::<req::References>(params, cancel).await
            }
            Navigate::Hover => {
                let params = lsp::HoverParams {
                    text_document_position_params: position.clone(),
                    work_done_progress_params: Default::default(),
                };
                server.call::<req::HoverRequest>(params, cancel).await
            }
        }
    }
}

/// The error for an action the server does not offer, with what to ask instead.
pub(crate) fn unoffered(server: &str, nav: Navigate) -> ToolError {
    ToolError::invalid(format!(
        "{server} does not offer `{}`; {}",
        action_name(nav.action()),
        nav.instead()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_question_is_its_own_row() {
        for (i, row) in TABLE.iter().enumerate() {
            assert_eq!(row.nav as usize, i);
        }
    }
}
