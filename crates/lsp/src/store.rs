//! The diagnostics a server published, kept within bounds: a server may publish for any number
//! of files, with any number of findings of any size, so each publication is trimmed to what
//! tether reads, each file keeps a capped list, and past the totals the oldest files are
//! dropped and counted. The store is a persistent map: a snapshot of it costs the same on a
//! repository of ten files or of ten thousand, and shares everything with the store.

use std::sync::Arc;

use crate::protocol::{Diagnostic, NumberOrString};

/// Findings kept of one file's publication.
pub const PER_FILE: usize = 1_000;
/// Findings kept over all files.
pub const TOTAL: usize = 50_000;
/// Files kept.
pub const FILES: usize = 20_000;
/// Characters kept of a finding's message; code and source get a tenth of that.
const MESSAGE_CHARS: usize = 2_000;

/// One `publishDiagnostics`: the version it is about (when the server says), when it came,
/// and the diagnostics.
#[derive(Clone)]
pub struct Published {
    /// The document version it describes, if the server sent one.
    pub version: Option<i64>,
    /// Its place in the order of events.
    pub seq: u64,
    /// The diagnostics, trimmed and capped, shared with every snapshot that holds them.
    pub items: Arc<Vec<Diagnostic>>,
    /// Whether it is the file's real state: a server that publishes placeholders first
    /// (pyright's first pass) has since answered a pull for the file, or finished its pass.
    pub confirmed: bool,
    /// The digest of the text the server published them as; 0 for items from elsewhere (a
    /// pull's answer).
    pub text_digest: u64,
}

/// Every file's latest publication, within [`PER_FILE`], [`TOTAL`] and [`FILES`].
#[derive(Clone, Default)]
pub struct Publications {
    by_uri: imbl::HashMap<Arc<str>, Published>,
    /// URIs by the `seq` of their publication, oldest first, for dropping and for what came
    /// after a moment.
    order: imbl::OrdMap<u64, Arc<str>>,
    total: usize,
    /// Files dropped to stay within the totals; once any was, a file with no publication may
    /// have had one.
    dropped_files: u64,
    /// Findings cut from publications over [`PER_FILE`].
    cut_findings: u64,
    /// Files kept whose publication is not confirmed.
    unconfirmed: usize,
}

impl Publications {
    /// Whether `uri`'s publication is confirmed and holds exactly `items`: a pull that says
    /// so again changes nothing, and wakes no one.
    pub fn confirmed_as(&self, uri: &str, items: &[Diagnostic]) -> bool {
        let same = |p: &Published| p.confirmed && p.items.as_slice() == items;
        self.by_uri.get(uri).is_some_and(same)
    }

    /// Keeps `items` as `uri`'s latest publication, dropping the oldest files past the totals;
    /// it is `confirmed` when said so or when the file's last one was (a server that has
    /// looked at a file for real reports later changes to it for real).
    pub fn insert(
        &mut self,
        uri: &str,
        version: Option<i64>,
        seq: u64,
        items: Vec<Diagnostic>,
        confirmed: bool,
        text_digest: u64,
    ) {
        if items.len() > PER_FILE {
            self.cut_findings += (items.len() - PER_FILE) as u64;
        }
        let kept: Vec<Diagnostic> = items.into_iter().take(PER_FILE).map(trimmed).collect();
        let mut confirmed = confirmed;
        if let Some(old) = self.by_uri.remove(uri) {
            self.order.remove(&old.seq);
            self.total -= old.items.len();
            confirmed |= old.confirmed;
            self.unconfirmed -= usize::from(!old.confirmed);
        }
        self.unconfirmed += usize::from(!confirmed);
        self.total += kept.len();
        let uri: Arc<str> = Arc::from(uri);
        self.order.insert(seq, uri.clone());
        let items = Arc::new(kept);
        let entry = Published {
            version,
            seq,
            items,
            confirmed,
            text_digest,
        };
        self.by_uri.insert(uri, entry);
        while self.total > TOTAL || self.by_uri.len() > FILES {
            let Some(&(first, _)) = self.order.get_min() else {
                break;
            };
            let Some(oldest) = self.order.remove(&first) else {
                break;
            };
            if let Some(gone) = self.by_uri.remove(&oldest) {
                self.total -= gone.items.len();
                self.unconfirmed -= usize::from(!gone.confirmed);
                self.dropped_files += 1;
            }
        }
    }

    /// `uri`'s latest publication, if kept.
    pub fn get(&self, uri: &str) -> Option<&Published> {
        self.by_uri.get(uri)
    }

