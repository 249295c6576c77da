//! The `eval` tool: a persistent Python kernel per run, started on first use, with the
//! run's own tools a call away through `tool()`.

use std::path::Path;
use std::time::Duration;
use tether_base::lock;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_tool::{BoxFuture, CallCx, Concurrency, Preview, Tier, Tool, ToolError, ToolOutput};

use crate::cell::interrupted_note;
use crate::process::{Ended, Kernel};
use crate::sandbox::{Placement, Sandbox};

/// The bootstrap every Python kernel runs.
const PYTHON_KERNEL: &str = include_str!("kernel.py");
/// The bootstrap every JavaScript kernel runs.
const JAVASCRIPT_KERNEL: &str = include_str!("kernel.js");

/// A kernel's language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python: the project's `.venv` or `venv`, else `python3`.
    #[default]
    #[serde(alias = "py", alias = "python3")]
    Python,
    /// JavaScript under node.
    #[serde(alias = "js", alias = "node")]
    Javascript,
}

impl Language {
    /// Its place in per-language arrays.
    pub(crate) fn index(self) -> usize {
        match self {
            Language::Python => 0,
            Language::Javascript => 1,
        }
    }

    /// Its name in results.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::Javascript => "JavaScript",
        }
    }
}

/// The `eval` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = description_required)]
pub struct EvalArgs {
    /// The cell. Its last expression is echoed; variables and imports persist between calls.
    pub code: String,
    /// 5 to 10 words on what the cell does, for the transcript.
    #[serde(default)]
    pub description: String,
    /// python (the default) or javascript.
    #[serde(default)]
    pub language: Language,
    /// Throw the kernel away and start a clean one first.
    #[serde(default)]
    pub reset: bool,
}

/// Marks `description` required in the schema: serde lets it be absent only so that its
/// absence gets an error saying why it is needed.
fn description_required(schema: &mut schemars::Schema) {
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        required.push("description".into());
    }
}

/// The run's kernels, one per language, and their budgets.
pub struct Kernels {
    /// Indexed by [`Language::index`].
    pub(crate) slots: [tokio::sync::Mutex<Option<Kernel>>; 2],
    /// A cell's inactivity budget (`[eval] idle_timeout_s`).
    pub(crate) idle: Duration,
    /// How long a kernel may take to start.
    pub(crate) start: Duration,
    /// `[eval.sandbox]`, when configured and usable.
    pub(crate) sandbox: Option<Sandbox>,
    /// Why a configured sandbox is not used (the workspace is not trusted), if so.
    pub(crate) sandbox_held: Option<String>,
    /// The running kernels' process groups, to kill at shutdown even while a cell holds one.
    pub(crate) groups: std::sync::Mutex<[Option<u32>; 2]>,
}

impl Kernels {
    /// Records a language's running kernel group (or that none runs), for shutdown.
    pub(crate) fn set_group(&self, language: Language, pid: Option<u32>) {
        lock(&self.groups)[language.index()] = pid;
    }

    /// Where the next kernel starts, and the words that say so (empty for the plain host).
    async fn placement(&self) -> (Vec<String>, String) {
        if let Some(why) = &self.sandbox_held {
            return (Vec::new(), format!("on the host: {why}"));
        }
        let Some(sandbox) = &self.sandbox else {
            return (Vec::new(), String::new());
        };
        match sandbox.place().await {
            Placement::Inside(prefix) => {
                let said = format!("inside the sandbox (`{}`)", prefix.join(" "));
                (prefix, said)
            }
            Placement::Host(why) => (Vec::new(), format!("on the host: {why}")),
        }
    }

