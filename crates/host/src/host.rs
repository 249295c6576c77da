//! The warm host: one process per workspace (and user, binary, config) that keeps the language
//! servers for every run it serves. Each attachment is a run of its own (surface, ledger,
//! staged edits, notices); the runs share the host's pool, never a ledger.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tether::{Pool, Run, RunBuilder, Surface};
use tether_base::lock;
use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use crate::Extend;
use crate::front::{SHUTDOWN_BUDGET, call_lines, call_once};
use crate::hook::Sessions;
use crate::place::Place;
use crate::wire::{Hello, MAX_LINE, Printed, Reply, read_json, write_json};

/// How long a front end may take to say what it attaches as.
const HELLO_WAIT: Duration = Duration::from_secs(10);

/// The host's first line to a front end: yes, or why not.
fn reply(error: Option<String>) -> Reply {
    Reply {
        ok: error.is_none(),
        pid: std::process::id(),
        error,
    }
}

/// How often the host looks whether it idled long enough or its workspace is gone.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// What every attachment of the host shares.
pub(crate) struct Host {
    pub(crate) place: Place,
    extend: Extend,
    pub(crate) pool: Arc<Pool>,
    /// Attachments being served now; the host idles only at zero.
    attached: AtomicUsize,
    last_active: std::sync::Mutex<Instant>,
    started: Instant,
    stop: CancellationToken,
    pub(crate) hooks: Sessions,
}

/// Counts one attachment for as long as it lives.
struct Attached<'a>(&'a Host);

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        *lock(&self.0.last_active) = Instant::now();
        self.0.attached.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serves the workspace at `place` until stopped, or until nothing was attached for
/// `idle_exit`. Another host already serving the same place is not an error: this one leaves.
pub async fn serve(place: Place, extend: Extend, idle_exit: Duration) -> Result<(), String> {
    let Some(lock_file) = lock_place(&place)? else {
        tracing::info!("a host already serves {}", place.root.display());
        return Ok(());
    };
    crate::place::sweep_ended_hosts(&place);
    // Holding the lock, any socket file left is a dead host's.
    let _ = std::fs::remove_file(&place.socket);
    let listener = tokio::net::UnixListener::bind(&place.socket)
        .map_err(|e| format!("cannot listen on {}: {e}", place.socket.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&place.socket, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("cannot make {} private: {e}", place.socket.display()))?;
    }
    let bound = file_id(&place.socket);
    let host = Arc::new(Host {
        place,
        extend,
        pool: Arc::new(Pool::for_host()),
        attached: AtomicUsize::new(0),
        last_active: std::sync::Mutex::new(Instant::now()),
        started: Instant::now(),
        stop: CancellationToken::new(),
        hooks: Sessions::default(),
    });
    tracing::info!(
        "host for {} listening on {}",
        host.place.root.display(),
        host.place.socket.display()
    );
    let me = tether_proc::current_uid();
    let (before, now) = tether_proc::raise_descriptor_limit();
    tracing::info!(?before, ?now, "descriptor limit");
    // One descriptor held back, so that out of them the host can still accept a front end to
    // tell it why it is refused, instead of leaving it waiting.
    let mut reserve = std::fs::File::open("/dev/null").ok();
    let mut refusals = Refusals::default();
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot watch for SIGTERM: {e}"))?;
    let tasks = tokio_util::task::TaskTracker::new();
    loop {
        let idle_for = {
            let last = *lock(&host.last_active);
            idle_exit.saturating_sub(last.elapsed())
        };
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Err(e) => refusals.failed(&e, &listener, &mut reserve).await,
                Ok((stream, _)) => {
                    refusals.accepted();
                    // Only this user's processes may attach.
                    let uid = stream.peer_cred().map(|c| c.uid()).ok();
                    if uid != Some(me) {
                        tracing::warn!(?uid, "refused an attachment from another user");
                        continue;
                    }
                    host.attached.fetch_add(1, Ordering::SeqCst);
                    let host = host.clone();
                    tasks.spawn(async move { host.attach(stream).await });
                }
            },
            _ = host.stop.cancelled() => break,
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
            _ = tokio::time::sleep(idle_for.clamp(Duration::from_millis(50), LOOK_EVERY)) => {
                let last = *lock(&host.last_active);
                if host.attached.load(Ordering::SeqCst) == 0 && last.elapsed() >= idle_exit {
                    tracing::info!("nothing attached for {} s: exiting", idle_exit.as_secs());
                    break;
                }
                host.hooks.end_idle(idle_exit).await;
                // A checkout that was deleted (a test's temporary folder) has no one to serve.
                if !host.place.root.is_dir() {
                    tracing::info!("the workspace root is gone: exiting");
                    break;
                }
                // No front end can reach a host whose socket was removed or replaced.
                if file_id(&host.place.socket) != bound {
                    tracing::info!("the socket {} is gone: exiting", host.place.socket.display());
                    break;
                }
            }
        }
    }
    // No new attachment from here; the ones still served end with the runs' shutdown. A
    // socket that is not the one bound here is another host's.
    if file_id(&host.place.socket) == bound {
        let _ = std::fs::remove_file(&host.place.socket);
    }
    drop(listener);
    host.stop.cancel();
    host.hooks.end_all().await;
    tasks.close();
    let _ = tokio::time::timeout(SHUTDOWN_BUDGET * 2, tasks.wait()).await;
    host.pool.stop(SHUTDOWN_BUDGET).await;
    // An ended host leaves nothing in the runtime folder; its lock file goes while still
    // held, so a host starting now locks a file of its own (see `lock_place`).
    let _ = std::fs::remove_file(&host.place.lock);
    let _ = std::fs::remove_file(&host.place.log);
    drop(lock_file);
    Ok(())
}

