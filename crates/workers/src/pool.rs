//! The run's workers: each a backend process in its own group, fed its brief on stdin, its
//! stdout kept as the transcript. At most `max_concurrent` run; the rest queue, and a worker
//! that ends frees its slot at once for the next.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tether_base::lock;

use tether_proc::{ChildSpec, LongChild};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::config::{TierConfig, WorkersConfig};
use crate::output::OutputReader;
use crate::transcript::Transcript;
use crate::worktree::{self, Worktree};

/// Where a worker is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Waiting for a slot.
    Queued,
    /// Its process runs and has spoken within `stall_after_s`.
    Running,
    /// Its process runs but has been silent past `stall_after_s`; still killable.
    Stalled,
    /// Exited 0.
    Completed,
    /// Exited otherwise, or could not start.
    Failed,
    /// Killed by `vibe_kill` or at the run's end.
    Killed,
}

impl State {
    /// Its name in results.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Stalled => "stalled",
            State::Completed => "completed",
            State::Failed => "failed",
            State::Killed => "killed",
        }
    }

    /// Whether the worker is done (until sent more).
    pub fn ended(self) -> bool {
        matches!(self, State::Completed | State::Failed | State::Killed)
    }
}

/// One worker and what is known of it.
#[derive(Debug, Clone)]
pub struct Worker {
    /// `w1`, `w2`, …
    pub id: String,
    /// The caller's label.
    pub label: String,
    /// `fast` or `good`.
    pub tier: String,
    /// The surface it runs with: its caller's, or its tier's if narrower.
    pub surface: String,
    /// Flags added to its tier's command (those that make it read-only).
    pub extra_args: Vec<String>,
    /// The brief, with every message sent since appended.
    pub brief: String,
    /// Its state now.
    pub state: State,
    /// Every change of state, with when it happened.
    pub changes: Vec<(State, SystemTime)>,
    /// When its current run began.
    pub started: Option<Instant>,
    /// When its last run ended.
    pub ended: Option<Instant>,
    /// Its full stdout, every run of it in this run of tether, under `.tether/workers/`.
    pub transcript: Arc<Transcript>,
    /// The final message of its last finished run.
    pub result: Option<String>,
    /// How its last run ended, in words ("exit code 1"), when it did not succeed.
    pub exit: Option<String>,
    /// The last lines of stderr of its last run.
    pub stderr_tail: Vec<String>,
    /// How many times it has been started.
    pub runs: u32,
    /// Its git worktree, under `isolation = "worktree"`, once made.
    pub worktree: Option<Worktree>,
    /// The backend's own session id, when its output named one (`session_id`, `thread_id`).
    pub session: Option<String>,
    /// A message to continue the session with on the next run, instead of the whole brief.
    follow_up: Option<String>,
    /// The session the current run continues, if it does.
    resumed: Option<String>,
    /// Its process group while it runs.
    group: Option<u32>,
    /// Ends the current run.
    stop: Option<CancellationToken>,
    /// Held while its worktree is made, so a run started meanwhile waits for that one.
    making: Arc<tokio::sync::Mutex<()>>,
}

impl Worker {
    /// Appends how its run ended to the transcript, so that the file alone tells the story.
    fn record_end(&self, how: &str) {
        let after = self
            .started
            .map(|s| format!(" after {:.1} s", s.elapsed().as_secs_f64()))
            .unwrap_or_default();
        self.transcript.end(self.runs, &format!("{how}{after}"));
    }

    /// Its state, and why when it did not succeed.
    fn outcome(&self) -> String {
        match &self.exit {
            Some(why) => format!("{}: {why}", self.state.as_str()),
            None => self.state.as_str().to_string(),
        }
    }

    fn set(&mut self, state: State) {
        if self.state != state {
            self.state = state;
            self.changes.push((state, SystemTime::now()));
        }
    }
}

#[derive(Default)]
struct Inner {
    workers: BTreeMap<u32, Worker>,
    queue: VecDeque<u32>,
    running: usize,
    next: u32,
    closed: bool,
}

/// The run's workers.
pub struct Pool {
    config: WorkersConfig,
    root: PathBuf,
    /// This run's id, in its transcripts' and worktrees' names.
    run: String,
    /// This run's hold on its worktrees, taken when the first is made.
    claim: tokio::sync::OnceCell<worktree::Claim>,
    inner: Mutex<Inner>,
    /// Woken at every change of state.
    pub changed: Notify,
}

/// The number in a worker id (`w3` -> 3).
pub fn number(id: &str) -> Option<u32> {
    let id = id.trim();
    // `W3` and a bare `3` can only mean `w3`.
    id.strip_prefix(['w', 'W']).unwrap_or(id).parse().ok()
}

