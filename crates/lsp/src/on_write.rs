//! Diagnostics on write: after each write, the servers for the written files are given the
//! new text and asked for that text's diagnostics, and the result names what this write broke,
//! against the run's ledger. Waits are bounded; a write is never delayed past its budget or
//! undone. What comes later, or in other files, follows as a notice naming the write.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tether_base::lock;

use tether_fs::{FileReceipt, WritePath};
use tether_tool::{
    Baseline, BoxFuture, FileReport, FileStatus, Finding, Hold, HookBudgets, Proposed, ReportScope,
    ReportSource, WriteHook,
};

use crate::answers::Snapshot;
use crate::catalog::Done;
use crate::follow::{DIAGNOSTICS, Follow, NO_BASELINE};
use crate::ledger::Judged;
use crate::server::Server;
use crate::supervisor::Supervisor;

/// The write hook that reports the diagnostics a write introduced.
pub struct DiagnosticsOnWrite {
    pub(crate) servers: Arc<Supervisor>,
    /// How long a baseline may take, before the write.
    pub(crate) baseline: Duration,
    /// Languages already told that no server can give diagnostics, and why.
    pub(crate) told: Mutex<HashSet<String>>,
    pub(crate) follow: Follow,
    /// The watch for outside edits, started with the first write if not before.
    pub(crate) outside: Arc<crate::outside::Outside>,
    /// Reports the written files as soon as they are answered, and leaves the other files
    /// a workspace server re-checks to follow as notices (an agent's hook waits on this).
    pub(crate) prompt: bool,
    /// For the servers run beside the chosen ones: a file none of them serves (or one not
    /// installed) is left out quietly, as the chosen server's report says what checked it.
    pub(crate) beside: bool,
}

/// The report on a written file no language server checked (none serves it, or it could not
/// start), and why.
fn no_server(path: String, why: String) -> FileReport {
    FileReport {
        path,
        scope: ReportScope::Changed,
        source: ReportSource::hook(DIAGNOSTICS),
        noun: "problem".into(),
        status: FileStatus::Unavailable {
            why,
            now: Vec::new(),
        },
    }
}

/// Which server checks a file, or what is said instead.
pub(crate) enum Checker {
    Server(Arc<Server>),
    /// Nothing is said: no server of this kind serves the file, and another says so.
    Quiet,
    /// Said at once: why no server checks it.
    Said(FileReport),
    /// Its language's server is still starting past the write's budget, and why.
    Starting(&'static str, String),
}

/// Why a write's report has no server yet.
enum NoServer {
    /// One is still starting, past the write's budget.
    Starting(String),
    /// None started: none serves the file, or it waits out a crash back-off.
    Failed(String),
}

/// For a server of open files only (clangd), the URIs of the open files other than `touched`
/// that name one of them (`#include "lib.h"`): the server rebuilds those when they change.
pub(crate) async fn open_dependents(
    follow: &Follow,
    server: &Server,
    touched: &HashSet<PathBuf>,
) -> Vec<String> {
    if server.separate_check || server.workspace_mode {
        return Vec::new();
    }
    let open: Vec<PathBuf> = {
        let docs = server.open.lock().await;
        docs.keys()
            .filter(|p| !touched.contains(*p))
            .cloned()
            .collect()
    };
    if open.is_empty() {
        return Vec::new();
    }
    // Only the open files matter here, so only they are read, not the tree.
    let words = crate::named::module_words(touched);
    let mut uris = Vec::new();
    for path in open.iter().filter(|p| p.starts_with(&follow.workspace)) {
        let text = crate::named::read(&follow.files, path).await;
        if text.is_ok_and(|t| crate::named::names_any(&t, &words)) {
            uris.push(crate::server::file_uri(path));
        }
    }
    uris
}

/// The files a change to `touched` may break that `server` is asked about
/// ([`Server::asks_dependents`]): those that import a changed module, for a server whose
/// pulls are final; else the open files that name one.
pub(crate) async fn dependents_to_ask(
    follow: &Follow,
    server: &Server,
    touched: &HashSet<PathBuf>,
) -> Vec<PathBuf> {
    match server.done {
        Done::Pull => follow.importers_of(server, touched).await,
        _ => {
            let uris = open_dependents(follow, server, touched).await;
            uris.iter()
                .filter_map(|u| crate::server::uri_path(u))
                .collect()
        }
    }
}

impl DiagnosticsOnWrite {
    /// Waits at most `limit` until each open file that names a written one was published
    /// again after `since` ([`open_dependents`]): the server rebuilds those on the save, a
    /// moment before or after the written file's own publication, and they are this write's
    /// news.
    async fn dependents_republished(
        &self,
        server: &Server,
        since: u64,
        touched: &HashSet<PathBuf>,
        limit: Duration,
    ) {
        let uris = open_dependents(&self.follow, server, touched).await;
        if uris.is_empty() {
            return;
        }
        let again = |h: &crate::heard::Heard| {
            let fresh = |u: &String| h.published.get(u).is_some_and(|p| p.seq > since);
            uris.iter().all(fresh)
        };
        server.until(limit, again).await;
    }
}

/// What a late answer for one file still owes: the file's state before the write, the checks
/// begun before its save, and for a server that checks separately, the other files.
struct Owed {
    had: Option<Vec<Finding>>,
    checks_before: u64,
    others: Option<(Snapshot, HashSet<PathBuf>)>,
}

/// What was known before one write.
struct Before {
    /// Per written file, what its server said before the write (`None`: it could not say).
    files: HashMap<PathBuf, Option<Vec<Finding>>>,
    /// The servers of the written files, with what they had published for every file, so
    /// new problems in files the write did not touch are seen (open files, or every file for
    /// a server of the whole workspace).
    snapshots: Vec<(Arc<Server>, Snapshot)>,
    /// For a server whose pulled answers are final, the files that name a written module, each
    /// with what it had before the write (`None`: not known).
    importers: Vec<(PathBuf, Option<Vec<Finding>>)>,
}

impl DiagnosticsOnWrite {
    /// Why no server gives `lang` diagnostics (no project marker above the file, a missing
    /// binary, an untrusted one): in full the first time in the run, then a short tag.
    /// Nothing when a server could start.
    fn unavailable(&self, lang: &str, file: &Path) -> Option<String> {
        let s = &self.servers;
        let why = crate::avail::find(s.config(), lang, file, s.workspace(), s.trusted()).err()?;
        Some(self.once(lang, || {
            format!("no language server checked it: {}", why.join("; "))
        }))
    }

