//! One debug session: the adapter process, the DAP peer, and what the adapter told us (where
//! the program stopped, its output, whether it ended). Frame ids and variable references are
//! valid only until the program runs again; a stale one is refused, never resolved anew.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tether_base::lock;

use serde_json::Value;
use tether_proc::{ChildSpec, LongChild};
use tokio::sync::watch;

use crate::catalog::Transport;
use crate::error::DapError;
use crate::locate::Found;
use crate::op::{Begin, Resume};
use crate::peer::{DapPeer, Listener};
use crate::protocol::{self as dap, Event, Request};

/// Output kept: the last 64 KiB.
const OUTPUT_RING: usize = 64 << 10;

/// Where the program stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// Running (or starting).
    Running,
    /// Stopped: the thread, and why.
    Stopped { thread: i64, reason: String },
    /// The program ended, with its exit code when the adapter said.
    Ended(Option<i64>),
}

/// Which kind of adapter id [`Session::mint`] hands out public numbers for.
#[derive(Debug, Clone, Copy)]
pub enum Minted {
    /// Frame ids.
    Frame,
    /// Variable references (of scopes, variables and evaluated results).
    Reference,
}

#[derive(Default)]
struct Heard {
    initialized: bool,
    stopped: Option<(i64, String)>,
    exit: Option<Option<i64>>,
    output: VecDeque<u8>,
    /// Bytes of output dropped from the front of the ring.
    cut: usize,
    /// Frame ids and variable references handed out since the program last stopped: the
    /// public id the model sees, to the adapter's own (which an adapter may reuse next stop).
    frames: HashMap<i64, i64>,
    refs: HashMap<i64, i64>,
    /// The same the other way, so asking twice in one stop shows the same numbers.
    frame_ids: HashMap<i64, i64>,
    ref_ids: HashMap<i64, i64>,
    /// The last public id minted; never reset, so no id means two things in one session.
    minted: i64,
}

/// What the adapter has told us, written as its events are read, with a signal that wakes
/// whoever waits for a change (a `continue` for its stop, a `launch` for `initialized`).
struct Board {
    heard: Mutex<Heard>,
    changed: watch::Sender<u64>,
}

impl Listener for Board {
    fn event(&self, event: &Event) {
        take(&mut lock(&self.heard), event);
        self.changed.send_modify(|n| *n += 1);
    }

    fn closed(&self) {
        self.changed.send_modify(|n| *n += 1);
    }
}

impl Board {
    fn new() -> Arc<Board> {
        Arc::new(Board {
            heard: Mutex::default(),
            changed: watch::channel(0).0,
        })
    }
}

/// Deadlines a session keeps.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// One request's answer.
    pub request: Duration,
    /// How long launch, continue and the steps wait for the next stop.
    pub stop_wait: Duration,
}

/// A running debug session.
pub struct Session {
    pub adapter: Found,
    pub program: PathBuf,
    /// The workspace root, for paths as the model names them.
    pub workspace: PathBuf,
    pub began: Instant,
    pub limits: Limits,
    peer: DapPeer,
    child: tokio::sync::Mutex<Option<LongChild>>,
    board: Arc<Board>,
    /// Held while the program is let run or asked to pause, so a `pause` that finds it running
    /// is sent after the `continue` that made it run, never overtaking it.
    order: tokio::sync::Mutex<()>,
    /// Why the session was ended, for a call still waiting on it.
    ended: Mutex<Option<String>>,
    /// What the adapter announced it can do.
    pub capabilities: dap::Capabilities,
    /// Whether the program was attached to rather than started, so it is left running.
    attached: std::sync::atomic::AtomicBool,
}

