//! What comes after a write's own answer: a server's late answer, and problems that appeared
//! in files the write did not touch. Both reach the model as notices on its next result,
//! naming the event they belong to; the tasks that wait for them end with the run.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_tool::{
    FileReport, FileStatus, Finding, NoticeQueue, ReportScope, ReportSource, format_reports_after,
};

/// The name of the hook that reports a write's diagnostics, and the heading of its reports.
pub(crate) const DIAGNOSTICS: &str = "diagnostics";
use tokio_util::sync::CancellationToken;

use crate::answers::{Said, Snapshot};
use crate::catalog::Done;
use crate::ledger::{Judged, Ledger, Severities, findings, judge_held, silenced};
use crate::protocol::Diagnostic;
use crate::server::Server;

/// How a file's diagnostics are labelled when nothing was known of it before.
pub const NO_BASELINE: &str = "no baseline: the server was not ready before this write";
/// How another file's diagnostics are labelled when the server had not reported on it before.
pub const NOT_KNOWN: &str =
    "not known before this change: the server had not reported on this file yet";

/// Files a follower asks a pull server about at once, at most.
pub const PULLED: usize = 20;

/// The shared handles of everything that reports after the fact.
#[derive(Clone)]
pub struct Follow {
    pub ledger: Arc<Ledger>,
    pub notices: NoticeQueue,
    /// Cancelled when the run shuts down; every follow-up task ends with it.
    pub cancel: CancellationToken,
    /// How long a late answer is awaited after a write's own budget ran out.
    pub budget: Duration,
    pub counted: Severities,
    pub workspace: PathBuf,
    /// The door every file a server is given goes through.
    pub files: Arc<tether_fs::Workspace>,
    /// Which files name which module, kept from the watch.
    pub importers: Arc<crate::importers::Importers>,
    /// False for a run that serves one call: no later result would carry a notice.
    pub enabled: bool,
    /// The follow-up tasks still running, for a front end that waits for them at the end.
    pub tasks: tokio_util::task::TaskTracker,
    /// The number of the latest write whose report began (the run numbers committed writes);
    /// a later write ends what follows an earlier event, and compares for itself.
    pub writes: Arc<std::sync::atomic::AtomicU64>,
    /// How long a write waits for its diagnostics (`lsp.diagnostics.wait_ms`), and how long a
    /// settled server's later publications are followed after an event.
    pub wait: Duration,
    /// Put before the keys of its notices: the servers run beside the chosen ones follow
    /// their own events, which must not replace the chosen ones' notices.
    pub lane: &'static str,
}