    /// Why a configuration file (TOML, YAML, JSON, INI) gets no diagnostics: no language
    /// server checks its kind. Said once per kind in full; nothing for prose and other kinds.
    fn unchecked_kind(&self, file: &Path) -> Option<String> {
        if !tether_fs::is_config_file(file) {
            return None;
        }
        let ext = file.extension()?.to_str()?.to_ascii_lowercase();
        Some(self.once(&format!(".{ext}"), || {
            format!("no language server checks .{ext} files")
        }))
    }

    /// `full()` the first time `key` is told in the run, then a short reference to it.
    fn once(&self, key: &str, full: impl FnOnce() -> String) -> String {
        let mut told = lock(&self.told);
        match told.insert(key.to_string()) {
            true => full(),
            false => "not checked by a language server, as said above".to_string(),
        }
    }

    /// The server for `file`, waiting at most the write's budget for one still starting (or
    /// started now: a run without warm-up), or why there is none yet.
    async fn server_within(
        &self,
        lang: &'static str,
        file: &Path,
        budget: Duration,
    ) -> Result<Arc<Server>, NoServer> {
        if let Some(server) = self.servers.running_for(lang, file).await {
            return Ok(server);
        }
        let servers = self.servers.clone();
        let path = file.to_path_buf();
        let start = tokio::spawn(async move { servers.server_for(lang, &path).await });
        match tokio::time::timeout(budget, start).await {
            Ok(Ok(Ok(server))) => Ok(server),
            Ok(Ok(Err(why))) => Err(NoServer::Failed(why.to_string())),
            Ok(Err(e)) => Err(NoServer::Failed(format!(
                "starting the {lang} server failed: {e}"
            ))),
            Err(_) => Err(NoServer::Starting(match self.servers.installing(lang) {
                Some(id) => format!(
                    "{id} is being installed for {lang} (`[lsp] auto_install`) and was not \
                     ready within {} ms",
                    budget.as_millis()
                ),
                None => format!(
                    "the {lang} server was still starting after {} ms",
                    budget.as_millis()
                ),
            })),
        }
    }