impl Session {
    /// Starts the adapter and completes `initialize`.
    pub async fn start(
        adapter: Found,
        program: PathBuf,
        workspace: PathBuf,
        limits: Limits,
    ) -> Result<Self, DapError> {
        let spec = ChildSpec {
            argv: adapter.argv.clone(),
            cwd: Some(adapter.root.clone()),
            env: Vec::new(),
        };
        let mut child = LongChild::spawn(&spec).map_err(|cause| DapError::Spawn {
            adapter: adapter.id.clone(),
            cause,
        })?;
        let (Some(output), Some(input)) = (child.take_stdout(), child.take_stdin()) else {
            return Err(DapError::NoPipes {
                adapter: adapter.id.clone(),
                command: adapter.argv.join(" "),
            });
        };
        let board = Board::new();
        let peer = match &adapter.kind.transport {
            Transport::Stdio => DapPeer::start(output, input, board.clone()),
            Transport::Tcp { announce } => {
                match over_tcp(output, board.clone(), announce, limits.request).await {
                    Ok(peer) => peer,
                    Err(e) => {
                        let stderr = child.stderr_tail();
                        child.shutdown(Duration::from_millis(500)).await;
                        return Err(DapError::Start {
                            adapter: adapter.id.clone(),
                            stderr,
                            cause: Box::new(e),
                        });
                    }
                }
            }
        };
        let capabilities = match initialize(&peer, &adapter.id, limits.request).await {
            Ok(caps) => caps,
            Err(e) => {
                let stderr = child.stderr_tail();
                child.shutdown(Duration::from_millis(500)).await;
                return Err(DapError::Start {
                    adapter: adapter.id.clone(),
                    stderr,
                    cause: Box::new(e),
                });
            }
        };
        Ok(Session {
            adapter,
            program,
            workspace,
            began: Instant::now(),
            limits,
            peer,
            child: tokio::sync::Mutex::new(Some(child)),
            board,
            order: tokio::sync::Mutex::default(),
            ended: Mutex::default(),
            capabilities,
            attached: false.into(),
        })
    }

    /// Connects to an adapter already listening on `port` (what `python -m debugpy --listen`
    /// starts beside the program, or a headless dlv) and completes `initialize`; no process
    /// of ours runs.
    pub async fn connect(
        adapter: Found,
        port: u16,
        program: PathBuf,
        workspace: PathBuf,
        limits: Limits,
    ) -> Result<Self, DapError> {
        let address = format!("127.0.0.1:{port}");
        let stream = tokio::time::timeout(limits.request, tokio::net::TcpStream::connect(&address))
            .await
            .map_err(|_| DapError::ConnectTimeout {
                address: address.clone(),
            })?
            .map_err(|cause| DapError::NothingToAttach { address, cause })?;
        let (read, write) = stream.into_split();
        let board = Board::new();
        let peer = DapPeer::start(read, write, board.clone());
        let capabilities = initialize(&peer, &adapter.id, limits.request)
            .await
            .map_err(|e| DapError::Start {
                adapter: adapter.id.clone(),
                stderr: Vec::new(),
                cause: Box::new(e),
            })?;
        Ok(Session {
            adapter,
            program,
            workspace,
            began: Instant::now(),
            limits,
            peer,
            child: tokio::sync::Mutex::new(None),
            board,
            order: tokio::sync::Mutex::default(),
            ended: Mutex::default(),
            capabilities,
            attached: false.into(),
        })
    }

    /// Launches (or attaches, `begin`) in the order every adapter accepts: `launch` sent but
    /// not awaited, `initialized`, breakpoints, exception filters, `configurationDone`, then
    /// both answers; then waits for the first stop. Returns each file's breakpoint report.
    pub async fn launch(
        &self,
        begin: Begin,
        launch: Value,
        breakpoints: &[(PathBuf, Vec<usize>)],
    ) -> Result<Vec<String>, DapError> {
        self.attached
            .store(begin == Begin::Attach, std::sync::atomic::Ordering::Relaxed);
        let limit = self.limits.request;
        let sent = match begin {
            Begin::Launch => self.peer.send::<dap::Launch>(launch).await?,
            Begin::Attach => self.peer.send::<dap::Attach>(launch).await?,
        };
        let answer = sent.within(limit);
        tokio::pin!(answer);
        // Some adapters answer before `initialized` (lldb-dap), others after (debugpy): a
        // refusal that comes first ends the wait at once.
        let mut answered = None;
        let initialized = self.until(Instant::now() + limit, |heard| heard.initialized);
        tokio::pin!(initialized);
        loop {
            tokio::select! {
                result = &mut answer, if answered.is_none() => {
                    answered = Some(result.map_err(|e| self.gone_or(e))?);
                }
                came = &mut initialized => match came {
                    true => break,
                    false => return Err(self.gone_or(DapError::NotInitialized {
                        adapter: self.adapter.id.clone(),
                        after: limit,
                    })),
                },
            }
        }
        let mut said = Vec::new();
        for (file, lines) in breakpoints {
            said.push(self.set_breakpoints(file, lines).await?);
        }
        // What the catalog sets in every session (lldb: `rust_panic`, so a Rust panic stops
        // where it happens, with its message and stack).
        let functions = &self.adapter.kind.function_breakpoints;
        if !functions.is_empty() {
            let breakpoints = functions
                .iter()
                .map(|name| dap::FunctionBreakpoint { name: name.clone() })
                .collect();
            let args = dap::SetFunctionBreakpointsArguments { breakpoints };
            self.peer
                .call::<dap::SetFunctionBreakpoints>(args, limit)
                .await?;
        }
        let filters = exception_filters(&self.capabilities, &self.adapter.kind.exception_filters);
        let args = dap::SetExceptionBreakpointsArguments { filters };
        self.peer
            .call::<dap::SetExceptionBreakpoints>(args, limit)
            .await?;
        let done = self
            .peer
            .send::<dap::ConfigurationDone>(dap::NoArguments {})
            .await?;
        let launched = async {
            match answered {
                Some(body) => Ok(body),
                None => answer.await,
            }
        };
        let (launched, configured) = tokio::join!(launched, done.within(limit));
        launched.map_err(|e| self.gone_or(e))?;
        configured.map_err(|e| self.gone_or(e))?;
        Ok(said)
    }