impl Follow {
    /// Runs `task` in the background until it ends or the run does.
    pub fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        if !self.enabled {
            return;
        }
        let cancel = self.cancel.clone();
        self.tasks.spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = task => {}
            }
        });
    }

    /// Runs a watch that lasts as long as the run (not a follow-up anyone waits for).
    pub fn spawn_watch(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        if !self.enabled {
            return;
        }
        let cancel = self.cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {}
                _ = task => {}
            }
        });
    }

    /// Waits, at most `budget`, until no follow-up task runs.
    pub async fn settle(&self, budget: Duration) {
        self.tasks.close();
        let _ = tokio::time::timeout(budget, self.tasks.wait()).await;
        self.tasks.reopen();
    }

    /// What a pending answer for write `number` says of what comes next.
    pub fn promise(&self, number: u64) -> String {
        match self.enabled {
            true => format!("its answer will follow as a notice about write #{number}"),
            false => "this run serves one call, so a later answer is not waited for".into(),
        }
    }

    /// Queues the reports as one notice about `event`, merged with an earlier one on `key`;
    /// false when none of them was news, and nothing was queued.
    pub fn tell(&self, key: &str, event: &str, reports: &[FileReport]) -> bool {
        let block = format_reports_after(reports, event);
        let told = block.is_some();
        if let Some(block) = block {
            self.notices
                .push_keyed("diagnostics", &format!("{}{key}", self.lane), block);
        }
        told
    }

    /// `path` as the model names it.
    pub fn rel(&self, path: &Path) -> String {
        path.strip_prefix(&self.workspace)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Counted findings of a server's diagnostics.
    pub fn findings(&self, items: &[Diagnostic]) -> Vec<Finding> {
        findings(items, &self.counted)
    }

    /// What `server`'s answer `now` for `path` says against `had` (what the file had before,
    /// `None`: not known), recorded in the ledger. Warnings the server's check stops looking
    /// for while errors stand are kept as they were and said to be not re-checked.
    pub fn conclude(
        &self,
        server: &Server,
        path: &Path,
        had: Option<&Vec<Finding>>,
        now: Vec<Finding>,
        no_baseline: &str,
        how: Judged,
    ) -> FileStatus {
        let errors_stand = server.warnings_silenced_by_errors
            && (now.iter().any(|f| f.class.starts_with("error")) || server.errors_stand());
        let held = silenced(had, &now, errors_stand);
        let mut kept = now.clone();
        kept.extend(held.iter().cloned());
        self.ledger.record(path.to_path_buf(), had, kept);
        judge_held(had, now, &held, no_baseline, how)
    }

    /// The report for one file from one server (for [`ReportScope::Rest`], `path` is empty).
    pub fn report(
        &self,
        server: &Server,
        path: String,
        scope: ReportScope,
        status: FileStatus,
    ) -> FileReport {
        FileReport {
            path,
            scope,
            source: ReportSource::program(DIAGNOSTICS, &server.id),
            noun: "problem".into(),
            status,
        }
    }

    /// What changed in files other than `touched` that `server` published after `since`:
    /// new problems and fixes, each against what that file had in `snap` (or the ledger). A
    /// file with nothing new and nothing fixed is left out; so is one already reported as is.
    /// Nothing is said while a separate check runs.
    pub fn others(
        &self,
        server: &Server,
        snap: &Snapshot,
        since: u64,
        touched: &HashSet<PathBuf>,
    ) -> Vec<FileReport> {
        if server.checking() {
            return Vec::new();
        }
        self.compared(server, snap, server.published_since(since), touched)
    }

    /// Asks a pull server again, within the late budget, about the files that import write
    /// `number`'s modules and had not answered within its own wait (`files`, with what each
    /// had before), and tells what changed in them. A later write that begins meanwhile
    /// looks at them itself, so then nothing is told.
    pub fn importers_later(
        &self,
        server: Arc<Server>,
        files: Vec<(PathBuf, Option<Vec<Finding>>)>,
        number: u64,
    ) {
        let me = self.clone();
        let began = std::time::Instant::now();
        self.spawn(async move {
            let paths: Vec<PathBuf> = files.iter().map(|(f, _)| f.clone()).collect();
            let (answers, asked_at) = me.pulled_unchanged(&server, &paths, began).await;
            let later = me.writes.load(std::sync::atomic::Ordering::SeqCst) != number;
            if later || me.ledger.any_writing() {
                return;
            }
            let reports = me.judged(&server, &files, answers, asked_at);
            let event = format!("write #{number}, found later");
            me.tell(&format!("write #{number} importers"), &event, &reports);
        });
    }

    /// What [`Follow::others`] tells of what `server` published after `since`, for a follower
    /// that comes after the event's own answer. A file the server had not reported on before
    /// has no baseline: its first report (a cold server's, often) is taken as one rather than
    /// told, unless the file names a changed module. A server whose pull is final is asked again first: a late publication may
    /// be of a state older than the disk's (pyright publishes a fix of the previous write
    /// after the next write broke the file again).
    async fn later(
        &self,
        server: &Server,
        snap: &Snapshot,
        since: u64,
        touched: &HashSet<PathBuf>,
        began: std::time::Instant,
    ) -> Vec<FileReport> {
        if server.checking() {
            return Vec::new();
        }
        let touched_files: Vec<PathBuf> = touched.iter().cloned().collect();
        // Each publication with what it says against what was known, or `None` when nothing
        // was: then it is news only if it names a changed module.
        let mut weighed = Vec::new();
        for said in server.published_since(since) {
            let path = said.path.clone();
            if touched.contains(&path) || !path.starts_with(&self.workspace) {
                continue;
            }
            let now = self.findings(&said.items);
            let news = match self.ledger.latest_is(&path, &now) {
                // Known already, unless it is a file changed on disk and not diagnosed since,
                // whose confirmed findings are recorded below as its state now.
                Some(true) if said.real && self.ledger.not_diagnosed(&path) => Some(false),
                // What the run knows already: nothing to tell or to record.
                Some(true) => continue,
                Some(false) => Some(true),
                None => snap.before(&path, self).map(|had| had != now),
            };
            // A file changed on disk since is that change's news, told by the watch.
            if self.ledger.changed_on_disk_since(&path, began) {
                continue;
            }
            weighed.push((news, now, said));
        }
        let unknown = weighed.iter().filter(|(news, ..)| news.is_none());
        let unknown: Vec<PathBuf> = unknown.map(|(_, _, said)| said.path.clone()).collect();
        let mut naming = self
            .depend_on(server, &touched_files, unknown)
            .await
            .into_iter();
        let mut answers = Vec::new();
        for (news, now, said) in weighed {
            match news.or_else(|| naming.next()).unwrap_or(false) {
                true => answers.push(said),
                // A publication not confirmed when read may be a placeholder, never a
                // baseline (asked again now, a pull may have confirmed other items since).
                false if !said.real => {}
                false => self.ledger.record(said.path, None, now),
            }
        }
        if server.done == Done::Pull && !answers.is_empty() {
            let files: Vec<PathBuf> = answers.into_iter().map(|said| said.path).collect();
            let end = tokio::time::Instant::now() + self.budget;
            let pulled = self
                .pulled(server, &files[..files.len().min(PULLED)], end)
                .await;
            // A file that changed on disk while it was asked about was asked with its new
            // text: that is the watch's news, not this event's.
            answers = pulled
                .into_iter()
                .filter(|(path, _)| !self.ledger.changed_on_disk_since(path, began))
                .map(Said::pulled)
                .collect();
        }
        self.compared(server, snap, answers, touched)
    }

    /// Whether each of `paths` may depend on `touched` (told as not known before only if
    /// so): from the importers index where it holds the file and knows the modules, else from
    /// the file's text.
    async fn depend_on(
        &self,
        server: &Server,
        touched: &[PathBuf],
        paths: Vec<PathBuf>,
    ) -> Vec<bool> {
        if paths.is_empty() {
            return Vec::new();
        }
        let (root, extensions) = (&server.root, server.extensions());
        let indexed = self
            .importers
            .depend_on(root, extensions, touched.to_vec(), paths.clone())
            .await;
        let mut depends = Vec::with_capacity(paths.len());
        for (path, known) in paths.iter().zip(indexed) {
            depends.push(match known {
                Some(depends) => depends,
                None => crate::named::read(&self.files, path)
                    .await
                    .is_ok_and(|text| crate::named::depends_on_any(path, &text, touched)),
            });
        }
        depends
    }

    /// What changed in each of `answers` (a file other than `touched` and what the server
    /// says of it now) against what that file had in `snap` (or the ledger), as
    /// [`Follow::others`] tells it.
    pub fn compared(
        &self,
        server: &Server,
        snap: &Snapshot,
        answers: Vec<Said>,
        touched: &HashSet<PathBuf>,
    ) -> Vec<FileReport> {
        let mut out = Vec::new();
        for Said { path, items, real } in answers {
            if touched.contains(&path) || !path.starts_with(&self.workspace) {
                continue;
            }
            let now = self.findings(&items);
            if self.ledger.latest_is(&path, &now) == Some(true) {
                continue;
            }
            let before = self.known_before(&path, snap);
            // A file known neither before nor now (a pass still under way) is neither told
            // nor kept: its publication may be a placeholder, and a later real one is no news.
            if before.is_none() && !real {
                continue;
            }
            out.extend(self.another_file(server, &path, before.as_ref(), now));
        }
        out
    }

    /// What `now` says of `path`, a file no write touched, against `before`, recorded in the
    /// ledger; a report only when it is news.
    fn another_file(
        &self,
        server: &Server,
        path: &Path,
        before: Option<&Vec<Finding>>,
        now: Vec<Finding>,
    ) -> Option<FileReport> {
        let status = self.conclude(server, path, before, now, NOT_KNOWN, Judged::Unwritten);
        let rel = self.rel(path);
        worth_telling(&status).then(|| self.report(server, rel, ReportScope::Other, status))
    }

    /// The files of `server`'s language under its root (not `touched`) that name a module in
    /// `touched`, found on disk, at most [`PULLED`]: a cold server has reported on none yet.
    pub async fn importers_of(&self, server: &Server, touched: &HashSet<PathBuf>) -> Vec<PathBuf> {
        if touched.is_empty() {
            return Vec::new();
        }
        let touched_files: Vec<PathBuf> = touched.iter().cloned().collect();
        let naming = self
            .importers
            .naming(&server.root, server.extensions(), touched_files);
        let mut files = naming.await;
        files.retain(|f| !touched.contains(f) && f.starts_with(&self.workspace));
        files.truncate(PULLED);
        files
    }

    /// What `path` had before an event: what the run last knew, else what `snap` shows.
    pub fn known_before(&self, path: &Path, snap: &Snapshot) -> Option<Vec<Finding>> {
        self.ledger.latest(path).or_else(|| snap.before(path, self))
    }

    /// [`Follow::pulled`] within the late budget, leaving out a file changed on disk after
    /// `since` (asked with its new text, that change's news); with the count of disk changes
    /// the files were asked at, for [`Follow::judged`].
    pub async fn pulled_unchanged(
        &self,
        server: &Server,
        files: &[PathBuf],
        since: std::time::Instant,
    ) -> (Vec<(PathBuf, Vec<crate::protocol::Diagnostic>)>, u64) {
        let end = tokio::time::Instant::now() + self.budget;
        let asked_at = self.ledger.disk_changes();
        let mut answers = self.pulled(server, files, end).await;
        answers.retain(|(path, _)| !self.ledger.changed_on_disk_since(path, since));
        (answers, asked_at)
    }

    /// Asks a server that answers pulls for the diagnostics of `files`, within `end`, each
    /// opened first (a closed file is answered with nothing), all at once.
    pub async fn pulled(
        &self,
        server: &Server,
        files: &[PathBuf],
        end: tokio::time::Instant,
    ) -> Vec<(PathBuf, Vec<crate::protocol::Diagnostic>)> {
        let each = files.iter().map(|file| async move {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            // A file a stat shows unchanged since the server was given it is not read again:
            // the files that import a module are asked about at every write to it.
            if !server.holds_as_on_disk(file).await {
                let text = crate::named::read(&self.files, file).await.ok()?;
                // A file the server holds with other text changed on disk since it was given
                // it (the write door keeps what tether writes in step): that change is the
                // watch's news, and asking now would take it for this event's.
                if server.holds(file, &text).await == Some(false) {
                    return None;
                }
                server.sync(file, &text).await.ok()?;
            }
            let items = server.pulled_within(file, left).await?;
            Some((file.clone(), items))
        });
        futures::future::join_all(each)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// What each of `answers` (a file another than the written ones, pulled when
    /// [`Ledger::disk_changes`] was `asked_at`) says against what it had before the write in
    /// `baselines`, recorded in the ledger as final; only news is told.
    pub fn judged(
        &self,
        server: &Server,
        baselines: &[(PathBuf, Option<Vec<Finding>>)],
        answers: Vec<(PathBuf, Vec<Diagnostic>)>,
        asked_at: u64,
    ) -> Vec<FileReport> {
        let mut out = Vec::new();
        for (path, items) in answers {
            let now = self.findings(&items);
            let before = baselines
                .iter()
                .find(|(p, _)| *p == path)
                .and_then(|(_, had)| had.clone());
            out.extend(self.another_file(server, &path, before.as_ref(), now));
            // Kept as said (no warnings held back), it stands until a change is told.
            if !server.warnings_silenced_by_errors {
                self.ledger.recorded_final(&path, asked_at);
            }
        }
        out
    }

    /// For `window` after an event's own answer (`event`: a write, or an outside change),
    /// follows what `server` goes on publishing for other files, and tells of their new
    /// problems; it stops early when a write on the run begins after `last_write`, which then
    /// compares for itself. A file changed on disk after `began` (when the event's own
    /// changes were all made) is another change's news.
    pub fn tail(
        &self,
        server: Arc<Server>,
        snap: Snapshot,
        touched: HashSet<PathBuf>,
        (event, last_write, began): (String, u64, std::time::Instant),
        window: Duration,
    ) {
        let me = self.clone();
        self.spawn(async move {
            let end = tokio::time::Instant::now() + window;
            // From the event's snapshot on: what came before this follower started is looked
            // at too (what the event's own answer told is in the ledger, so not told again).
            let mut since = snap.seq;
            loop {
                // Woken by the next publication (or the end of a check), not by a clock.
                let left = end.saturating_duration_since(tokio::time::Instant::now());
                let from = since;
                if !server.until(left, |h| h.seq > from && !h.checking()).await {
                    return;
                }
                if me.writes.load(std::sync::atomic::Ordering::SeqCst) != last_write {
                    return;
                }
                // Mid-check publications are half old, half new: looked at once it ends.
                if server.checking() {
                    continue;
                }
                let seq = server.seq_now();
                let reports = me.later(&server, &snap, since, &touched, began).await;
                tracing::trace!(event, since, seq, reports = reports.len(), "tail");
                since = seq;
                me.tell(
                    &format!("{event} at {seq}"),
                    &format!("{event}, found later"),
                    &reports,
                );
            }
        });
    }
}

impl Snapshot {
    /// What `path` had in this snapshot, when that can be trusted: never for a file changed
    /// outside and left undiagnosed since, whose publication here is from before the change.
    pub fn before(&self, path: &Path, follow: &Follow) -> Option<Vec<Finding>> {
        if follow.ledger.not_diagnosed(path) {
            return None;
        }
        let published = self.files.get(&crate::server::file_uri(path));
        match (published, self.wide) {
            // A server of open files only publishes what it really found.
            (Some(p), false) => Some(follow.findings(&p.items)),
            // A file a pull confirmed is known before the pass ends.
            (Some(p), true) if self.complete || p.confirmed => Some(follow.findings(&p.items)),
            (Some(_), true) => None,
            (None, true) if !self.complete => None,
            // Once a pass ended, a file never published had nothing (a separate check
            // reports only files with problems), unless the store dropped some.
            (None, true) if !self.lossless || !self.absent_is_clean => None,
            (None, true) => Some(Vec::new()),
            (None, false) => None,
        }
    }
}

/// Whether a status is news about a file nobody just wrote: new problems, fixes, or problems
/// with nothing to compare them to.
pub fn worth_telling(status: &FileStatus) -> bool {
    match status {
        FileStatus::Compared { new, fixed, .. } => !new.is_empty() || *fixed > 0,
        FileStatus::Unavailable { now, .. } => !now.is_empty(),
        _ => false,
    }
}
