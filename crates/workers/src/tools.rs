//! The five vibe tools: spawn returns at once, wait blocks for the first of some workers to
//! end, send runs one again with more to go on, kill ends its whole tree, list shows all.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tether_base::cut_line;
use tether_tool::{CallCx, Concurrency, Surface, Tier, Tool, ToolError, ToolOutput};

use crate::config::TierConfig;
use crate::pool::{Pool, State, Worker, number};

/// Characters of a result shown by `vibe_wait`; the transcript has the rest.
const RESULT_CAP: usize = 8000;

/// A tier a worker runs at.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum WorkerTier {
    /// Mechanical work with a clear spec.
    #[default]
    Fast,
    /// Design, judgment, or reviewing a fast worker's output.
    Good,
}

impl WorkerTier {
    fn name(self) -> &'static str {
        match self {
            WorkerTier::Fast => "fast",
            WorkerTier::Good => "good",
        }
    }
}

/// What the tools share: the pool, and why a tier cannot run if it cannot.
pub struct Shared {
    /// The run's workers.
    pub pool: Arc<Pool>,
    /// Tier name to why it is unusable (not trusted yet).
    pub held: Vec<(String, String)>,
}

impl Shared {
    fn worker(&self, id: &str) -> Result<(u32, Worker), ToolError> {
        let found = number(id).and_then(|n| self.pool.get(n).map(|w| (n, w)));
        found.ok_or_else(|| {
            let known: Vec<String> = self.pool.all().into_iter().map(|w| w.id).collect();
            ToolError::invalid(match known.is_empty() {
                true => format!("no worker `{id}`: none has been spawned in this run"),
                false => format!("no worker `{id}`; this run has {}", known.join(", ")),
            })
        })
    }
}

fn elapsed(worker: &Worker) -> String {
    match (worker.started, worker.ended) {
        (Some(start), Some(end)) => format!("{:.1} s", (end - start).as_secs_f64()),
        (Some(start), None) => format!("{:.1} s", start.elapsed().as_secs_f64()),
        _ => "not started".into(),
    }
}

/// A worker's state, and when it is done its result or how it failed.
fn report(worker: &Worker, stall: Duration) -> String {
    let mut out = format!(
        "{} ({}, {}): {} after {}",
        worker.id,
        worker.label,
        worker.tier,
        worker.state.as_str(),
        elapsed(worker)
    );
    match worker.state {
        State::Completed => {
            let result = worker.result.as_deref().unwrap_or("");
            let shown = cut_line(result, RESULT_CAP);
            out.push_str(&format!("\nresult:\n{shown}"));
            if result.chars().nth(RESULT_CAP).is_some() {
                out.push_str("\n(the whole result is in the transcript)");
            }
        }
        State::Failed | State::Killed => {
            if let Some(exit) = &worker.exit {
                out.push_str(&format!("\nhow it ended: {exit}"));
            }
            out = tether_proc::with_stderr_tail(&out, &worker.stderr_tail);
        }
        State::Stalled => out.push_str(&format!(
            "\nno output for over {} s; `vibe_kill` it, or keep waiting",
            stall.as_secs()
        )),
        _ => {}
    }
    if let Some(tree) = &worker.worktree {
        out.push_str(&format!(
            "\nits worktree: {} on branch {}",
            tree.path.display(),
            tree.branch
        ));
        if let Some(left) = &tree.left {
            out.push_str(&format!(" ({left})"));
        }
    }
    out.push_str(&format!("\nhistory: {}", history(worker)));
    out.push_str(&format!(
        "\ntranscript: {}",
        worker.transcript.path().display()
    ));
    out
}

/// Each change of state, in seconds from the first: "queued +0.0 s, running +0.0 s, …".
fn history(worker: &Worker) -> String {
    let Some((_, first)) = worker.changes.first() else {
        return String::new();
    };
    let steps: Vec<String> = worker
        .changes
        .iter()
        .map(|(state, at)| {
            let after = at.duration_since(*first).unwrap_or_default().as_secs_f64();
            format!("{} +{after:.1} s", state.as_str())
        })
        .collect();
    steps.join(", ")
}

/// `vibe_spawn`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArgs {
    /// The whole task: what to do, where, and how to tell it is done.
    pub brief: String,
    /// A few words to tell this worker apart in `vibe_list`.
    pub label: String,
    /// fast (the default) or good.
    #[serde(default)]
    pub tier: WorkerTier,
}

/// `vibe_spawn`.
pub struct Spawn(pub Arc<Shared>);

