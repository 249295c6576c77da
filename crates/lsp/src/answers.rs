//! Waiting for a server's diagnostics: pulled or published for a document's current version,
//! the end of a separate check, the end of the work a change set off in other files, and the
//! publications that came in since a moment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use lsp_types::request::{ExecuteCommand, FoldingRangeRequest};
use serde_json::{Value, json};

use crate::protocol::{self, Diagnostic};
use tether_base::lock;
use tether_rpc::RpcError;
use tether_rpc::codes::METHOD_NOT_FOUND;

use crate::asks::Barrier;
use crate::error::LspError;
use crate::heard::{Busy, Event, Heard};
use crate::server::{Published, Server, file_uri, uri_path};
use crate::store::Publications;

/// How long a server that checks on save may sit idle after a save, with no check begun,
/// before the save is told again.
const RESAVE_AFTER: Duration = Duration::from_secs(2);

/// The diagnostics of a full document diagnostic report; anything else (`null` from a server
/// that does not know the request) is no answer.
fn full_report(answer: tether_rpc::Payload) -> Option<Vec<Diagnostic>> {
    protocol::read::<protocol::DiagnosticReport>(answer).items
}

/// Each file's last full pulled report and the result id the server gave it, for at most
/// [`REPORTS_KEPT`] files. A result id only names a report while the server keeps the file's
/// analysis: pyright numbers each file's reports afresh when it makes the file again (after a
/// creation, a deletion or a new configuration), so anything told of a file forgets its
/// report and anything told of the workspace forgets them all.
#[derive(Default)]
pub(crate) struct Reports {
    held: HashMap<String, (String, Arc<Vec<Diagnostic>>)>,
    /// How many pulls were answered "unchanged" and read from here.
    reused: u64,
}

/// How many files' reports a server's [`Reports`] holds; past it, it starts again.
const REPORTS_KEPT: usize = 512;

impl Reports {
    /// Forgets what notification `method` with `params` may have made stale.
    pub(crate) fn told(&mut self, method: &str, params: &Value) {
        let document = params.pointer("/textDocument/uri").and_then(Value::as_str);
        match document {
            Some(uri) if method.starts_with("textDocument/") => {
                self.held.remove(uri);
            }
            _ => self.held.clear(),
        }
    }

    fn keep(&mut self, uri: String, id: String, items: &[Diagnostic]) {
        if self.held.len() >= REPORTS_KEPT && !self.held.contains_key(&uri) {
            self.held.clear();
        }
        self.held.insert(uri, (id, Arc::new(items.to_vec())));
    }
}

/// What a server said of one file: a publication as it stood when read, or a pull's answer.
pub struct Said {
    pub path: PathBuf,
    /// Shared with the server's store when it is a publication.
    pub items: Arc<Vec<Diagnostic>>,
    /// Whether it is the file's real state: a pull's answer, or a publication that was
    /// confirmed when it was read, not a placeholder of a pass under way.
    pub real: bool,
}

impl Said {
    /// A pull's answer, the file's real state.
    pub fn pulled((path, items): (PathBuf, Vec<Diagnostic>)) -> Self {
        Said {
            path,
            items: Arc::new(items),
            real: true,
        }
    }
}

/// A document's text as the server was sent it: its version, and the event count then.
#[derive(Clone, Copy)]
pub(crate) struct SentText {
    version: i64,
    seq: u64,
}

impl SentText {
    /// Whether a publication for `version` (when the server gave one), heard at event `seq`,
    /// is for this text: the same version, or without one, heard after the text was sent.
    pub(crate) fn answered_by(self, version: Option<i64>, seq: u64) -> bool {
        match version {
            Some(v) => v == self.version,
            None => seq > self.seq,
        }
    }
}

/// What a diagnostics pull brought.
pub(crate) enum Pull {
    /// A full report: the file's diagnostics.
    Full(Vec<Diagnostic>),
    /// An answer with no report in it (pyright's "unchanged" for a file it does not hold).
    NotFull,
    /// No answer within the limit, or the server cannot be asked.
    NoAnswer,
}