    /// Which server checks `abs`, waiting at most the write's budget for one still starting,
    /// or what to say instead.
    pub(crate) async fn checker(&self, abs: &Path, rel: &str) -> Checker {
        let Some(lang) = self.servers.config().language_of(abs) else {
            return match self.beside {
                true => Checker::Quiet,
                false => match self.unchecked_kind(abs) {
                    Some(why) => Checker::Said(no_server(rel.to_string(), why)),
                    None => Checker::Quiet,
                },
            };
        };
        let config = self.servers.config();
        let found = crate::avail::find(
            config,
            lang,
            abs,
            self.servers.workspace(),
            self.servers.trusted(),
        );
        if self.beside && found.is_err() {
            return Checker::Quiet;
        }
        // A server that reports no problems is not waited for: the write is told so at once.
        if let Ok(found) = &found
            && config
                .servers
                .get(&found.id)
                .is_some_and(|e| e.behaviour.no_problems)
        {
            let why = format!(
                "not checked: {} reports no problems, it only answers questions",
                found.id
            );
            return Checker::Said(no_server(rel.to_string(), why));
        }
        match self.server_within(lang, abs, self.follow.wait).await {
            Ok(server) => Checker::Server(server),
            Err(NoServer::Starting(starting)) => Checker::Starting(lang, starting),
            // No server serves the file (said once per language), or one that would could
            // not start now (a crash back-off): unchecked either way, said, never silence.
            Err(NoServer::Failed(why)) => {
                let why = self
                    .unavailable(lang, abs)
                    .unwrap_or_else(|| format!("not checked: {why}"));
                Checker::Said(no_server(rel.to_string(), why))
            }
        }
    }

    /// One written file's report, if there is anything to say about it.
    async fn one(
        &self,
        number: u64,
        before: &Before,
        receipt: &FileReceipt,
        touched: &HashSet<PathBuf>,
    ) -> Option<FileReport> {
        let abs = receipt.path.abs();
        let rel = receipt.path.rel().to_string();
        let server = match self.checker(abs, &rel).await {
            Checker::Server(server) => server,
            Checker::Quiet => return None,
            Checker::Said(report) => return Some(report),
            Checker::Starting(lang, starting) => {
                self.late_start(number, lang, abs);
                return Some(FileReport {
                    path: rel,
                    scope: ReportScope::Changed,
                    source: ReportSource::hook(DIAGNOSTICS),
                    noun: "problem".into(),
                    status: FileStatus::Pending(format!(
                        "{starting}; {}",
                        self.follow.promise(number)
                    )),
                });
            }
        };
        // What this write committed, not the disk now: it may have changed since.
        let text = receipt.text().ok()?;
        server.tell_exists(abs).await;
        let checks_before = match server.save_for_check(abs, text).await {
            Ok(begun) => begun,
            Err(why) => {
                let status = FileStatus::Unavailable {
                    why: why.to_string(),
                    now: vec![],
                };
                return Some(
                    self.follow
                        .report(&server, rel, ReportScope::Changed, status),
                );
            }
        };
        server.unstamp(abs).await;
        let had = before.files.get(abs).cloned().flatten();
        let status = match server.answer(abs, checks_before, self.follow.wait).await {
            Ok(items) => {
                let now = self.follow.findings(&items);
                let how = Judged::Written;
                self.follow
                    .conclude(&server, abs, had.as_ref(), now, NO_BASELINE, how)
            }
            Err(_) if server.peer.closed().is_some() => {
                let why = format!("{} is {}", server.id, server.state().await);
                FileStatus::Unavailable { why, now: vec![] }
            }
            Err(why) => {
                // A separate check reports the other files too: the late answer brings them.
                let others = before
                    .snapshots
                    .iter()
                    .find(|(s, _)| Arc::ptr_eq(s, &server) && s.separate_check)
                    .map(|(_, snap)| (snap.clone(), touched.clone()));
                let owed = Owed {
                    had,
                    checks_before,
                    others,
                };
                self.late(number, server.clone(), abs, owed).await;
                FileStatus::Pending(format!("{why}; {}", self.follow.promise(number)))
            }
        };
        Some(
            self.follow
                .report(&server, rel, ReportScope::Changed, status),
        )
    }

