//! The `ast_grep` and `ast_edit` tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::cache::TreeCache;
use crate::lang::Lang;
use crate::pattern::compile;
use crate::render::render_matches;
use crate::search::{FileMatches, SearchStats, files_for, search};
use crate::template::Template;

/// `ast_grep`: structural search with metavariables.
pub struct AstGrepTool {
    cache: Arc<TreeCache>,
}

/// `ast_edit`: structural rewrite, staged for `resolve`.
pub struct AstEditTool {
    cache: Arc<TreeCache>,
}

impl AstGrepTool {
    /// A search tool over the run's tree cache.
    pub fn new(cache: Arc<TreeCache>) -> Self {
        AstGrepTool { cache }
    }
}

impl AstEditTool {
    /// An edit tool over the run's tree cache.
    pub fn new(cache: Arc<TreeCache>) -> Self {
        AstEditTool { cache }
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
    /// How many matches to show. Default 50.
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

/// Everything a search produced, ready to render or stage.
struct Outcome {
    found: Vec<FileMatches>,
    stats: SearchStats,
    lang: Lang,
    target: String,
}

async fn run_search(
    cx: &CallCx,
    cache: &Arc<TreeCache>,
    pattern: &str,
    path: Option<&str>,
    language: Option<&str>,
    rewrite: Option<&str>,
) -> Result<Outcome, ToolError> {
    let ws = cx.workspace();
    let target = ws.resolve_read(path.unwrap_or("."))?;
    if !target.exists() {
        return Err(ToolError::invalid(format!(
            "{} does not exist",
            path.unwrap_or(".")
        )));
    }
    let lang = pick_language(&target, language)?;
    let compiled = compile(pattern, lang).map_err(|e| ToolError::invalid(e.message))?;
    let fix = rewrite
        .map(|r| Template::parse(r, &compiled.pattern.defined_vars()))
        .transpose()
        .map_err(ToolError::invalid)?;
    let shown_target = ws.display(&target);
    let root = ws.root().to_path_buf();
    let cache = cache.clone();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let _on_drop = CancelOnDrop(cancel.clone());
    let work = tokio::task::spawn_blocking(move || {
        let files = files_for(&target, lang);
        let display = |p: &std::path::Path| display_path(&root, p);
        search(&files, &compiled, fix.as_ref(), &cache, &display, &flag)
    });
    let (found, stats) = tokio::select! {
        r = work => r
            .map_err(|e| ToolError::failed(format!("the search task failed: {e}")))?
            .map_err(|_| ToolError::failed(
                "a search worker failed, so the results would be incomplete; none are shown. \
                 Retry, and report it if it happens again",
            ))?,
        _ = cx.cancel_token().cancelled() => {
            cancel.store(true, Ordering::Relaxed);
            return Err(ToolError::Cancelled);
        }
    };
    Ok(Outcome {
        found,
        stats,
        lang,
        target: shown_target,
    })
}

/// Stops the worker threads when the call's future is dropped.
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
        if max == 0 {
            return Err(ToolError::invalid(
                "max_results must be at least 1 (default 50)",
            ));
        }
        let o = run_search(
            cx,
            &self.cache,
            &args.pattern,
            args.path.as_deref(),
            args.language.as_deref(),
            None,
        )
        .await?;
        Ok(ToolOutput::text(render_matches(
            &o.found,
            &o.stats,
            max,
            o.lang.id(),
            &o.target,
        )))
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
        let o = run_search(
            cx,
            &self.cache,
            &args.pattern,
            args.path.as_deref(),
            args.language.as_deref(),
            Some(&args.rewrite),
        )
        .await?;
        crate::stage::stage_edit(cx, &args.pattern, o.found, &o.stats, o.lang.id(), &o.target)
    }
}