/// `textDocument/diagnostic`'s params for `path`, naming the report the client holds.
fn pull_params(path: &Path, previous_result_id: Option<String>) -> Option<Value> {
    let params =
        protocol::document(path).map(|text_document| lsp_types::DocumentDiagnosticParams {
            text_document,
            identifier: None,
            previous_result_id,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        });
    match params.and_then(|p| protocol::to_params("textDocument/diagnostic", p)) {
        Ok(params) => Some(params),
        Err(why) => {
            tracing::warn!("{why}");
            None
        }
    }
}

/// How long a pull the server cancelled waits for news before it is asked again.
const PULL_AGAIN: Duration = Duration::from_millis(50);

/// How long the server may take to answer the request that shows it has taken a save in.
const TAKEN_IN: Duration = Duration::from_secs(5);

/// What a server had published for every file at one moment, and that moment.
#[derive(Clone)]
pub struct Snapshot {
    /// The event count then; publications after it have a larger `seq`.
    pub seq: u64,
    /// When it was taken: a file changed on disk after that is not news of its event.
    pub taken: std::time::Instant,
    /// How many work-done progresses had begun by then.
    pub begun: u64,
    /// Every file's latest publication then, shared with the server's store; one map however
    /// many copies of the snapshot are made (a burst of changes clones it per file).
    pub files: Publications,
    /// Whether the server had finished its first pass over the project by then, so a file's
    /// publication is its real state, not a placeholder (pyright first publishes every file
    /// empty, before it has looked at any).
    pub complete: bool,
    /// Whether the server reports on files nobody opened ([`Server::reports_other_files`]).
    pub wide: bool,
    /// Whether a file it never published had nothing: a separate check reports only files
    /// with problems, while a server of the whole workspace publishes every file it looked at,
    /// so one it has not published yet is one it has not looked at.
    pub absent_is_clean: bool,
    /// Whether the store dropped no file to stay in bounds; after it did, a file with no
    /// publication may have had problems.
    pub lossless: bool,
}

impl Server {
    /// What the server has published for `path` so far, current or not, without waiting.
    pub fn published_now(&self, path: &Path) -> Vec<Diagnostic> {
        let uri = file_uri(path);
        let heard = self.heard.borrow();
        heard
            .published
            .get(&uri)
            .map(|p| p.items.to_vec())
            .unwrap_or_default()
    }

    /// Like [`Server::published_now`], from the publications that are whole (for a server
    /// that checks separately, as its last awaited check left them).
    pub fn whole_now(&self, path: &Path) -> Vec<Diagnostic> {
        let uri = file_uri(path);
        let heard = self.heard.borrow();
        self.whole(&heard)
            .get(&uri)
            .map(|p| p.items.to_vec())
            .unwrap_or_default()
    }