    /// Waits, after the budget, for the answer `server` owes for `path` as this write left
    /// it, and tells it; a later write on the same file makes it moot.
    async fn late(&self, number: u64, server: Arc<Server>, path: &Path, owed: Owed) {
        let Some(version) = server.version_of(path).await else {
            return;
        };
        let Owed {
            had,
            checks_before,
            others,
        } = owed;
        let (follow, path) = (self.follow.clone(), path.to_path_buf());
        self.follow.spawn(async move {
            let answer = server.answer(&path, checks_before, follow.budget).await;
            if server.version_of(&path).await != Some(version) {
                return;
            }
            let rel = follow.rel(&path);
            let mut reports = Vec::new();
            if let (Ok(_), Some((snap, touched))) = (&answer, &others) {
                reports.extend(follow.others(&server, snap, snap.seq, touched));
            }
            let status = match answer {
                Ok(items) => {
                    let now = follow.findings(&items);
                    let how = Judged::Written;
                    follow.conclude(&server, &path, had.as_ref(), now, NO_BASELINE, how)
                }
                Err(why) => FileStatus::Unavailable {
                    why: format!("still no answer: {why}"),
                    now: Vec::new(),
                },
            };
            let report = follow.report(&server, rel.clone(), ReportScope::Changed, status);
            reports.insert(0, report);
            let event = format!("write #{number} (late; its result said pending)");
            follow.tell(&format!("write #{number} {rel}"), &event, &reports);
        });
    }

    /// Once a server that was still starting is up, diagnoses `path` as it is then and tells
    /// what it found, unblamed: nothing was known before.
    fn late_start(&self, number: u64, lang: &'static str, path: &Path) {
        let (follow, servers, path) = (
            self.follow.clone(),
            self.servers.clone(),
            path.to_path_buf(),
        );
        self.follow.spawn(async move {
            let Ok(server) = servers.server_for(lang, &path).await else {
                return;
            };
            let Ok(text) = crate::named::read(&follow.files, &path).await else {
                return;
            };
            let Ok(checks_before) = server.save_for_check(&path, &text).await else {
                return;
            };
            let Ok(items) = server.answer(&path, checks_before, follow.budget).await else {
                return;
            };
            let now = follow.findings(&items);
            let status = follow.conclude(&server, &path, None, now, NO_BASELINE, Judged::Written);
            let rel = follow.rel(&path);
            let report = follow.report(&server, rel.clone(), ReportScope::Changed, status);
            let event = format!("write #{number} (late; its server was starting)");
            follow.tell(&format!("write #{number} {rel}"), &event, &[report]);
        });
    }

    /// The files that name a module about to be written, each with what it has now: the
    /// server's final answer the run holds when nothing on disk changed since (the watch sees
    /// every change), else asked of the server (the disk is still as before the write, and
    /// its answer is final), else the run's ledger, else the server's publication when whole.
    /// What was asked is kept in the ledger, so what follows the write compares with it.
    async fn importer_baselines(
        &self,
        server: &Server,
        snap: &Snapshot,
        touched: &HashSet<PathBuf>,
        end: tokio::time::Instant,
    ) -> Vec<(PathBuf, Option<Vec<Finding>>)> {
        let files = dependents_to_ask(&self.follow, server, touched).await;
        let ledger = &self.follow.ledger;
        let trusted = self.outside.sees_everything();
        let unknown: Vec<PathBuf> = files
            .iter()
            .filter(|f| !trusted || ledger.still_final(f).is_none())
            .cloned()
            .collect();
        tracing::debug!(
            server = %server.id, importers = files.len(), asked = unknown.len(), trusted,
            "importer baselines"
        );
        let asked_at = ledger.disk_changes();
        let pulled = self.follow.pulled(server, &unknown, end).await;
        files
            .into_iter()
            .map(|f| {
                let asked = pulled
                    .iter()
                    .find(|(p, _)| *p == f)
                    .map(|(_, items)| self.follow.findings(items));
                if let Some(had) = &asked {
                    ledger.record(f.clone(), Some(had), had.clone());
                    ledger.recorded_final(&f, asked_at);
                }
                let had = asked.or_else(|| self.follow.known_before(&f, snap));
                (f, had)
            })
            .collect()
    }

    /// The baseline of one file about to be written, from its running server: the run's
    /// ledger when it knows the file, else the server's answer for the text on disk now.
    async fn baseline_of(
        &self,
        server: &Server,
        abs: &Path,
        limit: Duration,
    ) -> Option<Vec<Finding>> {
        if let Some(known) = self.follow.ledger.latest(abs) {
            return Some(known);
        }
        match crate::named::read(&self.follow.files, abs).await {
            // Before any separate check has run, its errors are unknown: no baseline.
            Ok(_) if server.separate_check && !server.snapshot().complete => None,
            Ok(text) if server.sync(abs, &text).await.is_ok() => {
                let mut items = server.diagnostics_within(abs, limit).await?;
                if server.separate_check {
                    items.extend(server.whole_now(abs));
                }
                Some(self.follow.findings(&items))
            }
            // A file the write creates had nothing.
            Err(_) => Some(Vec::new()),
            Ok(_) => None,
        }
    }
}

impl WriteHook for DiagnosticsOnWrite {
    fn name(&self) -> &str {
        DIAGNOSTICS
    }

