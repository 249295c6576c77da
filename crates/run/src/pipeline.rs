use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tether_tool::{
    BoxFuture, CallCx, CallCxParts, CallScope, Concurrency, Dispatcher, FsDoor, PermitKey,
    Prepared, ProgressPort, Surface, ToolError, ToolOutput, format_reports,
};
use tokio_util::sync::CancellationToken;

use crate::arrival::Place;
use crate::gate::Gate;
use crate::options::CallOptions;
use crate::resources::RunResources;
use crate::table::ToolTable;

/// How long a cancelled handler may run on to clean up (send an interrupt, disconnect).
pub const CANCEL_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a call waits for its write or session permit before it gives up.
const PERMIT_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Where a call comes from: the model (root) or another call (nested).
struct Origin<'a> {
    surface: Surface,
    parent: Option<&'a CallScope>,
    cancel: CancellationToken,
    /// The root call's place in the front end's arrival order, if it has one.
    place: Option<Place>,
    /// Where progress goes; nested calls inherit the root's.
    progress: Option<Arc<dyn ProgressPort>>,
}

/// What every call of the run shares: its resources, its tools and its gate.
pub(crate) struct Pipeline {
    pub(crate) resources: RunResources,
    pub(crate) table: ToolTable,
    pub(crate) gate: Gate,
    approvals: crate::approval::Approvals,
    next_call: AtomicU64,
}

impl Pipeline {
    pub(crate) fn new(resources: RunResources, table: ToolTable) -> Self {
        Pipeline {
            resources,
            table,
            gate: Gate::default(),
            approvals: Default::default(),
            next_call: AtomicU64::new(1),
        }
    }

