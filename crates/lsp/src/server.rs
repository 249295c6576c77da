//! One running language server: its process, the JSON-RPC peer, what it negotiated, its
//! state, and the documents it has open. The server's requests to us are answered here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tether_base::lock;

use lsp_types as lsp;
use serde::Serialize;
use serde_json::Value;
use tether_proc::{ChildSpec, LongChild, with_stderr_tail};
use tether_rpc::Peer;
use tokio_util::sync::CancellationToken;

use crate::asks::Ask;
use crate::avail::Found;
use crate::catalog::{Language, ServerEntry};
use crate::error::LspError;
use crate::heard::{Busy, Event, Heard};
use crate::position::Encoding;
use crate::protocol::{self, read};
use lsp_types::notification::{
    DidChangeTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification,
};

/// Where a server stands, as `status` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Indexing the project; a percentage when the server reports one.
    Indexing(Option<u32>),
    /// Answering.
    Ready,
    /// A request missed its deadline.
    Degraded(String),
    /// The process ended.
    Crashed(String),
}

/// A request that got no answer: the engine's error kept whole (the server's own, with its
/// JSON-RPC code, or no answer in time, or the connection's end), and what a model is shown,
/// with the server's last words when it died.
#[derive(Debug, Clone)]
pub struct RequestError {
    /// `None` when the parameters could not be sent at all.
    pub cause: Option<tether_rpc::RpcError>,
    text: String,
}

impl RequestError {
    /// The JSON-RPC code the server answered with, if it answered with an error.
    pub fn code(&self) -> Option<i64> {
        match &self.cause {
            Some(tether_rpc::RpcError::Remote { error, .. }) => Some(error.code),
            _ => None,
        }
    }
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            State::Indexing(Some(p)) => write!(f, "indexing ({p}%)"),
            State::Indexing(None) => write!(f, "indexing"),
            State::Ready => write!(f, "ready"),
            State::Degraded(why) => write!(f, "degraded: {why}"),
            State::Crashed(why) => write!(f, "crashed: {why}"),
        }
    }
}

pub use crate::store::Published;

/// What a server told, watched: every change wakes the waits on it.
pub(crate) type Watched = tokio::sync::watch::Sender<Heard>;

use crate::client::Client;
pub use crate::client::{AcceptingEdits, EditPort, ServedEdit, refusal};

/// How many of the latest texts sent keep what the server had published before them.
const SENT_KEPT: usize = 16;

/// A document as the server last saw it.
pub(crate) struct Open {
    pub(crate) version: i32,
    hash: u64,
    /// The event count when this version was sent.
    pub(crate) sent_seq: u64,
    /// How many progresses other than checks had begun when it was sent: work the server
    /// began on it from then on is part of any wait for its diagnostics.
    pub(crate) sent_begun: u64,
    /// Size and modification time when it was last read, for a cheap look before requests;
    /// `None` when they prove nothing ([`settled_stamp`]).
    stamp: Option<Stamp>,
}

use crate::stamp::{Stamp, settled_stamp, stamp};