    fn budgets(&self) -> HookBudgets {
        // Each phase bounds its own waits; these are the outer guards.
        HookBudgets {
            before: self.baseline + Duration::from_millis(500),
            after: self.follow.wait * 2 + Duration::from_secs(1),
        }
    }

    fn hold(&self, paths: &[WritePath]) -> Option<Hold> {
        let abs: Vec<PathBuf> = paths.iter().map(|p| p.abs().to_path_buf()).collect();
        Some(Box::new(self.follow.ledger.mark_writing(abs)))
    }

    fn before<'a>(&'a self, paths: &'a [WritePath]) -> BoxFuture<'a, Baseline> {
        Box::pin(async move {
            let abs: Vec<PathBuf> = paths.iter().map(|p| p.abs().to_path_buf()).collect();
            // Every look before the write shares the one baseline budget.
            let end = tokio::time::Instant::now() + self.baseline;
            let left = || end.saturating_duration_since(tokio::time::Instant::now());
            let mut before = Before {
                files: HashMap::new(),
                snapshots: Vec::new(),
                importers: Vec::new(),
            };
            for path in &abs {
                let Some(lang) = self.servers.config().language_of(path) else {
                    continue;
                };
                // A cold run starts the server now: what the files had before the write,
                // the written one and those that import it, can only be asked before it.
                let Ok(server) = self.server_within(lang, path, left()).await else {
                    continue;
                };
                if !before
                    .snapshots
                    .iter()
                    .any(|(s, _)| Arc::ptr_eq(s, &server))
                {
                    // A server of the whole workspace publishes placeholders until its first
                    // pass ends; the baseline budget is spent waiting for that, unless its
                    // answers to pulls are final: the files that matter are asked instead.
                    if server.workspace_mode && server.done != Done::Pull {
                        server.first_pass_within(left()).await;
                    }
                    let snap = server.snapshot();
                    if server.asks_dependents() {
                        let touched: HashSet<PathBuf> = abs.iter().cloned().collect();
                        before.importers =
                            self.importer_baselines(&server, &snap, &touched, end).await;
                    }
                    before.snapshots.push((server.clone(), snap));
                }
                if server.no_problems {
                    continue;
                }
                let known = self.baseline_of(&server, path, left()).await;
                before.files.insert(path.clone(), known);
            }
            Box::new(before) as Baseline
        })
    }

    fn preview<'a>(&'a self, changes: &'a [Proposed]) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(self.preview_changes(changes))
    }

