//! The `eval` tool: a persistent Python kernel per run, started on first use, with the
//! run's own tools a call away through `tool()`.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tether_tool::{BoxFuture, CallCx, Concurrency, Tier, Tool, ToolError, ToolOutput};

use crate::process::{Ended, Kernel};

/// The bootstrap every Python kernel runs.
const PYTHON_KERNEL: &str = include_str!("kernel.py");

/// A kernel's language.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python: the project's `.venv` or `venv`, else `python3`.
    #[default]
    Python,
    /// JavaScript under node.
    Javascript,
}

/// The `eval` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// The cell. Its last expression is echoed; variables and imports persist between calls.
    pub code: String,
    /// 5 to 10 words on what the cell does, for the transcript.
    pub description: String,
    /// python (the default) or javascript.
    #[serde(default)]
    pub language: Language,
    /// Throw the kernel away and start a clean one first.
    #[serde(default)]
    pub reset: bool,
}

/// The run's kernels and their budgets.
pub struct Kernels {
    pub(crate) python: tokio::sync::Mutex<Option<Kernel>>,
    /// A cell's inactivity budget (`[eval] idle_timeout_s`).
    pub(crate) idle: Duration,
    /// How long a kernel may take to start.
    pub(crate) start: Duration,
    /// The running kernel's process group, to kill at shutdown even while a cell holds it.
    pub(crate) group: std::sync::Mutex<Option<u32>>,
}

impl Kernels {
    /// Records the running kernel's group (or that none runs), for [`crate::Kernel`]'s shutdown.
    pub(crate) fn set_group(&self, pid: Option<u32>) {
        *self.group.lock().unwrap_or_else(|p| p.into_inner()) = pid;
    }
}

/// The `eval` tool.
pub struct EvalTool {
    pub(crate) kernels: std::sync::Arc<Kernels>,
}

/// The Python a project uses, as a command, and why it was chosen.
pub(crate) fn interpreter(root: &Path) -> Result<(String, &'static str), ToolError> {
    let (python, why) = tether_proc::project_python(root).ok_or_else(|| {
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
        "Run Python in a persistent kernel: variables, imports and loaded data stay between \
         calls, and the last expression is echoed. `display(obj)` shows an object in order with \
         prints. `tool(name, args)` calls this run's own tools and returns their text (a failure \
         raises ToolError). `reset: true` starts a clean kernel. A cell silent for longer than \
         the idle budget is interrupted and the kernel kept."
            .into()
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn concurrency(&self, args: &EvalArgs) -> Concurrency {
        Concurrency::Session(format!("eval:{:?}", args.language).to_lowercase())
    }

    async fn call(&self, cx: &CallCx, args: EvalArgs) -> Result<ToolOutput, ToolError> {
        if args.language == Language::Javascript {
            return Err(ToolError::invalid(
                "the JavaScript kernel is not built yet in this version of tether; use \
                 `language: \"python\"`",
            ));
        }
        if args.description.trim().is_empty() {
            return Err(ToolError::invalid(
                "`description` is empty: say in 5 to 10 words what the cell does",
            ));
        }
        let mut slot = self.kernels.python.lock().await;
        let mut said = Vec::new();
        if args.reset
            && let Some(old) = slot.take()
        {
            self.kernels.set_group(None);
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
            self.kernels.set_group(None);
        }
        if slot.is_none() {
            let root = cx.workspace().root();
            let (python, why) = interpreter(root)?;
            let argv = vec![python, "-u".into(), "-c".into(), PYTHON_KERNEL.into()];
            let env = vec![
                ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
                ("PYTHONIOENCODING".to_string(), "utf-8".to_string()),
                ("MPLBACKEND".to_string(), "Agg".to_string()),
            ];
            let kernel = Kernel::start(argv, root, env, self.kernels.start)
                .await
                .map_err(|e| {
                    ToolError::failed(format!("the Python kernel could not start: {e}"))
                })?;
            said.push(format!("started {} ({why})", kernel.interpreter));
            self.kernels.set_group(kernel.pid());
            *slot = Some(kernel);
        }
        let Some(kernel) = slot.as_mut() else {
            return Err(ToolError::failed("no kernel"));
        };
        let bridge = |name: String, args: Value| -> BoxFuture<'_, Result<ToolOutput, String>> {
            Box::pin(async move { cx.dispatch(&name, args).await.map_err(|e| e.to_string()) })
        };
        let first = (!said.is_empty()).then(|| said.join("\n"));
        match kernel
            .run(&args.code, self.kernels.idle, cx.cancel_token(), &bridge)
            .await
        {
            Ok(cell) => match cell.render(first) {
                (out, None) => Ok(out),
                (out, Some(error)) => Err(ToolError::failed(join(&out, &error))),
            },
            Err(Ended::Died { cell, why }) => {
                *slot = None;
                self.kernels.set_group(None);
                let (out, _) = cell.render(first);
                Err(ToolError::failed(join(
                    &out,
                    &format!("{why}: its state is gone; the next cell starts a fresh kernel"),
                )))
            }
            Err(Ended::Cancelled) => Err(ToolError::Cancelled),
        }
    }
}

/// A result's text with `more` after it, for an error, which carries text only.
fn join(out: &ToolOutput, more: &str) -> String {
    let text = out.to_text();
    match text.is_empty() {
        true => more.trim_end().to_string(),
        false => format!("{text}\n{}", more.trim_end()),
    }
}