    /// Every kept publication.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Published)> {
        self.by_uri.iter().map(|(uri, p)| (&**uri, p))
    }

    /// The publications that came after event `seq`, oldest first: what changed since then,
    /// found without looking at the rest.
    pub fn since(&self, seq: u64) -> impl Iterator<Item = (&str, &Published)> {
        let after = (std::ops::Bound::Excluded(seq), std::ops::Bound::Unbounded);
        self.order
            .range(after)
            .filter_map(|(_, uri)| Some((&**uri, self.by_uri.get(uri)?)))
    }

    /// Makes `uri`'s publication the latest again, at `seq` and `version`, when the server
    /// published the same text as last time (`text_digest`); false, and nothing changed, when
    /// it did not or the file has none kept.
    pub fn republish(
        &mut self,
        uri: &str,
        version: Option<i64>,
        seq: u64,
        confirmed: bool,
        text_digest: u64,
    ) -> bool {
        let Some(entry) = self.by_uri.get_mut(uri) else {
            return false;
        };
        if entry.text_digest != text_digest {
            return false;
        }
        let old_seq = std::mem::replace(&mut entry.seq, seq);
        entry.version = version;
        if confirmed && !entry.confirmed {
            entry.confirmed = true;
            self.unconfirmed -= 1;
        }
        if let Some(uri) = self.order.remove(&old_seq) {
            self.order.insert(seq, uri);
        }
        true
    }

    /// Up to `limit` files whose publication is not confirmed yet, and how many there are.
    pub fn unconfirmed(&self, limit: usize) -> (Vec<Arc<str>>, usize) {
        let some = self
            .by_uri
            .iter()
            .filter(|(_, p)| !p.confirmed)
            .take(limit)
            .map(|(uri, _)| uri.clone())
            .collect();
        (some, self.unconfirmed)
    }

    /// How many files have a publication kept.
    pub fn files(&self) -> usize {
        self.by_uri.len()
    }

    /// Whether every file the server published for is still here, so a file absent was never
    /// published.
    pub fn whole(&self) -> bool {
        self.dropped_files == 0
    }

    /// What was dropped or cut, for `status`; `None` when nothing was.
    pub fn losses(&self) -> Option<String> {
        if self.dropped_files == 0 && self.cut_findings == 0 {
            return None;
        }
        Some(format!(
            "diagnostics kept within bounds: {} file(s) dropped (oldest first, past {FILES} \
             files or {TOTAL} findings), {} finding(s) cut (past {PER_FILE} per file)",
            self.dropped_files, self.cut_findings
        ))
    }
}

/// A finding with its texts cut with `cut_line`'s mark: a server's messages can be any size.
/// (Its `data` and related information, never shown, are not even read.)
fn trimmed(mut item: Diagnostic) -> Diagnostic {
    let cut = |s: &mut String, limit| {
        if s.chars().nth(limit).is_some() {
            *s = tether_base::cut_line(s, limit);
        }
    };
    cut(&mut item.message, MESSAGE_CHARS);
    if let Some(NumberOrString::String(code)) = &mut item.code {
        cut(code, MESSAGE_CHARS / 10);
    }
    if let Some(source) = &mut item.source {
        cut(source, MESSAGE_CHARS / 10);
    }
    item
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn finding(message: &str) -> Diagnostic {
        crate::protocol::read(json!({
            "range": {"start": {"line": 3, "character": 1}, "end": {"line": 3, "character": 4}},
            "severity": 1, "code": "E1", "source": "s", "message": message,
            "data": "x".repeat(10_000), "relatedInformation": [{"message": "y"}]}))
    }

    #[test]
    fn a_finding_keeps_what_tether_reads_and_no_more() {
        let mut store = Publications::default();
        store.insert(
            "file:///a",
            Some(2),
            1,
            vec![finding(&"m".repeat(10_000))],
            false,
            0,
        );
        let kept = &store.get("file:///a").unwrap().items[0];
        let cut = format!("{}… [+8000 chars]", "m".repeat(MESSAGE_CHARS));
        assert_eq!(kept.message, cut);
        assert_eq!(kept.range.start.line, 3);
        assert_eq!(kept.code_tag(), " [E1]");
    }

    #[test]
    fn past_the_totals_the_oldest_files_go_and_are_counted() {
        let mut store = Publications::default();
        let many: Vec<Diagnostic> = (0..PER_FILE + 5).map(|i| finding(&i.to_string())).collect();
        let files = (TOTAL / PER_FILE + 3) as u64;
        for i in 0..files {
            store.insert(
                &format!("file:///f{i}"),
                None,
                i + 1,
                many.clone(),
                false,
                0,
            );
        }
        assert!(store.total <= TOTAL, "{}", store.total);
        assert!(
            store.get("file:///f0").is_none(),
            "the oldest file was kept"
        );
        assert!(store.get(&format!("file:///f{}", files - 1)).is_some());
        assert!(!store.whole());
        let losses = store.losses().unwrap();
        assert!(losses.contains("3 file(s) dropped"), "{losses}");
        // A file published again replaces its old list and takes the place of its new seq.
        store.insert(
            &format!("file:///f{}", files - 1),
            None,
            10_000,
            Vec::new(),
            false,
            0,
        );
        assert_eq!(store.total, TOTAL - PER_FILE);
    }

    #[test]
    fn the_same_text_published_again_keeps_its_items_in_a_new_place() {
        let mut store = Publications::default();
        store.insert("file:///a", None, 1, vec![finding("m")], false, 7);
        store.insert("file:///b", None, 2, Vec::new(), false, 9);
        let before = store.get("file:///a").unwrap().items.clone();
        assert!(
            !store.republish("file:///a", Some(3), 3, true, 8),
            "another text"
        );
        assert!(store.republish("file:///a", Some(3), 3, true, 7));
        let again = store.get("file:///a").unwrap();
        assert!(Arc::ptr_eq(&again.items, &before));
        assert_eq!(
            (again.seq, again.version, again.confirmed),
            (3, Some(3), true)
        );
        let after: Vec<&str> = store.since(2).map(|(uri, _)| uri).collect();
        assert_eq!(after, ["file:///a"]);
        assert_eq!(store.unconfirmed(0).1, 1);
        // A pull's answer has no text: nothing is published again over it.
        store.insert("file:///a", None, 4, vec![finding("n")], true, 0);
        assert!(!store.republish("file:///a", None, 5, true, 7));
        assert!(
            !store.republish("file:///c", None, 5, true, 7),
            "never published"
        );
    }
}