    /// A call from the model: the pipeline, then the run's notices on its result.
    pub(crate) async fn call_root(
        self: &Arc<Self>,
        surface: Surface,
        tool: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<ToolOutput, ToolError> {
        let origin = Origin {
            surface,
            parent: None,
            cancel: opts.cancel,
            place: opts.place,
            progress: opts.progress,
        };
        let output = run_call(self, origin, tool, args).await?;
        Ok(self.with_notices(output))
    }

    /// Appends the queued notices to a root result.
    fn with_notices(&self, mut output: ToolOutput) -> ToolOutput {
        if let Some(block) = self.resources.notices.drain_block() {
            output.push_text(block);
        }
        output
    }
}

/// The one pipeline: surface -> schema -> re-entry -> approval -> gate -> handler ->
/// (gate released) write-hook reports.
async fn run_call(
    pipe: &Arc<Pipeline>,
    mut origin: Origin<'_>,
    name: &str,
    args: Value,
) -> Result<ToolOutput, ToolError> {
    let registered = pipe.table.admit(name, origin.surface)?;
    // The arguments are parsed once; the prepared call knows the permit it needs.
    let prepared = registered.tool.clone().prepare(args)?;
    let concurrency = prepared.concurrency.clone();
    // Only a write waits for the calls that arrived before it; any other call leaves the line
    // at once, so reads never hold up a write. A write keeps its place through approval.
    let place = origin
        .place
        .take()
        .filter(|_| concurrency == Concurrency::Workspace);
    if let Some(parent) = origin.parent
        && parent.stack.iter().any(|t| t == name)
    {
        return Err(ToolError::Reentrant {
            tool: name.to_string(),
            stack: parent.stack.join(" > "),
        });
    }
    let res = &pipe.resources;
    let approval = pipe.approvals.approve(
        res.approval,
        &res.questions,
        res.ask_timeout,
        name,
        registered.spec.tier,
        &prepared.preview,
    );
    tokio::select! {
        r = approval => r?,
        _ = origin.cancel.cancelled() => return Err(ToolError::Cancelled),
    }
    let held = origin.parent.map(|p| p.held.clone()).unwrap_or_default();
    let permit = tokio::select! {
        p = tokio::time::timeout(PERMIT_WAIT, pipe.gate.acquire(&concurrency, &held, place)) => {
            p.map_err(|_| permit_timeout(name, &concurrency))?
        }
        _ = origin.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    let scope = scope_for(pipe, &origin, name, held, permit.key.clone());
    let cx = context_for(pipe, &origin, scope);
    let result = run_handler(&cx, prepared, &origin.cancel).await;
    // A commit already under way finishes even when the call is cancelled; wait for it, so
    // its files are reported rather than silently changed.
    if !cx.fs().settle().await {
        res.notices.push(
            "run",
            format!("a write of `{name}` was still running after 120 s; its files may change yet"),
        );
    }
    drop(permit);
    report_writes(pipe, &cx, name, result).await
}

/// The error of a permit wait that hit its deadline.
fn permit_timeout(name: &str, concurrency: &Concurrency) -> ToolError {
    let (what, why) = match concurrency {
        Concurrency::Session(k) => (format!("session `{k}`"), "another call still holds it"),
        _ => (
            "the workspace write permit".to_string(),
            "another call still holds it, or a write that arrived earlier is still ahead in line",
        ),
    };
    ToolError::failed(format!(
        "`{name}` waited {} s for {what} and gave up; {why}, so retry once it has finished",
        PERMIT_WAIT.as_secs()
    ))
}

/// The new call's place: under its parent's root and stack, holding what they hold plus `key`.
fn scope_for(
    pipe: &Pipeline,
    origin: &Origin<'_>,
    name: &str,
    held: Vec<PermitKey>,
    key: Option<PermitKey>,
) -> CallScope {
    let call_id = pipe.next_call.fetch_add(1, Ordering::Relaxed);
    let (root_call_id, mut stack) = match origin.parent {
        Some(p) => (p.root_call_id, p.stack.clone()),
        None => (call_id, Vec::new()),
    };
    stack.push(name.to_string());
    let mut scope = CallScope {
        call_id,
        root_call_id,
        surface: origin.surface,
        stack,
        held,
    };
    scope.held.extend(key);
    scope
}

/// The handler's context: its own write door (which may commit only under the workspace
/// permit), the run's notices, re-entry and the front end's progress port.
fn context_for(pipe: &Arc<Pipeline>, origin: &Origin<'_>, scope: CallScope) -> CallCx {
    let res = &pipe.resources;
    let writer = scope.held.contains(&PermitKey::Workspace);
    let label = format!("`{}`", scope.stack.last().map_or("?", String::as_str));
    CallCx::from_parts(CallCxParts {
        scope,
        cancel: origin.cancel.clone(),
        fs: FsDoor::new(
            res.workspace.clone(),
            res.journal.clone(),
            res.staged.clone(),
            res.hooks.clone(),
            origin.cancel.clone(),
        )
        .holding_workspace(writer)
        .labelled(&label),
        notices: res.notices.clone(),
        dispatcher: Arc::new(Reentry { pipe: pipe.clone() }),
        conversation: res.conversation.clone(),
        progress: origin.progress.clone(),
    })
}

/// Runs the handler; on cancellation it sees its token and gets a moment to interrupt or
/// disconnect what it drives before it is dropped.
async fn run_handler(
    cx: &CallCx,
    prepared: Prepared,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let call = (prepared.run)(cx);
    tokio::pin!(call);
    tokio::select! {
        r = &mut call => r,
        _ = cancel.cancelled() => {
            let _ = tokio::time::timeout(CANCEL_GRACE, &mut call).await;
            Err(ToolError::Cancelled)
        }
    }
}

/// Hands each write's baselines to the hooks' reports (the gate is free again) and folds the
/// reports into the result; a cancelled call that wrote says so on the next root result.
async fn report_writes(
    pipe: &Pipeline,
    cx: &CallCx,
    name: &str,
    result: Result<ToolOutput, ToolError>,
) -> Result<ToolOutput, ToolError> {
    let res = &pipe.resources;
    let mut receipts = Vec::new();
    let mut blocks = Vec::new();
    for write in cx.fs().take_writes() {
        let reports = (res.hooks)
            .run_after(write.number, write.baselines, &write.receipts)
            .await;
        // Every write names its number, which later notices about it name too.
        // A run without hooks has nothing to say about any write, now or later.
        blocks.extend(match format_reports(&reports) {
            Some(block) => Some(format!("write #{}:\n{block}", write.number)),
            None if res.hooks.is_empty() => None,
            None => Some(format!("write #{}: nothing to report", write.number)),
        });
        receipts.extend(write.receipts);
    }
    let report = (!blocks.is_empty()).then(|| blocks.join("\n"));
    let pending = pending_note(&res.staged, &receipts);
    if matches!(result, Err(ToolError::Cancelled)) && !receipts.is_empty() {
        let files: Vec<&str> = receipts.iter().map(|r| r.path.rel()).collect();
        let mut text = format!(
            "`{name}` was cancelled after it had already written {}",
            files.join(", ")
        );
        if let Some(report) = &report {
            text.push_str(&format!("\n{report}"));
        }
        res.notices.push("run", text);
    }
    let mut output = result?;
    if let Some(report) = report {
        output.push_text(report);
    }
    if let Some(pending) = pending {
        output.push_text(pending);
    }
    Ok(output)
}

/// Says which staged changes still pending rewrite a file this call just wrote: accepting one
/// will merge it onto this write.
fn pending_note(
    staged: &tether_fs::StagedStore,
    receipts: &[tether_fs::FileReceipt],
) -> Option<String> {
    let rels: Vec<&str> = receipts.iter().map(|r| r.path.rel()).collect();
    let mut by_id: Vec<(String, Vec<String>)> = Vec::new();
    for (id, rel) in staged.pending_on(&rels) {
        match by_id.iter_mut().find(|(i, _)| *i == id) {
            Some((_, files)) => files.push(rel),
            None => by_id.push((id, vec![rel])),
        }
    }
    let lines: Vec<String> = by_id
        .into_iter()
        .map(|(id, files)| {
            format!(
                "{id} is pending on {} and will be rebased onto this write when accepted",
                files.join(", ")
            )
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// Re-entry into the pipeline for `cx.dispatch`, bound to the run.
struct Reentry {
    pipe: Arc<Pipeline>,
}

impl Dispatcher for Reentry {
    fn dispatch<'a>(
        &'a self,
        parent: &'a CallCx,
        tool: &'a str,
        args: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let origin = Origin {
                surface: parent.surface(),
                parent: Some(parent.scope()),
                cancel: parent.cancel_token().child_token(),
                place: None,
                progress: parent.progress_port(),
            };
            run_call(&self.pipe, origin, tool, args).await
        })
    }
}
