//! What a server has told us outside any answer, as one state fed by events in the order they
//! came off the wire: work-done progress, separate checks and which save each answers for,
//! publications, and its word on loading. The state is pure (no clock); a server publishes it
//! through a `watch`, so every wait is a condition on it that ends the moment it holds.

use std::collections::HashMap;

use crate::protocol::Diagnostic;
use crate::store::Publications;

/// One thing the server said, or one thing we sent that later events are ordered against.
#[derive(Debug)]
pub(crate) enum Event {
    /// `textDocument/publishDiagnostics`.
    Published {
        uri: String,
        version: Option<i64>,
        items: Vec<Diagnostic>,
        /// The digest of the text they came as ([`crate::store::Published::text_digest`]).
        text_digest: u64,
    },
    /// A work-done progress began; `check` when its token or title names a separate check.
    Begin {
        token: String,
        check: bool,
        percentage: Option<u32>,
    },
    /// A work-done progress reported.
    Report {
        token: String,
        percentage: Option<u32>,
    },
    /// A work-done progress ended.
    End { token: String },
    /// `experimental/serverStatus`: whether it is done loading, and what it said of its health
    /// when that was a warning or an error.
    Status {
        quiescent: Option<bool>,
        health: Option<(String, String)>,
    },
    /// A document's text was sent (didOpen or didChange).
    Sent,
    /// A `didSave` was sent.
    Saved,
    /// The server answered a request sent after save number `save`: it has taken that save
    /// in, so a check begun before this answer is not that save's.
    Barrier { save: u64 },
    /// The server answered a request sent once `ends` checks had ended: every publication of
    /// those checks came before this answer.
    Flushed { ends: u64 },
    /// A pull's answer for a file, its real state, kept as its confirmed publication.
    Pulled { uri: String, items: Vec<Diagnostic> },
    /// The server logged that it has listed the project's files.
    Listed,
    /// A file was said to be created or deleted, which the server's listing lacks until it
    /// lists the files again.
    Relist,
    /// The server answered a request sent after relist number `asked`: it has taken that
    /// change in, so a listing it logs from then on includes it.
    RelistBarrier { asked: u64 },
    /// A preview ended: what was held apart is dropped, but for each previewed document's
    /// publication of the text given back (`uri`, that version), or else its publication
    /// from before the preview, when that one was current, taken as the restored version's.
    PreviewEnded { restored: Vec<Restored> },
    /// A request missed its deadline.
    Degraded(String),
    /// The connection ended.
    Closed(String),
}

/// Where a server stands, from what it said (a crash is the process's part, not this).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Busy {
    /// Some progress runs, with the first one's percentage if it gives one.
    Progress(Option<u32>),
    /// It said it is still loading the project.
    Loading,
    /// Neither.
    Idle,
}