/// A started, initialized language server.
pub struct Server {
    /// Catalog id.
    pub id: String,
    /// Project root it serves.
    pub root: PathBuf,
    /// The command it runs.
    pub argv: Vec<String>,
    pub(crate) peer: Peer,
    child: tokio::sync::Mutex<Option<LongChild>>,
    /// How it counts columns.
    pub encoding: Encoding,
    /// The capabilities it announced, of what tether asks.
    pub capabilities: protocol::ServerCapabilities,
    pub(crate) heard: Arc<Watched>,
    edits: Arc<Mutex<Option<EditPort>>>,
    /// Held by the call that takes the server's edits now.
    edits_taken: Arc<tokio::sync::Mutex<()>>,
    pub(crate) open: tokio::sync::Mutex<HashMap<PathBuf, Open>>,
    /// Files whose creation the server was told of. It is kept here, not per run, because
    /// runs share a server, and each telling makes pyright re-resolve every import.
    pub(crate) told_created: Mutex<std::collections::HashSet<PathBuf>>,
    /// The latest texts it was sent, each with what it had published just before: a run that
    /// shares the server and learns of such a change later judges it against that, not
    /// against what the change already brought. Bounded, as each holds a whole snapshot.
    sent_after: Mutex<std::collections::VecDeque<(PathBuf, u64, crate::answers::Snapshot)>>,
    /// Whether several runs share this server: only then is `sent_after` kept, as a run alone
    /// knows every text it sent (and a snapshot per text costs the whole publication map).
    shared: std::sync::atomic::AtomicBool,
    pub(crate) timeout: Duration,
    /// Notes on what was turned off because the workspace is not trusted.
    pub restricted: Option<String>,
    /// The languages it serves, for each file's `languageId`.
    languages: Vec<Language>,
    /// Whether a save starts a separate check whose results come later (rust-analyzer's
    /// cargo check), so an answer is complete only once that check has ended.
    pub separate_check: bool,
    /// Whether it diagnoses the whole workspace, not only open files (pyright's workspace
    /// mode), so a change can show up as new problems in files nobody touched.
    pub workspace_mode: bool,
    /// Whether it says when it has loaded the project (rust-analyzer's `serverStatus`): until
    /// then its answers are placeholders (an empty pull for a file it has not read yet).
    pub announces_loading: bool,
    /// How a write knows the server is done with it, and the quiet window when nothing better
    /// is known.
    pub done: crate::catalog::Done,
    pub quiet: Duration,
    /// It reports no problems: a write is told so, not made to wait.
    pub no_problems: bool,
    /// It checks the files that include a changed one only on its save.
    pub dependents_on_save: bool,
    /// Its pulls are tsserver's own diagnostics requests, forwarded.
    pub tsserver_pull: bool,
    /// Its check stops reporting warnings while errors stand.
    pub warnings_silenced_by_errors: bool,
    /// Its queries search every file when asked: whole while its diagnostics pass runs.
    pub queries_on_demand: bool,
    /// Folders (`*`: any text) whose files the server never lists: a creation there is no
    /// change to its listing.
    pub(crate) unlisted_dirs: Vec<String>,
    /// Held while file events are told and their barrier awaited, so news told by two tasks
    /// at once is numbered in the order it is sent.
    pub(crate) telling: tokio::sync::Mutex<()>,
    /// Cleared once the server said it has no pull diagnostics, though it never offered them.
    pub(crate) may_pull: std::sync::atomic::AtomicBool,
    /// Each file's last pulled report under the server's result id, so a pull can be answered
    /// "unchanged" rather than with the same report again ([`crate::answers::Reports`]).
    pub(crate) reports: Mutex<crate::answers::Reports>,
    /// Shared by every message sent; held alone by a preview ([`crate::gate`]).
    pub(crate) gate: crate::gate::Gate,
}

/// Whether `text` fits `pattern`, whose `*` matches any text (none included).
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `settings` ask a pyright-like server to diagnose every file of the workspace.
fn workspace_mode(settings: &Value) -> bool {
    [
        "/python/analysis/diagnosticMode",
        "/basedpyright/analysis/diagnosticMode",
    ]
    .iter()
    .any(|at| settings.pointer(at).and_then(Value::as_str) == Some("workspace"))
}

