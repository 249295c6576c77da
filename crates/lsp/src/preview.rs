//! Diagnostics of a change not yet written. Each server is given the proposed texts as unsaved
//! versions of its documents, asked what it finds there, and given the texts on disk back;
//! meanwhile its gate is closed to every other message ([`crate::gate`]) and what it publishes
//! is kept apart from the files' state ([`crate::heard::Quarantine`]). Nothing is recorded:
//! the ledger and the store hold only what is on disk.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_tool::{FileReport, FileStatus, Finding, Proposed, ReportScope};
use tokio::time::Instant;

use crate::catalog::Done;
use crate::follow::{Follow, NOT_KNOWN};
use crate::heard::{Event, Restored};
use crate::ledger::{Judged, judge_held, silenced};
use crate::on_write::{Checker, DiagnosticsOnWrite};
use crate::protocol::Diagnostic;
use crate::server::{Server, file_uri, uri_path};

/// How a previewed file is labelled when its server could not say what it had before.
const NO_BASELINE: &str = "no baseline: the server did not answer for the text on disk in time";

/// Files a preview shows one server at most.
const SHOWN_MAX: usize = 50;

/// One file a preview shows its server.
struct Shown {
    abs: PathBuf,
    rel: String,
    proposed: String,
}

impl DiagnosticsOnWrite {
    /// What `changes` would bring, per file and server (see [`tether_tool::WriteHook::preview`]).
    pub(crate) async fn preview_changes(&self, changes: &[Proposed]) -> Vec<FileReport> {
        let mut reports = Vec::new();
        let mut groups: Vec<(Arc<Server>, Vec<Shown>)> = Vec::new();
        for change in changes {
            let (abs, rel) = (change.path.abs(), change.path.rel().to_string());
            let config = self.servers.config();
            if !config.preview {
                if config.language_of(abs).is_some() && !self.beside {
                    let why = "not previewed: `[lsp.diagnostics] preview` is off";
                    reports.push(unjudged(None, rel, why.into()));
                }
                continue;
            }
            let server = match self.checker(abs, &rel).await {
                Checker::Server(server) => server,
                Checker::Quiet => continue,
                Checker::Said(report) => {
                    reports.push(report);
                    continue;
                }
                Checker::Starting(_, why) => {
                    let why = format!("{why}; this change was not previewed by it");
                    reports.push(unjudged(None, rel, why));
                    continue;
                }
            };
            let text = match (&change.text, change.deleted) {
                (_, true) => {
                    let why = "a deletion is not previewed: what it breaks in the files that \
                               import it is reported once it is written";
                    reports.push(unjudged(Some(&server), rel, why.into()));
                    continue;
                }
                (None, false) => {
                    let why = "its new content is not UTF-8 text".to_string();
                    reports.push(unjudged(Some(&server), rel, why));
                    continue;
                }
                (Some(text), false) => text.clone(),
            };
            let shown = Shown {
                abs: abs.to_path_buf(),
                rel,
                proposed: text,
            };
            match groups.iter_mut().find(|(s, _)| Arc::ptr_eq(s, &server)) {
                // A server holds the gate for every file it is shown: a rewrite of hundreds
                // of files is judged once it is written.
                Some((_, files)) if files.len() == SHOWN_MAX => {
                    let why = format!(
                        "not previewed: a preview shows {} at most {SHOWN_MAX} files, and this \
                         change has more; they are judged once it is written",
                        server.id
                    );
                    reports.push(unjudged(Some(&server), shown.rel, why));
                }
                Some((_, files)) => files.push(shown),
                None => groups.push((server, vec![shown])),
            }
        }
        // Each server's preview runs to its end in a task of its own, so a call that gives up
        // still leaves every server holding the text on disk again.
        let each = groups.into_iter().map(|(server, files)| {
            let follow = self.follow.clone();
            tokio::spawn(preview_on(follow, server, files, self.baseline))
        });
        for done in futures::future::join_all(each).await {
            reports.extend(done.unwrap_or_default());
        }
        reports
    }
}

/// A report saying a file's change was not judged, and why.
fn unjudged(server: Option<&Server>, rel: String, why: String) -> FileReport {
    let source = match server {
        Some(server) => tether_tool::ReportSource::program(crate::follow::DIAGNOSTICS, &server.id),
        None => tether_tool::ReportSource::hook(crate::follow::DIAGNOSTICS),
    };
    FileReport {
        path: rel,
        scope: ReportScope::Changed,
        source,
        noun: "problem".into(),
        status: FileStatus::Unavailable {
            why,
            now: Vec::new(),
        },
    }
}