    /// Sends one file's breakpoints and says which the adapter verified, moved or refused.
    pub async fn set_breakpoints(&self, file: &Path, lines: &[usize]) -> Result<String, DapError> {
        let args = dap::SetBreakpointsArguments::new(file, lines);
        let answer = self
            .peer
            .call::<dap::SetBreakpoints>(args, self.limits.request)
            .await?;
        let shown = file.strip_prefix(&self.workspace).unwrap_or(file);
        Ok(crate::render::breakpoints(shown, lines, &answer))
    }

    /// Waits until `done` holds for what was heard, the adapter is gone, or `end` passes;
    /// whether `done` held. Nothing is locked while it waits, so other calls go on.
    async fn until(&self, end: Instant, done: impl Fn(&Heard) -> bool) -> bool {
        let mut changed = self.board.changed.subscribe();
        loop {
            if done(&lock(&self.board.heard)) {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if self.peer.closed().is_some() || left.is_zero() {
                return false;
            }
            // A change after `subscribe` is never missed: it marks the receiver changed.
            let _ = tokio::time::timeout(left, changed.changed()).await;
        }
    }

    /// Waits, at most the stop budget, until the program stops or ends.
    pub async fn wait_for_stop(&self) -> Where {
        let end = Instant::now() + self.limits.stop_wait;
        self.until(end, |h| h.stopped.is_some() || h.exit.is_some())
            .await;
        self.where_now()
    }

    /// Where the program stands, from the events taken so far.
    pub fn where_now(&self) -> Where {
        let heard = lock(&self.board.heard);
        if let Some(code) = heard.exit {
            return Where::Ended(code);
        }
        match &heard.stopped {
            Some((thread, reason)) => Where::Stopped {
                thread: *thread,
                reason: reason.clone(),
            },
            None => Where::Running,
        }
    }

    /// Lets the program run, as `how` says, on `thread`; every frame id and reference given out
    /// so far goes stale.
    pub async fn resume(&self, how: Resume, thread: i64) -> Result<(), DapError> {
        let sent = {
            let _order = self.order.lock().await;
            {
                let mut heard = lock(&self.board.heard);
                heard.stopped = None;
                heard.frames.clear();
                heard.refs.clear();
                heard.frame_ids.clear();
                heard.ref_ids.clear();
            }
            let args = dap::ThreadArguments { thread_id: thread };
            match how {
                Resume::Continue => self.peer.send::<dap::Continue>(args).await,
                Resume::StepOver => self.peer.send::<dap::Next>(args).await,
                Resume::StepIn => self.peer.send::<dap::StepIn>(args).await,
                Resume::StepOut => self.peer.send::<dap::StepOut>(args).await,
            }
        };
        sent.map_err(|e| self.gone_or(e))?
            .within(self.limits.request)
            .await
            .map(|_| ())
            .map_err(|e| self.gone_or(e))
    }

    /// Asks the adapter to stop `thread` (else the first it lists) unless the program is
    /// stopped already (false then). It may be sent while a `continue` waits, which then
    /// sees this stop.
    pub async fn pause(&self, thread: Option<i64>) -> Result<bool, DapError> {
        let _order = self.order.lock().await;
        if lock(&self.board.heard).stopped.is_some() {
            return Ok(false);
        }
        let thread = match thread {
            Some(t) => t,
            None => {
                let answer = self.call::<dap::Threads>(dap::NoArguments {}).await?;
                let first = answer.threads.first();
                first.map(|t| t.id).ok_or(DapError::NoThreads)?
            }
        };
        let args = dap::ThreadArguments { thread_id: thread };
        self.call::<dap::Pause>(args).await?;
        Ok(true)
    }

    /// `R` while the program is stopped, with the session's deadline; its answer's body.
    pub async fn call<R: Request>(&self, args: R::Arguments) -> Result<R::Response, DapError> {
        self.peer
            .call::<R>(args, self.limits.request)
            .await
            .map_err(|e| self.gone_or(e))
    }

    /// Replaces each adapter id in `ids` (frame ids, or the variable references of scopes and
    /// variables) with a public one, valid until the program runs again; an id already handed
    /// out in this stop keeps its number, and 0 (none) stays 0.
    pub fn mint<'a>(&self, kind: Minted, ids: impl IntoIterator<Item = &'a mut i64>) {
        let mut heard = lock(&self.board.heard);
        let Heard {
            frames,
            refs,
            frame_ids,
            ref_ids,
            minted,
            ..
        } = &mut *heard;
        let (public_to_own, own_to_public) = match kind {
            Minted::Frame => (frames, frame_ids),
            Minted::Reference => (refs, ref_ids),
        };
        for id in ids {
            let own = *id;
            if own <= 0 {
                continue;
            }
            *id = *own_to_public.entry(own).or_insert_with(|| {
                *minted += 1;
                public_to_own.insert(*minted, own);
                *minted
            });
        }
    }

