use std::sync::Arc;

use serde_json::Value;
use tether_fs::{ChangeKind, FileReceipt, Workspace, WritePath};
use tether_tool::{
    CallCx, Concurrency, DynTool, Prepared, RunCall, ToolError, ToolOutput, ToolSpec,
};

/// A host's own write tool given the same write hooks as ours: baselines before, reports after.
/// The files a call writes are the ones its [`tether_tool::Tool::preview`] names.
pub(crate) struct WrappedWrite {
    tool: Arc<dyn DynTool>,
}

impl WrappedWrite {
    pub(crate) fn new(tool: Arc<dyn DynTool>) -> Self {
        WrappedWrite { tool }
    }
}

impl DynTool for WrappedWrite {
    fn spec(&self) -> ToolSpec {
        self.tool.spec()
    }

    fn prepare(self: Arc<Self>, args: Value) -> Result<Prepared, ToolError> {
        let inner = self.tool.clone().prepare(args)?;
        let names = inner.preview.paths.clone();
        Ok(Prepared {
            concurrency: Concurrency::Workspace,
            preview: inner.preview,
            run: Box::new(move |cx| Box::pin(run_wrapped(cx, names, inner.run))),
        })
    }
}

/// Runs a host's write with baselines before and receipts after, like `cx.fs().commit`.
async fn run_wrapped(
    cx: &CallCx,
    names: Vec<String>,
    run: RunCall,
) -> Result<ToolOutput, ToolError> {
    let mut paths: Vec<WritePath> = Vec::new();
    for p in names {
        paths.push(cx.workspace().resolve_write(&p)?);
    }
    let before = hashes(cx.workspace(), &paths);
    let baselines = cx.fs().hooks().run_before(&paths).await;
    let result = run(cx).await;
    let receipts = receipts_since(cx.workspace(), paths, before);
    cx.fs().record(baselines, receipts);
    result
}

/// Each file's content hash now (`None` for a missing file), to tell later what changed.
pub(crate) fn hashes(ws: &Workspace, paths: &[WritePath]) -> Vec<Option<tether_fs::ContentHash>> {
    paths
        .iter()
        .map(|p| read_hashed(ws, p).map(|(_, h)| h))
        .collect()
}

/// The receipts of the files whose content differs from `before`, carrying the bytes read now
/// so the hooks judge exactly these.
pub(crate) fn receipts_since(
    ws: &Workspace,
    paths: Vec<WritePath>,
    before: Vec<Option<tether_fs::ContentHash>>,
) -> Vec<FileReceipt> {
    paths
        .into_iter()
        .zip(before)
        .filter_map(|(path, old)| {
            let now = read_hashed(ws, &path);
            let new = now.as_ref().map(|(_, h)| *h);
            let kind = match (old, new) {
                (a, b) if a == b => return None,
                (None, Some(_)) => ChangeKind::Created,
                (Some(_), None) => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            };
            Some(FileReceipt {
                path,
                kind,
                hash_after: new,
                content: now.map(|(bytes, _)| Arc::from(bytes)),
            })
        })
        .collect()
}

/// The bytes and hash of a file as it is now; read once, so the hooks get these bytes with
/// the receipt.
fn read_hashed(ws: &Workspace, path: &WritePath) -> Option<(Vec<u8>, tether_fs::ContentHash)> {
    ws.read_hashed(path).ok().flatten()
}
