//! Waiting for a server's diagnostics: pulled or published for a document's current version,
//! the end of a separate check, the end of the work a change set off in other files, and the
//! publications that came in since a moment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};

use crate::protocol::{self, Diagnostic};
use tether_proc::RpcError;
use tether_proc::codes::METHOD_NOT_FOUND;
use tether_proc::lock;

use crate::server::{Heard, Published, Server, file_uri, uri_path};
use crate::store::Publications;

/// How long a server that checks on save may sit idle after a save, with no check begun,
/// before the save is told again.
const RESAVE_AFTER: Duration = Duration::from_secs(2);

/// The diagnostics of a full document diagnostic report; anything else (`null` from a server
/// that does not know the request) is no answer.
fn full_report(answer: Value) -> Option<Vec<Diagnostic>> {
    protocol::read::<protocol::DiagnosticReport>(answer).items
}

/// `textDocument/diagnostic`'s params for `path`.
fn pull_params(path: &Path) -> Option<Value> {
    let params =
        protocol::document(path).map(|text_document| lsp_types::DocumentDiagnosticParams {
            text_document,
            identifier: None,
            previous_result_id: None,
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

/// How long to wait before asking again for a pull the server cancelled.
const PULL_AGAIN: Duration = Duration::from_millis(50);

/// How long after a check ended no other may begin before its results count: rust-analyzer
/// cancels a running check when a save comes and starts the next one only after 50 ms with
/// no further save, so a check that ends early, cancelled, is followed by that one.
const RESTART_QUIET: Duration = Duration::from_millis(200);
/// How long the server may take to answer the request that shows it has taken a save in.
const TAKEN_IN: Duration = Duration::from_secs(5);

/// How long nothing may be published after a check ended before its results count as in.
const CHECK_QUIET: Duration = Duration::from_millis(40);
/// The longest wait for a check's results after it ended.
const CHECK_SETTLE: Duration = Duration::from_millis(250);

/// What a server had published for every file at one moment, and that moment.
#[derive(Clone, Default)]
pub struct Snapshot {
    /// The event count then; publications after it have a larger `seq`.
    pub seq: u64,
    /// How many work-done progresses had begun by then.
    pub begun: u64,
    /// Every file's latest publication then, shared with the server's store.
    pub files: HashMap<PathBuf, Arc<Vec<Diagnostic>>>,
    /// Whether the server had finished its first pass over the project by then, so a file's
    /// publication is its real state, not a placeholder (pyright first publishes every file
    /// empty, before it has looked at any).
    pub complete: bool,
    /// Whether the server reports every file ([`Server::reports_other_files`]), so a file it
    /// never published had nothing.
    pub wide: bool,
    /// Whether the store dropped no file to stay in bounds; after it did, a file with no
    /// publication may have had problems.
    pub lossless: bool,
}

impl Server {
    /// What the server has published for `path` so far, current or not, without waiting.
    pub fn published_now(&self, path: &Path) -> Vec<Diagnostic> {
        let uri = file_uri(path);
        let heard = lock(&self.heard);
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
        let heard = lock(&self.heard);
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
        // Some servers answer a pull they never offered (pyright, which publishes only after a
        // pause): the pull and the publication race, and a refusal is remembered.
        let published = self.published_within(path, limit);
        tokio::pin!(published);
        if self.may_pull.load(Ordering::Relaxed)
            && let Some(params) = pull_params(path)
        {
            let pull = self.peer.request("textDocument/diagnostic", params, limit);
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
        let end = tokio::time::Instant::now() + limit;
        loop {
            if lock(&self.heard).quiescent == Some(true) {
                return true;
            }
            if self.peer.closed().is_some() || tokio::time::Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// What `lsp diagnostics` answers for one file, within `limit`: the server's diagnostics
    /// for its current text and, for a server that checks separately, what the last whole
    /// check found there (a check running now is waited for; with none yet, one is asked).
    pub async fn file_answer(
        &self,
        path: &Path,
        limit: Duration,
    ) -> Result<Vec<Diagnostic>, String> {
        let end = tokio::time::Instant::now() + limit;
        let Some(mut items) = self.diagnostics_within(path, limit).await else {
            return Err(format!(
                "{} published no diagnostics for the current text within {} s ({}); ask \
                 again, or see `lsp` status",
                self.id,
                limit.as_secs(),
                self.state().await
            ));
        };
        if self.separate_check {
            let (begun, running, ever) = {
                let heard = lock(&self.heard);
                (
                    heard.checks_begun,
                    !heard.checks.is_empty(),
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
                return Err(format!(
                    "{}'s check of the project had not finished within {} s; ask again",
                    self.id,
                    limit.as_secs()
                ));
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
        let offered = self.capabilities.diagnostic_provider.on;
        if !offered && !self.may_pull.load(Ordering::Relaxed) {
            return None;
        }
        let end = tokio::time::Instant::now() + limit;
        let params = pull_params(path)?;
        loop {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            match self
                .peer
                .request("textDocument/diagnostic", params.clone(), left)
                .await
            {
                Ok(pull) => return full_report(pull),
                // A server that never offered pulls and refuses one is not asked again.
                Err(RpcError::Remote { error, .. })
                    if !offered && error.code == METHOD_NOT_FOUND =>
                {
                    self.may_pull.store(false, Ordering::Relaxed);
                    return None;
                }
                Err(_) if self.peer.closed().is_none() && left > PULL_AGAIN => {
                    tokio::time::sleep(PULL_AGAIN).await;
                }
                Err(_) => return None,
            }
        }
    }

    /// How many separate checks have begun so far, for [`Server::check_after`].
    pub fn checks_begun(&self) -> u64 {
        lock(&self.heard).checks_begun
    }

    /// Gives the server `path`'s `text` as saved, and returns the count of checks begun before
    /// any check of this save, for [`Server::answer`]. For a server that checks separately it
    /// is taken once the server has handled the save (it answers a request sent after it only
    /// then), so a check begun for an older save, whose start was still on the wire, is not
    /// taken for this one.
    pub async fn save_for_check(&self, path: &Path, text: &str) -> Result<u64, String> {
        let before = self.checks_begun();
        self.sync_saved(path, text).await?;
        if !self.separate_check {
            return Ok(before);
        }
        // A method the server does not know is answered at once, with an error.
        match self
            .peer
            .request("tether/barrier", json!({}), TAKEN_IN)
            .await
        {
            Ok(_) | Err(RpcError::Remote { .. }) => Ok(self.checks_begun()),
            Err(_) => Ok(before),
        }
    }

    /// Waits, at most `limit`, for a separate check that began after `begun` checks had to
    /// end and for publications to settle; true when it did. A server without one is done at
    /// once. (A check running at the save may end early, cancelled; that one does not count.)
    pub async fn check_after(&self, path: &Path, begun: u64, limit: Duration) -> bool {
        if !self.separate_check {
            return true;
        }
        let end = tokio::time::Instant::now() + limit;
        let mut asked = tokio::time::Instant::now();
        loop {
            let (done, running, idle, ended) = {
                let heard = lock(&self.heard);
                let idle = heard.quiescent == Some(true) && heard.progress.is_empty();
                (
                    heard.last_ended_begun > begun,
                    !heard.checks.is_empty(),
                    idle,
                    heard.check_ended_at,
                )
            };
            let restart_due = ended.is_some_and(|at| at.elapsed() < RESTART_QUIET);
            if done && !running && !restart_due {
                self.check_published().await;
                let mut heard = lock(&self.heard);
                if heard.checks.is_empty() {
                    heard.checked = Some(heard.published.clone());
                    return true;
                }
                // Another check began meanwhile: its end is the one to wait for.
                continue;
            }
            // A save that came while the project was reloading starts no check; once the
            // server is idle with none started, the save is told again.
            if !done && !running && idle && asked.elapsed() >= RESAVE_AFTER {
                let _ = self.saved(path).await;
                asked = tokio::time::Instant::now();
            }
            if tokio::time::Instant::now() >= end {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Like [`Server::published`], waiting at most `limit`.
    pub async fn published_within(&self, path: &Path, limit: Duration) -> Option<Vec<Diagnostic>> {
        let uri = file_uri(path);
        let (version, sent_seq) = {
            let open = self.open.lock().await;
            let doc = open.get(path)?;
            (i64::from(doc.version), doc.sent_seq)
        };
        let current = |p: &Published| match p.version {
            Some(v) => v == version,
            None => p.seq > sent_seq,
        };
        let wait = async {
            loop {
                let notified = self.published.notified();
                if let Some(p) = lock(&self.heard).published.get(&uri).filter(|p| current(p)) {
                    return Some(p.items.to_vec());
                }
                // A server that died publishes nothing more.
                if self.peer.closed().is_some() {
                    return None;
                }
                let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
            }
        };
        tokio::time::timeout(limit, wait).await.ok().flatten()
    }

    /// The complete answer for `path`'s current text within `limit`: its diagnostics, and for
    /// a server that checks separately, that check's results once a check begun after
    /// `checks_before` had begun ended. `Err` says why there is none yet.
    pub async fn answer(
        &self,
        path: &Path,
        checks_before: u64,
        limit: Duration,
    ) -> Result<Vec<Diagnostic>, String> {
        let end = tokio::time::Instant::now() + limit;
        let Some(mut items) = self.diagnostics_within(path, limit).await else {
            return Err(format!(
                "{} gave no answer for this version within {} ms ({})",
                self.id,
                limit.as_millis(),
                self.state().await
            ));
        };
        if self.separate_check {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            if !self.check_after(path, checks_before, left).await {
                return Err(format!(
                    "{}'s check of the saved files had not finished within {} ms",
                    self.id,
                    limit.as_millis()
                ));
            }
            items.extend(self.whole_now(path));
        }
        Ok(items)
    }

    /// Whether a separate check is running now, so the publications are half old, half new.
    pub fn checking(&self) -> bool {
        !lock(&self.heard).checks.is_empty()
    }

    /// Whether problems a change causes in other files come from this server too.
    pub fn reports_other_files(&self) -> bool {
        self.separate_check || self.workspace_mode
    }

    /// Gives the server `path`'s text and tells it the file was saved; `Err` says why it
    /// could not be told (when the connection broke, the exit and stderr, once seen).
    pub async fn sync_saved(&self, path: &Path, text: &str) -> Result<(), String> {
        let told = match self.sync(path, text).await {
            Ok(()) => self.saved(path).await,
            Err(e) => Err(e),
        };
        let Err(error) = told else {
            return Ok(());
        };
        // A write error can come before the reader saw the exit that explains it.
        let end = std::time::Instant::now() + Duration::from_millis(500);
        while self.peer.closed().is_none() && std::time::Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        match self.peer.closed() {
            Some(_) => Err(format!("{} is {}", self.id, self.state().await)),
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
        let heard = lock(&self.heard);
        let whole = self.whole(&heard);
        let files = whole
            .iter()
            .filter_map(|(uri, p)| Some((uri_path(uri)?, p.items.clone())))
            .collect();
        Snapshot {
            seq: heard.seq,
            begun: heard.begun,
            files,
            complete,
            wide: self.reports_other_files(),
            lossless: whole.whole(),
        }
    }

    /// The event count now, for telling later publications apart without a whole snapshot.
    pub fn seq_now(&self) -> u64 {
        lock(&self.heard).seq
    }

    /// What the diagnostics store dropped or cut to stay in bounds, for `status`.
    pub fn store_losses(&self) -> Option<String> {
        lock(&self.heard).published.losses()
    }

    /// The files whose diagnostics were published after `seq`, with what was published.
    pub fn published_since(&self, seq: u64) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        let heard = lock(&self.heard);
        let mut out: Vec<(PathBuf, Vec<Diagnostic>)> = self
            .whole(&heard)
            .iter()
            .filter(|(_, p): &(&String, &Published)| p.seq > seq)
            .filter_map(|(uri, p)| Some((uri_path(uri)?, p.items.to_vec())))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// After a check ended, waits until its results are in: they come as publications around
    /// its end, so until nothing was published for [`CHECK_QUIET`], at most [`CHECK_SETTLE`].
    async fn check_published(&self) {
        let start = std::time::Instant::now();
        loop {
            let last = {
                let heard = lock(&self.heard);
                heard.check_ended_at.max(heard.published_at)
            };
            let quiet = last.is_none_or(|at| at.elapsed() >= CHECK_QUIET);
            if quiet || start.elapsed() >= CHECK_SETTLE {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits, at most `limit`, until a server of the whole workspace has been over the project
    /// once, so what it published is each file's real state; true when it has.
    pub async fn first_pass_within(&self, limit: Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            if self.snapshot_complete() {
                return true;
            }
            if start.elapsed() >= limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether what the server published so far is whole: see [`Snapshot::complete`].
    fn snapshot_complete(&self) -> bool {
        let heard = lock(&self.heard);
        match self.separate_check {
            true => heard.checked.is_some(),
            false => heard.ended > 0 && heard.progress.is_empty(),
        }
    }

    /// Waits, at most `limit`, for a server of the whole workspace to finish re-checking the
    /// files a change reached: at least `grace`, then until no progress runs and nothing was
    /// published for `quiet`. True when it went quiet in time; false when it was still busy.
    pub async fn settle_others(&self, grace: Duration, quiet: Duration, limit: Duration) -> bool {
        let start = tokio::time::Instant::now();
        loop {
            let (running, last) = {
                let heard = lock(&self.heard);
                (!heard.progress.is_empty(), heard.published_at)
            };
            let waited = start.elapsed();
            let quiet_for = last.map_or(waited, |t| t.elapsed().min(waited));
            if !running && waited >= grace && quiet_for >= quiet {
                return true;
            }
            if waited >= limit {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
