//! The `ast_grep` and `ast_edit` tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::budget::{Budget, Limits, MAX_RESULTS, Stop, on_large_stack};
use crate::cache::TreeCache;
use crate::lang::Lang;
use crate::pattern::compile;
use crate::render::{render_matches, searched_line};
use crate::search::{FileMatches, Io, Mode, SearchError, SearchStats, files_for, search};
use crate::stage::{prepare, stage_edit};
use crate::template::Template;

/// `ast_grep`: structural search with metavariables.
pub struct AstGrepTool {
    cache: Arc<TreeCache>,
    limits: Limits,
}

/// `ast_edit`: structural rewrite, staged for `resolve`.
pub struct AstEditTool {
    cache: Arc<TreeCache>,
    limits: Limits,
}

impl AstGrepTool {
    /// A search tool over the run's tree cache, with the default [`Limits`].
    pub fn new(cache: Arc<TreeCache>) -> Self {
        AstGrepTool {
            cache,
            limits: Limits::default(),
        }
    }

    /// The same tool with other bounds per call (from `[structural]`).
    pub fn with_limits(self, limits: Limits) -> Self {
        AstGrepTool { limits, ..self }
    }
}

impl AstEditTool {
    /// An edit tool over the run's tree cache, with the default [`Limits`].
    pub fn new(cache: Arc<TreeCache>) -> Self {
        AstEditTool {
            cache,
            limits: Limits::default(),
        }
    }

    /// The same tool with other bounds per call (from `[structural]`).
    pub fn with_limits(self, limits: Limits) -> Self {
        AstEditTool { limits, ..self }
    }
}

/// Arguments of `ast_grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepArgs {
    /// Code fragment with metavariables: `$X` one node, `$$$ARGS` zero or more siblings, `$_`
    /// any node without binding. A repeated `$X` must match the same text each time.
    pattern: String,
    /// File or directory to search. Default: the whole workspace.
    path: Option<String>,
    /// Language id (python, rust, dart, typescript, c, …). Inferred when `path` is a file.
    language: Option<String>,
    /// How many matches to show: 1 to 1000, default 50.
    #[schemars(range(min = 1, max = crate::budget::MAX_RESULTS))]
    max_results: Option<usize>,
}

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    /// Code fragment with metavariables, as in ast_grep.
    pattern: String,
    /// Replacement template; metavariables from the pattern are substituted.
    rewrite: String,
    /// File or directory to rewrite. Default: the whole workspace.
    path: Option<String>,
    /// Language id. Inferred when `path` is a file.
    language: Option<String>,
}

/// What a call searches: the checked arguments, resolved before the work leaves the runtime.
struct Request {
    pattern: String,
    lang: Lang,
    target: std::path::PathBuf,
    /// `target` as results show it.
    shown_target: String,
    root: std::path::PathBuf,
    /// Files are opened beneath the workspace's descriptors, never by path alone.
    workspace: tether_fs::Workspace,
    cache: Arc<TreeCache>,
}

impl Request {
    fn new(
        cx: &CallCx,
        cache: &Arc<TreeCache>,
        pattern: &str,
        path: Option<&str>,
        language: Option<&str>,
    ) -> Result<Self, ToolError> {
        let ws = cx.workspace();
        let target = ws.resolve_read(path.unwrap_or("."))?;
        if !target.exists() {
            return Err(ToolError::invalid(format!(
                "{} does not exist",
                path.unwrap_or(".")
            )));
        }
        let lang = pick_language(&target, language)?;
        Ok(Request {
            pattern: pattern.to_string(),
            lang,
            shown_target: ws.display(&target),
            target,
            root: ws.root().to_path_buf(),
            workspace: ws.clone(),
            cache: cache.clone(),
        })
    }

    /// Compiles the pattern, lists the files and searches them; on the job's thread.
    fn search(
        &self,
        tool: &str,
        rewrite: Option<&str>,
        keep: usize,
        budget: &Budget<'_>,
    ) -> Result<(Vec<FileMatches>, SearchStats), ToolError> {
        let compiled =
            compile(&self.pattern, self.lang).map_err(|e| ToolError::invalid(e.message))?;
        let template = rewrite
            .map(|r| Template::parse(r, &compiled.pattern.defined_vars()))
            .transpose()
            .map_err(|e| ToolError::invalid(e.to_string()))?;
        let mode = match &template {
            Some(t) => Mode::Rewrite(t),
            None => Mode::Find { keep },
        };
        let files =
            files_for(&self.target, self.lang, budget).map_err(|s| stop_error(tool, s, budget))?;
        let display = |p: &std::path::Path| display_path(&self.root, p);
        let open = |p: &std::path::Path| {
            self.workspace
                .open_read(p)
                .map_err(|e| std::io::Error::other(e.to_string()))
        };
        let io = Io {
            display: &display,
            open: &open,
        };
        search(&files, &compiled, mode, &self.cache, &io, budget).map_err(|e| match e {
            SearchError::Stopped(s) => stop_error(tool, s, budget),
            SearchError::WorkerFailed => ToolError::failed(
                "a search worker failed, so the results would be incomplete; none are shown. \
                 Retry, and report it if it happens again",
            ),
        })
    }
}

/// The error of a call that met a bound of its budget.
fn stop_error(tool: &str, stop: Stop, budget: &Budget<'_>) -> ToolError {
    match stop {
        Stop::Cancelled => ToolError::Cancelled,
        Stop::OutOfTime => ToolError::failed(stop.message(tool, budget.limits())),
        Stop::TooMuchOutput => ToolError::invalid(stop.message(tool, budget.limits())),
    }
}