impl Pool {
    /// An empty pool for workers in `root`, in the run of tether with id `run`.
    pub fn new(config: WorkersConfig, root: &Path, run: String) -> Self {
        Pool {
            config,
            root: root.to_path_buf(),
            run,
            claim: tokio::sync::OnceCell::new(),
            inner: Mutex::default(),
            changed: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        lock(&self.inner)
    }

    /// The configuration.
    pub fn config(&self) -> &WorkersConfig {
        &self.config
    }

    /// A copy of every worker, oldest first.
    pub fn all(&self) -> Vec<Worker> {
        self.lock().workers.values().cloned().collect()
    }

    /// A copy of one worker.
    pub fn get(&self, n: u32) -> Option<Worker> {
        self.lock().workers.get(&n).cloned()
    }

    /// Adds a worker and starts it, or queues it when every slot is busy; its id.
    pub fn spawn(
        self: &Arc<Self>,
        brief: String,
        label: String,
        tier: String,
        (surface, extra_args): (String, Vec<String>),
    ) -> String {
        let n = {
            let mut inner = self.lock();
            inner.next += 1;
            let n = inner.next;
            let id = format!("w{n}");
            let transcript = self
                .root
                .join(".tether/workers")
                .join(format!("{}-{id}.log", self.run));
            let worker = Worker {
                id,
                label,
                tier,
                surface,
                extra_args,
                brief,
                state: State::Queued,
                changes: vec![(State::Queued, SystemTime::now())],
                started: None,
                ended: None,
                transcript: Arc::new(Transcript::new(transcript)),
                result: None,
                exit: None,
                stderr_tail: Vec::new(),
                runs: 0,
                worktree: None,
                session: None,
                follow_up: None,
                resumed: None,
                group: None,
                stop: None,
                making: Arc::default(),
            };
            inner.workers.insert(n, worker);
            inner.queue.push_back(n);
            n
        };
        self.fill();
        format!("w{n}")
    }

    /// Appends `message` to the brief and runs the worker again: at once if it had ended, by
    /// restarting it if it ran. Says which happened.
    pub fn send(self: &Arc<Self>, n: u32, message: &str) -> Result<&'static str, String> {
        let how = {
            let mut inner = self.lock();
            if inner.closed {
                return Err("the run is ending; no worker starts now".into());
            }
            let Some(worker) = inner.workers.get_mut(&n) else {
                return Err(format!("no worker w{n}"));
            };
            worker.brief = format!("{}\n\n{}", worker.brief.trim_end(), message.trim());
            let resumable = worker.session.is_some()
                && self
                    .config
                    .tiers
                    .get(&worker.tier)
                    .is_some_and(|t| !t.resume_args.is_empty());
            if resumable && worker.state != State::Queued {
                worker.follow_up = Some(message.trim().to_string());
            }
            match worker.state {
                State::Queued => "queued still; it starts with the longer brief",
                State::Running | State::Stalled => {
                    if let Some(stop) = worker.stop.take() {
                        stop.cancel();
                    }
                    worker.record_end("stopped by vibe_send, to run again");
                    worker.group = None;
                    worker.set(State::Queued);
                    inner.running -= 1;
                    inner.queue.push_front(n);
                    match resumable {
                        true => "was running: stopped, and its session continues with the message",
                        false => "was running: stopped and restarted with the longer brief",
                    }
                }
                _ => {
                    worker.set(State::Queued);
                    inner.queue.push_back(n);
                    match resumable {
                        true => "had ended: its session continues with the message",
                        false => "had ended: runs again with the longer brief",
                    }
                }
            }
        };
        self.changed.notify_waiters();
        self.fill();
        Ok(how)
    }

    /// Kills the worker's whole process tree; false if it had already ended.
    pub fn kill(self: &Arc<Self>, n: u32) -> Result<bool, String> {
        let killed = {
            let mut inner = self.lock();
            let Some(worker) = inner.workers.get_mut(&n) else {
                return Err(format!("no worker w{n}"));
            };
            match worker.state {
                s if s.ended() => false,
                State::Queued => {
                    worker.set(State::Killed);
                    inner.queue.retain(|q| *q != n);
                    true
                }
                _ => {
                    kill_run(worker);
                    worker.set(State::Killed);
                    worker.ended = Some(Instant::now());
                    worker.record_end("killed by vibe_kill");
                    inner.running -= 1;
                    true
                }
            }
        };
        self.changed.notify_waiters();
        self.fill();
        Ok(killed)
    }

