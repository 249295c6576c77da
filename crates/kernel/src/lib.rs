//! The persistent kernel as a capability: a Python and a JavaScript process per run that keep
//! their state between `eval` calls, started on first use and ended with the run. Their
//! channel is a pair of descriptors of its own, so a cell's output never mixes with it.

#![forbid(unsafe_code)]

mod cell;
mod channel;
mod error;
mod message;
mod process;
mod sandbox;
mod settings;
mod tool;

use std::sync::Arc;
use std::time::Duration;
use tether_base::lock;

use serde::Deserialize;
use tether_tool::{BoxFuture, Capability, DoctorSection, Install, SettingError};

pub use sandbox::Sandbox;
pub use settings::SETTINGS;
pub use tool::{EvalArgs, EvalTool, Language};

/// What `doctor` says of the kernel for `root`: the interpreter `eval` would start, its
/// version, and whether pandas and matplotlib import there.
pub async fn report(root: &std::path::Path, trusted: bool) -> String {
    let (python, why) = match tool::interpreter(root) {
        Ok(found) => found,
        Err(e) => return format!("python (eval): {e}"),
    };
    // Doctor is what a user runs before trusting a repository: it runs nothing the repository
    // ships until then, and every interpreter isolated (`-I`) from `/`, off the workspace.
    if !trusted && tether_toolchain::inside(std::path::Path::new(&python), root) {
        return format!(
            "python (eval): {python} ({why}); inside the workspace, which is not trusted, so \
             doctor does not run it (`eval` will start it, trusted or not: it is an exec-tier \
             tool)"
        );
    }
    let probe = "import platform, importlib.util as u\n\
                 found = [m for m in ('pandas', 'matplotlib') if u.find_spec(m)]\n\
                 print(platform.python_version(), ' '.join(found))";
    let spec = tether_proc::ChildSpec {
        argv: vec![python.clone(), "-I".into(), "-c".into(), probe.into()],
        cwd: Some("/".into()),
        env: Vec::new(),
    };
    match tether_proc::run_with_deadline(&spec, Duration::from_secs(15)).await {
        Ok(out) if out.status.success() => {
            let said = String::from_utf8_lossy(&out.stdout);
            let mut words = said.split_whitespace();
            let version = words.next().unwrap_or("?");
            let found: Vec<&str> = words.collect();
            let missing: Vec<&str> = ["pandas", "matplotlib"]
                .into_iter()
                .filter(|m| !found.contains(m))
                .collect();
            let extras = match (found.is_empty(), missing.is_empty()) {
                (_, true) => "pandas and matplotlib import".to_string(),
                (true, _) => "pandas and matplotlib are not installed there".to_string(),
                (false, false) => format!(
                    "{} imports; {} is not installed there",
                    found.join(", "),
                    missing.join(", ")
                ),
            };
            format!("python (eval): {python} ({why}), Python {version}; {extras}")
        }
        Ok(out) => format!(
            "python (eval): {python} ({why}) failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => format!("python (eval): {python} ({why}) did not answer: {e}"),
    }
}

/// What `doctor` says of node, which JavaScript cells run on: found on PATH outside the
/// workspace and run from `/`, so nothing the repository ships runs.
async fn node(root: &std::path::Path) -> String {
    let Some(path) = tether_toolchain::which_outside("node", root) else {
        return "node: missing (not on PATH outside the workspace)".into();
    };
    let spec = tether_proc::ChildSpec {
        argv: vec![path.display().to_string(), "--version".into()],
        cwd: Some("/".into()),
        env: Vec::new(),
    };
    match tether_proc::run_with_deadline(&spec, Duration::from_secs(5)).await {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let version = text.lines().next().unwrap_or("").trim();
            format!("node: found at {} ({version})", path.display())
        }
        Err(e) => format!("node: found at {} but {e}", path.display()),
    }
}

/// The `[eval]` section of `tether.toml`.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// How long a cell may go without output before it is interrupted.
    pub idle: Duration,
    /// How long a kernel may take to start.
    pub start: Duration,
    /// `[eval.sandbox]`: the prefix kernels start under when its probe succeeds.
    pub sandbox: Option<Sandbox>,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            idle: Duration::from_secs(settings::IDLE_TIMEOUT.default_number()),
            start: Duration::from_secs(settings::START_TIMEOUT.default_number()),
            sandbox: None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Section {
    idle_timeout_s: Option<u64>,
    start_timeout_s: Option<u64>,
    sandbox: Option<Sandbox>,
}

impl EvalConfig {
    /// Reads `[eval]`; a wrong key or value says which and what is allowed.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, SettingError> {
        let mut config = EvalConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let s: Section = tether_tool::parse_section("eval", section)?;
        config.idle = settings::IDLE_TIMEOUT.duration(s.idle_timeout_s)?;
        config.start = settings::START_TIMEOUT.duration(s.start_timeout_s)?;
        if let Some(sandbox) = &s.sandbox {
            sandbox.validate()?;
        }
        config.sandbox = s.sandbox;
        Ok(config)
    }
}

/// The kernel capability.
#[derive(Default)]
pub struct Kernel {
    config: EvalConfig,
    kernels: Option<Arc<tool::Kernels>>,
}

impl Capability for Kernel {
    fn settings(&self) -> &'static [tether_tool::Setting] {
        SETTINGS
    }

    fn name(&self) -> &'static str {
        "eval"
    }

    fn section(&self) -> Option<&'static str> {
        Some("eval")
    }

    fn configure(&mut self, section: Option<&toml::Value>) -> Result<bool, SettingError> {
        self.config = EvalConfig::from_section(section)?;
        Ok(true)
    }

    fn programs(&self) -> Vec<String> {
        // A project without a virtual environment runs python3 from PATH; JavaScript, node.
        vec!["python3".into(), "node".into()]
    }

    fn install(&mut self, run: &mut Install) {
        let held = run.held_back.iter().any(|k| k.starts_with("eval.sandbox"));
        let kernels = Arc::new(tool::Kernels {
            slots: Default::default(),
            idle: self.config.idle,
            start: self.config.start,
            sandbox: self.config.sandbox.clone(),
            sandbox_held: held.then(|| {
                "the workspace's [eval.sandbox] runs a command, so it is held back until the \
                 workspace is trusted (`tether trust`)"
                    .to_string()
            }),
            groups: std::sync::Mutex::default(),
        });
        run.tool(EvalTool {
            kernels: kernels.clone(),
        });
        self.kernels = Some(kernels);
    }

    fn doctor<'a>(
        &'a self,
        root: &'a std::path::Path,
        trusted: bool,
    ) -> BoxFuture<'a, Vec<DoctorSection>> {
        Box::pin(async move {
            let lines = vec![report(root, trusted).await, node(root).await];
            vec![DoctorSection::new("interpreters", lines)]
        })
    }

    fn shutdown(&self, budget: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(kernels) = &self.kernels else {
                return;
            };
            let deadline = tokio::time::Instant::now() + budget;
            for language in [Language::Python, Language::Javascript] {
                let slot = &kernels.slots[language.index()];
                match tokio::time::timeout_at(deadline, slot.lock()).await {
                    Ok(mut slot) => {
                        if let Some(kernel) = slot.take() {
                            kernels.set_group(language, None);
                            kernel.stop().await;
                        }
                    }
                    // A cell still holds the kernel: its whole group is killed from here.
                    Err(_) => {
                        let groups = lock(&kernels.groups);
                        if let Some(pid) = groups[language.index()] {
                            tether_proc::signal_group(pid, tether_proc::Signal::KILL);
                        }
                    }
                }
            }
        })
    }
}
