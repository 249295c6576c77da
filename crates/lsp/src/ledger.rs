//! What this run knows of each file's problems, keyed without positions (a problem that only
//! moved is not new), and how a server's diagnostics become those keyed findings.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tether_base::lock;

use tether_tool::{FileStatus, Finding};

use tether_base::cut_line;

use crate::protocol::Diagnostic;

/// A file's problems before the run first touched it, and after the latest answer.
type Known = (Vec<Finding>, Vec<Finding>);

/// The run's ledger: per file, its baseline and its latest complete answer; and the files a
/// write is busy with, which are not outside changes.
#[derive(Default)]
pub struct Ledger {
    files: Mutex<HashMap<PathBuf, Known>>,
    writing: Mutex<HashMap<PathBuf, (usize, Instant)>>,
    /// The content this run last wrote or diagnosed per file: a change to anything else is
    /// news to the run, even when a server shared with another run already holds it.
    seen: Mutex<HashMap<PathBuf, tether_fs::ContentHash>>,
    /// When the watch last saw each file change on disk (tether's own writes included).
    changed_on_disk: Mutex<HashMap<PathBuf, Instant>>,
    /// How many times the servers were told of changes on disk they did not know (dropped
    /// events count too): tether's own writes, which its servers hold already, do not count.
    disk_changes: std::sync::atomic::AtomicU64,
    /// Files whose latest answer is a server's final one (a pull), with the count of disk
    /// changes then: while no file has changed since, asking again would say the same.
    final_at: Mutex<HashMap<PathBuf, u64>>,
    /// Files a burst of outside changes changed but did not ask about (past its bound): what
    /// the run or a snapshot held for them is from before the change, so no answer about them
    /// is compared with it until one is recorded.
    not_diagnosed: Mutex<HashSet<PathBuf>>,
}

/// How long a file counts as being written, at most: a write that failed between its two
/// hooks never ends its mark, and outside changes to the file must not be ignored for ever.
const WRITING_AT_MOST: std::time::Duration = std::time::Duration::from_secs(120);

impl Ledger {
    /// The last complete answer for `path`, if the run has one and it still holds (not from
    /// before an outside change nobody diagnosed).
    pub fn latest(&self, path: &Path) -> Option<Vec<Finding>> {
        if self.not_diagnosed(path) {
            return None;
        }
        lock(&self.files)
            .get(path)
            .map(|(_, latest)| latest.clone())
    }

    /// Whether `now` is the last complete answer for `path` ([`Ledger::latest`]), `None` when
    /// there is none; without copying it.
    pub fn latest_is(&self, path: &Path, now: &[Finding]) -> Option<bool> {
        if self.not_diagnosed(path) {
            return None;
        }
        lock(&self.files)
            .get(path)
            .map(|(_, latest)| latest.as_slice() == now)
    }

    /// Records an answer; the first one recorded for a file makes `baseline` its baseline, or,
    /// when nothing was known before, the answer itself: what was never seen is never blamed.
    pub fn record(&self, path: PathBuf, baseline: Option<&Vec<Finding>>, now: Vec<Finding>) {
        lock(&self.not_diagnosed).remove(&path);
        let mut files = lock(&self.files);
        match files.get_mut(&path) {
            // The same findings again (pyright republishes every importer it checked) leave
            // a final answer as final: a server's answer asked since no change is still it.
            Some((_, latest)) if *latest == now => return,
            Some((_, latest)) => *latest = now,
            None => {
                let first = baseline.unwrap_or(&now).clone();
                files.insert(path.clone(), (first, now));
            }
        }
        lock(&self.final_at).remove(&path);
    }

