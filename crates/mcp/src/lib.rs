//! The MCP front end: one stdio server process hosts one run, lists the tools its surface
//! admits and calls them. Tool failures come back as results with `isError`, never as
//! protocol errors, so the model reads the message. Between the client and rmcp sits a wire
//! guard (module `wire`) that answers malformed lines itself and keeps writes in arrival order.

#![forbid(unsafe_code)]

mod defer;
mod elicit;
mod stdio;
mod wire;

use std::sync::Arc;
use tether_base::lock;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool as McpTool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tether::{Block, Run, Surface, Tier, ToolError, ToolOutput, ToolSpec};
use tether_run::{Arrival, CallOptions};
use tether_tool::{ClientFeature, ProgressPort};
use tokio_util::sync::CancellationToken;

/// Serves one run over MCP.
#[derive(Clone)]
pub struct TetherServer {
    run: Arc<Run>,
    surface: Surface,
    /// Cancelled when the client goes away, so calls still running stop with it.
    shutdown: CancellationToken,
    /// The question port of a 2026-07-28 client that can show forms, once one has called.
    deferred: Arc<std::sync::OnceLock<Arc<defer::DeferPort>>>,
    /// Set once the run's warm-up has started.
    warmed: Arc<std::sync::atomic::AtomicBool>,
}

impl TetherServer {
    /// A server for `run`, showing the tools `surface` admits.
    pub fn new(run: Arc<Run>, surface: Surface) -> Self {
        TetherServer {
            run,
            surface,
            shutdown: CancellationToken::new(),
            deferred: Arc::default(),
            warmed: Arc::default(),
        }
    }

    /// Starts the servers for the languages present, once, so the first call finds them
    /// ready: after the handshake, or at the first request of a client that has none
    /// (MCP 2026-07-28).
    fn warm_once(&self) {
        if !self.warmed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let run = self.run.clone();
            tokio::spawn(async move { run.warm().await });
        }
    }

    /// For a request on MCP 2026-07-28 or later whose client can show forms (said in each
    /// request's metadata, there being no handshake), the port that asks between calls.
    fn deferred_port(&self, context: &RequestContext<RoleServer>) -> Option<Arc<defer::DeferPort>> {
        let modern = context
            .protocol_version()
            .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28);
        if modern {
            self.warm_once();
        }
        let can_elicit = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !(modern && can_elicit) {
            return None;
        }
        let port = self.deferred.get_or_init(|| {
            let port = Arc::new(defer::DeferPort::default());
            let runtime = self.run.runtime();
            runtime.client_has(ClientFeature::Elicitation);
            runtime.attach_question_port(port.clone());
            port
        });
        Some(port.clone())
    }

    /// Serves MCP on stdin/stdout until the client disconnects, then cancels what still runs.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_io(stdio::input(), stdio::output()).await
    }

    /// Serves MCP over any pair of byte streams, one JSON-RPC message per line, as
    /// [`TetherServer::serve_stdio`] does over stdin and stdout.
    pub async fn serve_io<R, W>(self, input: R, output: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        wire::serve(self, input, output).await
    }
}

/// Why serving MCP ended other than by the client closing its input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client closed the connection before `initialize` completed.
    #[error("MCP handshake failed: {0}")]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The server task ended abnormally.
    #[error("MCP server task failed: {0}")]
    Task(String),
}

/// The MCP form of a tool spec, with hints that follow the tier.
fn mcp_tool(spec: ToolSpec) -> McpTool {
    let schema = match spec.input_schema {
        serde_json::Value::Object(map) => map,
        _ => Default::default(),
    };
    let annotations = match spec.tier {
        Tier::Read => ToolAnnotations::new().read_only(true).destructive(false),
        Tier::Write => ToolAnnotations::new().read_only(false).destructive(true),
        _ => ToolAnnotations::new().read_only(false),
    };
    McpTool::new(spec.name, spec.description, Arc::new(schema)).with_annotations(annotations)
}

fn content(output: &ToolOutput) -> Vec<ContentBlock> {
    output
        .blocks()
        .iter()
        .map(|b| match b {
            Block::Text(t) => ContentBlock::text(t.clone()),
            Block::Png(bytes) => ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(bytes),
                "image/png",
            ),
            other => ContentBlock::text(format!("{other:?}")),
        })
        .collect()
}