    /// The adapter's frame id behind a public one, if it is current.
    pub fn frame(&self, public: i64) -> Option<i64> {
        lock(&self.board.heard).frames.get(&public).copied()
    }

    /// The adapter's variable reference behind a public one, if it is current.
    pub fn reference(&self, public: i64) -> Option<i64> {
        lock(&self.board.heard).refs.get(&public).copied()
    }

    /// The program's output so far, and how many older bytes the ring dropped.
    pub fn output(&self) -> (String, usize) {
        let heard = lock(&self.board.heard);
        let bytes: Vec<u8> = heard.output.iter().copied().collect();
        (String::from_utf8_lossy(&bytes).into_owned(), heard.cut)
    }

    /// Whether this session attached to a program it did not start.
    pub fn attached(&self) -> bool {
        self.attached.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Ends the session as [`Session::end`] does, keeping `why` for a call still waiting on it.
    pub async fn end_because(&self, why: String) {
        lock(&self.ended).get_or_insert(why);
        self.end().await;
    }

    /// Why the session was ended under a call still waiting on it, if it was.
    pub fn ended(&self) -> Option<String> {
        lock(&self.ended).clone()
    }

    /// Ends the session: `disconnect` with the debuggee, then the adapter's process group.
    pub async fn end(&self) {
        // A program attached to was started by someone else: it is left running.
        let ours = !self.attached();
        let args = dap::DisconnectArguments {
            terminate_debuggee: ours,
        };
        let _ = self
            .peer
            .call::<dap::Disconnect>(args, Duration::from_secs(2))
            .await;
        if let Some(mut child) = self.child.lock().await.take()
            && child
                .exited_within(Duration::from_millis(300))
                .await
                .is_none()
        {
            child.shutdown(Duration::from_millis(500)).await;
        }
    }

    /// `error`, or why the adapter is gone when it is.
    fn gone_or(&self, error: DapError) -> DapError {
        match self.peer.closed() {
            Some(why) => DapError::Ended {
                adapter: self.adapter.id.clone(),
                why,
                cause: Box::new(error),
            },
            None => error,
        }
    }
}

/// Folds one event into what was heard.
fn take(heard: &mut Heard, event: &Event) {
    match event {
        Event::Initialized => heard.initialized = true,
        Event::Stopped(stopped) => {
            let thread = stopped.thread_id.unwrap_or(0);
            let reason = match (&stopped.reason, &stopped.text) {
                (Some(r), Some(t)) => format!("{r}: {t}"),
                (Some(r), None) => r.clone(),
                _ => "stopped".into(),
            };
            heard.stopped = Some((thread, reason));
        }
        Event::Continued => heard.stopped = None,
        Event::Exited(exited) => heard.exit = Some(exited.exit_code),
        Event::Terminated => {
            heard.exit.get_or_insert(None);
        }
        Event::Output(output) => {
            let category = output.category.as_deref().unwrap_or("console");
            if matches!(category, "stdout" | "stderr") {
                heard.output.extend(output.output.as_bytes());
                while heard.output.len() > OUTPUT_RING {
                    heard.output.pop_front();
                    heard.cut += 1;
                }
            }
        }
        Event::Other => {}
    }
}

/// The `initialize` every session starts with; the adapter's capabilities, also told to the
/// peer (whether a request given up on can be cancelled).
async fn initialize(
    peer: &DapPeer,
    adapter: &str,
    limit: Duration,
) -> Result<dap::Capabilities, DapError> {
    let args = dap::InitializeArguments {
        client_id: "tether",
        client_name: "tether",
        adapter_id: adapter.to_string(),
        lines_start_at1: true,
        columns_start_at1: true,
        path_format: "path",
        supports_variable_type: true,
        supports_run_in_terminal_request: false,
    };
    let capabilities = peer.call::<dap::Initialize>(args, limit).await?;
    peer.negotiated(&capabilities);
    Ok(capabilities)
}

/// Connects to an adapter that listens on TCP: the address it prints on stdout in a line
/// matching `announce`, read within `limit`; the rest of its stdout (the program's own output)
/// goes on as output events.
async fn over_tcp(
    stdout: tokio::process::ChildStdout,
    board: Arc<Board>,
    announce: &str,
    limit: Duration,
) -> Result<DapPeer, DapError> {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let address = tokio::time::timeout(limit, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(at) = announced(&line, announce) {
                return Some(at);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .ok_or(DapError::NoAddress { after: limit })?;
    let stream = tokio::time::timeout(limit, tokio::net::TcpStream::connect(&address))
        .await
        .map_err(|_| DapError::ConnectTimeout {
            address: address.clone(),
        })?
        .map_err(|cause| DapError::Connect { address, cause })?;
    let (read, write) = stream.into_split();
    let forward = board.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let output = dap::OutputEvent {
                category: Some("stdout".into()),
                output: format!("{line}\n"),
            };
            forward.event(&Event::Output(output));
        }
    });
    Ok(DapPeer::start(read, write, board))
}