    /// Starts a kernel for `language` in `root`; the words name the interpreter and why.
    async fn start_kernel(
        &self,
        language: Language,
        root: &Path,
    ) -> Result<(Kernel, String), ToolError> {
        let (mut argv, why, env) = match language {
            Language::Python => {
                let (python, why) = interpreter(root)?;
                let env = vec![
                    ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
                    ("PYTHONIOENCODING".to_string(), "utf-8".to_string()),
                    ("MPLBACKEND".to_string(), "Agg".to_string()),
                ];
                (
                    vec![python, "-u".into(), "-c".into(), PYTHON_KERNEL.into()],
                    why,
                    env,
                )
            }
            Language::Javascript => {
                let node = which::which("node").map_err(|_| {
                    ToolError::failed(
                        "no JavaScript to run: `node` is not on PATH; install Node.js 20 or \
                         newer, or use `language: \"python\"`",
                    )
                })?;
                let argv = vec![
                    node.display().to_string(),
                    "--expose-internals".into(),
                    "-e".into(),
                    JAVASCRIPT_KERNEL.into(),
                ];
                (argv, "node on PATH", Vec::new())
            }
        };
        let (prefix, place) = self.placement().await;
        if !prefix.is_empty() {
            argv = prefix.into_iter().chain(argv).collect();
        }
        let kernel = Kernel::start(argv, root, env, self.start)
            .await
            .map_err(|e| {
                ToolError::failed(format!(
                    "the {} kernel could not start: {e}",
                    language.label()
                ))
            })?;
        let mut said = format!("started {} ({why})", kernel.interpreter);
        if !place.is_empty() {
            said.push_str(&format!(", {place}"));
        }
        Ok((kernel, said))
    }
}

/// The `eval` tool.
pub struct EvalTool {
    pub(crate) kernels: std::sync::Arc<Kernels>,
}

/// The Python a project uses, as a command, and why it was chosen.
pub(crate) fn interpreter(root: &Path) -> Result<(String, &'static str), ToolError> {
    let (python, why) = tether_toolchain::project_python(root).ok_or_else(|| {
        ToolError::failed(
            "no Python to run: the project has no .venv or venv and python3 is not on PATH",
        )
    })?;
    Ok((python.display().to_string(), why))
}

impl Tool for EvalTool {
    type Args = EvalArgs;