    /// The publications that are whole now: for a server that checks separately, as they
    /// stood after its last awaited check (none before one), else the latest.
    fn whole<'h>(&self, heard: &'h Heard) -> std::borrow::Cow<'h, Publications> {
        match (&heard.checked, self.separate_check) {
            (Some(checked), true) => std::borrow::Cow::Borrowed(checked),
            (None, true) => std::borrow::Cow::Owned(Publications::default()),
            (_, false) => std::borrow::Cow::Borrowed(&heard.published),
        }
    }

    /// The diagnostics the server published for `path`'s current text, waiting for them at
    /// most the request deadline; `None` if none came in time. An older publication (for a
    /// version before the last change) never counts.
    pub async fn published(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        self.published_within(path, self.timeout).await
    }

    /// The diagnostics for `path`'s current text, within `limit`: pulled where the server
    /// offers it, else its publication for the current version. `None` when none came in time.
    pub async fn diagnostics_within(
        &self,
        path: &Path,
        limit: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let end = tokio::time::Instant::now() + limit;
        // A server still loading the project answers for files it has not read with nothing.
        if !self.loaded_within(limit).await {
            return None;
        }
        let limit = end.saturating_duration_since(tokio::time::Instant::now());
        if self.capabilities.diagnostic_provider.on {
            return self.pulled_within(path, limit).await;
        }
        // A server whose pull is final (pyright) is asked: what it published for this version
        // of the document may predate a change to a file it imports.
        if self.done == crate::catalog::Done::Pull
            && let Some(items) = self.pulled_within(path, limit).await
        {
            return Some(items);
        }
        let limit = end.saturating_duration_since(tokio::time::Instant::now());
        // Some servers answer a pull they never offered: the pull and the publication race,
        // and a refusal is remembered.
        let published = self.published_within(path, limit);
        tokio::pin!(published);
        if self.may_pull.load(Ordering::Relaxed)
            && let Some(params) = pull_params(path, None)
        {
            let _share = self.gate.share().await;
            let pull = self
                .peer
                .request_payload("textDocument/diagnostic", params, limit);
            tokio::pin!(pull);
            tokio::select! {
                biased;
                answer = &mut published => return answer,
                pulled = &mut pull => match pulled.map(full_report) {
                    Ok(Some(items)) => return Some(items),
                    Err(RpcError::Remote { error, .. }) if error.code == METHOD_NOT_FOUND => {
                        self.may_pull.store(false, Ordering::Relaxed);
                    }
                    Ok(_) | Err(_) => {}
                },
            }
        }
        published.await
    }

    /// Waits, at most `limit`, until a server that announces its loading says it has loaded
    /// the project; true at once for a server that never says.
    pub async fn loaded_within(&self, limit: Duration) -> bool {
        if !self.announces_loading {
            return true;
        }
        self.until(limit, |h| h.quiescent == Some(true)).await
    }

    /// What `lsp diagnostics` answers for one file, within `limit`: the server's diagnostics
    /// for its current text and, for a server that checks separately, what the last whole
    /// check found there (a check running now is waited for; with none yet, one is asked).
    pub async fn file_answer(
        &self,
        path: &Path,
        limit: Duration,
    ) -> Result<Vec<Diagnostic>, LspError> {
        let end = tokio::time::Instant::now() + limit;
        // The wait began when the text was sent: what the server did since is part of it.
        let begun = match self.open.lock().await.get(path) {
            Some(doc) => doc.sent_begun,
            None => self.heard.borrow().indexing_begun(),
        };
        let Some(mut items) = self.diagnostics_within(path, limit).await else {
            return Err(LspError::NoAnswer(format!(
                "{} published no diagnostics for the current text within {} s ({}); ask \
                 again, or see `lsp` status",
                self.id,
                limit.as_secs(),
                self.state_since(begun).await
            )));
        };
        if self.separate_check {
            let (begun, running, ever) = {
                let heard = self.heard.borrow();
                (
                    heard.checks_begun,
                    heard.checking(),
                    heard.checked.is_some(),
                )
            };
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            let done = match (running, ever) {
                (true, _) => self.check_after(path, begun.saturating_sub(1), left).await,
                (false, true) => true,
                (false, false) => {
                    let _ = self.saved(path).await;
                    self.check_after(path, begun, left).await
                }
            };
            if !done {
                return Err(LspError::NoAnswer(format!(
                    "{}'s check of the project had not finished within {} s; ask again",
                    self.id,
                    limit.as_secs()
                )));
            }
            items.extend(self.whole_now(path));
        }
        Ok(items)
    }

    /// `path`'s diagnostics asked for directly, within `limit`, whether or not the file is
    /// open; `None` from a server that will not answer pulls, or past the limit. A busy server
    /// may cancel a pull ("content modified", "server cancelled") and expects it asked again;
    /// it is, until the deadline.
    pub async fn pulled_within(&self, path: &Path, limit: Duration) -> Option<Vec<Diagnostic>> {
        if self.tsserver_pull {
            return self.tsserver_pulled(path, limit).await;
        }
        match self.pull(path, limit).await {
            Pull::Full(items) => Some(items),
            Pull::NotFull | Pull::NoAnswer => None,
        }
    }

    /// Asks, in the background, for the diagnostics of a file a question opened, on a server
    /// of open files that answers pulls: its first answer can take longer than a write's
    /// baseline budget (svelte's 1.4 s, loading TypeScript), and a later write should find
    /// the server ready to say what the file had.
    pub fn warm_pull(self: &Arc<Self>, path: &Path) {
        if !self.capabilities.diagnostic_provider.on || self.workspace_mode {
            return;
        }
        let (server, path) = (Arc::downgrade(self), path.to_path_buf());
        tokio::spawn(async move {
            if let Some(server) = server.upgrade() {
                let _ = server.pull(&path, server.timeout()).await;
            }
        });
    }

    /// [`Server::pulled_within`] for a server that answers pulls itself, telling an answer
    /// that holds no report apart from no answer at all.
    pub(crate) async fn pull(&self, path: &Path, limit: Duration) -> Pull {
        let offered = self.capabilities.diagnostic_provider.on;
        if !offered && !self.may_pull.load(Ordering::Relaxed) {
            return Pull::NoAnswer;
        }
        let end = tokio::time::Instant::now() + limit;
        let uri = file_uri(path);
        let held = lock(&self.reports).held.get(&uri).cloned();
        let Some(params) = pull_params(path, held.as_ref().map(|(id, _)| id.clone())) else {
            return Pull::NoAnswer;
        };
        loop {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            let share = self.gate.share().await;
            let answer = self
                .peer
                .request_payload("textDocument/diagnostic", params.clone(), left)
                .await;
            drop(share);
            match answer {
                Ok(pull) => {
                    let report = protocol::read::<protocol::DiagnosticReport>(pull);
                    let items = match (report.items, report.result_id) {
                        (Some(items), id) => {
                            if let Some(id) = id {
                                lock(&self.reports).keep(uri, id, &items);
                            }
                            items
                        }
                        // "Unchanged" names the report it stands for; any other answer without
                        // a report (pyright's for a file it does not hold) is none.
                        (None, Some(id)) if report.unchanged => match held {
                            Some((held_id, items)) if held_id == id => {
                                lock(&self.reports).reused += 1;
                                items.to_vec()
                            }
                            _ => return Pull::NotFull,
                        },
                        (None, _) => return Pull::NotFull,
                    };
                    self.confirm(path, &items);
                    return Pull::Full(items);
                }
                // A server that never offered pulls and refuses one is not asked again.
                Err(RpcError::Remote { error, .. })
                    if !offered && error.code == METHOD_NOT_FOUND =>
                {
                    self.may_pull.store(false, Ordering::Relaxed);
                    return Pull::NoAnswer;
                }
                Err(_) if self.peer.closed().is_none() && left > PULL_AGAIN => {
                    // Asked again once the server has news, or after a moment without.
                    let seq = self.heard.borrow().seq;
                    self.until(PULL_AGAIN, |h| h.seq != seq).await;
                }
                Err(_) => return Pull::NoAnswer,
            }
        }
    }

    /// Forgets every pulled report kept under a result id, so the next pulls are answered
    /// in full.
    pub(crate) fn forget_reports(&self) {
        lock(&self.reports).held.clear();
    }

    /// How many pulls the server answered "unchanged", read from the report it named.
    #[doc(hidden)]
    pub fn pulls_unchanged(&self) -> u64 {
        lock(&self.reports).reused
    }

    /// Keeps a pull's answer as the confirmed state of a file a server that confirms by pull
    /// has published (any pull's answer is the file's real state, not only the survey's).
    fn confirm(&self, path: &Path, items: &[Diagnostic]) {
        let uri = file_uri(path);
        self.heard.send_if_modified(|h| {
            let kept = h.confirms_by_pull
                && h.published.get(&uri).is_some()
                && !h.published.confirmed_as(&uri, items);
            if kept {
                let items = items.to_vec();
                h.apply(Event::Pulled { uri, items });
            }
            kept
        });
    }

    /// How many separate checks have begun so far, for [`Server::check_after`].
    pub fn checks_begun(&self) -> u64 {
        self.heard.borrow().checks_begun
    }

    /// Gives the server `path`'s `text` as saved, and returns the count of checks begun before
    /// any check of this save, for [`Server::answer`]. For a server that checks separately it
    /// is taken once the server has handled the save (see [`Server::saved`]), so a check begun
    /// for an older save, whose start was still on the wire, is not taken for this one.
    pub async fn save_for_check(&self, path: &Path, text: &str) -> Result<u64, LspError> {
        let before = self.checks_begun();
        self.sync_saved(path, text).await?;
        match self.separate_check {
            true => Ok(self.heard.borrow().barred.1.max(before)),
            false => Ok(before),
        }
    }

    /// Sends a request the server does not know and waits for its answer: a server handles
    /// messages in order, so everything it sent before the answer has been taken in by then.
    pub(crate) async fn barrier(&self) -> bool {
        // A method the server does not know is answered at once, with an error.
        match self.call_within::<Barrier>(json!({}), TAKEN_IN).await {
            Ok(_) | Err(LspError::Peer(RpcError::Remote { .. })) => true,
            Err(_) => false,
        }
    }

    /// `path`'s diagnostics asked of tsserver through the server, within `limit`.
    async fn tsserver_pulled(&self, path: &Path, limit: Duration) -> Option<Vec<Diagnostic>> {
        let end = tokio::time::Instant::now() + limit;
        let mut items = Vec::new();
        for request in crate::tsserver_pull::requests() {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            let params = crate::tsserver_pull::params(request, path);
            let answer = self
                .call_within::<ExecuteCommand>(params, left)
                .await
                .ok()?;
            items.extend(crate::tsserver_pull::read(&answer)?);
        }
        Some(items)
    }

    /// Asks the server something it answers from its worker, behind the publications a check's
    /// end queued there; true when the answer came from that worker. rust-analyzer sends each
    /// publication from a job on its pool, which runs one job at a time in queue order (the
    /// catalog's `in_order_init`), so `foldingRange` on `path`, queued after them, is answered
    /// after they were sent. Any answer but `null`, an error included, came from the worker:
    /// while it loads files, rust-analyzer answers `null` at once, from outside the pool.
    async fn flush(&self, path: &Path, limit: Duration) -> bool {
        let Ok(text_document) = protocol::document(path) else {
            return false;
        };
        let params = lsp_types::FoldingRangeParams {
            text_document,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let answer = self
            .call_within::<FoldingRangeRequest>(params, limit.min(TAKEN_IN))
            .await;
        match answer {
            Ok(value) => !value.is_null(),
            Err(e) => matches!(e, LspError::Peer(RpcError::Remote { .. })),
        }
    }

    /// Waits, at most `limit`, for a separate check that began after `begun` checks (and after
    /// the latest save was taken in) to end, and for its publications; true when they are in.
    /// A server without one is done at once.
    ///
    /// How the check is matched, from rust-analyzer's behaviour: a `didSave` makes it cancel
    /// the running `cargo check` (whose progress then ends) and start a new one, whose progress
    /// begins only after the save was handled, so after the answer to a request sent behind the
    /// save ([`Server::saved`]). The first check to end after that with none running is the
    /// save's, unless a later save was sent meanwhile, which then moves the mark. Its findings
    /// are published around its end, from jobs that [`Server::flush`] queues behind.
    pub async fn check_after(&self, path: &Path, begun: u64, limit: Duration) -> bool {
        if !self.separate_check {
            return true;
        }
        let end = tokio::time::Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || self.peer.closed().is_some() {
                return false;
            }
            // A save taken in while the project was loading starts no check, and a check that
            // ends while it reloads (cargo check wrote Cargo.lock) answers for no save: when
            // the server sits idle with no check running and none answering, the save is told
            // again.
            let window = left.min(RESAVE_AFTER);
            if !self.until(window, |h| h.check_ended_after(begun)).await {
                let idle = {
                    let h = self.heard.borrow();
                    h.busy() == Busy::Idle && h.barred.0 == h.saves
                };
                if idle && window == RESAVE_AFTER {
                    let _ = self.saved(path).await;
                }
                continue;
            }
            let ends = self.heard.borrow().checks_ended;
            // Answered from outside the worker, the flush is asked again once the server says
            // something more (it loads files while it answers so).
            let said = self.heard.borrow().news_at;
            if !self.flush(path, left).await {
                let left = end.saturating_duration_since(tokio::time::Instant::now());
                self.until(left, |h| h.news_at != said).await;
                continue;
            }
            self.heard.send_modify(|h| h.apply(Event::Flushed { ends }));
            if self.heard.borrow().check_whole_after(begun) {
                return true;
            }
        }
    }

    /// The text the server holds for `path` as a publication must match it; `None` when the
    /// file is not open.
    pub(crate) async fn sent_text(&self, path: &Path) -> Option<SentText> {
        let open = self.open.lock().await;
        let doc = open.get(path)?;
        Some(SentText {
            version: i64::from(doc.version),
            seq: doc.sent_seq,
        })
    }

    /// Like [`Server::published`], waiting at most `limit`.
    pub async fn published_within(&self, path: &Path, limit: Duration) -> Option<Vec<Diagnostic>> {
        let uri = file_uri(path);
        let sent = self.sent_text(path).await?;
        let current = |p: &Published| sent.answered_by(p.version, p.seq);
        let fresh = |h: &Heard| h.published.get(&uri).is_some_and(current);
        if !self.until(limit, fresh).await {
            return None;
        }
        let heard = self.heard.borrow();
        heard.published.get(&uri).map(|p| p.items.to_vec())
    }

    /// The complete answer for `path`'s current text within `limit`: its diagnostics, and for
    /// a server that checks separately, that check's results once a check begun after
    /// `checks_before` had begun ended. `Err` says why there is none yet.
    pub async fn answer(
        &self,
        path: &Path,
        checks_before: u64,
        limit: Duration,
    ) -> Result<Vec<Diagnostic>, LspError> {
        let end = tokio::time::Instant::now() + limit;
        let begun = self.heard.borrow().indexing_begun();
        let Some(mut items) = self.diagnostics_within(path, limit).await else {
            return Err(LspError::NoAnswer(format!(
                "{} gave no answer for this version within {} ms ({})",
                self.id,
                limit.as_millis(),
                self.state_since(begun).await
            )));
        };
        if self.separate_check {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            if !self.check_after(path, checks_before, left).await {
                return Err(LspError::NoAnswer(format!(
                    "{}'s check of the saved files had not finished within {} ms ({})",
                    self.id,
                    limit.as_millis(),
                    self.state_since(begun).await
                )));
            }
            items.extend(self.whole_now(path));
        }
        Ok(items)
    }

    /// What the server did over a wait that began once `begun` progresses other than checks had begun, for a
    /// reason a wait gives: "ready" alone would hide that it was indexing a moment before.
    async fn state_since(&self, begun: u64) -> String {
        let meanwhile = self.heard.borrow().indexing_begun() > begun;
        match self.state().await {
            crate::server::State::Ready if meanwhile => {
                "it was indexing during this wait and is idle now".into()
            }
            crate::server::State::Ready => "it reported no work under way".into(),
            other => other.to_string(),
        }
    }

    /// Whether what the server holds whole now has an error anywhere: a checker whose lints
    /// stop while errors stand has not looked for warnings then.
    pub fn errors_stand(&self) -> bool {
        let heard = self.heard.borrow();
        self.whole(&heard)
            .iter()
            .any(|(_, p)| p.items.iter().any(|d| d.level() == 1))
    }

    /// Whether a separate check is running now, so the publications are half old, half new.
    pub fn checking(&self) -> bool {
        self.heard.borrow().checking()
    }

    /// Whether the server is asked for a file's diagnostics (a pull) rather than awaited: it
    /// offers the pull, or its pull is final (pyright).
    pub fn answers_pulls(&self) -> bool {
        self.capabilities.diagnostic_provider.on || self.done == crate::catalog::Done::Pull
    }

    /// Whether the files a change may break are asked about (pulled), not awaited: a server
    /// whose pulls are final, or one of open files that answers pulls and asks to be pulled
    /// again rather than publishing them (rust-analyzer without its check). Not one that
    /// checks those files again only on a save (clangd).
    pub fn asks_dependents(&self) -> bool {
        use crate::catalog::Done;
        let pulled_not_published = self.done == Done::Publish
            && self.capabilities.diagnostic_provider.on
            && !self.separate_check
            && !self.dependents_on_save;
        self.done == Done::Pull || pulled_not_published
    }

    /// Whether a file's publication counts as its state only once confirmed: see
    /// [`Heard::confirms_by_pull`].
    pub fn confirms_by_pull(&self) -> bool {
        self.heard.borrow().confirms_by_pull
    }

    /// Whether problems a change causes in other files come from this server too.
    pub fn reports_other_files(&self) -> bool {
        self.separate_check || self.workspace_mode
    }

    /// Gives the server `path`'s text and tells it the file was saved; `Err` says why it
    /// could not be told (when the connection broke, the exit and stderr, once seen).
    pub async fn sync_saved(&self, path: &Path, text: &str) -> Result<(), LspError> {
        let told = match self.sync(path, text).await {
            Ok(()) => self.saved(path).await,
            Err(e) => Err(e),
        };
        let Err(error) = told else {
            return Ok(());
        };
        // A write error can come before the reader saw the exit that explains it.
        self.until(Duration::from_millis(500), |h| h.closed.is_some())
            .await;
        match self.peer.closed() {
            Some(_) => Err(LspError::Ended {
                server: self.id.clone(),
                state: self.state().await.to_string(),
            }),
            None => Err(error),
        }
    }

    /// The version of `path` the server has open, if it has it open.
    pub async fn version_of(&self, path: &Path) -> Option<i32> {
        self.open.lock().await.get(path).map(|doc| doc.version)
    }

    /// Every file's latest publication now, with the moment it was taken; what the server
    /// says of a file before its first pass over the project ended is not its real state.
    pub fn snapshot(&self) -> Snapshot {
        let complete = self.snapshot_complete();
        let heard = self.heard.borrow();
        let files = self.whole(&heard).into_owned();
        Snapshot {
            seq: heard.seq,
            taken: std::time::Instant::now(),
            begun: heard.begun,
            lossless: files.whole(),
            files,
            complete,
            wide: self.reports_other_files(),
            absent_is_clean: self.separate_check,
        }
    }

    /// The event count now, for telling later publications apart without a whole snapshot.
    pub fn seq_now(&self) -> u64 {
        self.heard.borrow().seq
    }

    /// What the diagnostics store dropped or cut to stay in bounds, for `status`.
    pub fn store_losses(&self) -> Option<String> {
        self.heard.borrow().published.losses()
    }

    /// How many files the server has published diagnostics for, clean ones included.
    pub fn files_reported(&self) -> usize {
        self.heard.borrow().published.files()
    }

    /// The files whose diagnostics were published after `seq`, with what was published and
    /// whether it was confirmed at that same moment (a pull's answer may confirm it a moment
    /// later, with other items: asking again then would pair the old items with the new mark).
    pub fn published_since(&self, seq: u64) -> Vec<Said> {
        let heard = self.heard.borrow();
        let mut out: Vec<Said> = self
            .whole(&heard)
            .since(seq)
            .filter_map(|(uri, p)| {
                Some(Said {
                    path: uri_path(uri)?,
                    items: p.items.clone(),
                    real: !heard.confirms_by_pull || p.confirmed,
                })
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// Waits, at most `limit`, until a server of the whole workspace has been over the project
    /// once, so what it published is each file's real state; true when it has.
    pub async fn first_pass_within(&self, limit: Duration) -> bool {
        let separate = self.separate_check;
        self.until(limit, |h| complete(h, separate)).await
    }

    /// Whether what the server published so far is whole: see [`Snapshot::complete`].
    fn snapshot_complete(&self) -> bool {
        complete(&self.heard.borrow(), self.separate_check)
    }

    /// Waits, at most `limit`, for a server to go quiet: no progress running, and nothing
    /// heard from it (and no text sent to it) for `quiet`, counted from the last such news,
    /// so a second wait right after a first costs nothing. True when it did.
    pub async fn quiet_within(&self, quiet: Duration, limit: Duration) -> bool {
        let end = tokio::time::Instant::now() + limit;
        loop {
            let (at, idle) = {
                let h = self.heard.borrow();
                (h.news_at, h.busy() == Busy::Idle)
            };
            let now = tokio::time::Instant::now();
            let silent = at.map_or(quiet, |at| now.saturating_duration_since(at));
            if idle && silent >= quiet {
                return true;
            }
            if now >= end || self.peer.closed().is_some() {
                return false;
            }
            // Woken by news, or when the quiet would be complete.
            let left = end.saturating_duration_since(now);
            let wait = match idle {
                true => (quiet - silent).min(left),
                false => left,
            };
            self.until(wait, |h| {
                h.news_at != at || (!idle && h.busy() == Busy::Idle)
            })
            .await;
        }
    }
}

/// Whether a server's publications are each file's real state: for one that checks
/// separately, once an awaited check left them whole; else once it has been over the project
/// ([`Heard::passed`]), which stays so while later progress runs.
fn complete(heard: &Heard, separate: bool) -> bool {
    match separate {
        true => heard.checked.is_some(),
        false => heard.passed,
    }
}
