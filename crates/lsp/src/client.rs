//! The client side of one server's connection: its requests to us answered (configuration,
//! registrations, the edits it sends back by `workspace/applyEdit`) and its notifications
//! (diagnostics, progress, status, log lines) taken into what it told.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tether_base::lock;

use lsp_types as lsp;
use serde_json::Value;
use tether_rpc::{BoxFuture, Incoming, Reply, ResponseError};

use crate::heard::Event;
use crate::protocol::{self, read};
use crate::server::{Watched, glob_match};

/// Answers the server's requests and keeps its notifications.
pub(crate) struct Client {
    pub(crate) settings: Value,
    pub(crate) heard: Arc<Watched>,
    /// Set while a write call takes the server's own edits.
    pub(crate) edits: Arc<Mutex<Option<EditPort>>>,
    /// The log messages that say the server has listed the project's files.
    pub(crate) listed_files_log: Vec<String>,
}

impl Incoming for Client {
    fn request(&self, method: &str, params: Value) -> BoxFuture<Reply> {
        if method == "workspace/applyEdit" {
            return self.apply_edit(params);
        }
        let answer = match method {
            "workspace/configuration" => {
                let asked: protocol::ConfigurationParams = read(params);
                let answers: Vec<Value> = asked
                    .items
                    .iter()
                    .map(|item| section(&self.settings, item.section.as_deref()))
                    .collect();
                Ok(Value::Array(answers))
            }
            "client/registerCapability"
            | "client/unregisterCapability"
            | "window/workDoneProgress/create" => Ok(Value::Null),
            // Asks to pull again; every answer tether needs is asked for when needed.
            "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Ok(Value::Null),
            "window/showMessageRequest" => Ok(Value::Null),
            "workspace/workspaceFolders" => Ok(Value::Null),
            other => Err(ResponseError::method_not_found(other)),
        };
        Box::pin(async move { answer })
    }

    fn notification(&self, method: &str, params: tether_rpc::Payload) {
        let event = match method {
            "textDocument/publishDiagnostics" => {
                let text = params.into_raw();
                let published =
                    serde_json::from_str::<protocol::PublishedText>(text.get()).unwrap_or_default();
                let Some(uri) = published.uri.clone() else {
                    return;
                };
                let (version, text_digest) = (published.version, published.digest());
                let again = self.heard.send_if_modified(|heard| {
                    let kept = heard.republished(&uri, version, text_digest);
                    if kept {
                        heard.news_at = Some(tokio::time::Instant::now());
                    }
                    kept
                });
                if again {
                    return;
                }
                Event::Published {
                    uri,
                    version,
                    items: published.items(),
                    text_digest,
                }
            }
            "experimental/serverStatus" => {
                let status: protocol::ServerStatus = read(params);
                let health = match (status.health, status.message) {
                    (Some(h), Some(m)) if h == "warning" || h == "error" => Some((h, m)),
                    _ => None,
                };
                Event::Status {
                    quiescent: status.quiescent,
                    health,
                }
            }
            "window/logMessage" => {
                let params = params.into_value();
                let said = params.get("message").and_then(Value::as_str).unwrap_or("");
                match self.listed_files_log.iter().any(|p| glob_match(p, said)) {
                    true => Event::Listed,
                    false => return,
                }
            }
            "$/progress" => {
                let progress: protocol::ProgressParams = read(params);
                let token = progress.token.map_or(String::new(), |t| t.to_string());
                let value = progress.value;
                let percentage = value.percentage.map(|p| p.min(100) as u32);
                match value.kind.as_deref() {
                    Some("begin") => {
                        let title = value.title.as_deref().unwrap_or("");
                        let check = token.to_lowercase().contains("check")
                            || title.to_lowercase().contains("check");
                        Event::Begin {
                            token,
                            check,
                            percentage,
                        }
                    }
                    Some("report") => Event::Report { token, percentage },
                    Some("end") => Event::End { token },
                    _ => return,
                }
            }
            _ => return,
        };
        // A progress report only moves a percentage, which is read when asked for: nothing
        // waits on it (a wait for quiet waits for the progress to end), so it wakes no one.
        let wakes = !matches!(event, Event::Report { .. });
        self.heard.send_if_modified(|heard| {
            heard.apply(event);
            heard.news_at = Some(tokio::time::Instant::now());
            wakes
        });
    }

    fn closed(&self, why: &str) {
        let why = why.to_string();
        self.heard
            .send_modify(|heard| heard.apply(Event::Closed(why)));
    }
}

impl Client {
    /// A server's own edit reaches files only through the write door of a write-tier call
    /// that is waiting on this server (lsp_rename); at any other time it is refused.
    fn apply_edit(&self, params: Value) -> BoxFuture<Reply> {
        let port = lock(&self.edits).clone();
        let asked: protocol::ApplyWorkspaceEditParams = read(params);
        Box::pin(async move {
            let answer = |result: lsp::ApplyWorkspaceEditResponse| {
                protocol::to_params("workspace/applyEdit", result).map_err(|message| {
                    ResponseError {
                        code: tether_rpc::codes::INTERNAL_ERROR,
                        message: message.to_string(),
                        data: None,
                    }
                })
            };
            let refused = |why: &str| answer(refusal(why));
            let Some(port) = port else {
                return refused(
                    "tether applies a server's edits only during a write call (lsp_rename); \
                     this was not one",
                );
            };
            let (reply, taken) = tokio::sync::oneshot::channel();
            if port.send((asked.edit, reply)).await.is_err() {
                return refused("the write call had already ended");
            }
            match tokio::time::timeout(Duration::from_secs(60), taken).await {
                Ok(Ok(result)) => answer(result),
                _ => refused("the write call did not apply it in time"),
            }
        })
    }
}

/// Where a write-tier call takes the server's `workspace/applyEdit` requests: the edit, and
/// where its `ApplyWorkspaceEditResult` goes.
pub type EditPort = tokio::sync::mpsc::Sender<ServedEdit>;

/// One `workspace/applyEdit` handed to a write call, with where its result goes.
pub type ServedEdit = (
    protocol::WorkspaceEdit,
    tokio::sync::oneshot::Sender<lsp::ApplyWorkspaceEditResponse>,
);

/// The answer to a `workspace/applyEdit` that was not applied, and why.
pub fn refusal(why: &str) -> lsp::ApplyWorkspaceEditResponse {
    lsp::ApplyWorkspaceEditResponse {
        applied: false,
        failure_reason: Some(why.to_string()),
        failed_change: None,
    }
}

/// While held, the server's edits go to one write call; dropping it refuses them again.
pub struct AcceptingEdits {
    pub(crate) port: Arc<Mutex<Option<EditPort>>>,
    /// One call at a time takes them: runs sharing the server through a host each have their
    /// own door, and an edit must never reach another run's.
    pub(crate) _taken: tokio::sync::OwnedMutexGuard<()>,
}

impl Drop for AcceptingEdits {
    fn drop(&mut self) {
        *lock(&self.port) = None;
    }
}

/// The part of `settings` a `workspace/configuration` item asks for (`a.b` walks tables).
fn section(settings: &Value, name: Option<&str>) -> Value {
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return settings.clone();
    };
    let mut at = settings;
    for key in name.split('.') {
        match at.get(key) {
            Some(v) => at = v,
            None => return Value::Null,
        }
    }
    at.clone()
}