/// The catalog's exception filters (those that stop on what would kill the program) that the
/// adapter offers; one it does not offer would make it refuse the request.
fn exception_filters(capabilities: &dap::Capabilities, wanted: &[String]) -> Vec<String> {
    let offered = &capabilities.exception_breakpoint_filters;
    offered
        .iter()
        .map(|f| f.filter.clone())
        .filter(|f| wanted.contains(f))
        .collect()
}

/// The address in `line` where `announce` puts `{address}` (host:port) or `{port}` (on
/// 127.0.0.1), if the line is that announcement.
fn announced(line: &str, announce: &str) -> Option<String> {
    let (slot, local) = match announce.split_once("{address}") {
        Some(parts) => (parts, false),
        None => (announce.split_once("{port}")?, true),
    };
    let (before, after) = slot;
    let (_, rest) = line.split_once(before)?;
    let at = match after.trim() {
        "" => rest,
        after => rest.split_once(after).map_or(rest, |(at, _)| at),
    };
    let at = at.trim();
    match (at.is_empty(), local) {
        (true, _) => None,
        (false, true) => at.parse::<u16>().ok().map(|p| format!("127.0.0.1:{p}")),
        (false, false) => Some(at.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::announced;

    #[test]
    fn an_announced_address_is_read_from_its_line() {
        let delve = "listening at: {address}";
        assert_eq!(
            announced("DAP server listening at: 127.0.0.1:38111", delve).as_deref(),
            Some("127.0.0.1:38111")
        );
        assert_eq!(announced("Type 'dlv help' for help.", delve), None);
        let port = "port {port} is open";
        assert_eq!(
            announced("debug: port 4711 is open", port).as_deref(),
            Some("127.0.0.1:4711")
        );
        assert_eq!(announced("port x is open", port), None);
    }
}