/// Everything a server told us, kept for the tools and the waits.
#[derive(Default)]
pub(crate) struct Heard {
    /// Why a request missed its deadline, once one did.
    pub(crate) degraded: Option<String>,
    /// Why the connection ended, once it did.
    pub(crate) closed: Option<String>,
    /// Work-done progress tokens still running, with their percentage.
    pub(crate) progress: HashMap<String, Option<u32>>,
    /// rust-analyzer's own word on whether it is done loading (`experimental/serverStatus`).
    pub(crate) quiescent: Option<bool>,
    /// Its word on whether the project loaded: a warning or error, and what it said.
    pub(crate) health: Option<(String, String)>,
    /// Separate checks running, per token: a restart may begin anew under the same token
    /// before the cancelled run ends, and only the last end means none runs.
    checks: HashMap<String, usize>,
    /// How many separate checks have begun so far.
    pub(crate) checks_begun: u64,
    /// How many have ended so far.
    pub(crate) checks_ended: u64,
    /// `checks_begun` when a check last ended with none left running and the project loaded:
    /// a check that ran while the project was still loading answers for no save.
    pub(crate) last_ended_begun: u64,
    /// Whether a progress has ended with none left running: the server has been over the
    /// project once, so what it publishes from then on is each file's real state (a server of
    /// the whole workspace first publishes every file empty, before it has looked at any).
    /// Never set for a server that confirms by pull.
    pub(crate) passed: bool,
    /// Whether a file's publication counts as its state only once a pull confirmed it: pyright
    /// counts each pull as analysis progress on the reporter of its pass, so its progress ends
    /// and begins again mid-pass, with or without pulls, and tells nothing of the pass's end.
    pub(crate) confirms_by_pull: bool,
    /// How many work-done progresses have begun, and ended, so far.
    pub(crate) begun: u64,
    pub(crate) ended: u64,
    /// Saves sent so far, and the latest save the server answered a barrier after, with
    /// `checks_begun` at that answer.
    pub(crate) saves: u64,
    pub(crate) barred: (u64, u64),
    /// `checks_ended` at the latest flush answered.
    pub(crate) flushed: u64,
    /// The latest publication per document URI, within bounds.
    pub(crate) published: Publications,
    /// The publications as they stood once an awaited check ended and its publications were
    /// flushed: a check clears a file's findings before it reports them again, so only this
    /// copy is whole between checks.
    pub(crate) checked: Option<Publications>,
    /// How many times the server logged that it has listed the project's files.
    pub(crate) listings: u64,
    /// Creations and deletions told so far, and the latest one the server answered a barrier
    /// after, with `listings` at that answer.
    pub(crate) relists: u64,
    pub(crate) relist_barred: (u64, u64),
    /// `listings` when the latest creation or deletion was told, and whether a listing was
    /// still due then (for an earlier one), so the next listing logged may predate the news.
    pub(crate) relist_from: (u64, bool),
    /// Counts publications and documents sent, to tell which came after which.
    pub(crate) seq: u64,
    /// When the server last said anything, or was last sent a text: the one clock here, set
    /// by the connection, for a server whose only sign of being done is silence.
    pub(crate) news_at: Option<tokio::time::Instant>,
    /// While a preview has the server hold text not on disk: what it publishes or answers
    /// meanwhile, kept apart, as it is no file's state ([`crate::preview`]).
    pub(crate) quarantine: Option<Quarantine>,
}

/// Publications and pulled answers held apart during a preview, each URI's latest with its
/// version and place in the order of events.
#[derive(Default)]
pub(crate) struct Quarantine {
    pub(crate) held: HashMap<String, (Option<i64>, u64, Vec<Diagnostic>)>,
}

/// A previewed document as it was given back its text on disk.
#[derive(Debug)]
pub(crate) struct Restored {
    pub(crate) uri: String,
    /// The version the text on disk was given back as.
    pub(crate) version: i64,
    /// Whether its publication from before the preview was for the text on disk then.
    pub(crate) was_current: bool,
}

impl Heard {
    /// Takes one event in.
    pub(crate) fn apply(&mut self, event: Event) {
        let Some(event) = self.held_apart(event) else {
            return;
        };
        match event {
            Event::Published {
                uri,
                version,
                items,
                text_digest,
            } => {
                self.seq += 1;
                let confirmed = self.confirms_now();
                self.published
                    .insert(&uri, version, self.seq, items, confirmed, text_digest);
            }
            Event::Pulled { uri, items } => {
                // It keeps its place in the order: a state confirmed is no news of the moment,
                // and a follower of an earlier event must not take it for that event's.
                // The same items as published keep the text they came as, so a publication
                // of that text again is still known without reading it.
                let (version, seq, digest) = match self.published.get(&uri) {
                    Some(p) => {
                        let digest = (p.items.as_slice() == items).then_some(p.text_digest);
                        (p.version, p.seq, digest.unwrap_or(0))
                    }
                    None => {
                        self.seq += 1;
                        (None, self.seq, 0)
                    }
                };
                self.published
                    .insert(&uri, version, seq, items, true, digest);
            }
            Event::Begin {
                token,
                check,
                percentage,
            } => {
                self.begun += 1;
                if check {
                    *self.checks.entry(token.clone()).or_default() += 1;
                    self.checks_begun += 1;
                }
                self.progress.insert(token, percentage);
            }
            Event::Report { token, percentage } => {
                if let Some(p) = self.progress.get_mut(&token) {
                    *p = percentage;
                }
            }
            Event::End { token } => {
                // An end is counted even for a token never begun: pyright ends its analysis
                // progress from a pull that began none, and that end means the pass is over.
                self.progress.remove(&token);
                self.ended += 1;
                if self.progress.is_empty() && !self.confirms_by_pull {
                    self.passed = true;
                }
                let Some(left) = self.checks.get_mut(&token) else {
                    return;
                };
                *left -= 1;
                self.checks_ended += 1;
                if *left == 0 {
                    self.checks.remove(&token);
                }
                if self.checks.is_empty() && self.quiescent != Some(false) {
                    self.last_ended_begun = self.checks_begun;
                }
            }
            Event::Status { quiescent, health } => {
                self.quiescent = quiescent;
                self.health = health;
            }
            Event::Sent => self.seq += 1,
            Event::Listed => self.listings += 1,
            Event::Relist => {
                self.relist_from = (self.listings, self.relists > 0 && !self.listed());
                self.relists += 1;
            }
            Event::RelistBarrier { asked } => {
                if asked >= self.relist_barred.0 {
                    self.relist_barred = (asked, self.listings);
                }
            }
            Event::Saved => self.saves += 1,
            Event::Barrier { save } => {
                if save >= self.barred.0 {
                    self.barred = (save, self.checks_begun);
                }
            }
            Event::Flushed { ends } => {
                if ends == self.checks_ended && self.checks.is_empty() {
                    self.checked = Some(self.published.clone());
                }
                self.flushed = self.flushed.max(ends);
            }
            Event::PreviewEnded { restored } => self.end_quarantine(restored),
            Event::Degraded(why) => self.degraded = Some(why),
            Event::Closed(why) => self.closed = Some(why),
        }
    }