/// The preview of `files` on one server, with the gate held alone from the first text sent
/// until the server has taken the texts on disk back.
/// The gate is awaited as long as a write's answer would be (a cold server's first answers
/// are slow, and hold it); then, as for a write, the look before has the baseline budget
/// (`baseline`) and the answers have the write's wait.
async fn preview_on(
    follow: Follow,
    server: Arc<Server>,
    files: Vec<Shown>,
    baseline: Duration,
) -> Vec<FileReport> {
    let Some(_alone) = server.gate.alone(follow.wait).await else {
        let why = format!(
            "{} was answering other calls for all of {} ms, so this change was not previewed; \
             try again",
            server.id,
            follow.wait.as_millis()
        );
        let unjudged = |f: &Shown| unjudged(Some(&server), f.rel.clone(), why.clone());
        return files.iter().map(unjudged).collect();
    };
    let end = Instant::now() + baseline;
    server
        .gate
        .as_preview(preview_alone(&follow, &server, &files, end))
        .await
}

/// What a file had before, and what it held on disk when the preview began.
struct Before {
    disk: Option<String>,
    had: Option<Vec<Finding>>,
    /// Whether the server's publication for it was current for the text on disk.
    was_current: bool,
}

async fn preview_alone(
    follow: &Follow,
    server: &Arc<Server>,
    files: &[Shown],
    end: Instant,
) -> Vec<FileReport> {
    let left = || end.saturating_duration_since(Instant::now());
    // 1. What each file has now, on the text on disk: real answers, kept as any other.
    let mut befores = Vec::with_capacity(files.len());
    for f in files {
        befores.push(before(follow, server, &f.abs, left()).await);
    }
    let touched: HashSet<PathBuf> = files.iter().map(|f| f.abs.clone()).collect();
    let snap = server.snapshot();
    // The files the change may break that the server is asked about, as after a write.
    let importers = match server.asks_dependents() {
        true => crate::on_write::dependents_to_ask(follow, server, &touched).await,
        false => Vec::new(),
    };
    let mut importers_had = Vec::with_capacity(importers.len());
    for path in &importers {
        importers_had.push(follow.known_before(path, &snap));
    }
    // What the run does not know of an importer (a pass still under way) is asked now, while
    // the server holds the disk's text.
    let unknown: Vec<PathBuf> = importers
        .iter()
        .zip(&importers_had)
        .filter(|(_, had)| had.is_none())
        .map(|(path, _)| path.clone())
        .collect();
    for (path, items) in follow.pulled(server, &unknown, end).await {
        if let Some(i) = importers.iter().position(|p| *p == path) {
            importers_had[i] = Some(follow.findings(&items));
        }
    }
    // The answers have the write's wait.
    let end = Instant::now() + follow.wait;
    let left = || end.saturating_duration_since(Instant::now());
    // 2. The proposed texts, unsaved, with what the server says meanwhile kept apart.
    let quarantine = Quarantined::begin(server);
    let shown_at = server.seq_now();
    let mut reports = Vec::new();
    let mut answers = Vec::with_capacity(files.len());
    for f in files {
        answers.push(server.sync(&f.abs, &f.proposed).await.is_ok());
    }
    for ((f, b), sent) in files.iter().zip(&befores).zip(answers) {
        let items = match sent {
            true => unsaved_answer(server, &f.abs, left()).await,
            false => None,
        };
        let status = match items {
            Some(items) => judged(follow, server, b.had.as_ref(), &items, Judged::Written),
            None => FileStatus::Unavailable {
                why: format!(
                    "{} gave no answer for the proposed text within {} ms",
                    server.id,
                    follow.wait.as_millis()
                ),
                now: Vec::new(),
            },
        };
        reports.push(follow.report(server, f.rel.clone(), ReportScope::Changed, status));
    }
    // Files the change does not touch: the importers a pull server is asked about, and what
    // any server published of other files meanwhile.
    let asked = follow.pulled(server, &importers, end).await;
    for (path, items) in &asked {
        let had = importers
            .iter()
            .position(|p| p == path)
            .and_then(|i| importers_had[i].clone());
        reports.extend(another(follow, server, path, had, items));
    }
    if server.workspace_mode && server.done != Done::Pull {
        server.quiet_within(server.quiet, left()).await;
    }
    // A server of open files rebuilds the open files that name a shown one, or, for some,
    // only once it is saved: those are said not judged.
    if server.done == Done::Publish && !server.asks_dependents() {
        let uris = crate::on_write::open_dependents(follow, server, &touched).await;
        let again = |h: &crate::heard::Heard, u: &String| {
            let held = h.quarantine.as_ref().and_then(|q| q.held.get(u));
            held.is_some_and(|p| p.1 > shown_at)
        };
        if !server.dependents_on_save {
            server
                .until(left(), |h| uris.iter().all(|u| again(h, u)))
                .await;
        }
        let missed: Vec<PathBuf> = {
            let heard = server.heard.borrow();
            let missed = uris.iter().filter(|u| !again(&heard, u));
            missed.filter_map(|u| uri_path(u)).collect()
        };
        for path in missed {
            let why = match server.dependents_on_save {
                true => format!(
                    "it includes a changed file, and {} checks such files again only once the \
                     change is saved: judged when it is written",
                    server.id
                ),
                false => format!(
                    "it includes a changed file, and {} had not checked it again within {} ms",
                    server.id,
                    follow.wait.as_millis()
                ),
            };
            let status = FileStatus::Unavailable {
                why,
                now: Vec::new(),
            };
            reports.push(follow.report(server, follow.rel(&path), ReportScope::Other, status));
        }
    }
    for (path, items) in server.held_since(shown_at) {
        if touched.contains(&path) || asked.iter().any(|(p, _)| *p == path) {
            continue;
        }
        // A file the server had not reported on before (a first pass under way) is left
        // out, as after a write: what it publishes now may be a placeholder.
        let Some(had) = follow.known_before(&path, &snap) else {
            continue;
        };
        reports.extend(another(follow, server, &path, Some(had), &items));
    }
    if server.separate_check {
        let why = format!(
            "these are {}'s own findings: its project check reads the files on disk, so it \
             judges this change once it is written",
            server.id
        );
        let status = FileStatus::Pending(why);
        reports.push(follow.report(server, String::new(), ReportScope::Rest, status));
    }
    // 3. The texts on disk back, and the server's answer for them awaited, before the gate
    //    opens: nothing it says of the proposed text may reach the files' state.
    let settle = end.max(Instant::now() + follow.wait / 2);
    let mut restored = Vec::new();
    for (f, b) in files.iter().zip(&befores) {
        match &b.disk {
            Some(text) => {
                let _ = server.sync(&f.abs, text).await;
                let left = settle.saturating_duration_since(Instant::now());
                unsaved_answer(server, &f.abs, left).await;
                if let Some(version) = server.version_of(&f.abs).await {
                    restored.push(Restored {
                        uri: file_uri(&f.abs),
                        version: i64::from(version),
                        was_current: b.was_current,
                    });
                }
            }
            None => server.forget_unsaved(&f.abs).await,
        }
    }
    // A server whose pulls are final has answered for the files that import the changed ones
    // once it answers for them again: it drops work on a text once that text changes. Any
    // other server of the whole workspace is given its quiet window.
    if !importers.is_empty() {
        follow.pulled(server, &importers, settle).await;
    } else if server.workspace_mode && server.done != Done::Pull {
        let left = settle.saturating_duration_since(Instant::now());
        server.quiet_within(server.quiet, left).await;
    }
    quarantine.end(restored);
    reports
}

