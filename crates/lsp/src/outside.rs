//! Edits made outside tether (a client's own edit tool, an editor, a formatter): the
//! workspace's folders are watched, and a change to a file that a running server covers is
//! diagnosed like a write. What it broke comes as a notice naming the change, never blamed on
//! a tether write; tether's own writes are recognised and left alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::StreamExt as _;
use tokio::sync::mpsc;

use crate::answers::Snapshot;
use crate::error::LspError;
use crate::follow::Follow;
use crate::server::Server;
use crate::supervisor::Supervisor;
use crate::watch::{Change, SharedWatch};

/// How long a burst of changes may go on before the files are looked at.
const QUIET: Duration = Duration::from_millis(150);
/// Changed files diagnosed at once.
const AT_ONCE: usize = 16;

/// How changed files are labelled when nothing was known of them before.
const NOT_SEEN: &str = "no baseline: tether had not seen this file before it changed";

/// One run's part of the workspace's watch: its own channel of every change, subscribed on
/// first need and given back at the run's end.
pub struct Outside {
    watch: Arc<SharedWatch>,
    subscribed: OnceLock<u64>,
    /// The last mark this run's handler reached: every change before it was told.
    reached: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Outside {
    pub fn new(watch: Arc<SharedWatch>) -> Self {
        Outside {
            watch,
            subscribed: OnceLock::new(),
            reached: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }

    /// Waits, at most `budget`, until every change made on disk before this call has been
    /// diagnosed and its notice queued (or found to be no news); false when this run does not
    /// watch, or the budget ran out first.
    pub async fn caught_up(&self, budget: Duration) -> bool {
        if self.subscribed.get().is_none() {
            return false;
        }
        let Some(seq) = self.watch.mark() else {
            return false;
        };
        let mut reached = self.reached.subscribe();
        let waited = tokio::time::timeout(budget, reached.wait_for(|r| *r >= seq)).await;
        matches!(waited, Ok(Ok(_)))
    }

    /// Starts watching, once; later calls do nothing.
    pub fn start(&self, servers: &Arc<Supervisor>, follow: &Follow) {
        if !follow.enabled {
            return;
        }
        self.subscribed.get_or_init(|| {
            // A watch that misses part of the tree says so once, on this run's next result:
            // a change it cannot see must never read as no change.
            let partial = match self.watch.start() {
                Ok(c) => c.unwatched > 0,
                Err(_) => true,
            };
            if partial && let Some(said) = self.watch.describe() {
                follow.notices.push("outside edits", said);
            }
            let (id, rx) = self.watch.subscribe();
            follow.spawn_watch(handle(
                rx,
                servers.clone(),
                follow.clone(),
                self.watch.clone(),
                self.reached.clone(),
            ));
            id
        });
    }

    /// Whether every change on disk in the workspace reaches this run: the watch started, took
    /// up every folder, and the run is subscribed.
    pub fn sees_everything(&self) -> bool {
        self.subscribed.get().is_some()
            && self.watch.ended().is_none()
            && self.watch.coverage().is_some_and(|c| c.unwatched == 0)
    }

    /// What `status` says of the watch, once this run started it.
    pub fn describe(&self) -> Option<String> {
        self.subscribed.get()?;
        self.watch.describe()
    }

    /// Stops this run's part of the watch, and with `whole` (the run's pool is its own) the
    /// watch itself.
    pub fn stop(&self, whole: bool) {
        if let Some(id) = self.subscribed.get() {
            self.watch.unsubscribe(*id);
        }
        if whole {
            self.watch.close();
        }
    }
}

/// Takes changed paths in bursts: every running server is told of them (so a new module is
/// seen), a new folder is watched too, and each changed file is diagnosed once per burst.
async fn handle(
    mut rx: mpsc::UnboundedReceiver<Change>,
    servers: Arc<Supervisor>,
    follow: Follow,
    watch: Arc<SharedWatch>,
    reached: Arc<tokio::sync::watch::Sender<u64>>,
) {
    let reach = |mark: Option<u64>| {
        if let Some(mark) = mark {
            reached.send_if_modified(|r| std::mem::replace(r, mark.max(*r)) < mark);
        }
    };
    while let Some(first) = rx.recv().await {
        // A mark with nothing before it is reached at once.
        if let (Change::Mark(seq), true) = (&first, rx.is_empty()) {
            reach(Some(*seq));
            continue;
        }
        let mut burst = Burst::default();
        // Noted at once, before any server hears of it: a follower of an earlier event must
        // not take what a server says of this change for that event's.
        burst.take(first, &follow);
        // What each server had published when the burst began: one still following an
        // earlier event may hand a server a changed file's new text before the burst is
        // over, and what it publishes then is not the file's state before the change.
        let running = servers.running().await;
        let before_burst: Vec<(Arc<Server>, Snapshot)> =
            running.iter().map(|s| (s.clone(), s.snapshot())).collect();
        while let Ok(Some(change)) = tokio::time::timeout(QUIET, rx.recv()).await {
            burst.take(change, &follow);
            // Someone waits for the changes before a mark: the burst ends there, or changes
            // that never pause (a build writing all the time) would keep it waiting forever.
            if burst.mark.is_some() {
                break;
            }
        }
        // The burst's files, asked about or not, changed before this: what a server publishes
        // of them later is this burst's news, not another change's.
        let changes_ended = std::time::Instant::now();
        tracing::debug!(
            "a burst of {} outside changes{}",
            burst.changes.len(),
            if burst.lost_since.is_some() {
                ", some dropped"
            } else {
                ""
            }
        );
        // The system dropped events of this burst: the tree says what changed instead, from
        // the moment the watch says they may have been lost (long before this burst began,
        // when it waited behind a slow one).
        if let Some(since) = burst.lost_since {
            let watch = watch.clone();
            let look = move || watch.rescan(since);
            let found = tokio::task::spawn_blocking(look).await.unwrap_or_default();
            let seen = found.len();
            burst.found(found, 2, &follow);
            follow.notices.push(
                "outside edits",
                format!(
                    "the system dropped change events during a burst of outside changes (more \
                     at once than fs.inotify.max_queued_events allows); tether looked for files \
                     modified since just before they were lost instead and found {seen} (those a \
                     language server covers are diagnosed below), but a file deleted then is not \
                     seen: ask `lsp` \
                     `diagnostics` about one you need, or raise the limit"
                ),
            );
        }
        // A folder created in the burst is watched from now on; what was put in it before
        // that raised no event, so its files are taken as created.
        let new_folders: Vec<PathBuf> = burst
            .changes
            .iter()
            .filter(|(path, kind)| **kind == 1 && path.is_dir())
            .map(|(path, _)| path.clone())
            .collect();
        for folder in new_folders {
            let watch = watch.clone();
            let look = move || watch.watch_new_folder(&folder);
            let found = tokio::task::spawn_blocking(look).await.unwrap_or_default();
            burst.found(found, 1, &follow);
        }
        let mark = burst.mark;
        let burst = burst.changes;
        // A server started during the burst has no snapshot from before it: it is taken now,
        // before it hears of the burst (it re-checks the files it is told of at once).
        let mut before_burst = before_burst;
        let running = servers.running().await;
        for server in &running {
            if !before_burst.iter().any(|(s, _)| Arc::ptr_eq(s, server)) {
                before_burst.push((server.clone(), server.snapshot()));
            }
        }
        for server in running {
            // A change to a document the server holds as it is on disk (tether's own write,
            // synced by its hook) is no news, and telling it makes pyright check again; that
            // the file exists is told once, as import resolution goes by the disk.
            let mut changes = Vec::new();
            for (path, kind) in burst.iter().filter(|(path, _)| !path.is_dir()) {
                let text = crate::named::read(&follow.files, path)
                    .await
                    .unwrap_or_default();
                let held = server.holds(path, &text).await == Some(true);
                let typ = match kind {
                    1 => lsp_types::FileChangeType::CREATED,
                    3 => lsp_types::FileChangeType::DELETED,
                    _ => lsp_types::FileChangeType::CHANGED,
                };
                let news = server.creation_is_news(path, typ) || !held;
                if news && let Ok(uri) = crate::protocol::uri(path) {
                    changes.push(lsp_types::FileEvent { uri, typ });
                }
            }
            // Every change is told (a branch switch changes thousands). An answer asked before
            // the server had read the news is no longer final: counted before and after it is
            // sent, so a question sent meanwhile counts as asked before it.
            let news = !changes.is_empty();
            if news {
                follow.ledger.note_disk_change();
            }
            server.tell_watched(changes).await;
            if news {
                follow.ledger.note_disk_change();
            }
        }
        // Files are asked about a few at a time: a branch switch changes thousands, and one
        // after the other each would wait out the server's turn alone. Past a bound they are
        // not asked at all, and the notice says so.
        let max = servers.config().outside_files_max;
        let (chosen, left_out) = choose(&burst, &servers, &follow, &before_burst, max).await;
        if left_out > 0 {
            follow.notices.push(
                "outside edits",
                format!(
                    "{left_out} of the {} files a language server covers that changed outside \
                     at once (a branch switch?) are not diagnosed: tether asks about {max} at \
                     most (`[lsp] outside_files_max`), this run's files and those with \
                     problems first. The servers were told of every change; ask `lsp` \
                     `diagnostics` about a file you need, or `diagnostics \"*\"` for the project",
                    left_out + chosen.len()
                ),
            );
        }
        let asked = chosen.len();
        let each = chosen.into_iter().map(|path| {
            let (servers, follow, before_burst) = (&servers, &follow, &before_burst);
            async move {
                let found = changed(servers, follow, &path, before_burst).await;
                (path, found)
            }
        });
        let mut pending = futures::stream::iter(each).buffer_unordered(AT_ONCE);
        // Per server: what it had published before, and every file of the burst it was asked
        // about, for the last notice's look at its other files.
        let mut whole: Vec<Reached> = Vec::new();
        let mut left = asked;
        let mut told = false;
        loop {
            // A server slow to answer (gopls given 20,000 files kept every notice back for
            // more than 15 minutes): what is diagnosed is told every two answer budgets
            // (60 s by default), and what is still to come is counted.
            let due = tokio::time::Instant::now() + follow.budget * 2;
            let mut diagnosed = Vec::new();
            let ended = loop {
                match tokio::time::timeout_at(due, pending.next()).await {
                    Ok(Some(found)) => diagnosed.push(found),
                    Ok(None) => break true,
                    Err(_) => break false,
                }
            };
            left -= diagnosed.len();
            diagnosed.sort_by(|a, b| a.0.cmp(&b.0));
            let mut reached: Vec<Reached> = Vec::new();
            for (path, found) in diagnosed {
                let Some((server, snap, reports)) = found else {
                    continue;
                };
                match whole.iter_mut().find(|w| Arc::ptr_eq(&w.server, &server)) {
                    Some(w) => w.files.push(path.clone()),
                    None => whole.push(Reached {
                        server: server.clone(),
                        snap: snap.clone(),
                        files: vec![path.clone()],
                        reports: Vec::new(),
                    }),
                }
                match reached.iter_mut().find(|r| Arc::ptr_eq(&r.server, &server)) {
                    Some(r) => {
                        r.files.push(path);
                        r.reports.extend(reports);
                    }
                    None => reached.push(Reached {
                        server,
                        snap,
                        files: vec![path],
                        reports,
                    }),
                }
            }
            if ended {
                // The last notice names the whole burst and looks at the other files.
                for mut w in whole {
                    if let Some(r) = reached
                        .iter_mut()
                        .find(|r| Arc::ptr_eq(&r.server, &w.server))
                    {
                        w.reports = std::mem::take(&mut r.reports);
                    }
                    told |= tell_burst(&follow, w, Some(changes_ended)).await;
                }
                // Said to be partly diagnosed, the burst says how the rest went too.
                if left_out > 0 && !told {
                    follow.notices.push(
                        "outside edits",
                        format!(
                            "the other {asked} files of those changed outside were diagnosed: \
                             nothing new in them"
                        ),
                    );
                }
                break;
            }
            for r in reached {
                told |= tell_burst(&follow, r, None).await;
            }
            // One count per result: a later one replaces a count not yet read.
            follow.notices.push_keyed(
                "outside edits",
                "still being diagnosed",
                format!(
                    "{left} more of the {asked} files changed outside are still being \
                     diagnosed (a language server is slow to answer them): they are told in a \
                     later notice, so the notices so far are not all of them"
                ),
            );
        }
        // A branch switch written in spurts is several bursts, each diagnosed in turn: the
        // model must not take this one's notice for all of it.
        if !rx.is_empty() {
            follow.notices.push(
                "outside edits",
                "more outside changes came while these were diagnosed (a branch switch or \
                 generator still writing, or another edit): they are diagnosed next and told \
                 in a later notice, so the notice above is not all of them yet",
            );
        }
        reach(mark);
    }
    // The channel ends when the run stops, or when the watch stopped seeing: that is said, as
    // no notice would ever come of a change it misses.
    if let Some(said) = watch.ended().and(watch.describe()) {
        follow.notices.push("outside edits", said);
    }
}

/// Which changed files of a burst are asked about: all when they are at most `max`, else the
/// `max` most telling of those a running server covers (ones this run wrote or diagnosed or a
/// server holds open, then ones with problems before, then changed ones, which have something
/// to compare with, before new ones), with how many of the others were left.
async fn choose(
    burst: &BTreeMap<PathBuf, u8>,
    servers: &Supervisor,
    follow: &Follow,
    before_burst: &[(Arc<Server>, Snapshot)],
    max: usize,
) -> (Vec<PathBuf>, usize) {
    let live = burst.iter().filter(|(_, kind)| **kind != 3);
    if live.clone().count() <= max {
        return (live.map(|(path, _)| path.clone()).collect(), 0);
    }
    let mut ranked: Vec<(u8, &PathBuf)> = Vec::new();
    for (path, kind) in live {
        let Some(lang) = servers.config().language_of(path) else {
            continue;
        };
        let Some(server) = servers.running_for(lang, path).await else {
            continue;
        };
        let had_problems = || {
            before_burst
                .iter()
                .find(|(s, _)| Arc::ptr_eq(s, &server))
                .and_then(|(_, snap)| snap.files.get(&crate::server::file_uri(path)))
                .is_some_and(|p| !p.items.is_empty())
        };
        let rank = if follow.ledger.touched(path) || server.has_open(path).await {
            0
        } else if had_problems() {
            1
        } else if *kind == 2 {
            2
        } else {
            3
        };
        ranked.push((rank, path));
    }
    // Stable: within a rank, the burst's own (path) order.
    ranked.sort_by_key(|(rank, _)| *rank);
    let left_out = ranked.len().saturating_sub(max);
    let chosen = ranked.iter().take(max).map(|(_, p)| (*p).clone()).collect();
    let rest = ranked.into_iter().skip(max).map(|(_, p)| p.clone());
    follow.ledger.left_undiagnosed(rest);
    (chosen, left_out)
}

/// The changes of one burst so far, and since when changes may be lost, when the system
/// dropped some of its events.
#[derive(Default)]
struct Burst {
    changes: BTreeMap<PathBuf, u8>,
    lost_since: Option<std::time::SystemTime>,
    /// The last mark taken in: reached once the burst is told.
    mark: Option<u64>,
}

impl Burst {
    /// Takes one change in, noting it in the ledger at once.
    fn take(&mut self, change: Change, follow: &Follow) {
        let (path, kind) = match change {
            Change::Path(path, kind) => (path, kind),
            Change::Dropped { since } => {
                follow.ledger.note_disk_change();
                self.lost_since = Some(self.lost_since.map_or(since, |s| s.min(since)));
                return;
            }
            Change::Mark(seq) => {
                self.mark = self.mark.max(Some(seq));
                return;
            }
        };
        follow.ledger.changed_on_disk(&path);
        // Created then changed is still created; anything then deleted is deleted.
        let seen = self.changes.entry(path).or_insert(kind);
        if kind != 2 {
            *seen = kind;
        }
    }

    /// Takes in files found on disk rather than told by an event, as `kind` unless an event
    /// already said what happened to them.
    fn found(&mut self, paths: Vec<PathBuf>, kind: u8, follow: &Follow) {
        for path in paths {
            follow.ledger.changed_on_disk(&path);
            self.changes.entry(path).or_insert(kind);
        }
    }
}

/// A server's part of one burst: the changed files it diagnosed, what it had published
/// before the first of them, and what each brought.
struct Reached {
    server: Arc<Server>,
    snap: Snapshot,
    files: Vec<PathBuf>,
    reports: Vec<tether_tool::FileReport>,
}

/// Tells, in one notice per server and burst, what the changed files brought and what they
/// broke or fixed in the server's other files: a server of the whole workspace is given the
/// settle a write gives it, and what it publishes later is followed as after a write, until
/// this run writes. `last` is when the burst's changes ended, for its last notice only; says
/// whether anything was news.
async fn tell_burst(follow: &Follow, r: Reached, last: Option<std::time::Instant>) -> bool {
    let Reached {
        server,
        snap,
        files,
        mut reports,
    } = r;
    // Only a server with no better signal is given a quiet window; what the others publish
    // later is followed below.
    let settled = match server.done {
        crate::catalog::Done::Quiet => server.quiet_within(server.quiet, follow.budget).await,
        crate::catalog::Done::Pull | crate::catalog::Done::Publish => true,
    };
    let mut names: Vec<String> = files.iter().take(3).map(|p| follow.rel(p)).collect();
    if files.len() > names.len() {
        names.push(format!("{} more", files.len() - names.len()));
    }
    let event = format!(
        "an outside change to {} (not a tether write)",
        names.join(", ")
    );
    // A notice of a burst's first part tells only its files; the last one also what the
    // burst did to the server's other files, and follows them.
    let Some(ended) = last else {
        return follow.tell(&format!("outside {event}"), &event, &reports);
    };
    let touched: std::collections::HashSet<PathBuf> = files.into_iter().collect();
    // A server whose pulled answers are final is asked about the files that import the
    // changed ones, as after a write: their answers come when it has checked them, where a
    // publication may come after any window (pyright, checking a long importer under load).
    let mut skip = touched.clone();
    if server.done == crate::catalog::Done::Pull {
        let files = follow.importers_of(&server, &touched).await;
        let baselines: Vec<_> = files
            .iter()
            .map(|f| (f.clone(), follow.known_before(f, &snap)))
            .collect();
        let (answers, asked_at) = follow.pulled_unchanged(&server, &files, ended).await;
        skip.extend(answers.iter().map(|(path, _)| path.clone()));
        reports.extend(follow.judged(&server, &baselines, answers, asked_at));
    }
    reports.extend(follow.others(&server, &snap, snap.seq, &skip));
    let told = follow.tell(&format!("outside {event}"), &event, &reports);
    if server.workspace_mode && !server.separate_check {
        let last_write = follow.writes.load(std::sync::atomic::Ordering::SeqCst);
        let window = if settled { follow.wait } else { follow.budget };
        follow.tail(server, snap, touched, (event, last_write, ended), window);
    }
    told
}

/// Diagnoses a file that changed on disk, if a running server covers it and the change was
/// not tether's own write: the server, what it had published before, and what the change
/// brought to the file, for [`tell_burst`].
async fn changed(
    servers: &Supervisor,
    follow: &Follow,
    path: &Path,
    before_burst: &[(Arc<Server>, Snapshot)],
) -> Option<(Arc<Server>, Snapshot, Vec<tether_tool::FileReport>)> {
    let lang = servers.config().language_of(path)?;
    if follow.ledger.is_writing(path) || !path.is_file() {
        return None;
    }
    let Some(server) = servers.running_for(lang, path).await else {
        tracing::debug!(
            "outside change to {}: no server runs for it",
            path.display()
        );
        return None;
    };
    let text = crate::named::read(&follow.files, path).await.ok()?;
    // What this run wrote or already diagnosed is no news to it; a server shared with another
    // run may hold the text already (that run's write), and it is still news here.
    let hash = tether_fs::hash_bytes(text.as_bytes());
    if follow.ledger.knows(path, hash) {
        tracing::debug!("outside change to {}: this run knows it", path.display());
        return None;
    }
    // A server shared with another run may hold this text already (that run's write): it was
    // told and is checking it, so it is not told again, and its publication is awaited rather
    // than asked for (each run asking would have it check the file once per run). What it
    // already published for the change is news here, so the change is judged against what
    // it had published before it was told.
    let held = server.holds(path, &text).await == Some(true) && !server.separate_check;
    let snap = match held {
        true => server.snapshot_before(path, &text),
        false => None,
    }
    .or_else(|| {
        before_burst
            .iter()
            .find(|(s, _)| Arc::ptr_eq(s, &server))
            .map(|(_, snap)| snap.clone())
    })
    .unwrap_or_else(|| server.snapshot());
    // What the run last knew, else what the server had published for the file.
    let before = follow.known_before(path, &snap);
    let checks_before = match held {
        true => server.checks_begun(),
        false => server.save_for_check(path, &text).await.ok()?,
    };
    let synced = server.version_of(path).await;
    let rel = follow.rel(path);
    let mut reports = Vec::new();
    // A server that answers pulls is asked even then: it answers for a text it has checked
    // from what it holds, and it may never publish for that version (pyright, pulled by the
    // writing run), so waiting for a publication would wait out the whole budget.
    let answer = match held && !server.answers_pulls() {
        true => server
            .published_within(path, follow.budget)
            .await
            .ok_or_else(|| LspError::NoAnswer(format!("{} published nothing for it", server.id))),
        false => server.answer(path, checks_before, follow.budget).await,
    };
    // A tether write to the file while this change was diagnosed makes the answer the write's
    // (a check reads the disk as it is when it runs): the write reports it, this does not.
    if follow.ledger.is_writing(path) || server.version_of(path).await != synced {
        tracing::info!("the outside change to {rel} was overtaken by a tether write");
        return None;
    }
    match answer {
        Ok(items) => {
            follow.ledger.know(path, hash);
            let now = follow.findings(&items);
            let how = crate::ledger::Judged::Written;
            let status = follow.conclude(&server, path, before.as_ref(), now, NOT_SEEN, how);
            tracing::debug!("outside change to {rel}: {status:?}");
            if crate::follow::worth_telling(&status) {
                let scope = tether_tool::ReportScope::Changed;
                reports.push(follow.report(&server, rel.clone(), scope, status));
            }
        }
        Err(why) => tracing::info!("no diagnostics for the outside change to {rel}: {why}"),
    }
    Some((server, snap, reports))
}