    /// Whether the server's listing of the project's files is current: it has listed them,
    /// and again after the latest creation or deletion it was told of. The server lists again
    /// only when told of such a change, so any listing logged after the news is for it, unless
    /// one was still due for earlier news: then only a listing logged after the barrier behind
    /// the news counts (one logged before may predate it).
    pub(crate) fn listed(&self) -> bool {
        let (from, due) = self.relist_from;
        match self.relists {
            0 => self.listings > 0,
            _ if !due => self.listings > from,
            asked => self.relist_barred.0 == asked && self.listings > self.relist_barred.1,
        }
    }

    /// How many progresses other than separate checks (loading, indexing) have begun.
    pub(crate) fn indexing_begun(&self) -> u64 {
        self.begun - self.checks_begun
    }

    /// Whether a separate check runs now, so the publications are half old, half new.
    pub(crate) fn checking(&self) -> bool {
        !self.checks.is_empty()
    }

    /// For a server whose files are confirmed one by one, the share of the files it published
    /// that are confirmed (a percentage) until all are; `None` once they are, or for another
    /// server. Before it published anything, the end of a progress says it has nothing to.
    pub(crate) fn confirming(&self) -> Option<u32> {
        if !self.confirms_by_pull {
            return None;
        }
        let files = self.published.files();
        let (_, left) = self.published.unconfirmed(0);
        if left == 0 && (files > 0 || self.ended > 0) {
            return None;
        }
        Some((100 * (files - left.min(files)) / files.max(1)) as u32)
    }

    /// Whether a publication now is the file's real state: only a server whose files are
    /// confirmed one by one marks them so; the others' publications are judged by their
    /// checks and passes alone.
    fn confirms_now(&self) -> bool {
        self.passed && self.confirms_by_pull
    }

    /// Takes a publication of the same text as `uri`'s last one as [`Event::Published`] would,
    /// keeping the items already read; false, and nothing changed, when the text differs.
    pub(crate) fn republished(&mut self, uri: &str, version: Option<i64>, digest: u64) -> bool {
        if self.quarantine.is_some() {
            return false;
        }
        let (seq, confirmed) = (self.seq + 1, self.confirms_now());
        let kept = self
            .published
            .republish(uri, version, seq, confirmed, digest);
        if kept {
            self.seq = seq;
        }
        kept
    }

    /// Keeps a publication or a pulled answer apart while a preview runs, and gives back
    /// any other event to be taken in as usual.
    fn held_apart(&mut self, event: Event) -> Option<Event> {
        let Some(q) = self.quarantine.as_mut() else {
            return Some(event);
        };
        let (uri, version, items) = match event {
            Event::Published {
                uri,
                version,
                items,
                ..
            } => (uri, version, items),
            Event::Pulled { uri, items } => (uri, None, items),
            other => return Some(other),
        };
        self.seq += 1;
        q.held.insert(uri, (version, self.seq, items));
        None
    }