impl Tool for Spawn {
    type Args = SpawnArgs;
    fn name(&self) -> &'static str {
        "vibe_spawn"
    }
    fn description(&self) -> String {
        "Start a background worker (a coding agent) on a brief; returns its id at once while it \
         works. `tier`: fast for mechanical work with a clear spec, good for design or review. \
         Then `vibe_wait` for its result."
            .into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &SpawnArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, args: SpawnArgs) -> Result<ToolOutput, ToolError> {
        let tier = args.tier.name();
        if args.brief.trim().is_empty() {
            return Err(ToolError::invalid(
                "`brief` is empty: say what the worker should do",
            ));
        }
        if let Some((_, why)) = self.0.held.iter().find(|(t, _)| t == tier) {
            return Err(ToolError::failed(why.clone()));
        }
        let tiers = &self.0.pool.config().tiers;
        if !tiers.contains_key(tier) {
            let other = match tiers.keys().next() {
                Some(other) => format!("; `{other}` is: pass tier = \"{other}\", or add one"),
                None => String::new(),
            };
            return Err(ToolError::failed(format!(
                "no `[workers.{tier}]` backend is configured{other}. In tether.toml, e.g.\n\
                 [workers.{tier}]\ncommand = [\"claude\", \"-p\", \"--output-format\", \
                 \"stream-json\", \"--verbose\", \"--permission-mode\", \"acceptEdits\"]\n\
                 format = \"stream-json\"\nread_only_args = [\"--permission-mode\", \"plan\"]\n\
                 resume_args = [\"--resume\", \"{{session}}\"]\n\
                 Tested templates for Claude Code, Codex and opencode are in tether's docs/workers."
            )));
        }
        let launch = surface_for(cx.surface(), tier, &self.0.pool.config().tiers[tier])?;
        let label = match args.label.trim() {
            "" => "unlabelled".to_string(),
            l => cut_line(l, 60),
        };
        let id = self
            .0
            .pool
            .spawn(args.brief, label, tier.to_string(), launch);
        let state = number(&id)
            .and_then(|n| self.0.pool.get(n))
            .map_or("queued", |w| w.state.as_str());
        let how = match state {
            "queued" => format!(
                "queued: all {} slots are busy; it starts when one frees",
                self.0.pool.config().max_concurrent
            ),
            other => other.to_string(),
        };
        Ok(ToolOutput::text(format!(
            "{id} spawned ({tier}), {how}. `vibe_wait` with worker_id \"{id}\" for its result."
        )))
    }
}

/// The worker's surface (the narrower of its caller's and its tier's) and the flags that
/// make its CLI keep to it; refused when a read-only surface has no such flags.
fn surface_for(
    caller: Surface,
    tier: &str,
    config: &TierConfig,
) -> Result<(String, Vec<String>), ToolError> {
    let own = config
        .surface
        .as_deref()
        .and_then(|s| s.parse::<Surface>().ok());
    let surface = own.map_or(caller, |own| caller.narrower(own));
    if surface == Surface::Agent {
        return Ok((surface.to_string(), Vec::new()));
    }
    if config.read_only_args.is_empty() {
        return Err(ToolError::failed(format!(
            "this worker would run on the read-only `{surface}` surface, but `[workers.{tier}]` \
             has no `read_only_args` to keep its CLI from editing, so no worker was started. \
             Add the CLI's own read-only flags, e.g. read_only_args = [\"--permission-mode\", \
             \"plan\"] for claude"
        )));
    }
    Ok((surface.to_string(), config.read_only_args.clone()))
}

/// `vibe_wait`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// The worker to wait for.
    #[serde(default)]
    pub worker_id: Option<String>,
    /// Several workers: the wait ends when the first of them ends.
    #[serde(default)]
    pub worker_ids: Option<Vec<String>>,
    /// How long to wait (default 30, at most 600).
    #[serde(default)]
    #[schemars(range(min = 1, max = 600))]
    pub timeout_seconds: Option<u64>,
}

/// `vibe_wait`.
pub struct Wait(pub Arc<Shared>);