/// A server's quarantine, ended however the preview ends: a preview that stops half way
/// drops what was held apart and admits nothing.
struct Quarantined<'a>(&'a Server, Option<Vec<Restored>>);

impl<'a> Quarantined<'a> {
    fn begin(server: &'a Server) -> Self {
        server
            .heard
            .send_modify(|h| h.quarantine = Some(Default::default()));
        Quarantined(server, None)
    }

    /// Ends it, admitting the previewed files' answers for the texts given back.
    fn end(mut self, restored: Vec<Restored>) {
        self.1 = Some(restored);
    }
}

impl Drop for Quarantined<'_> {
    fn drop(&mut self) {
        let restored = self.1.take().unwrap_or_default();
        self.0.end_quarantine(restored);
    }
}

/// What `path` has on disk and what the server says of that text, before a preview.
async fn before(follow: &Follow, server: &Server, path: &Path, limit: Duration) -> Before {
    let Ok(disk) = crate::named::read(&follow.files, path).await else {
        // A file the change creates had nothing.
        return Before {
            disk: None,
            had: Some(Vec::new()),
            was_current: false,
        };
    };
    if server.sync(path, &disk).await.is_err() {
        return Before {
            disk: Some(disk),
            had: None,
            was_current: false,
        };
    }
    // A server's own findings are compared with its own: a project check's (cargo check)
    // cannot be asked of unsaved text.
    let known = match server.separate_check {
        true => None,
        false => follow.ledger.latest(path),
    };
    let had = match known {
        Some(known) => Some(known),
        None => server
            .diagnostics_within(path, limit)
            .await
            .map(|items| follow.findings(&items)),
    };
    Before {
        was_current: server.publication_current(path).await,
        disk: Some(disk),
        had,
    }
}

