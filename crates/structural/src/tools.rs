//! The `ast_grep` and `ast_edit` tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use tether_tool::{CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput};

use crate::budget::{Budget, Limits, MAX_RESULTS, Stop, on_large_stack};
use crate::cache::TreeCache;
use crate::footer::{count, no_match_hint, searched_line};
use crate::lang::Lang;
use crate::pattern::compile;
use crate::render::render_matches;
use crate::search::{FileMatches, Io, Mode, SearchError, SearchStats, search};
use crate::stage::{prepare, stage_edit};
use crate::template::Template;
use crate::walk::{files_for, languages_under};

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
    /// File or directory to search. Default: the whole workspace. A folder named here is
    /// searched even if it would be skipped by default (a `.venv`, a `node_modules`).
    path: Option<String>,
    /// Language id (python, rust, dart, typescript, c, …). Inferred from a file's extension,
    /// and for a folder whose files are all of one language; required for a mixed folder.
    language: Option<String>,
    /// How many matches to show: 1 to 1000, default 50.
    #[schemars(range(min = 1, max = crate::budget::MAX_RESULTS))]
    max_results: Option<usize>,
    /// Also search dot-folders (`.github`, `.config`); default false. `.git`, `.hg`, `.svn`
    /// and `.tether` are never searched.
    hidden: Option<bool>,
}

/// Arguments of `ast_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstEditArgs {
    /// Code fragment with metavariables, as in ast_grep.
    pattern: String,
    /// Replacement template; metavariables from the pattern are substituted.
    rewrite: String,
    /// File or directory to rewrite. Default: the whole workspace. A folder named here is
    /// rewritten even if it would be skipped by default.
    path: Option<String>,
    /// Language id; inferred as in ast_grep (a file, or a folder of one language).
    language: Option<String>,
    /// Also rewrite in dot-folders, as in ast_grep; default false.
    hidden: Option<bool>,
}

/// What a call searches: the checked arguments, resolved before the work leaves the runtime.
struct Request {
    pattern: String,
    lang: Lang,
    target: std::path::PathBuf,
    /// `target` as results show it.
    shown_target: String,
    /// Whether dot-folders below `target` are walked.
    hidden: bool,
    root: std::path::PathBuf,
    /// Files are opened beneath the workspace's descriptors, never by path alone.
    workspace: tether_fs::Workspace,
    cache: Arc<TreeCache>,
    /// How the language was inferred for a folder, for the result's first line.
    note: Option<String>,
}