impl Server {
    /// Starts the server for `found` and completes the initialize handshake within
    /// `init_timeout`; a server that fails is killed, and the error quotes its stderr.
    pub async fn start(
        entry: &ServerEntry,
        languages: Vec<Language>,
        found: &Found,
        allowed: crate::restrict::Allowed,
        workspace: &Path,
        init_timeout: Duration,
        timeout: Duration,
    ) -> Result<Server, LspError> {
        let options = crate::restrict::options(entry, &found.root, allowed)
            .map_err(|why| why.of_server(&entry.id))?;
        let env = crate::restrict::environment(entry, &found.root, workspace, allowed.trusted)
            .await
            .map_err(|why| why.of_server(&entry.id))?;
        let spec = ChildSpec {
            argv: found.argv.clone(),
            cwd: Some(found.root.clone()),
            env,
        };
        let mut child = LongChild::spawn(&spec).map_err(|e| LspError::Spawn(Arc::new(e)))?;
        let (Some(input), Some(output)) = (child.take_stdout(), child.take_stdin()) else {
            return Err(LspError::refused(format!(
                "the server started without pipes to talk to it; check that `{}` runs as a \
                 language server on stdin and stdout",
                found.argv.join(" ")
            ))
            .of_server(&entry.id));
        };
        let heard = Arc::new(Watched::new(Heard::default()));
        let edits = Arc::new(Mutex::new(None));
        let client = Arc::new(Client {
            edits: edits.clone(),
            settings: options.settings.clone(),
            heard: heard.clone(),
            listed_files_log: entry.behaviour.listed_files_log.clone(),
        });
        let peer = Peer::start(input, output, client, Some("$/cancelRequest"));
        let crate::restrict::Options {
            mut init,
            settings: options_settings,
            restricted,
        } = options;
        let program = Path::new(&found.argv[0]);
        crate::restrict::place_program_dir(&mut init, program.parent().unwrap_or(program));
        let params = protocol::initialize_params(&found.root, init)
            .and_then(|p| protocol::to_params("initialize", p))
            .map_err(|why| why.of_server(&entry.id))?;
        let answer = match peer.request("initialize", params, init_timeout).await {
            Ok(answer) => answer,
            Err(e) => {
                let said = child.stderr_tail();
                child.shutdown(Duration::from_millis(500)).await;
                let text = with_stderr_tail(&format!("{}: {e}", entry.id), &said);
                return Err(LspError::Handshake { cause: e, text });
            }
        };
        let answer: protocol::InitializeResult = read(answer);
        let caps = answer.capabilities;
        let encoding = match (
            caps.position_encoding.as_deref(),
            answer.offset_encoding.as_deref(),
        ) {
            (Some("utf-8"), _) | (_, Some("utf-8")) => Encoding::Utf8,
            _ => Encoding::Utf16,
        };
        let initialized = protocol::to_params("initialized", lsp::InitializedParams {})?;
        peer.notify("initialized", initialized)
            .await
            .map_err(|cause| LspError::Unsent {
                server: entry.id.clone(),
                cause,
            })?;
        let workspace_mode = workspace_mode(&options_settings);
        let separate_check = entry.behaviour.separate_check && allowed.builds;
        let b = &entry.behaviour;
        let confirms = workspace_mode
            && b.done == crate::catalog::Done::Pull
            && !b.tsserver_pull
            && !separate_check;
        heard.send_modify(|h| h.confirms_by_pull = confirms);
        Ok(Server {
            id: entry.id.clone(),
            root: found.root.clone(),
            argv: found.argv.clone(),
            peer,
            child: tokio::sync::Mutex::new(Some(child)),
            encoding,
            capabilities: caps,
            heard,
            edits,
            edits_taken: Arc::default(),
            open: tokio::sync::Mutex::default(),
            told_created: Mutex::default(),
            sent_after: Mutex::default(),
            shared: std::sync::atomic::AtomicBool::new(false),
            timeout,
            separate_check,
            workspace_mode,
            announces_loading: entry.behaviour.announces_loading,
            done: entry.behaviour.done,
            quiet: Duration::from_millis(
                entry
                    .behaviour
                    .quiet_ms
                    .unwrap_or(crate::catalog::DEFAULT_QUIET_MS),
            ),
            no_problems: entry.behaviour.no_problems,
            dependents_on_save: entry.behaviour.dependents_on_save,
            tsserver_pull: entry.behaviour.tsserver_pull,
            warnings_silenced_by_errors: entry.behaviour.warnings_silenced_by_errors
                && allowed.builds,
            queries_on_demand: !entry.behaviour.listed_files_log.is_empty(),
            unlisted_dirs: entry.behaviour.unlisted_dirs.clone(),
            telling: tokio::sync::Mutex::new(()),
            languages,
            may_pull: std::sync::atomic::AtomicBool::new(true),
            reports: Mutex::default(),
            gate: crate::gate::Gate::default(),
            restricted,
        })
    }