    fn name(&self) -> &'static str {
        "eval"
    }

    fn description(&self) -> String {
        "Run Python (the default) or JavaScript (`language: \"javascript\"`, node) in a \
         persistent kernel: variables, imports and loaded data stay between calls, and the last \
         expression is echoed. `display(obj)` shows an object in order with prints; pandas \
         DataFrames come back as tables and matplotlib figures as images. `tool(name, args)` \
         (JavaScript: `await tool(name, args)`) calls this run's own tools and returns their \
         text; a failure raises ToolError. Python takes %pip, %cd, !cmd and %%bash; JavaScript \
         takes top-level await and `image(pngBytesOrPath)`. `reset: true` starts a clean \
         kernel. A cell silent for longer than the idle budget is interrupted and the kernel \
         kept."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn concurrency(&self, args: &EvalArgs) -> Concurrency {
        Concurrency::Session(format!("eval:{:?}", args.language).to_lowercase())
    }

    fn preview(&self, args: &EvalArgs) -> Preview {
        let summary = format!(
            "{} (first line: {})",
            args.description,
            Preview::first_line(&args.code)
        );
        Preview::new(summary, Vec::new())
    }

    async fn call(&self, cx: &CallCx, args: EvalArgs) -> Result<ToolOutput, ToolError> {
        if args.description.trim().is_empty() {
            return Err(ToolError::invalid(
                "`description` is missing or empty: say in 5 to 10 words what the cell does; it \
                 labels the cell in the transcript the human reads",
            ));
        }
        let language = args.language;
        let mut said = Vec::new();
        let words = args.description.split_whitespace().count();
        if !(5..=10).contains(&words) {
            let plural = if words == 1 { "" } else { "s" };
            said.push(format!(
                "the description has {words} word{plural}: give 5 to 10 words on what the cell \
                 does, as it labels the cell in the transcript"
            ));
        }
        let mut slot = self.kernels.slots[language.index()].lock().await;
        if args.reset
            && let Some(old) = slot.take()
        {
            self.kernels.set_group(language, None);
            old.stop().await;
            said.push("reset: the old kernel and its variables are gone".to_string());
        }
        if let Some(kernel) = slot.as_mut()
            && kernel.exit_status().is_some()
        {
            let why = kernel.ended("the kernel died after the last cell").await;
            said.push(format!(
                "{why}; its state is gone and this cell runs in a fresh kernel"
            ));
            *slot = None;
            self.kernels.set_group(language, None);
        }
        if slot.is_none() {
            let starting = self.kernels.start_kernel(language, cx.workspace().root());
            let (kernel, started) = cx
                .progress_while(starting, |t| {
                    format!(
                        "starting the {} kernel ({} s)",
                        language.label(),
                        t.as_secs()
                    )
                })
                .await?;
            said.push(started);
            self.kernels.set_group(language, kernel.pid());
            *slot = Some(kernel);
        }
        let Some(kernel) = slot.as_mut() else {
            return Err(ToolError::failed("no kernel"));
        };
        // The tool a cell's `tool()` waits on, named in the cell's progress reports.
        let waiting_on = std::sync::Mutex::new(None::<String>);
        let bridge = |name: String, args: Value| -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
            let waiting_on = &waiting_on;
            Box::pin(async move {
                *lock(waiting_on) = Some(name.clone());
                let out = cx.dispatch(&name, args).await;
                *lock(waiting_on) = None;
                out
            })
        };
        let first = (!said.is_empty()).then(|| said.join("\n"));
        let running = kernel.run(&args.code, self.kernels.idle, cx.cancel_token(), &bridge);
        let tell = |t: Duration| {
            let on = lock(&waiting_on).clone();
            match on {
                Some(tool) => format!(
                    "cell running ({} s), waiting on its `{tool}` call",
                    t.as_secs()
                ),
                None => format!("cell running ({} s)", t.as_secs()),
            }
        };
        match cx.progress_while(running, tell).await {
            Ok(mut cell) => {
                let summary = cell.summary.take();
                match cell.error.take() {
                    None => Ok(cell.render(first).0),
                    Some(error) => {
                        let said = match summary {
                            Some(summary) => format!("the cell raised {summary}"),
                            None => "the cell raised an error".to_string(),
                        };
                        // tether's own words go above the output, not among it.
                        let interrupted = cell.interrupted_after.take();
                        let first = first.into_iter().chain(interrupted.map(interrupted_note));
                        let first = first.collect::<Vec<_>>().join("\n");
                        let (out, _) = cell.render(None);
                        Err(ToolError::failed(failure(&said, &first, &out, &error)))
                    }
                }
            }
            Err(Ended::Died { cell, why }) => {
                *slot = None;
                self.kernels.set_group(language, None);
                let (out, _) = cell.render(None);
                let said = format!("{why}: its state is gone; the next cell starts a fresh kernel");
                Err(ToolError::failed(failure(
                    &said,
                    &first.unwrap_or_default(),
                    &out,
                    "",
                )))
            }
            Err(Ended::Cancelled) => Err(ToolError::Cancelled),
        }
    }
}

/// A failed cell's text, which carries text only: what failed on a line of its own, then what
/// tether said, the cell's output and the error's detail, each under a label, so that printed
/// text never runs into the error's prefix.
fn failure(headline: &str, said: &str, out: &ToolOutput, detail: &str) -> String {
    let mut text = vec![headline.to_string()];
    if !said.is_empty() {
        text.push(said.to_string());
    }
    let printed = out.to_text();
    if !printed.is_empty() {
        text.push(format!("output before the error:\n{printed}"));
    }
    let detail = detail.trim_end();
    if !detail.is_empty() {
        text.push(format!("the error:\n{detail}"));
    }
    text.join("\n")
}