    /// Ends a preview's quarantine (see [`Event::PreviewEnded`]).
    fn end_quarantine(&mut self, restored: Vec<Restored>) {
        let Some(mut q) = self.quarantine.take() else {
            return;
        };
        let confirmed = self.confirms_now();
        for r in restored {
            let admitted = match q.held.remove(&r.uri) {
                Some((Some(v), _, items)) if v == r.version => Some(items),
                _ if r.was_current => self.published.get(&r.uri).map(|p| p.items.to_vec()),
                _ => None,
            };
            if let Some(items) = admitted {
                self.seq += 1;
                let version = Some(r.version);
                self.published
                    .insert(&r.uri, version, self.seq, items, confirmed, 0);
            }
        }
    }

    /// Whether files wait to be confirmed one by one ([`crate::survey`]).
    pub(crate) fn wants_survey(&self) -> bool {
        self.confirms_by_pull && self.published.unconfirmed(0).1 > 0
    }

    /// What the server is busy with, if anything.
    pub(crate) fn busy(&self) -> Busy {
        match (self.progress.values().next(), self.quiescent) {
            (Some(pct), _) => Busy::Progress(*pct),
            (None, Some(false)) => Busy::Loading,
            _ => Busy::Idle,
        }
    }

    /// Whether every save sent has been taken in, and a check begun after the latest of them
    /// (and after `after` checks had begun) has ended with none running since.
    pub(crate) fn check_ended_after(&self, after: u64) -> bool {
        let after = after.max(self.barred.1);
        self.barred.0 == self.saves && self.last_ended_begun > after && !self.checking()
    }