impl ServerHandler for TetherServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Run-bound tools for this workspace. Paths are relative to the workspace root; \
                 lines are 1-based.",
            )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // Known before any call can arrive: a client that can show forms gets ask_user, and
        // question and approval cards go to its forms.
        if request.capabilities.elicitation.is_some() {
            let runtime = self.run.runtime();
            runtime.client_has(ClientFeature::Elicitation);
            runtime.attach_question_port(Arc::new(elicit::ElicitPort {
                peer: context.peer.clone(),
            }));
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, _context: rmcp::service::NotificationContext<RoleServer>) {
        self.warm_once();
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.deferred_port(&context);
        let tools = self
            .run
            .runtime()
            .tools(self.surface)
            .into_iter()
            .map(mcp_tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let deferred = self.deferred_port(&context);
        if let (Some(port), Some(responses)) = (&deferred, &request.input_responses) {
            port.receive(responses);
        }
        let args = request
            .arguments
            .map(serde_json::Value::Object)
            .unwrap_or(serde_json::Value::Null);
        // Cancelled by the client's notifications/cancelled or by the client going away.
        let cancel = self.shutdown.child_token();
        let link = {
            let (cancel, asked) = (cancel.clone(), context.ct.clone());
            tokio::spawn(async move {
                asked.cancelled().await;
                cancel.cancel();
            })
        };
        let mut opts = CallOptions::default().cancel(cancel);
        // The place the wire guard gave this request when it arrived, so writes run in order.
        if let Some(arrival) = context.extensions.get::<Arrival>() {
            opts = opts.in_order(arrival);
        }
        // A client that sent a progress token hears that a long call is alive.
        let mut progress_sent = None;
        if let Some(token) = context.meta.get_progress_token() {
            let (port, sent) = McpProgress::start(context.peer.clone(), token);
            opts = opts.progress(Arc::new(port));
            progress_sent = Some(sent);
        }
        let result = self
            .run
            .runtime()
            .call_with(self.surface, &request.name, args, opts)
            .await;
        link.abort();
        // The call has dropped its port; every report goes out before the result does.
        if let Some(sent) = progress_sent {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), sent).await;
        }
        Ok(match result {
            Ok(output) => CallToolResult::success(content(&output)).into(),
            // The human's answer is collected between calls: the client asks and calls again.
            Err(ToolError::NeedsInput(card)) if deferred.is_some() => {
                match defer::DeferPort::request(&card) {
                    Ok(ask) => ask.into(),
                    Err(why) => CallToolResult::error(vec![ContentBlock::text(why)]).into(),
                }
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(error_text(&e))]).into(),
        })
    }
}

/// Turns a call's progress reports into MCP progress notifications for its token, sent in
/// order by one task, so none arrives after the call's result.
struct McpProgress {
    token: rmcp::model::ProgressToken,
    queue: tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>,
    /// Reports sent so far: the call and the calls nested in it (an `eval` cell's `tool()`)
    /// count their reports apart, but MCP wants one token's progress to keep increasing;
    /// held while a report is queued, so the numbers are queued in order.
    reported: std::sync::Mutex<u64>,
}

impl McpProgress {
    /// The port, and the task that ends once the port is dropped and its reports are sent.
    fn start(
        peer: rmcp::Peer<RoleServer>,
        token: rmcp::model::ProgressToken,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let (queue, mut reports) = tokio::sync::mpsc::unbounded_channel();
        let sent = tokio::spawn(async move {
            while let Some(param) = reports.recv().await {
                if let Err(e) = peer.notify_progress(param).await {
                    tracing::debug!("progress notification not sent: {e}");
                }
            }
        });
        let port = McpProgress {
            token,
            queue,
            reported: std::sync::Mutex::new(0),
        };
        (port, sent)
    }
}

impl ProgressPort for McpProgress {
    fn report(&self, _done: u64, message: &str) {
        let mut reported = lock(&self.reported);
        *reported += 1;
        let param = ProgressNotificationParam::new(self.token.clone(), *reported as f64)
            .with_message(message);
        let _ = self.queue.send(param);
    }
}

fn error_text(e: &ToolError) -> String {
    format!("error: {e}")
}