impl Tool for Wait {
    type Args = WaitArgs;
    fn name(&self) -> &'static str {
        "vibe_wait"
    }
    fn description(&self) -> String {
        "Wait until a worker ends (or the first of `worker_ids`), at most `timeout_seconds` \
         (30 by default, 600 at most); returns its state and, once done, its result."
            .into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &WaitArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, cx: &CallCx, args: WaitArgs) -> Result<ToolOutput, ToolError> {
        let mut ids: Vec<String> = args.worker_ids.unwrap_or_default();
        ids.extend(args.worker_id);
        if ids.is_empty() {
            return Err(ToolError::invalid(
                "give `worker_id`, or `worker_ids` to wait for the first of several",
            ));
        }
        let secs = args.timeout_seconds.unwrap_or(30);
        if !(1..=600).contains(&secs) {
            return Err(ToolError::invalid(format!(
                "`timeout_seconds = {secs}`: give 1 to 600, and wait again if it is not done"
            )));
        }
        let numbers = ids
            .iter()
            .map(|id| self.0.worker(id).map(|(n, _)| n))
            .collect::<Result<Vec<u32>, ToolError>>()?;
        let end = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let changed = self.0.pool.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let workers: Vec<Worker> = numbers.iter().filter_map(|n| self.0.pool.get(*n)).collect();
            if let Some(done) = workers.iter().find(|w| w.state.ended()) {
                return Ok(ToolOutput::text(report(
                    done,
                    self.0.pool.config().stall_after,
                )));
            }
            tokio::select! {
                () = &mut changed => {}
                () = tokio::time::sleep_until(end) => {
                    let lines: Vec<String> = workers
                        .iter()
                        .map(|w| format!("{} {} for {}", w.id, w.state.as_str(), elapsed(w)))
                        .collect();
                    let stalled = workers.iter().any(|w| w.state == State::Stalled);
                    let hint = match stalled {
                        true => " A stalled worker has printed nothing for a while.",
                        false => "",
                    };
                    return Ok(ToolOutput::text(format!(
                        "none ended within {secs} s: {}. Wait again, or `vibe_kill` one.{hint}",
                        lines.join("; ")
                    )));
                }
                () = cx.cancel_token().cancelled() => return Err(ToolError::Cancelled),
            }
        }
    }
}

/// `vibe_send`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// The worker.
    pub worker_id: String,
    /// What to add to its brief.
    pub message: String,
}

/// `vibe_send`.
pub struct Send(pub Arc<Shared>);

impl Tool for Send {
    type Args = SendArgs;
    fn name(&self) -> &'static str {
        "vibe_send"
    }
    fn description(&self) -> String {
        "Add a message to a worker's brief and run it again: a running worker restarts with the \
         longer brief, an ended one runs again."
            .into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &SendArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _cx: &CallCx, args: SendArgs) -> Result<ToolOutput, ToolError> {
        if args.message.trim().is_empty() {
            return Err(ToolError::invalid(
                "`message` is empty: say what to add to the brief",
            ));
        }
        let (n, worker) = self.0.worker(&args.worker_id)?;
        let how = self
            .0
            .pool
            .send(n, &args.message)
            .map_err(ToolError::failed)?;
        Ok(ToolOutput::text(format!("{}: {how}", worker.id)))
    }
}

/// `vibe_kill`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillArgs {
    /// The worker.
    pub worker_id: String,
}

/// `vibe_kill`.
pub struct Kill(pub Arc<Shared>);

impl Tool for Kill {
    type Args = KillArgs;
    fn name(&self) -> &'static str {
        "vibe_kill"
    }
    fn description(&self) -> String {
        "Stop a worker: its whole process tree is killed.".into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &KillArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _cx: &CallCx, args: KillArgs) -> Result<ToolOutput, ToolError> {
        let (n, worker) = self.0.worker(&args.worker_id)?;
        match self.0.pool.kill(n).map_err(ToolError::failed)? {
            true => Ok(ToolOutput::text(format!(
                "{} killed, with every process it started",
                worker.id
            ))),
            false => Ok(ToolOutput::text(format!(
                "{} had already ended ({}); nothing to kill",
                worker.id,
                worker.state.as_str()
            ))),
        }
    }
}

/// `vibe_list`'s arguments: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {}

/// `vibe_list`.
pub struct List(pub Arc<Shared>);

impl Tool for List {
    type Args = ListArgs;
    fn name(&self) -> &'static str {
        "vibe_list"
    }
    fn description(&self) -> String {
        "List this run's workers: id, label, tier, state, elapsed time and the first line of \
         the last result."
            .into()
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn concurrency(&self, _: &ListArgs) -> Concurrency {
        Concurrency::Free
    }
    async fn call(&self, _cx: &CallCx, _args: ListArgs) -> Result<ToolOutput, ToolError> {
        let workers = self.0.pool.all();
        if workers.is_empty() {
            return Ok(ToolOutput::text("no workers yet; `vibe_spawn` starts one"));
        }
        let lines: Vec<String> = workers
            .iter()
            .map(|w| {
                let first = w
                    .result
                    .as_deref()
                    .and_then(|r| r.lines().find(|l| !l.trim().is_empty()))
                    .map(|l| format!("  {}", cut_line(l.trim(), 100)))
                    .unwrap_or_default();
                format!(
                    "{}  {}  {}  {}  {}{first}",
                    w.id,
                    w.label,
                    w.tier,
                    w.state.as_str(),
                    elapsed(w)
                )
            })
            .collect();
        Ok(ToolOutput::text(lines.join("\n")))
    }
}