    /// How many changes on disk were told so far ([`Ledger::note_disk_change`]): taken before a
    /// server is asked, for [`Ledger::recorded_final`].
    pub fn disk_changes(&self) -> u64 {
        self.disk_changes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Notes files changed on disk that were not diagnosed ([`Ledger::not_diagnosed`]).
    pub fn left_undiagnosed(&self, paths: impl IntoIterator<Item = PathBuf>) {
        lock(&self.not_diagnosed).extend(paths);
    }

    /// Whether `path` changed on disk and nothing was recorded for it since: what was known
    /// of it before is no baseline.
    pub fn not_diagnosed(&self, path: &Path) -> bool {
        lock(&self.not_diagnosed).contains(path)
    }

    /// Marks the answer just recorded for `path` as final, a server's answer to a question
    /// asked when [`Ledger::disk_changes`] was `asked_at`, not a publication that may be a
    /// placeholder: a change seen after that may not be in it.
    pub fn recorded_final(&self, path: &Path, asked_at: u64) {
        lock(&self.final_at).insert(path.to_path_buf(), asked_at);
    }

    /// The latest answer for `path` when it was final and nothing on disk has changed since.
    pub fn still_final(&self, path: &Path) -> Option<Vec<Finding>> {
        let at = lock(&self.final_at).get(path).copied()?;
        (at == self.disk_changes())
            .then(|| self.latest(path))
            .flatten()
    }

    /// Notes a change on disk the servers may not have taken in before a final answer: events
    /// the system dropped, or outside changes told to the servers only now.
    pub fn note_disk_change(&self) {
        self.disk_changes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Notes that the run knows `path` as holding the content hashed `hash`.
    pub fn know(&self, path: &Path, hash: tether_fs::ContentHash) {
        lock(&self.seen).insert(path.to_path_buf(), hash);
    }

    /// Whether the run already knows `path` as holding the content hashed `hash`.
    pub fn knows(&self, path: &Path, hash: tether_fs::ContentHash) -> bool {
        lock(&self.seen).get(path) == Some(&hash)
    }

    /// Whether the run wrote or diagnosed `path` itself: a file it worked on.
    pub fn touched(&self, path: &Path) -> bool {
        lock(&self.seen).contains_key(path)
    }

    /// Marks files a write is about to change, until [`Ledger::written`].
    pub fn writing(&self, paths: &[PathBuf]) {
        let mut busy = lock(&self.writing);
        for p in paths {
            let mark = busy.entry(p.clone()).or_insert((0, Instant::now()));
            *mark = (mark.0 + 1, Instant::now());
        }
    }

    /// [`Ledger::writing`] for `paths` until the mark is dropped.
    pub fn mark_writing(self: &Arc<Self>, paths: Vec<PathBuf>) -> WritingMark {
        self.writing(&paths);
        WritingMark {
            ledger: self.clone(),
            paths,
        }
    }

    /// Ends [`Ledger::writing`] for these files.
    pub fn written(&self, paths: &[PathBuf]) {
        let mut busy = lock(&self.writing);
        for p in paths {
            if let Some(mark) = busy.get_mut(p) {
                mark.0 -= 1;
                if mark.0 == 0 {
                    busy.remove(p);
                }
            }
        }
    }

    /// Notes that the watch saw `path` change on disk now.
    pub fn changed_on_disk(&self, path: &Path) {
        lock(&self.changed_on_disk).insert(path.to_path_buf(), Instant::now());
    }

    /// Whether `path` changed on disk after `since`, as the watch saw it or, before the watch
    /// has told it (a file in a new folder is found a moment later), as its modification
    /// time says: what a server says of it then may be that change's, not an earlier event's.
    pub fn changed_on_disk_since(&self, path: &Path, since: Instant) -> bool {
        let seen = lock(&self.changed_on_disk)
            .get(path)
            .is_some_and(|at| *at > since);
        seen || std::time::SystemTime::now()
            .checked_sub(since.elapsed())
            .zip(std::fs::metadata(path).and_then(|m| m.modified()).ok())
            .is_some_and(|(since, modified)| modified > since)
    }

    /// Whether a write is changing any file now.
    pub fn any_writing(&self) -> bool {
        lock(&self.writing)
            .values()
            .any(|(_, since)| since.elapsed() < WRITING_AT_MOST)
    }

    /// Whether `path` is being written now (see [`Ledger::any_writing`]).
    pub fn is_writing(&self, path: &Path) -> bool {
        lock(&self.writing)
            .get(path)
            .is_some_and(|(_, since)| since.elapsed() < WRITING_AT_MOST)
    }

    /// The problems this run introduced that are still there, per file.
    pub fn introduced(&self) -> Vec<(PathBuf, Vec<Finding>)> {
        let files = lock(&self.files);
        let mut out: Vec<(PathBuf, Vec<Finding>)> = files
            .iter()
            .filter_map(|(path, (first, latest))| {
                match FileStatus::compare(first, latest.clone()) {
                    FileStatus::Compared { new, .. } if !new.is_empty() => {
                        Some((path.clone(), new))
                    }
                    _ => None,
                }
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// How a file is judged: written (an old problem may be reshaped on its line) or not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    Written,
    Unwritten,
}

/// The warnings of `before` missing from `now`, when the checker stops reporting warnings
/// once errors stand and they do: not looked for again, so neither fixed nor gone.
pub fn silenced(
    before: Option<&Vec<Finding>>,
    now: &[Finding],
    errors_stand: bool,
) -> Vec<Finding> {
    let Some(before) = before.filter(|_| errors_stand) else {
        return Vec::new();
    };
    let mut present: HashMap<&str, usize> = HashMap::new();
    for f in now {
        *present.entry(f.key.as_str()).or_default() += 1;
    }
    let mut held = Vec::new();
    for f in before.iter().filter(|f| f.class.starts_with("warning")) {
        match present.get_mut(f.key.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => held.push(f.clone()),
        }
    }
    held
}

/// What a server's answer says, given what the file had before (`None`: nothing known), with
/// the warnings `held` back (see [`silenced`]) counted as not re-checked, and for an unwritten
/// file, no old problem reshaped.
pub fn judge_held(
    before: Option<&Vec<Finding>>,
    now: Vec<Finding>,
    held: &[Finding],
    no_baseline: &str,
    how: Judged,
) -> FileStatus {
    let compare = match how {
        Judged::Written => FileStatus::compare,
        Judged::Unwritten => FileStatus::compare_unwritten,
    };
    judge_by(before, now, held, no_baseline, compare)
}

fn judge_by(
    before: Option<&Vec<Finding>>,
    now: Vec<Finding>,
    held: &[Finding],
    no_baseline: &str,
    compare: fn(&[Finding], Vec<Finding>) -> FileStatus,
) -> FileStatus {
    match before {
        Some(old) => {
            let mut all = now;
            all.extend(held.iter().cloned());
            match compare(old, all) {
                FileStatus::Compared {
                    new,
                    mut still,
                    changed,
                    fixed,
                    ..
                } => {
                    still.retain(|f| !held.contains(f));
                    let unchecked = held.len();
                    let quiet = new.is_empty() && still.is_empty() && changed.is_empty();
                    match quiet && fixed == 0 && unchecked == 0 {
                        true => FileStatus::Clean,
                        false => FileStatus::Compared {
                            new,
                            still,
                            changed,
                            fixed,
                            unchecked,
                        },
                    }
                }
                other => other,
            }
        }
        None if now.is_empty() => FileStatus::Clean,
        None => FileStatus::Unavailable {
            why: no_baseline.to_string(),
            now,
        },
    }
}

/// Which severities count: errors and warnings, plus those `[lsp.diagnostics] severities`
/// adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Severities(pub Vec<String>);

impl Default for Severities {
    fn default() -> Self {
        Severities(vec!["error".into(), "warning".into()])
    }
}

/// The LSP severity numbers' names.
pub const SEVERITY_NAMES: [&str; 4] = ["error", "warning", "information", "hint"];

/// The counted diagnostics as findings keyed by (severity, code, message); the same problem
/// at the same place and severity from two sources counts once.
pub fn findings(items: &[Diagnostic], counted: &Severities) -> Vec<Finding> {
    let counts = |d: &&Diagnostic| {
        let severity = SEVERITY_NAMES[d.level() as usize - 1];
        counted.0.iter().any(|s| s == severity)
    };
    // Two sources reporting at one place keep the same one, so a file's findings read alike
    // from one publication to the next: rust-analyzer adds its own analysis ("rust-analyzer")
    // to cargo check's ("rustc") only while a file is open, so the greater source is kept.
    // Sorted by place, the diagnostics of one place and of one line come together.
    let mut items: Vec<&Diagnostic> = items.iter().filter(counts).collect();
    items.sort_by(|a, b| {
        let at = |d: &Diagnostic| (d.range.start, d.range.end, d.level());
        at(a)
            .cmp(&at(b))
            .then_with(|| b.source.cmp(&a.source))
            .then_with(|| a.message.cmp(&b.message))
    });
    let mut out: Vec<Finding> = Vec::with_capacity(items.len());
    let mut last_place = None;
    let mut line_begins = 0;
    for d in items {
        let place = (d.range.start, d.range.end, d.level());
        if last_place.replace(place) == Some(place) {
            continue;
        }
        let severity = SEVERITY_NAMES[d.level() as usize - 1];
        let code = d.code_tag();
        let message = d.one_line();
        let text = format!("{severity}{code} {}", cut_line(message.trim(), 300));
        let line = d.range.start.line as usize + 1;
        if out.last().is_none_or(|f| f.line != line) {
            line_begins = out.len();
        }
        // The same words twice on one line (one finding per target cargo checked, each with
        // its own span) read as one problem: a second line saying the same would be noise.
        if out[line_begins..].iter().any(|f| f.text == text) {
            continue;
        }
        out.push(Finding {
            line,
            key: text.clone(),
            text,
            class: format!("{severity}{code}"),
        });
    }
    out
}

/// Files claimed by one write while it is under way; dropping the mark ends the claim, however
/// the write ended (reported, failed, changed nothing, or its baseline timed out).
pub struct WritingMark {
    ledger: Arc<Ledger>,
    paths: Vec<PathBuf>,
}

impl Drop for WritingMark {
    fn drop(&mut self) {
        self.ledger.written(&self.paths);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn diag(line: u64, col: u64, severity: u64, message: &str) -> Diagnostic {
        crate::protocol::read(json!({
            "range": {"start": {"line": line, "character": col},
                      "end": {"line": line, "character": col + 3}},
            "severity": severity, "message": message}))
    }

    /// A publication that repeats a final answer keeps it final; one that differs does not.
    #[test]
    fn the_same_findings_again_keep_an_answer_final() {
        let ledger = Ledger::default();
        let path = PathBuf::from("/w/app.py");
        let broken = findings(&[diag(2, 0, 1, "no such name")], &Severities::default());
        ledger.record(path.clone(), None, broken.clone());
        ledger.recorded_final(&path, ledger.disk_changes());
        ledger.record(path.clone(), None, broken.clone());
        assert_eq!(ledger.still_final(&path), Some(broken));
        ledger.record(path.clone(), None, Vec::new());
        assert_eq!(ledger.still_final(&path), None);
    }

    #[test]
    fn the_same_problem_from_two_sources_counts_once_and_hints_are_left_out() {
        let from = |source: &str, mut d: Diagnostic| {
            d.source = Some(source.to_string());
            d
        };
        let check = from("rustc", diag(2, 4, 1, "mismatched types"));
        let own = from("rust-analyzer", diag(2, 4, 1, "expected i32, found &str"));
        let items = [
            own.clone(),
            check.clone(),
            diag(5, 0, 4, "unused"),
            diag(6, 0, 2, "unused variable"),
        ];
        let found = findings(&items, &Severities::default());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].text, "error mismatched types");
        // Whichever came first, the same one is kept.
        let swapped = findings(&[check, own], &Severities::default());
        assert_eq!(swapped[0].text, "error mismatched types");
        assert_eq!(found[1].text, "warning unused variable");
        let all = Severities(SEVERITY_NAMES.iter().map(|s| s.to_string()).collect());
        assert_eq!(findings(&items, &all).len(), 3);
    }

    /// rustc's message and its label are two phrases; the same words twice on one line (a
    /// finding per target, each with its own span) are one problem.
    #[test]
    fn a_message_reads_as_phrases_and_a_line_says_a_thing_once() {
        let label = "cannot find value `y` in this scope\nnot found in this scope";
        let items = [diag(3, 4, 1, label), diag(3, 9, 1, label)];
        let found = findings(&items, &Severities::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].text,
            "error cannot find value `y` in this scope; not found in this scope"
        );
    }

    #[test]
    fn a_file_a_write_is_changing_is_busy_until_every_write_on_it_ends() {
        let ledger = Ledger::default();
        let p = vec![PathBuf::from("/w/a.py")];
        ledger.writing(&p);
        ledger.writing(&p);
        ledger.written(&p);
        assert!(ledger.is_writing(&p[0]));
        ledger.written(&p);
        assert!(!ledger.is_writing(&p[0]));
    }
}