    /// Where the server stands now.
    pub async fn state(&self) -> State {
        if let Some(why) = self.peer.closed() {
            let mut child = self.child.lock().await;
            let code = child
                .as_mut()
                .and_then(LongChild::try_status)
                .map_or("no exit code yet".into(), |s| s.to_string());
            let tail = child
                .as_ref()
                .map(LongChild::stderr_tail)
                .unwrap_or_default();
            return State::Crashed(with_stderr_tail(&format!("{why} ({code})"), &tail));
        }
        let heard = self.heard.borrow();
        if let Some(why) = &heard.degraded {
            return State::Degraded(why.clone());
        }
        // pyright's progress begins and ends mid-pass: only its files' confirmations count.
        if let Some(pct) = heard.confirming() {
            return State::Indexing(Some(pct));
        }
        if heard.confirms_by_pull {
            return State::Ready;
        }
        match heard.busy() {
            Busy::Progress(pct) => State::Indexing(pct),
            Busy::Loading => State::Indexing(None),
            Busy::Idle => State::Ready,
        }
    }

    /// What the server said is wrong with loading the project, if anything (rust-analyzer's
    /// health): an empty answer may come from this, not from the code.
    pub fn health(&self) -> Option<String> {
        let heard = self.heard.borrow();
        heard.health.as_ref().map(|(level, message)| {
            let first: String = message.lines().take(3).collect::<Vec<_>>().join(" ");
            format!(
                "{} says the project loaded with an {level}: {}",
                self.id,
                tether_base::cut_line(&first, 400)
            )
        })
    }

    /// Whether a list the server gives now covers the whole project without waiting for its
    /// indexing: one whose queries search every file when asked, once it logged that it has
    /// listed them (until then pyright searches the open files alone: "1 found" for a function
    /// 60 modules call, after its first publications).
    pub fn searches_whole_project(&self) -> bool {
        self.queries_on_demand && self.heard.borrow().listed()
    }

    /// For a server whose queries search the files it has listed (pyright), waits within its
    /// deadline until it has listed them (at start, and again after a creation or deletion it
    /// was told of): asked before, it answers from its open files alone.
    pub async fn listing_awaited(&self) {
        if self.queries_on_demand && !self.searches_whole_project() {
            self.settled(self.timeout).await;
        }
    }

    /// Whether a server whose queries search its listed files has listed them once, and owes
    /// a new listing for a creation or deletion it was told of since.
    pub fn relisting(&self) -> bool {
        let heard = self.heard.borrow();
        self.queries_on_demand && heard.listings > 0 && !heard.listed()
    }

    /// Waits, at most `limit`, until the server has finished indexing, or for a server whose
    /// queries search every file when asked, until it has found them; true if so. A
    /// server says it is busy only a moment after a request, so a begin is looked for first,
    /// for a short while.
    pub async fn settled(&self, limit: Duration) -> bool {
        if self.queries_on_demand {
            return self.until(limit, |h| h.listed()).await;
        }
        let begun = self.heard.borrow().begun;
        let first = Duration::from_millis(300).min(limit);
        self.until(first, |h| h.begun > begun).await;
        self.until(limit.saturating_sub(first), |h| h.busy() == Busy::Idle)
            .await
    }

    /// Waits, at most `limit`, until `done` holds of what the server told, or it is gone;
    /// true when `done` held. Ends the moment the state changes to fit.
    pub(crate) async fn until(
        &self,
        limit: Duration,
        mut done: impl FnMut(&Heard) -> bool,
    ) -> bool {
        let mut watch = self.heard.subscribe();
        let held =
            tokio::time::timeout(limit, watch.wait_for(|h| h.closed.is_some() || done(h))).await;
        matches!(held, Ok(Ok(h)) if h.closed.is_none() || done(&h))
    }

    /// The deadline of one request.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends a request with the server's deadline; a missed deadline marks it degraded. An
    /// answer of "content modified" (the server reloaded meanwhile) is asked again, a few
    /// times, once the server has settled.
    pub async fn call<R: Ask>(
        &self,
        params: R::Params,
        cancel: &CancellationToken,
    ) -> Result<R::Answer, RequestError> {
        self.request(R::METHOD, params, cancel).await.map(R::answer)
    }