/// The server's diagnostics for the text it holds for `path` now, pulled where it answers
/// pulls, else its publication for that version (held apart during a preview).
async fn unsaved_answer(server: &Server, path: &Path, limit: Duration) -> Option<Vec<Diagnostic>> {
    if server.answers_pulls() {
        return server.pulled_within(path, limit).await;
    }
    server.held_within(path, limit).await
}

/// What `items` say of a changed file against what it `had`; nothing is recorded.
fn judged(
    follow: &Follow,
    server: &Server,
    had: Option<&Vec<Finding>>,
    items: &[Diagnostic],
    how: Judged,
) -> FileStatus {
    let now = follow.findings(items);
    let errors_stand =
        server.warnings_silenced_by_errors && now.iter().any(|f| f.class.starts_with("error"));
    let held = silenced(had, &now, errors_stand);
    let no_baseline = match how {
        Judged::Written => NO_BASELINE,
        Judged::Unwritten => NOT_KNOWN,
    };
    judge_held(had, now, &held, no_baseline, how)
}

/// The report on a file the change does not touch, when it would bring news.
fn another(
    follow: &Follow,
    server: &Server,
    path: &Path,
    had: Option<Vec<Finding>>,
    items: &[Diagnostic],
) -> Option<FileReport> {
    if !path.starts_with(&follow.workspace) {
        return None;
    }
    let status = judged(follow, server, had.as_ref(), items, Judged::Unwritten);
    crate::follow::worth_telling(&status)
        .then(|| follow.report(server, follow.rel(path), ReportScope::Other, status))
}

impl Server {
    /// Whether the server's publication for `path` is for the text it holds now.
    pub(crate) async fn publication_current(&self, path: &Path) -> bool {
        let Some(sent) = self.sent_text(path).await else {
            return false;
        };
        let heard = self.heard.borrow();
        heard
            .published
            .get(&file_uri(path))
            .is_some_and(|p| sent.answered_by(p.version, p.seq))
    }

    /// The publication held apart for the text the server holds for `path` now, within
    /// `limit`.
    pub(crate) async fn held_within(
        &self,
        path: &Path,
        limit: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let sent = self.sent_text(path).await?;
        let uri = file_uri(path);
        let fresh = |held: &(Option<i64>, u64, Vec<Diagnostic>)| sent.answered_by(held.0, held.1);
        let found = |h: &crate::heard::Heard| {
            h.quarantine
                .as_ref()
                .and_then(|q| q.held.get(&uri))
                .is_some_and(fresh)
        };
        if !self.until(limit, found).await {
            return None;
        }
        let heard = self.heard.borrow();
        let held = heard.quarantine.as_ref()?.held.get(&uri)?;
        Some(held.2.clone())
    }

    /// Every file's publication held apart after `seq`.
    fn held_since(&self, seq: u64) -> Vec<(PathBuf, Vec<Diagnostic>)> {
        let heard = self.heard.borrow();
        let Some(q) = heard.quarantine.as_ref() else {
            return Vec::new();
        };
        q.held
            .iter()
            .filter(|(_, (_, at, _))| *at > seq)
            .filter_map(|(uri, (_, _, items))| Some((uri_path(uri)?, items.clone())))
            .collect()
    }

    /// Closes a document a preview opened for a file that is not on disk.
    async fn forget_unsaved(&self, path: &Path) {
        let Ok(uri) = crate::protocol::uri(path) else {
            return;
        };
        if self.open.lock().await.remove(path).is_some() {
            let text_document = lsp_types::TextDocumentIdentifier { uri };
            let params = lsp_types::DidCloseTextDocumentParams { text_document };
            let _ = self
                .notify::<lsp_types::notification::DidCloseTextDocument>(params)
                .await;
        }
    }

    /// Ends a preview's quarantine: what was held apart is dropped, but for the previewed
    /// files' answers for the texts given back ([`Event::PreviewEnded`]); the pulled reports
    /// kept under the server's result ids may name the proposed texts, so they go too.
    fn end_quarantine(&self, restored: Vec<Restored>) {
        self.heard
            .send_modify(|h| h.apply(Event::PreviewEnded { restored }));
        self.forget_reports();
    }
}