    /// Kills every worker's tree and refuses new ones: the run is ending.
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.queue.clear();
        for worker in inner.workers.values_mut() {
            match worker.state {
                State::Running | State::Stalled => {
                    kill_run(worker);
                    worker.set(State::Killed);
                    worker.exit = Some("killed as the run ended".into());
                    worker.record_end("killed as the run ended");
                }
                State::Queued => worker.set(State::Killed),
                _ => {}
            }
        }
        inner.running = 0;
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Starts queued workers while slots are free.
    fn fill(self: &Arc<Self>) {
        loop {
            let (n, worker) = {
                let mut inner = self.lock();
                if inner.closed || inner.running >= self.config.max_concurrent {
                    return;
                }
                let Some(n) = inner.queue.pop_front() else {
                    return;
                };
                inner.running += 1;
                let Some(worker) = inner.workers.get_mut(&n) else {
                    inner.running -= 1;
                    continue;
                };
                worker.runs += 1;
                worker.started = Some(Instant::now());
                worker.ended = None;
                worker.set(State::Running);
                // Written here, under the lock every end line is written under: first.
                let begun = worker.transcript.begin(worker.runs);
                let follow_up = worker.follow_up.take();
                worker.resumed = follow_up.as_ref().and(worker.session.clone());
                (n, (worker.clone(), follow_up, begun))
            };
            self.changed.notify_waiters();
            match worker.2 {
                Ok(()) => self.start(n, worker.0, worker.1),
                Err(why) => self.finish(n, None, Err(why)),
            }
        }
    }

    /// Starts one run of a worker and the task that watches it.
    fn start(self: &Arc<Self>, n: u32, worker: Worker, follow_up: Option<String>) {
        let Some(tier) = self.config.tiers.get(&worker.tier).cloned() else {
            self.finish(
                n,
                None,
                Err(format!("no `[workers.{}]` is configured", worker.tier)),
            );
            return;
        };
        let mut argv: Vec<String> = tier
            .command
            .iter()
            .chain(&worker.extra_args)
            .cloned()
            .collect();
        // A follow-up continues the backend's own session; otherwise the whole brief goes in.
        let input = match (follow_up, &worker.session) {
            (Some(message), Some(session)) => {
                argv.extend(
                    tier.resume_args
                        .iter()
                        .map(|a| a.replace("{session}", session)),
                );
                message
            }
            _ => worker.brief.clone(),
        };
        // Registered before the process exists, so a kill or send meanwhile is not lost.
        let stop = CancellationToken::new();
        if let Some(w) = self.lock().workers.get_mut(&n) {
            w.stop = Some(stop.clone());
        }
        let pool = self.clone();
        tokio::spawn(async move {
            let cwd = match pool.worktree_for(n, &worker).await {
                Ok(cwd) => cwd,
                Err(why) => return pool.finish(n, None, Err(why)),
            };
            // Killed or sent more while its worktree was made: nothing to start.
            if stop.is_cancelled() {
                return;
            }
            // A worker that runs `tether serve` itself inherits its surface.
            let spec = ChildSpec {
                argv,
                cwd: Some(cwd),
                env: vec![
                    ("TETHER_WORKER_ID".into(), worker.id.clone()),
                    ("TETHER_SURFACE".into(), worker.surface.clone()),
                ],
            };
            let mut child = match LongChild::spawn(&spec) {
                Ok(child) => child,
                Err(e) => return pool.finish(n, None, Err(format!("it could not start: {e}"))),
            };
            if let Some(w) = pool.lock().workers.get_mut(&n)
                && !stop.is_cancelled()
            {
                w.group = child.pid();
            }
            let outcome = watch(&pool, n, (&worker, input), &tier, &mut child, &stop).await;
            // Its last stderr lines are read before they are reported.
            child.last_words_within(Duration::from_secs(1)).await;
            pool.note_what_was_left(n).await;
            if !stop.is_cancelled() {
                pool.finish(n, Some(child.stderr_tail()), outcome);
            }
        });
    }

    /// Where the worker runs: the workspace root, or under `isolation = "worktree"` a git
    /// worktree of its own on branch `tether/RUN-wN`, made on its first run.
    async fn worktree_for(&self, n: u32, worker: &Worker) -> Result<PathBuf, String> {
        if !self.config.worktrees {
            return Ok(self.root.clone());
        }
        let _making = worker.making.lock().await;
        // An earlier run, stopped while it made the worktree, may have finished it meanwhile.
        if let Some(tree) = self.get(n).and_then(|w| w.worktree) {
            return Ok(tree.path);
        }
        self.claim
            .get_or_try_init(|| worktree::Claim::take(&self.root, &self.run))
            .await?;
        let name = format!("{}-{}", self.run, worker.id);
        let tree = worktree::make(&self.root, &name).await?;
        let path = tree.path.clone();
        if let Some(w) = self.lock().workers.get_mut(&n) {
            w.worktree = Some(tree);
        }
        Ok(path)
    }