    /// A request of tether's own, typed as [`Server::call`] is, with `limit` for its deadline
    /// and nothing marked when it is missed.
    pub(crate) async fn call_within<R: Ask>(
        &self,
        params: R::Params,
        limit: Duration,
    ) -> Result<R::Answer, LspError> {
        let params = protocol::to_params(R::METHOD, params)?;
        let _share = self.gate.share().await;
        self.peer
            .request(R::METHOD, params, limit)
            .await
            .map(R::answer)
            .map_err(LspError::Peer)
    }

    async fn request(
        &self,
        method: &str,
        params: impl Serialize,
        cancel: &CancellationToken,
    ) -> Result<Value, RequestError> {
        let params = protocol::to_params(method, params).map_err(|e| RequestError {
            cause: None,
            text: format!("{}: {e}", self.id),
        })?;
        let mut tries = 0;
        let share = self.gate.share().await;
        let outcome = loop {
            let r = self
                .peer
                .request_until(method, params.clone(), self.timeout, cancel)
                .await;
            match r {
                Err(tether_rpc::RpcError::Remote { error, .. })
                    if error.code == tether_rpc::codes::CONTENT_MODIFIED && tries < 3 =>
                {
                    tries += 1;
                    self.settled(self.timeout).await;
                }
                other => break other,
            }
        };
        drop(share);
        match outcome {
            Ok(v) => Ok(v),
            Err(e @ tether_rpc::RpcError::Timeout { .. }) => {
                let why = e.to_string();
                self.heard
                    .send_modify(|heard| heard.apply(Event::Degraded(why)));
                let text = format!("{}: {e}; it may still be indexing", self.id);
                Err(RequestError {
                    cause: Some(e),
                    text,
                })
            }
            Err(e) => {
                let mut child = self.child.lock().await;
                // The server's last words may still be in its stderr pipe: let it exit first.
                if let Some(c) = child.as_mut() {
                    c.last_words_within(Duration::from_millis(300)).await;
                }
                let tail = child.as_ref().map(LongChild::stderr_tail);
                let text =
                    with_stderr_tail(&format!("{}: {e}", self.id), &tail.unwrap_or_default());
                Err(RequestError {
                    cause: Some(e),
                    text,
                })
            }
        }
    }

    /// Brings every other open document up to date with its file before a request that may
    /// depend on it (a file changed by git, a formatter or the client's own editor): a stat
    /// first, and the text only when size or time changed.
    pub async fn refresh_open(&self, files: &tether_fs::Workspace) -> Result<(), LspError> {
        let changed: Vec<PathBuf> = {
            let open = self.open.lock().await;
            open.iter()
                .filter(|(path, doc)| stamp(path) != doc.stamp)
                .map(|(path, _)| path.clone())
                .collect()
        };
        for path in changed {
            // A file that is gone stays as the server last saw it; its next use says so.
            if let Ok(text) = crate::named::read(files, &path).await {
                self.sync(&path, &text).await?;
            }
        }
        Ok(())
    }

    /// Takes the server's `workspace/applyEdit` requests until the guard drops; for a write
    /// call, which applies them through its own write door.
    pub async fn accept_edits(&self) -> (AcceptingEdits, tokio::sync::mpsc::Receiver<ServedEdit>) {
        // Another run's call takes them first, until it ends.
        let taken = self.edits_taken.clone().lock_owned().await;
        let (port, edits) = tokio::sync::mpsc::channel(4);
        *lock(&self.edits) = Some(port);
        let guard = AcceptingEdits {
            port: self.edits.clone(),
            _taken: taken,
        };
        (guard, edits)
    }

    /// Whether the server holds `path` with the text on disk, as a stat alone shows: the file
    /// has the size and time it had when its text was last given, and that stamp was settled.
    pub async fn holds_as_on_disk(&self, path: &Path) -> bool {
        let held = self.open.lock().await.get(path).and_then(|doc| doc.stamp);
        held.is_some() && held == stamp(path)
    }

    /// Whether the server has `path` open.
    pub async fn has_open(&self, path: &Path) -> bool {
        self.open.lock().await.contains_key(path)
    }