impl Request {
    fn new(
        cx: &CallCx,
        cache: &Arc<TreeCache>,
        pattern: &str,
        scope: Scope<'_>,
    ) -> Result<Self, ToolError> {
        let ws = cx.workspace();
        let path = scope.path.unwrap_or(".");
        let target = ws.resolve_read(path)?;
        if !target.exists() {
            return Err(ToolError::invalid(format!(
                "{path} does not exist; give a file or folder relative to the workspace root"
            )));
        }
        let shown_target = ws.display(&target);
        let hidden = scope.hidden.unwrap_or(false);
        let (lang, note) = match scope.language {
            None if target.is_dir() => infer_language(&target, &shown_target, hidden)?,
            language => (pick_language(&target, &shown_target, language)?, None),
        };
        Ok(Request {
            pattern: pattern.to_string(),
            lang,
            hidden,
            note,
            shown_target,
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
        let display = |p: &std::path::Path| display_path(&self.root, p);
        let listing = files_for(&self.target, self.lang, self.hidden, &display, budget)
            .map_err(|s| stop_error(tool, s, budget))?;
        let open = |p: &std::path::Path| {
            self.workspace
                .open_read(p)
                .map_err(|e| std::io::Error::other(e.to_string()))
        };
        let io = Io {
            display: &display,
            open: &open,
        };
        let (found, mut stats) = search(&listing.files, &compiled, mode, &self.cache, &io, budget)
            .map_err(|e| match e {
                SearchError::Stopped(s) => stop_error(tool, s, budget),
                SearchError::WorkerFailed => ToolError::failed(
                    "a search worker failed, so the results would be incomplete; none are \
                     shown. Retry, and report it if it happens again",
                ),
                SearchError::Shape { file, shape } => ToolError::invalid(format!(
                    "the rewrite puts `{var}` after other text on a line, but at {file}:{line} \
                     its capture starts its own line, less indented than the code it follows \
                     (or indented with other blanks), so no indentation keeps its shape; \
                     nothing was staged. Put `{var}` at the start of its own line in `rewrite`",
                    var = shape.var,
                    line = shape.line,
                )),
            })?;
        stats.skipped_folders = listing.skipped;
        stats.all_ignored = listing.all_ignored;
        Ok((found, stats))
    }
}

/// Where a call looks: the `path`, `language` and `hidden` arguments as given.
struct Scope<'a> {
    path: Option<&'a str>,
    language: Option<&'a str>,
    hidden: Option<bool>,
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

/// The one language of a folder's files (those a search would walk), with a note saying so;
/// an error listing the languages found when there are several, or none.
fn infer_language(
    target: &std::path::Path,
    shown: &str,
    hidden: bool,
) -> Result<(Lang, Option<String>), ToolError> {
    let stop = AtomicBool::new(false);
    let budget = Budget::new(Limits::default(), &stop);
    let census = languages_under(target, hidden, &budget)
        .map_err(|s| stop_error("the language inference", s, &budget))?;
    let found: Vec<String> = census
        .langs
        .iter()
        .map(|(id, (n, _))| format!("{id} ({})", count(*n, "file", "files")))
        .collect();
    if let [(id, (_, exts))] = census.langs.iter().collect::<Vec<_>>().as_slice()
        && let Some(lang) = Lang::by_id(id)
    {
        let exts: Vec<&str> = exts.iter().map(String::as_str).collect();
        let besides = match census.others {
            0 => String::new(),
            n => format!(" (besides {n} in no bundled language)"),
        };
        let note = format!(
            "language inferred: {id}, every file under {shown} is {}{besides}",
            exts.join(" or ")
        );
        return Ok((lang, Some(note)));
    }
    let what = if found.is_empty() {
        "it holds no file of a bundled language".to_string()
    } else {
        format!("it holds {}", found.join(", "))
    };
    Err(ToolError::invalid(format!(
        "`language` is required when `path` is a folder ({shown}) whose files are not all of          one language: {what}; valid ids: {}",
        Lang::ids().join(", ")
    )))
}

/// The language to search: `language` if given (checked against a file's extension), else
/// the file's own; `shown` is the target as errors name it.
fn pick_language(
    target: &std::path::Path,
    shown: &str,
    language: Option<&str>,
) -> Result<Lang, ToolError> {
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
                        shown,
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
                shown,
                ids()
            ))
        }),
        None => Err(ToolError::invalid(format!(
            "`language` is required when `path` is a folder ({shown}); valid ids: {}",
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
        format!(
            "Structural code search: find code by shape with a pattern parsed by the language's \
             grammar, so spacing, line breaks and comments do not matter and strings/comments \
             never match. `$X` matches one node, `$$$ARGS` a run of siblings, `$_` anything; a \
             repeated `$X` must match the same text. `language` is inferred from a file's \
             extension, and for a folder (default: the whole workspace) whose files are all \
             of one language; a mixed folder needs it; ids: {}. Like ripgrep, a folder search honours .gitignore and skips dot-folders, \
             node_modules, virtual environments (pyvenv.cfg) and caches (CACHEDIR.TAG): \
             `hidden: true` adds dot-folders, and a skipped folder named in `path` is searched. \
             Results are `path:line` with captures, and always say how many files were \
             searched and which folders were skipped.",
            Lang::ids().join(", ")
        )
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
            Scope {
                path: args.path.as_deref(),
                language: args.language.as_deref(),
                hidden: args.hidden,
            },
        )?;
        let text = run_job(cx, self.limits, move |budget| {
            let (found, stats) = req.search("ast_grep", None, max, budget)?;
            let text = render_matches(&found, &stats, max, req.lang.id(), &req.shown_target);
            Ok(match &req.note {
                Some(note) => format!("{note}\n{text}"),
                None => text,
            })
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
        "Structural rewrite: the same matching, languages and folder defaults as ast_grep \
         (`language` inferred for a file or a folder of one language; dot-folders, node_modules, virtual environments and \
         caches skipped unless named in `path`; `hidden: true` adds dot-folders), with a \
         `rewrite` template in which the pattern's metavariables are substituted; multi-line \
         captures keep their shape. Writes nothing: the change is staged and the result names \
         an edit_id to pass to `resolve` (accept or discard), with every changed file and its \
         replacement count, then a diff preview and what the change would bring (the new \
         problems the language servers find in the proposed text)."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Write
    }

    fn concurrency(&self, _: &Self::Args) -> Concurrency {
        Concurrency::Free
    }

    fn preview(&self, args: &AstEditArgs) -> Preview {
        let summary = format!(
            "stage a rewrite of `{}` as `{}` (written only when resolved)",
            Preview::first_line(&args.pattern),
            Preview::first_line(&args.rewrite)
        );
        Preview::new(summary, args.path.iter().cloned().collect())
    }

    async fn call(&self, cx: &CallCx, args: AstEditArgs) -> Result<ToolOutput, ToolError> {
        let req = Request::new(
            cx,
            &self.cache,
            &args.pattern,
            Scope {
                path: args.path.as_deref(),
                language: args.language.as_deref(),
                hidden: args.hidden,
            },
        )?;
        let rewrite = args.rewrite;
        let recount = crate::search::recount(&args.pattern, req.lang);
        let (prepared, searched) = run_job(cx, self.limits, move |budget| {
            let (found, stats) = req.search("ast_edit", Some(&rewrite), 0, budget)?;
            let mut searched = searched_line(&stats, req.lang.id(), &req.shown_target);
            if found.is_empty()
                && let Some(hint) = no_match_hint(&stats)
            {
                searched = format!("{hint}\n{searched}");
            }
            if let Some(note) = &req.note {
                searched = format!("{note}\n{searched}");
            }
            let prepared = prepare(found, budget).map_err(|s| stop_error("ast_edit", s, budget))?;
            Ok((prepared, searched))
        })
        .await?;
        stage_edit(cx, &args.pattern, prepared, &searched, recount).await
    }
}