/// Runs `job` on its own large-stack thread (pattern compilation and matching recurse), with a
/// budget that the call's cancellation stops; a cancelled call returns at once and the thread
/// stops at its next look at the budget.
async fn run_job<T, F>(cx: &CallCx, limits: Limits, job: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&Budget<'_>) -> Result<T, ToolError> + Send + 'static,
{
    let cancel = Arc::new(AtomicBool::new(false));
    let _on_drop = CancelOnDrop(cancel.clone());
    let flag = cancel.clone();
    let done = on_large_stack("tether-structural", move || {
        job(&Budget::new(limits, &flag))
    })
    .map_err(|e| ToolError::failed(format!("cannot start the search thread: {e}")))?;
    tokio::select! {
        r = done => r.map_err(|_| ToolError::failed(
            "the search thread failed, so no result is shown. Retry, and report it if it \
             happens again",
        ))?,
        _ = cx.cancel_token().cancelled() => {
            cancel.store(true, Ordering::Relaxed);
            Err(ToolError::Cancelled)
        }
    }
}

/// Stops the job's threads when the call's future is dropped.
struct CancelOnDrop(Arc<AtomicBool>);
impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn display_path(root: &std::path::Path, p: &std::path::Path) -> String {
    match p.strip_prefix(root) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => p.display().to_string(),
    }
}

fn pick_language(target: &std::path::Path, language: Option<&str>) -> Result<Lang, ToolError> {
    let ids = || Lang::ids().join(", ");
    match language {
        Some(id) => {
            let lang = Lang::by_id(id).ok_or_else(|| {
                ToolError::invalid(format!("unknown language `{id}`; valid ids: {}", ids()))
            })?;
            // A file whose extension names another language would be parsed as garbage and
            // silently match nothing; say so instead.
            match Lang::from_path(target) {
                Some(own) if target.is_file() && own.id() != lang.id() => {
                    Err(ToolError::invalid(format!(
                        "{} is a {} file by its extension, but `language` is `{}`; drop \
                         `language` or pass `{}`",
                        target.display(),
                        own.id(),
                        lang.id(),
                        own.id()
                    )))
                }
                _ => Ok(lang),
            }
        }
        None if target.is_file() => Lang::from_path(target).ok_or_else(|| {
            ToolError::invalid(format!(
                "cannot tell the language of {} from its extension; pass `language`, one of: {}",
                target.display(),
                ids()
            ))
        }),
        None => Err(ToolError::invalid(format!(
            "`language` is required when searching a directory; valid ids: {}",
            ids()
        ))),
    }
}

impl Tool for AstGrepTool {
    type Args = AstGrepArgs;

    fn name(&self) -> &'static str {
        "ast_grep"
    }

    fn description(&self) -> String {
        "Structural code search: find code by shape with a pattern parsed by the language's \
         grammar, so spacing, line breaks and comments do not matter and strings/comments never \
         match. `$X` matches one node, `$$$ARGS` a run of siblings, `$_` anything; a repeated \
         `$X` must match the same text. Results are `path:line` with captures, and always say \
         how many files were searched."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }

    async fn call(&self, cx: &CallCx, args: AstGrepArgs) -> Result<ToolOutput, ToolError> {
        let max = args.max_results.unwrap_or(50);
        if !(1..=MAX_RESULTS).contains(&max) {
            return Err(ToolError::invalid(format!(
                "max_results must be at least 1 and at most {MAX_RESULTS} (default 50); to see \
                 more, narrow `path` and search again"
            )));
        }
        let req = Request::new(
            cx,
            &self.cache,
            &args.pattern,
            args.path.as_deref(),
            args.language.as_deref(),
        )?;
        let text = run_job(cx, self.limits, move |budget| {
            let (found, stats) = req.search("ast_grep", None, max, budget)?;
            Ok(render_matches(
                &found,
                &stats,
                max,
                req.lang.id(),
                &req.shown_target,
            ))
        })
        .await?;
        Ok(ToolOutput::text(text))
    }
}

impl Tool for AstEditTool {
    type Args = AstEditArgs;

    fn name(&self) -> &'static str {
        "ast_edit"
    }

    fn description(&self) -> String {
        "Structural rewrite: the same matching as ast_grep, with a `rewrite` template in which \
         the pattern's metavariables are substituted. Writes nothing: the change is staged and \
         the result names an edit_id to pass to `resolve` (accept or discard), with a diff \
         preview."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }

    async fn call(&self, cx: &CallCx, args: AstEditArgs) -> Result<ToolOutput, ToolError> {
        let req = Request::new(
            cx,
            &self.cache,
            &args.pattern,
            args.path.as_deref(),
            args.language.as_deref(),
        )?;
        let rewrite = args.rewrite;
        let (prepared, searched) = run_job(cx, self.limits, move |budget| {
            let (found, stats) = req.search("ast_edit", Some(&rewrite), 0, budget)?;
            let searched = searched_line(&stats, req.lang.id(), &req.shown_target);
            let prepared = prepare(found, budget).map_err(|s| stop_error("ast_edit", s, budget))?;
            Ok((prepared, searched))
        })
        .await?;
        stage_edit(cx, &args.pattern, prepared, &searched)
    }
}