    fn after<'a>(
        &'a self,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        let number = self.follow.writes.load(Ordering::SeqCst) + 1;
        self.after_write(number, baseline, receipts)
    }

    fn after_write<'a>(
        &'a self,
        number: u64,
        baseline: Option<Baseline>,
        receipts: &'a [FileReceipt],
    ) -> BoxFuture<'a, Vec<FileReport>> {
        Box::pin(async move {
            self.follow.writes.fetch_max(number, Ordering::SeqCst);
            self.outside.start(&self.servers, &self.follow);
            let before = baseline
                .and_then(|b| b.downcast::<Before>().ok())
                .map(|b| *b)
                .unwrap_or(Before {
                    files: HashMap::new(),
                    snapshots: Vec::new(),
                    importers: Vec::new(),
                });
            // The write's whole report, other files included, keeps within one wait.
            let end = tokio::time::Instant::now() + self.follow.wait;
            let touched: HashSet<PathBuf> = receipts
                .iter()
                .map(|r| r.path.abs().to_path_buf())
                .collect();
            // Files are asked about at once, so many files share one wait.
            let each = receipts
                .iter()
                .map(|r| self.one(number, &before, r, &touched));
            let mut reports: Vec<FileReport> = futures::future::join_all(each)
                .await
                .into_iter()
                .flatten()
                .collect();
            // A prompt report waits for nothing more: other files are said to be pending.
            let end = match self.prompt {
                true => tokio::time::Instant::now(),
                false => end,
            };
            let mut late_importers = Vec::new();
            for (server, snap) in &before.snapshots {
                let left = || end.saturating_duration_since(tokio::time::Instant::now());
                let mut settled = true;
                let mut importers = false;
                let others = match server.done {
                    // The files that import the written modules are asked, and their answers
                    // are final; what else the server published meanwhile is told as it is.
                    _ if server.asks_dependents() => {
                        let files: Vec<PathBuf> =
                            before.importers.iter().map(|(f, _)| f.clone()).collect();
                        let asked_at = self.follow.ledger.disk_changes();
                        let answers = self.follow.pulled(server, &files, end).await;
                        let asked: HashSet<PathBuf> =
                            answers.iter().map(|(f, _)| f.clone()).collect();
                        let outstanding: Vec<(PathBuf, Option<Vec<Finding>>)> = before
                            .importers
                            .iter()
                            .filter(|(f, _)| !asked.contains(f))
                            .cloned()
                            .collect();
                        importers = self.follow.enabled && !outstanding.is_empty();
                        // A prompt report does not wait for them: they are asked again, and
                        // what they say follows.
                        settled = !(self.prompt && importers);
                        if importers {
                            late_importers.push((server.clone(), outstanding));
                        }
                        let mut others =
                            self.follow
                                .judged(server, &before.importers, answers, asked_at);
                        let mut skip = touched.clone();
                        skip.extend(asked);
                        // Any other file the server reported on for the first time (a cold
                        // server's pass) imports none of them: its report is taken as its
                        // baseline, not told.
                        let first_reports = self.follow.others(server, snap, snap.seq, &skip);
                        others.extend(first_reports.into_iter().filter(|r| {
                            !matches!(r.status, tether_tool::FileStatus::Unavailable { .. })
                        }));
                        others
                    }
                    Done::Publish => {
                        self.dependents_republished(server, snap.seq, &touched, left())
                            .await;
                        self.follow.others(server, snap, snap.seq, &touched)
                    }
                    // (A server whose pulls are final asks its dependents, above.)
                    Done::Quiet | Done::Pull => {
                        settled = server.quiet_within(server.quiet, left()).await;
                        self.follow.others(server, snap, snap.seq, &touched)
                    }
                };
                tracing::debug!(
                    server = %server.id, settled, others = others.len(), write = number,
                    "other files after a write"
                );
                reports.extend(others);
                // The result says plainly when other files are still being checked, so an
                // agent that stops after this write knows more may follow.
                let own = ReportSource::program(DIAGNOSTICS, &server.id);
                let written_pending = reports.iter().any(|r| {
                    r.scope == ReportScope::Changed
                        && r.source == own
                        && matches!(r.status, tether_tool::FileStatus::Pending(_))
                });
                if server.reports_other_files() && (!settled || written_pending || importers) {
                    let why = match (settled, written_pending) {
                        (false, _) if self.prompt => format!(
                            "{} re-checks them in the background, and this report does not \
                             wait for them",
                            server.id
                        ),
                        (false, _) => format!(
                            "{} was still checking them when this write's wait ({} ms) ended",
                            server.id,
                            self.follow.wait.as_millis()
                        ),
                        (true, true) => {
                            format!("{} has not finished checking this write", server.id)
                        }
                        (true, false) => format!(
                            "{} had not answered for every file that names the written module \
                             when this write's wait ended",
                            server.id
                        ),
                    };
                    let status = tether_tool::FileStatus::Pending(format!(
                        "{why}; what it reports within {} s will follow as a notice about write \
                         #{}, and `lsp` `diagnostics` on one of those files answers at once",
                        self.follow.budget.as_secs(),
                        number
                    ));
                    let rest = ReportScope::Rest;
                    reports.push(self.follow.report(server, String::new(), rest, status));
                }
                // A separate check's results are all in once it ended; later checks are not
                // this write's.
                if !server.separate_check {
                    // A write's own files are in `touched`: any other changed since its
                    // snapshot is another change's.
                    let clock = (format!("write #{number}"), number, snap.taken);
                    let (server, snap) = (server.clone(), snap.clone());
                    // A pass that may still run is followed for as long as a late answer
                    // would be (a later write ends the watch sooner).
                    let window = if settled && !importers {
                        self.follow.wait
                    } else {
                        self.follow.budget
                    };
                    self.follow
                        .tail(server, snap, touched.clone(), clock, window);
                }
            }
            for r in receipts {
                if let Some(hash) = r.hash_after {
                    self.follow.ledger.know(r.path.abs(), hash);
                }
            }
            // Asked once this write is over, so a write still under way means a later one.
            for (server, files) in late_importers {
                self.follow.importers_later(server, files, number);
            }
            reports
        })
    }
}