/// Opens and locks the place's lock file: `None` when another host holds it. The file locked
/// must still be the one at the path, as a host ending removes its lock file and one starting
/// may have opened that file just before.
fn lock_place(place: &Place) -> Result<Option<std::fs::File>, String> {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..20 {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&place.lock)
            .map_err(|e| format!("cannot open {}: {e}", place.lock.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(format!("cannot lock {}: {e}", place.lock.display()));
            }
        }
        let held = file.metadata().map(|m| (m.dev(), m.ino())).ok();
        if held.is_some() && held == file_id(&place.lock) {
            return Ok(Some(file));
        }
    }
    Err(format!(
        "cannot lock {}: it kept being replaced",
        place.lock.display()
    ))
}

/// Failed accepts in a row: logged once when they begin and once when they end (with the
/// count), never once each, and backed off from, so a host out of descriptors neither spins
/// nor floods its log.
#[derive(Default)]
struct Refusals {
    in_a_row: u64,
}

impl Refusals {
    async fn failed(
        &mut self,
        e: &std::io::Error,
        listener: &tokio::net::UnixListener,
        reserve: &mut Option<std::fs::File>,
    ) {
        self.in_a_row += 1;
        if self.in_a_row == 1 {
            tracing::warn!("accept failed: {e} (repeats are counted, not logged)");
        }
        if tether_proc::out_of_descriptors(e) {
            // Out of descriptors: the held one makes room to take the waiting front end and
            // tell it why, then is taken back.
            reserve.take();
            if let Ok(Ok((stream, _))) =
                tokio::time::timeout(Duration::from_millis(100), listener.accept()).await
            {
                let why = out_of_descriptors("it could not take this front end");
                let mut line = serde_json::to_vec(&reply(Some(why))).unwrap_or_default();
                line.push(b'\n');
                let _ = stream.try_write(&line);
            }
            *reserve = std::fs::File::open("/dev/null").ok();
        }
        let backoff = Duration::from_millis(10 << self.in_a_row.min(6));
        tokio::time::sleep(backoff).await;
    }

    fn accepted(&mut self) {
        if self.in_a_row > 1 {
            tracing::warn!(
                "accept failed {} times in a row before this one",
                self.in_a_row
            );
        }
        self.in_a_row = 0;
    }
}

/// Why a front end is refused when the host has no descriptor left, and what to do.
fn out_of_descriptors(detail: &str) -> String {
    format!(
        "the tether host has no file descriptor left ({} open; {detail}); end some of its \
         sessions, or raise its limit (`ulimit -n`) and restart it",
        tether_proc::open_descriptors()
    )
}