    /// [`Heard::check_ended_after`], with that check's publications flushed and kept whole.
    pub(crate) fn check_whole_after(&self, after: u64) -> bool {
        self.check_ended_after(after) && self.flushed == self.checks_ended && self.checked.is_some()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn begin(token: &str, check: bool) -> Event {
        Event::Begin {
            token: token.into(),
            check,
            percentage: None,
        }
    }

    fn end(token: &str) -> Event {
        Event::End {
            token: token.into(),
        }
    }

    fn publish(uri: &str, version: Option<i64>, n: usize) -> Event {
        let item: Diagnostic = crate::protocol::read(serde_json::json!({
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "severity": 1, "message": "m"}));
        Event::Published {
            uri: uri.into(),
            version,
            items: vec![item; n],
            text_digest: 0,
        }
    }

    fn fed(events: Vec<Event>) -> Heard {
        let mut heard = Heard::default();
        for e in events {
            heard.apply(e);
        }
        heard
    }

    /// A save while a check runs: rust-analyzer ends the running check (cancelled) and begins
    /// the save's own one after taking the save in. Only the second end answers for the save.
    #[test]
    fn a_check_cancelled_by_a_new_save_does_not_answer_for_it() {
        let flycheck = "rust-analyzer/flycheck/0";
        let mut heard = fed(vec![
            Event::Status {
                quiescent: Some(true),
                health: None,
            },
            Event::Saved,
            Event::Barrier { save: 1 },
            begin(flycheck, true),
            // The second save comes while the first check runs.
            Event::Saved,
        ]);
        let wanted = heard.checks_begun;
        heard.apply(end(flycheck));
        assert!(
            !heard.check_ended_after(wanted),
            "the save is not taken in yet"
        );
        heard.apply(Event::Barrier { save: 2 });
        assert!(
            !heard.check_ended_after(wanted),
            "the cancelled check answered"
        );
        heard.apply(begin(flycheck, true));
        heard.apply(publish("file:///w/src/lib.rs", None, 1));
        assert!(!heard.check_ended_after(wanted), "a check still runs");
        heard.apply(end(flycheck));
        assert!(heard.check_ended_after(wanted));
        assert!(!heard.check_whole_after(wanted), "not flushed yet");
        heard.apply(Event::Flushed {
            ends: heard.checks_ended,
        });
        assert!(heard.check_whole_after(wanted));
        let checked = heard.checked.as_ref().unwrap();
        assert_eq!(checked.get("file:///w/src/lib.rs").unwrap().items.len(), 1);
    }

    /// A check that ran while the project was still loading answers for no save, and a flush
    /// sent before a later check ended keeps nothing.
    #[test]
    fn a_check_during_loading_and_a_stale_flush_answer_nothing() {
        let mut heard = fed(vec![
            Event::Status {
                quiescent: Some(false),
                health: None,
            },
            Event::Saved,
            Event::Barrier { save: 1 },
            begin("flycheck", true),
            end("flycheck"),
        ]);
        assert!(!heard.check_ended_after(0));
        assert_eq!(heard.busy(), Busy::Loading);
        heard.apply(Event::Status {
            quiescent: Some(true),
            health: None,
        });
        heard.apply(begin("flycheck", true));
        heard.apply(end("flycheck"));
        assert!(heard.check_ended_after(0));
        let stale = heard.checks_ended - 1;
        heard.apply(Event::Flushed { ends: stale });
        assert!(heard.checked.is_none());
        assert!(!heard.check_whole_after(0));
    }

    /// A pull that confirms what was published keeps the text digest the publication came
    /// with (pyright publishes it again unchanged, which is then not read again), and a
    /// confirmed state said again is known as such, so it need not wake anyone.
    #[test]
    fn a_pull_that_confirms_a_publication_keeps_its_digest() {
        let mut heard = Heard {
            confirms_by_pull: true,
            ..Heard::default()
        };
        let Event::Published { items, .. } = publish("file:///w/a.py", None, 2) else {
            unreachable!()
        };
        heard.apply(Event::Published {
            uri: "file:///w/a.py".into(),
            version: None,
            items: items.clone(),
            text_digest: 7,
        });
        assert!(!heard.published.confirmed_as("file:///w/a.py", &items));
        heard.apply(Event::Pulled {
            uri: "file:///w/a.py".into(),
            items: items.clone(),
        });
        let a = heard.published.get("file:///w/a.py").unwrap();
        assert!(a.confirmed && a.text_digest == 7);
        assert!(heard.published.confirmed_as("file:///w/a.py", &items));
        assert!(!heard.published.confirmed_as("file:///w/a.py", &items[..1]));
        // Other items than published came from elsewhere: no digest stands for them.
        heard.apply(Event::Pulled {
            uri: "file:///w/a.py".into(),
            items: items[..1].to_vec(),
        });
        assert_eq!(
            heard.published.get("file:///w/a.py").unwrap().text_digest,
            0
        );
    }

    /// pyright's progress ends mid-pass (with a pull's answer, or between its own chunks of
    /// work), so no end makes a server that confirms by pull pass: its files are confirmed one
    /// by one, and a confirmed file keeps its place in the order and stays confirmed.
    #[test]
    fn a_server_that_confirms_by_pull_is_ready_once_each_file_is_confirmed() {
        let mut heard = Heard {
            confirms_by_pull: true,
            ..Heard::default()
        };
        heard.apply(publish("file:///w/a.py", None, 0));
        assert!(heard.wants_survey() && heard.confirming() == Some(0));
        // An end with no pull under way, as pyright sends between chunks of its pass.
        heard.apply(begin("analysis", false));
        heard.apply(end("analysis"));
        assert!(!heard.passed && heard.confirming() == Some(0));
        let seq = heard.published.get("file:///w/a.py").unwrap().seq;
        let Event::Published { items, .. } = publish("file:///w/a.py", None, 2) else {
            unreachable!()
        };
        heard.apply(Event::Pulled {
            uri: "file:///w/a.py".into(),
            items,
        });
        let a = heard.published.get("file:///w/a.py").unwrap();
        assert!(a.confirmed && a.seq == seq && a.items.len() == 2);
        heard.apply(publish("file:///w/a.py", None, 1));
        assert!(heard.published.get("file:///w/a.py").unwrap().confirmed);
        assert!(!heard.wants_survey() && heard.confirming().is_none());
        // A file published later, unconfirmed, is surveyed in turn, progress or not.
        heard.apply(begin("analysis", false));
        heard.apply(publish("file:///w/b.py", None, 0));
        assert!(heard.wants_survey() && heard.confirming() == Some(50));
        // A server with nothing to publish is ready once a progress ended.
        let mut empty = Heard {
            confirms_by_pull: true,
            ..Heard::default()
        };
        assert_eq!(empty.confirming(), Some(0));
        empty.apply(begin("analysis", false));
        empty.apply(end("analysis"));
        assert!(empty.confirming().is_none() && !empty.passed);
    }

    /// pyright publishes the files that import a changed module a while after the written
    /// file, each with no version: the sequence numbers order them after the change was sent.
    #[test]
    fn dependents_published_late_come_after_the_change_in_order() {
        let mut heard = fed(vec![publish("file:///w/main.py", None, 0)]);
        heard.apply(Event::Sent);
        let sent = heard.seq;
        heard.apply(publish("file:///w/m.py", Some(2), 1));
        heard.apply(publish("file:///w/main.py", None, 1));
        let main = heard.published.get("file:///w/main.py").unwrap();
        assert!(main.seq > sent);
        assert_eq!(main.items.len(), 1);
        assert_eq!(heard.busy(), Busy::Idle);
    }

    /// A server that never publishes for a clean file, and a progress that never ends: the
    /// state says busy for as long as the progress runs, and nothing was published.
    #[test]
    fn a_silent_clean_file_and_a_progress_with_no_end() {
        let mut heard = fed(vec![
            begin("indexing", false),
            Event::Report {
                token: "indexing".into(),
                percentage: Some(40),
            },
            Event::Sent,
        ]);
        assert_eq!(heard.busy(), Busy::Progress(Some(40)));
        assert!(heard.published.get("file:///w/a.c").is_none());
        // An end for another token leaves this one running.
        heard.apply(end("other"));
        assert_eq!(heard.busy(), Busy::Progress(Some(40)));
        assert!(!heard.passed);
        assert!(!heard.checking());
    }

    /// A creation told to a server whose queries search its listed files makes them stale
    /// until a listing logged after the barrier behind the news.
    #[test]
    fn a_listing_counts_only_once_logged_after_the_news_it_must_include() {
        let mut heard = Heard::default();
        assert!(!heard.listed());
        heard.apply(Event::Listed);
        assert!(heard.listed());
        heard.apply(Event::Relist);
        assert!(!heard.listed(), "told of a creation");
        // No listing was due before the news, so the next one is for it (pyright logs it
        // before the barrier's answer when it lists before reading the barrier).
        heard.apply(Event::Listed);
        assert!(heard.listed());
        heard.apply(Event::RelistBarrier { asked: 1 });
        assert!(heard.listed());
        // News while a listing is still due: the listing then logged may be the earlier one's.
        heard.apply(Event::Relist);
        heard.apply(Event::Relist);
        heard.apply(Event::Listed);
        assert!(!heard.listed());
        heard.apply(Event::RelistBarrier { asked: 2 });
        assert!(
            !heard.listed(),
            "the barrier behind the third news has not come back"
        );
        heard.apply(Event::RelistBarrier { asked: 3 });
        assert!(!heard.listed(), "no listing since that barrier");
        heard.apply(Event::Listed);
        assert!(heard.listed());
    }

    /// A check empties a file and ends, and its findings come after the end: the copy kept
    /// whole between checks is taken at the flush, never at the end.
    #[test]
    fn the_state_a_check_leaves_is_kept_at_its_flush() {
        let flycheck = "rust-analyzer/flycheck/0";
        let bench = "file:///w/benches/b.rs";
        let mut heard = fed(vec![publish(bench, None, 3), begin(flycheck, true)]);
        heard.apply(publish(bench, None, 0));
        heard.apply(end(flycheck));
        assert!(heard.checked.is_none(), "not flushed yet");
        heard.apply(publish(bench, None, 3));
        let kept = |h: &Heard| h.checked.as_ref().unwrap().get(bench).unwrap().items.len();
        heard.apply(Event::Flushed {
            ends: heard.checks_ended,
        });
        assert_eq!(kept(&heard), 3);
        // A file that stays empty was fixed.
        heard.apply(begin(flycheck, true));
        heard.apply(publish(bench, None, 0));
        heard.apply(end(flycheck));
        heard.apply(Event::Flushed {
            ends: heard.checks_ended,
        });
        assert_eq!(kept(&heard), 0);
    }
}
