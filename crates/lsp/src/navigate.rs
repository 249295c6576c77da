//! The questions `lsp` asks about the symbol at a place (definition, type definition,
//! implementation, references, hover), as one table, so a question's request, capability and
//! name cannot disagree.

use lsp_types as lsp;
use tether_tool::ToolError;

use crate::protocol::{Offered, ServerCapabilities, to_params};
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

impl Navigate {
    pub(crate) fn action(self) -> Action {
        match self {
            Navigate::Definition => Action::Definition,
            Navigate::TypeDefinition => Action::TypeDefinition,
            Navigate::Implementation => Action::Implementation,
            Navigate::References => Action::References,
            Navigate::Hover => Action::Hover,
        }
    }

    pub(crate) fn method(self) -> &'static str {
        match self {
            Navigate::Definition => "textDocument/definition",
            Navigate::TypeDefinition => "textDocument/typeDefinition",
            Navigate::Implementation => "textDocument/implementation",
            Navigate::References => "textDocument/references",
            Navigate::Hover => "textDocument/hover",
        }
    }

    pub(crate) fn provider(self, caps: &ServerCapabilities) -> &Offered {
        match self {
            Navigate::Definition => &caps.definition_provider,
            Navigate::TypeDefinition => &caps.type_definition_provider,
            Navigate::Implementation => &caps.implementation_provider,
            Navigate::References => &caps.references_provider,
            Navigate::Hover => &caps.hover_provider,
        }
    }

    /// What to ask instead when a server does not offer it.
    pub(crate) fn instead(self) -> &'static str {
        match self {
            Navigate::Implementation => {
                "ask `references` on the interface or base method (its overrides and \
                 implementations are among them), or `definition` on a call"
            }
            Navigate::TypeDefinition => "ask `hover` for the type, then `definition` on its name",
            Navigate::Definition | Navigate::References | Navigate::Hover => {
                "ask `hover` or `references` instead"
            }
        }
    }

    /// The request's params at `position`.
    pub(crate) fn params(
        self,
        position: &lsp::TextDocumentPositionParams,
    ) -> Result<serde_json::Value, String> {
        let method = self.method();
        match self {
            Navigate::Definition | Navigate::TypeDefinition | Navigate::Implementation => {
                to_params(
                    method,
                    lsp::GotoDefinitionParams {
                        text_document_position_params: position.clone(),
                        work_done_progress_params: Default::default(),
                        partial_result_params: Default::default(),
                    },
                )
            }
            Navigate::References => to_params(
                method,
                lsp::ReferenceParams {
                    text_document_position: position.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                    context: lsp::ReferenceContext {
                        include_declaration: true,
                    },
                },
            ),
            Navigate::Hover => to_params(
                method,
                lsp::HoverParams {
                    text_document_position_params: position.clone(),
                    work_done_progress_params: Default::default(),
                },
            ),
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