/// The device and inode of `path`, to tell the socket this host bound from one put in its
/// place.
fn file_id(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Host {
    /// Serves one attachment: its hello, the reply, then its kind's exchange.
    async fn attach(self: Arc<Self>, stream: UnixStream) {
        let _counted = Attached(&self);
        // A front end killed mid-call (Ctrl-C, an agent's tool timeout) leaves no one to
        // answer: its run is cancelled and ended, so nothing it started keeps the host busy.
        let gone = CancellationToken::new();
        let front_end = stream.peer_cred().ok().and_then(|c| c.pid());
        let watcher = front_end.map(|pid| {
            let gone = gone.clone();
            tokio::spawn(async move {
                tether_proc::exited(pid as u32).await;
                gone.cancel();
            })
        });
        self.clone().exchange(stream, gone).await;
        if let Some(watcher) = watcher {
            watcher.abort();
        }
    }

    /// One attachment's hello, the reply, then its kind's exchange.
    async fn exchange(self: Arc<Self>, stream: UnixStream, gone: CancellationToken) {
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        let hello =
            match tokio::time::timeout(HELLO_WAIT, read_json::<Hello>(&mut read, MAX_LINE)).await {
                Ok(Ok(Some(hello))) => hello,
                Ok(Ok(None)) => return,
                Ok(Err(why)) => {
                    let _ = write_json(&mut write, &reply(Some(why))).await;
                    return;
                }
                Err(_) => {
                    let why = format!("no hello within {} s", HELLO_WAIT.as_secs());
                    let _ = write_json(&mut write, &reply(Some(why))).await;
                    return;
                }
            };
        let ok = reply(None);
        match hello {
            Hello::Status => {
                let status = self.status().await;
                let _ = write_json(&mut write, &ok).await;
                let _ = write_json(&mut write, &status).await;
            }
            Hello::Stop => {
                let _ = write_json(&mut write, &ok).await;
                self.stop.cancel();
            }
            Hello::Call {
                surface,
                tool,
                args,
            } => {
                let opened = self.open(&surface, |b| b.single_call());
                let Some((run, surface)) = self.answer(&mut write, opened).await else {
                    return;
                };
                let printed = call_once(&run, surface, &tool, &args, gone).await;
                let _ = write_json(&mut write, &printed).await;
            }
            Hello::Lines { surface } => {
                let opened = self.open(&surface, |b| b);
                let Some((run, surface)) = self.answer(&mut write, opened).await else {
                    return;
                };
                let printed = call_lines(&run, surface, read, &mut write, gone).await;
                let _ = write_json(&mut write, &json!({ "tether_host_end": printed })).await;
            }
            Hello::Mcp {
                surface,
                conversation,
                vibe,
            } => {
                let opened = self.open(&surface, |mut b| {
                    if let Some(c) = conversation {
                        b = b.conversation(c);
                    }
                    b.vibe(vibe)
                });
                let Some((run, surface)) = self.answer(&mut write, opened).await else {
                    return;
                };
                let run = Arc::new(run);
                let server = tether_mcp::TetherServer::new(run.clone(), surface);
                tokio::select! {
                    served = server.serve_io(read, write) => {
                        if let Err(e) = served {
                            tracing::info!("an MCP attachment ended: {e}");
                        }
                    }
                    _ = self.stop.cancelled() => {}
                }
                run.shutdown(SHUTDOWN_BUDGET).await;
            }
            Hello::Hook {
                agent,
                event,
                block_on_new_errors,
                surface,
            } => {
                let _ = write_json(&mut write, &ok).await;
                let printed = self
                    .hook(&agent, &surface, event, block_on_new_errors)
                    .await;
                let _ = write_json(&mut write, &printed).await;
            }
        }
    }

    /// Replies to the hello with the run opened for it, or with why none could be.
    async fn answer(
        &self,
        write: &mut (impl tokio::io::AsyncWrite + Unpin),
        opened: Result<(Run, Surface), String>,
    ) -> Option<(Run, Surface)> {
        let answer = reply(opened.as_ref().err().cloned());
        let _ = write_json(write, &answer).await;
        opened.ok()
    }

    /// A fresh run over the host's workspace, sharing the host's pool. The surface comes from
    /// the front end, narrowed as it was there; trust is decided here, from the same files.
    pub(crate) fn open(
        &self,
        surface: &str,
        shape: impl FnOnce(RunBuilder) -> RunBuilder,
    ) -> Result<(Run, Surface), String> {
        let surface: Surface = surface.parse()?;
        let builder = RunBuilder::new(&self.place.root)
            .surface(surface)
            .pool(self.pool.clone());
        let run = (self.extend)(shape(builder)).build().map_err(|e| {
            // EMFILE, however deep in the run's opening it came: the reason is the host's.
            match e.to_string() {
                why if why.contains("(os error 24)") => out_of_descriptors(&why),
                why => why,
            }
        })?;
        Ok((run, surface))
    }

    /// What `tether host --status` prints.
    async fn status(&self) -> serde_json::Value {
        json!({
            "pid": std::process::id(),
            "root": self.place.root,
            "socket": self.place.socket,
            "log": self.place.log,
            "uptime_s": self.started.elapsed().as_secs(),
            "attached": self.attached.load(Ordering::SeqCst).saturating_sub(1),
            "hook_sessions": self.hooks.len(),
            "hook_session_surfaces": self.hooks.surfaces(),
            "servers": self.pool.describe().await,
        })
    }

    /// One agent hook event, answered in the agent's own form.
    async fn hook(
        &self,
        agent: &str,
        surface: &str,
        event: serde_json::Value,
        block: bool,
    ) -> Printed {
        crate::hook::handle(self, agent, surface, event, block).await
    }
}