    /// Records what a run left in its worktree, if it has one.
    async fn note_what_was_left(&self, n: u32) {
        let tree = self.get(n).and_then(|w| w.worktree);
        if let Some(tree) = tree {
            let left = worktree::left_behind(&tree).await;
            if let Some(Some(tree)) = self.lock().workers.get_mut(&n).map(|w| w.worktree.as_mut()) {
                tree.left = Some(left);
            }
        }
    }

    /// Notes output (and the session id it named, if any): a stalled worker is running again.
    fn heard(&self, n: u32, session: Option<String>) {
        let mut inner = self.lock();
        if let (Some(w), Some(id)) = (inner.workers.get_mut(&n), session) {
            w.session = Some(id);
        }
        if let Some(w) = inner.workers.get_mut(&n)
            && w.state == State::Stalled
        {
            w.set(State::Running);
            drop(inner);
            self.changed.notify_waiters();
        }
    }

    fn stalled(&self, n: u32) {
        let mut inner = self.lock();
        if let Some(w) = inner.workers.get_mut(&n)
            && w.state == State::Running
        {
            w.set(State::Stalled);
            drop(inner);
            self.changed.notify_waiters();
        }
    }

    /// Records how a run ended and frees its slot for the next queued worker.
    fn finish(
        self: &Arc<Self>,
        n: u32,
        stderr: Option<Vec<String>>,
        outcome: Result<String, String>,
    ) {
        {
            let mut inner = self.lock();
            let Some(worker) = inner.workers.get_mut(&n) else {
                return;
            };
            if worker.state.ended() || worker.state == State::Queued {
                return; // Killed, restarted or closed meanwhile: that already said how.
            }
            worker.group = None;
            worker.stop = None;
            worker.ended = Some(Instant::now());
            worker.stderr_tail = stderr.unwrap_or_default();
            match outcome {
                Ok(result) => {
                    worker.result = Some(result);
                    worker.exit = None;
                    worker.set(State::Completed);
                }
                Err(why) => {
                    // A session that cannot be continued is not tried again.
                    worker.exit = Some(match worker.resumed.take() {
                        Some(session) => {
                            worker.session = None;
                            format!(
                                "{why} (this run continued the agent's session {session}; the \
                                 next vibe_send runs the whole brief instead)"
                            )
                        }
                        None => why,
                    });
                    worker.set(State::Failed);
                }
            }
            worker.record_end(&worker.outcome());
            inner.running = inner.running.saturating_sub(1);
        }
        self.changed.notify_waiters();
        self.fill();
    }
}

/// Kills a worker's current run: its whole group, at once.
fn kill_run(worker: &mut Worker) {
    if let Some(stop) = worker.stop.take() {
        stop.cancel();
    }
    if let Some(pid) = worker.group.take() {
        tether_proc::signal_group(pid, tether_proc::Signal::KILL);
    }
}

/// Feeds the brief, keeps the transcript and watches for silence until the run ends; its
/// final message, or why it failed.
async fn watch(
    pool: &Pool,
    n: u32,
    (worker, input): (&Worker, String),
    tier: &TierConfig,
    child: &mut LongChild,
    stop: &CancellationToken,
) -> Result<String, String> {
    if let Some(mut stdin) = child.take_stdin() {
        tokio::spawn(async move {
            let _ = stdin.write_all(input.as_bytes()).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child
        .take_stdout()
        .ok_or_else(|| "its output could not be read".to_string())?;
    let mut lines = BufReader::new(stdout).lines();
    let mut output = OutputReader::new(tier.format);
    let mut open = true;
    let mut last = Instant::now();
    let stall = pool.config.stall_after;
    let status = loop {
        tokio::select! {
            line = lines.next_line(), if open => match line {
                Ok(Some(line)) => {
                    worker.transcript.line(worker.runs, &line);
                    last = Instant::now();
                    pool.heard(n, output.line(&line));
                }
                _ => open = false,
            },
            status = child.exited_within(Duration::from_secs(3600)), if !open => {
                if let Some(status) = status {
                    break status;
                }
            }
            () = tokio::time::sleep_until((last + stall).into()) => {
                pool.stalled(n);
                last = Instant::now() + Duration::from_secs(86_400 * 365);
            }
            () = stop.cancelled() => {
                child.kill();
                return Err("stopped".into());
            }
        }
    };
    output.finish(status.code())
}