    /// Forgets when `path` was last stat'ed, after it was given a write receipt's text: the
    /// file may have changed since that write, so [`Server::refresh_open`] compares it again.
    pub async fn unstamp(&self, path: &Path) {
        if let Some(doc) = self.open.lock().await.get_mut(path) {
            doc.stamp = None;
        }
    }

    /// Whether `text` is what the server has for `path`, when it has the file open (`None`
    /// when it does not: it read the file from disk itself).
    pub async fn holds(&self, path: &Path, text: &str) -> Option<bool> {
        let open = self.open.lock().await;
        let doc = open.get(path)?;
        Some(doc.hash == xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
    }

    /// What the server had published just before it was given `text` for `path`, when that
    /// was one of the latest texts it was sent (by another run sharing it, say).
    pub fn snapshot_before(&self, path: &Path, text: &str) -> Option<crate::answers::Snapshot> {
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        lock(&self.sent_after)
            .iter()
            .rev()
            .find(|(p, h, _)| p == path && *h == hash)
            .map(|(_, _, snap)| snap.clone())
    }

    /// Marks the server as shared by several runs (a host's pool), set once it has started.
    pub(crate) fn share(&self) {
        self.shared
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Keeps what the server had published before it is sent `hash` for `path`.
    fn keep_before(&self, path: &Path, hash: u64) {
        if !self.shared.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let snap = self.snapshot();
        let mut sent = lock(&self.sent_after);
        if sent.len() == SENT_KEPT {
            sent.pop_front();
        }
        sent.push_back((path.to_path_buf(), hash, snap));
    }

    /// Tells the server `path` was saved (after [`Server::sync`] gave it the saved text). For a
    /// server that checks separately, the save is counted and a barrier sent behind it, so the
    /// checks begun once the server took it in are known to be for it or later.
    pub async fn saved(&self, path: &Path) -> Result<(), LspError> {
        let params = lsp::DidSaveTextDocumentParams {
            text_document: protocol::document(path).map_err(|e| e.of_server(&self.id))?,
            text: None,
        };
        if !self.separate_check {
            return self.notify::<DidSaveTextDocument>(params).await;
        }
        let mut save = 0;
        self.heard.send_modify(|h| {
            h.apply(Event::Saved);
            save = h.saves;
        });
        let told = self.notify::<DidSaveTextDocument>(params).await;
        // Unanswered (a server too busy to answer within the deadline), the save still counts
        // as taken in, so later saves are not held up behind it.
        self.barrier().await;
        self.heard.send_modify(|h| h.apply(Event::Barrier { save }));
        told
    }

    /// Sends a notification; its method and parameters come from one lsp-types type.
    pub(crate) async fn notify<N: Notification>(&self, params: N::Params) -> Result<(), LspError> {
        let _share = self.gate.share().await;
        self.notify_shared::<N>(params).await
    }

    /// [`Server::notify`] for a caller that holds a share of the gate already.
    async fn notify_shared<N: Notification>(&self, params: N::Params) -> Result<(), LspError> {
        let params = protocol::to_params(N::METHOD, params).map_err(|e| e.of_server(&self.id))?;
        lock(&self.reports).told(N::METHOD, &params);
        self.peer
            .notify(N::METHOD, params)
            .await
            .map_err(|cause| LspError::Unsent {
                server: self.id.clone(),
                cause,
            })
    }

    /// The file extensions of the languages it serves.
    pub fn extensions(&self) -> Vec<String> {
        self.languages
            .iter()
            .flat_map(|l| l.extensions.iter().cloned())
            .collect()
    }

    /// The LSP `languageId` of `path`, from the language it belongs to.
    fn language_id_of(&self, path: &Path) -> String {
        self.languages.iter().find(|l| l.covers(path)).map_or_else(
            || "plaintext".to_string(),
            |l| l.language_id_of(path).to_string(),
        )
    }

    /// Makes sure the server has `path` open with its current text: opened on first use,
    /// changed (whole text, one version up) when the file changed since, else nothing.
    pub async fn sync(&self, path: &Path, text: &str) -> Result<(), LspError> {
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        // Taken before the documents: a preview holds the gate and then takes them.
        let _share = self.gate.share().await;
        let mut open = self.open.lock().await;
        let uri = protocol::uri(path).map_err(|e| e.of_server(&self.id))?;
        let (now, sent_begun) = {
            self.heard.send_modify(|heard| {
                heard.apply(Event::Sent);
                heard.news_at = Some(tokio::time::Instant::now());
            });
            let heard = self.heard.borrow();
            (heard.seq, heard.indexing_begun())
        };
        match open.get_mut(path) {
            Some(doc) if doc.hash == hash => {
                doc.stamp = settled_stamp(path);
                Ok(())
            }
            Some(doc) => {
                self.keep_before(path, hash);
                doc.version += 1;
                doc.hash = hash;
                doc.sent_seq = now;
                doc.sent_begun = sent_begun;
                doc.stamp = settled_stamp(path);
                let params = lsp::DidChangeTextDocumentParams {
                    text_document: lsp::VersionedTextDocumentIdentifier::new(uri, doc.version),
                    content_changes: vec![lsp::TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_string(),
                    }],
                };
                self.notify_shared::<DidChangeTextDocument>(params).await
            }
            None => {
                self.keep_before(path, hash);
                let doc = Open {
                    version: 1,
                    hash,
                    sent_seq: now,
                    sent_begun,
                    stamp: settled_stamp(path),
                };
                open.insert(path.to_path_buf(), doc);
                let params = lsp::DidOpenTextDocumentParams {
                    text_document: lsp::TextDocumentItem::new(
                        uri,
                        self.language_id_of(path),
                        1,
                        text.to_string(),
                    ),
                };
                self.notify_shared::<DidOpenTextDocument>(params).await
            }
        }
    }

    /// Ends the server: `shutdown` and `exit` within `budget`, then its process group is
    /// killed if it still runs.
    pub async fn stop(&self, budget: Duration) {
        let polite = budget / 2;
        let _ = self.peer.request("shutdown", Value::Null, polite).await;
        let _ = self.peer.notify("exit", Value::Null).await;
        if let Some(mut child) = self.child.lock().await.take()
            && child.exited_within(polite).await.is_none()
        {
            child.shutdown(Duration::from_millis(500)).await;
        }
    }
}

/// A `file://` URI for an absolute path (percent-encoding what URIs cannot hold).
pub fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = String::from("file://");
    // The path's own bytes, so a name that is not UTF-8 survives the round trip.
    for &b in path.as_os_str().as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The path of a `file://` URI, if it is one (percent-escapes decoded; raw UTF-8 kept).
pub fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    use std::os::unix::ffi::OsStringExt as _;
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_log_pattern_star_matches_any_text() {
        let found = "Found * source file*";
        assert!(glob_match(found, "Found 2786 source files"));
        assert!(glob_match(found, "Found 1 source file"));
        assert!(!glob_match(found, "Found 3 files to analyze"));
        assert!(!glob_match(found, "Searching for source files"));
        assert!(glob_match(
            "No source files found*",
            "No source files found."
        ));
        assert!(!glob_match("exact", "exact and more"));
    }

    #[test]
    fn uris_round_trip_through_spaces_and_non_ascii() {
        let path = Path::new("/tmp/a b/漢字 😀/x.rs");
        let uri = file_uri(path);
        assert!(uri.starts_with("file:///tmp/a%20b/%E6%BC%A2"), "{uri}");
        assert_eq!(uri_path(&uri).unwrap(), path);
        // Some servers send UTF-8 unescaped, or a stray `%`.
        assert_eq!(
            uri_path("file:///tmp/漢%/x").unwrap(),
            Path::new("/tmp/漢%/x")
        );
        assert_eq!(uri_path("https://x"), None);
        // A name that is not UTF-8 keeps its bytes both ways.
        use std::os::unix::ffi::OsStrExt as _;
        let raw = Path::new(std::ffi::OsStr::from_bytes(b"/tmp/caf\xe9.rs"));
        let uri = file_uri(raw);
        assert_eq!(uri, "file:///tmp/caf%E9.rs");
        assert_eq!(uri_path(&uri).unwrap(), raw);
    }
}
