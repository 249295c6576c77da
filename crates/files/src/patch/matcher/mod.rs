//! Locating hunk lines in a file without rescanning it for every hunk, so that a patch costs
//! about linear time in file plus patch.
//!
//! Each whitespace level interns the file's lines once; a hunk's candidate positions come from
//! its rarest line (or, when that line is everywhere, from an index of whole windows), a
//! rolling hash checks each candidate in constant time, and answers are remembered per pattern
//! so repeated hunks do not rescan. Inputs built against these indexes (hunks made only of
//! lines repeated all over the file, headers found only inside longer words) can still cost
//! more, so every loop draws on one [`MatchBudget`] per patch, which also polls cancellation.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use super::Stopped;

/// Comparison steps one patch may spend locating its hunks. A step is one candidate position,
/// one compared line, 32 bytes of header text scanned or a quarter of a line indexed (about
/// 20 ns each), so the limit holds the write permit for about a second at most; ordinary
/// patches use a tiny fraction of it.
pub const MATCH_BUDGET_STEPS: u64 = 40_000_000;

/// Steps between two looks at the cancellation flag.
const CHECK_EVERY: u64 = 1 << 16;

/// Candidate positions (places holding the hunk's rarest line) always checked one by one; when
/// none of them fits and more remain, the rest are checked too only while an index of whole
/// windows would cost more than all the checking done so far for that hunk length.
const CHEAP_SCAN: usize = 256;

/// Longest window indexed as a whole; longer hunks are anchored on their rarest such window.
const MAX_WINDOW: usize = 64;

/// Steps charged per line for building a window index (hashing and sorting it, about 50 ns a
/// line), so the budget also bounds how often indexes are rebuilt.
const WINDOW_BUILD_STEPS: u64 = 4;

/// Window indexes kept per level (the most recent lengths), which bounds their memory.
const WINDOW_INDEXES_KEPT: usize = 2;

/// How loosely a patch line may match a file line; tried in declaration order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Strictness {
    Exact,
    TrimEnd,
    Trim,
}

/// The levels in the order they are tried: a stricter match anywhere wins over a looser one.
pub(super) const STRICTNESS_LEVELS: [Strictness; 3] =
    [Strictness::Exact, Strictness::TrimEnd, Strictness::Trim];

impl Strictness {
    fn normalize(self, line: &str) -> &str {
        match self {
            Strictness::Exact => line,
            Strictness::TrimEnd => line.trim_end(),
            Strictness::Trim => line.trim(),
        }
    }

    fn slot(self) -> usize {
        match self {
            Strictness::Exact => 0,
            Strictness::TrimEnd => 1,
            Strictness::Trim => 2,
        }
    }
}

fn never_cancelled() -> bool {
    false
}

/// The work one patch may do while locating hunks, shared by all its files, plus the caller's
/// cancellation check, so a crafted patch ends with an error instead of holding the writer.
pub struct MatchBudget<'a> {
    left: u64,
    limit: u64,
    until_check: u64,
    cancelled: &'a (dyn Fn() -> bool + Sync),
}

impl<'a> MatchBudget<'a> {
    /// The standard allowance ([`MATCH_BUDGET_STEPS`]); `cancelled` is polled while matching.
    pub fn new(cancelled: &'a (dyn Fn() -> bool + Sync)) -> Self {
        Self::with_steps(MATCH_BUDGET_STEPS, cancelled)
    }

    /// A custom allowance, for tests and callers with their own limit.
    pub fn with_steps(steps: u64, cancelled: &'a (dyn Fn() -> bool + Sync)) -> Self {
        MatchBudget {
            left: steps,
            limit: steps,
            until_check: CHECK_EVERY,
            cancelled,
        }
    }

    /// The allowance it started with, for error messages.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Steps used so far, for the timing report.
    #[cfg(test)]
    fn spent(&self) -> u64 {
        self.limit - self.left
    }

    pub(super) fn spend(&mut self, steps: u64) -> Result<(), Stopped> {
        if steps > self.left {
            self.left = 0;
            return Err(Stopped::OverBudget);
        }
        self.left -= steps;
        if steps >= self.until_check {
            self.until_check = CHECK_EVERY;
            if (self.cancelled)() {
                return Err(Stopped::Cancelled);
            }
        } else {
            self.until_check -= steps;
        }
        Ok(())
    }
}

impl Default for MatchBudget<'static> {
    fn default() -> Self {
        MatchBudget::new(&never_cancelled)
    }
}

/// Arithmetic modulo the Mersenne prime 2^61 - 1 with a per-process random base, so no input
/// can be crafted to make many windows collide (collisions only cost a re-check anyway).
const MOD: u64 = (1 << 61) - 1;

fn reduce(x: u64) -> u64 {
    let x = (x & MOD) + (x >> 61);
    if x >= MOD { x - MOD } else { x }
}

fn mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    // Both halves are below 2^61, so their sum fits and one more fold makes it canonical.
    reduce((p as u64 & MOD) + (p >> 61) as u64)
}

fn hash_step(acc: u64, base: u64, id: u32) -> u64 {
    reduce(mul(acc, base) + u64::from(id) + 1)
}

/// One whitespace level of the file: every line interned to an id, where each id occurs, and
/// prefix hashes of the id sequence for constant-time window checks.
struct Level<'a> {
    ids: Vec<u32>,
    lookup: HashMap<&'a str, u32>,
    /// `occ[starts[id]..starts[id + 1]]` are the lines holding `id`, ascending.
    starts: Vec<usize>,
    occ: Vec<usize>,
    prefix: Vec<u64>,
    /// Recently used window lengths, each with every window of that many lines sorted by hash
    /// then position, so all places holding a given run of lines are one binary search away.
    windows: Vec<(usize, Windows)>,
    /// Per window length without an index: candidates checked beyond [`CHEAP_SCAN`] so far.
    scanned: HashMap<usize, u64>,
}

/// Windows of one length, as parallel `hashes` and `positions` sorted by (hash, position).
struct Windows {
    hashes: Vec<u64>,
    positions: Vec<usize>,
}

impl Windows {
    /// Positions (ascending) of the windows whose hash is `h`.
    fn with_hash(&self, h: u64) -> &[usize] {
        let lo = self.hashes.partition_point(|&x| x < h);
        let hi = self.hashes.partition_point(|&x| x <= h);
        self.positions.get(lo..hi).unwrap_or_default()
    }
}

impl<'a> Level<'a> {
    fn build(lines: &[&'a str], s: Strictness, base: u64) -> Self {
        let mut lookup: HashMap<&'a str, u32> = HashMap::new();
        let mut ids = Vec::with_capacity(lines.len());
        let mut prefix = Vec::with_capacity(lines.len() + 1);
        let mut acc = 0u64;
        prefix.push(acc);
        for line in lines {
            let next = u32::try_from(lookup.len()).unwrap_or(u32::MAX);
            let id = *lookup.entry(s.normalize(line)).or_insert(next);
            ids.push(id);
            acc = hash_step(acc, base, id);
            prefix.push(acc);
        }
        let mut starts = vec![0usize; lookup.len() + 1];
        for &id in &ids {
            if let Some(c) = starts.get_mut(id as usize + 1) {
                *c += 1;
            }
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut fill = starts.clone();
        let mut occ = vec![0usize; ids.len()];
        for (pos, &id) in ids.iter().enumerate() {
            if let Some(slot) = fill.get_mut(id as usize)
                && let Some(o) = occ.get_mut(*slot)
            {
                *o = pos;
                *slot += 1;
            }
        }
        Level {
            ids,
            lookup,
            starts,
            occ,
            prefix,
            windows: Vec::new(),
            scanned: HashMap::new(),
        }
    }

    /// Builds the window index for runs of `q` lines unless kept (evicting the oldest).
    fn build_windows(
        &mut self,
        q: usize,
        pow: &[u64],
        budget: &mut MatchBudget,
    ) -> Result<(), Stopped> {
        if !self.windows.iter().any(|(len, _)| *len == q) {
            let count = self.ids.len().saturating_sub(q) + 1;
            budget.spend(count as u64 * WINDOW_BUILD_STEPS)?;
            let mut all: Vec<(u64, usize)> = (0..count)
                .filter_map(|pos| Some((self.window_hash(pos, q, pow)?, pos)))
                .collect();
            all.sort_unstable();
            let (hashes, positions) = all.into_iter().unzip();
            if self.windows.len() >= WINDOW_INDEXES_KEPT {
                let (evicted, _) = self.windows.remove(0);
                self.scanned.remove(&evicted);
            }
            self.windows.push((q, Windows { hashes, positions }));
        }
        Ok(())
    }

    /// First position in `start..=last_start` holding `pat` (ids, with prefix hashes
    /// `pat_prefix`). Only places holding the pattern's rarest line can match; when that line
    /// is everywhere and checking its places has cost as much as an index would, the rarest
    /// run of lines (the whole pattern when short) is looked up in a window index instead.
    fn first_match(
        &mut self,
        pat: &[u32],
        pat_prefix: &[u64],
        start: usize,
        last_start: usize,
        pow: &[u64],
        budget: &mut MatchBudget,
    ) -> Result<Option<usize>, Stopped> {
        let m = pat.len();
        let want = pat_prefix.last().copied().unwrap_or_default();
        let Some((offset, anchor)) = pat
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, id)| self.occurrences(id).len())
        else {
            return Ok(Some(start));
        };
        let occ = self.occurrences(anchor);
        let cands = occ
            .get(occ.partition_point(|&p| p < start + offset)..)
            .unwrap_or_default();
        let many = cands.len() > CHEAP_SCAN;
        // Positions before `next` are ruled out.
        let mut next = start;
        for &at in cands.iter().take(CHEAP_SCAN) {
            let pos = at - offset;
            if pos > last_start {
                return Ok(None);
            }
            if self.matches(pos, pat, want, pow, budget)? {
                return Ok(Some(pos));
            }
            next = pos + 1;
        }
        if !many || m == 1 {
            return Ok(None);
        }
        let q = m.min(MAX_WINDOW);
        let rest = (cands.len() - CHEAP_SCAN) as u64;
        let indexed = self.windows.iter().any(|(len, _)| *len == q);
        let index_cost = self.ids.len() as u64 * WINDOW_BUILD_STEPS;
        let scanned = self.scanned.entry(q).or_default();
        if !indexed && *scanned + rest <= index_cost {
            *scanned += rest;
            let occ = self.occurrences(anchor);
            let from = occ.partition_point(|&p| p < next + offset);
            for &at in occ.get(from..).unwrap_or_default() {
                let pos = at - offset;
                if pos > last_start {
                    break;
                }
                if self.matches(pos, pat, want, pow, budget)? {
                    return Ok(Some(pos));
                }
            }
            return Ok(None);
        }
        budget.spend((m - q + 1) as u64)?;
        self.build_windows(q, pow, budget)?;
        let Some((_, windows)) = self.windows.iter().find(|(len, _)| *len == q) else {
            return Ok(None);
        };
        let group = |j: usize| {
            let (end, begin) = (pat_prefix.get(j + q)?, pat_prefix.get(j)?);
            Some(windows.with_hash(reduce(end + MOD - mul(*begin, *pow.get(q)?))))
        };
        let Some((j, group)) = (0..=m - q)
            .filter_map(|j| Some((j, group(j)?)))
            .min_by_key(|(_, g)| g.len())
        else {
            return Ok(None);
        };
        let group = group.get(group.partition_point(|&p| p < next + j)..);
        for &at in group.unwrap_or_default() {
            let pos = at - j;
            if pos > last_start {
                break;
            }
            if self.matches(pos, pat, want, pow, budget)? {
                return Ok(Some(pos));
            }
        }
        Ok(None)
    }

    fn occurrences(&self, id: u32) -> &[usize] {
        let id = id as usize;
        match (self.starts.get(id), self.starts.get(id + 1)) {
            (Some(&a), Some(&b)) => self.occ.get(a..b).unwrap_or_default(),
            _ => &[],
        }
    }

    fn window_hash(&self, pos: usize, len: usize, pow: &[u64]) -> Option<u64> {
        let end = *self.prefix.get(pos + len)?;
        let start = *self.prefix.get(pos)?;
        Some(reduce(end + MOD - mul(start, *pow.get(len)?)))
    }

    /// Whether the file's lines at `pos` are exactly `pat` (ids), checking the hash first.
    fn matches(
        &self,
        pos: usize,
        pat: &[u32],
        want: u64,
        pow: &[u64],
        budget: &mut MatchBudget,
    ) -> Result<bool, Stopped> {
        budget.spend(1)?;
        if self.window_hash(pos, pat.len(), pow) != Some(want) {
            return Ok(false);
        }
        budget.spend(pat.len() as u64)?;
        Ok(self.ids.get(pos..pos + pat.len()) == Some(pat))
    }
}

/// What a header search over the raw text found after the cursor.
pub(super) enum TextHits {
    /// The first line holding the header as whole words.
    Words(usize),
    /// No whole-word hit; every line that merely contains the header.
    Loose(Vec<usize>),
}

/// First occurrence at or after `from` of one pattern, remembered so an identical later hunk
/// (a common shape of crafted patches) does not pay for the same scan again.
struct Known {
    from: usize,
    first: Option<usize>,
}

/// The file being patched, indexed lazily per whitespace level. Its lines never change while
/// hunks are applied (the edited text is built separately), so every index stays valid.
pub(super) struct FileIndex<'a> {
    text: &'a str,
    lines: Vec<&'a str>,
    line_starts: Vec<usize>,
    levels: [Option<Level<'a>>; 3],
    base: u64,
    pow: Vec<u64>,
    known: HashMap<(Strictness, Vec<u32>), Known>,
}

impl<'a> FileIndex<'a> {
    /// Indexes `body` (the file without its final newline), or no lines at all for `None`.
    pub(super) fn new(body: Option<&'a str>) -> Self {
        let text = body.unwrap_or_default();
        let mut lines = Vec::new();
        let mut line_starts = Vec::new();
        if let Some(body) = body {
            let mut offset = 0;
            for line in body.split('\n') {
                line_starts.push(offset);
                lines.push(line);
                offset += line.len() + 1;
            }
        }
        let seed = RandomState::new().hash_one(lines.len());
        FileIndex {
            text,
            lines,
            line_starts,
            levels: [None, None, None],
            base: seed % (MOD - 1024) + 512,
            pow: Vec::new(),
            known: HashMap::new(),
        }
    }

    pub(super) fn lines(&self) -> &[&'a str] {
        &self.lines
    }

    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    pub(super) fn line(&self, i: usize) -> Option<&'a str> {
        self.lines.get(i).copied()
    }

    fn level(&mut self, s: Strictness) -> &Level<'a> {
        if self.pow.is_empty() {
            let mut p = 1u64;
            self.pow.reserve(self.lines.len() + 1);
            for _ in 0..=self.lines.len() {
                self.pow.push(p);
                p = mul(p, self.base);
            }
        }
        let (lines, base) = (&self.lines, self.base);
        self.levels[s.slot()].get_or_insert_with(|| Level::build(lines, s, base))
    }

    /// First position at or after `start` where `old` matches line for line under `s`; with
    /// `at_end`, only the last position that leaves no line after the match counts.
    pub(super) fn find(
        &mut self,
        old: &[&str],
        start: usize,
        at_end: bool,
        s: Strictness,
        budget: &mut MatchBudget,
    ) -> Result<Option<usize>, Stopped> {
        let m = old.len();
        let Some(last_start) = self.len().checked_sub(m) else {
            return Ok(None);
        };
        if start > last_start {
            return Ok(None);
        }
        budget.spend(m as u64)?;
        self.level(s);
        let (Some(level), pow, base) = (&mut self.levels[s.slot()], &self.pow, self.base) else {
            return Ok(None);
        };
        let pat: Option<Vec<u32>> = old
            .iter()
            .map(|l| level.lookup.get(s.normalize(l)).copied())
            .collect();
        // A line the file never has (at this level) rules the level out at once.
        let Some(pat) = pat else { return Ok(None) };
        let mut pat_prefix = Vec::with_capacity(m + 1);
        pat_prefix.push(0u64);
        for &id in &pat {
            let acc = pat_prefix.last().copied().unwrap_or_default();
            pat_prefix.push(hash_step(acc, base, id));
        }
        let want = pat_prefix.last().copied().unwrap_or_default();
        if at_end {
            return Ok(level
                .matches(last_start, &pat, want, pow, budget)?
                .then_some(last_start));
        }
        let key = (s, pat);
        if let Some(k) = self.known.get(&key)
            && start >= k.from
            && k.first.is_none_or(|f| f >= start)
        {
            return Ok(k.first);
        }
        let first = level.first_match(&key.1, &pat_prefix, start, last_start, pow, budget)?;
        self.known.insert(key, Known { from: start, first });
        Ok(first)
    }

    /// First line at or after `from` whose trimmed text is `h`.
    pub(super) fn find_trimmed_line(&mut self, h: &str, from: usize) -> Option<usize> {
        let level = self.level(Strictness::Trim);
        let id = *level.lookup.get(h.trim())?;
        let occ = level.occurrences(id);
        occ.get(occ.partition_point(|&p| p < from)).copied()
    }

    /// Searches the text from line `from` on for `h` in one pass: the first line holding it as
    /// whole words (`class Foo` is not in `class FooBar`), else every line containing it.
    pub(super) fn find_in_text(
        &self,
        h: &str,
        from: usize,
        budget: &mut MatchBudget,
    ) -> Result<TextHits, Stopped> {
        let mut loose: Vec<usize> = Vec::new();
        // Lines never hold a line break, so such a header is in none of them.
        let (false, Some(&offset)) = (h.contains('\n'), self.line_starts.get(from)) else {
            return Ok(TextHits::Loose(loose));
        };
        let hay = self.text.get(offset..).unwrap_or_default();
        let mut scanned = 0;
        for (at, _) in hay.match_indices(h) {
            budget.spend(1 + (at - scanned) as u64 / 32)?;
            scanned = at;
            let abs = offset + at;
            let line = self.line_starts.partition_point(|&s| s <= abs) - 1;
            if is_whole_words(self.text, abs, h) {
                return Ok(TextHits::Words(line));
            }
            if loose.last() != Some(&line) {
                loose.push(line);
            }
        }
        budget.spend((hay.len() - scanned) as u64 / 32)?;
        Ok(TextHits::Loose(loose))
    }

    /// The position at or after `start` where the longest run of `old`'s leading lines matches
    /// (trimmed), and that length; the first such position wins. Linear via the Z-algorithm.
    pub(super) fn longest_prefix(
        &mut self,
        old: &[&str],
        start: usize,
        budget: &mut MatchBudget,
    ) -> Result<Option<(usize, usize)>, Stopped> {
        let rest = self.len().saturating_sub(start);
        budget.spend((old.len() + rest) as u64)?;
        let level = self.level(Strictness::Trim);
        // Hunk lines the file lacks get fresh ids (equal text, equal id), and a separator
        // that nothing equals keeps every match length within the hunk.
        let mut fresh: HashMap<&str, u32> = HashMap::new();
        let mut seq: Vec<u32> = Vec::with_capacity(old.len() + 1 + rest);
        for line in old {
            let key = line.trim();
            let id = match level.lookup.get(key) {
                Some(&id) => id,
                None => {
                    let next = u32::try_from(level.lookup.len() + fresh.len()).unwrap_or(0);
                    *fresh.entry(key).or_insert(next)
                }
            };
            seq.push(id);
        }
        seq.push(u32::MAX);
        seq.extend(level.ids.get(start..).unwrap_or_default());
        let z = z_array(&seq);
        let mut best: Option<(usize, usize)> = None;
        for (j, &len) in z.iter().skip(old.len() + 1).enumerate() {
            if len > 0 && best.is_none_or(|(_, b)| len > b) {
                best = Some((start + j, len));
            }
        }
        Ok(best)
    }
}

/// Whether the occurrence of `h` at byte `at` of `text` has no identifier character glued to
/// either end (a line break counts as a separator, like the start or end of a line).
fn is_whole_words(text: &str, at: usize, h: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let before = text.get(..at).and_then(|t| t.chars().next_back());
    let after = text.get(at + h.len()..).and_then(|t| t.chars().next());
    let glued_before = before.is_some_and(ident) && h.starts_with(ident);
    let glued_after = after.is_some_and(ident) && h.ends_with(ident);
    !glued_before && !glued_after
}

/// `z[i]` is the length of the longest common prefix of `s` and `s[i..]` (`z[0]` is 0).
fn z_array(s: &[u32]) -> Vec<usize> {
    let n = s.len();
    let mut z = vec![0usize; n];
    let (mut l, mut r) = (0usize, 0usize);
    for i in 1..n {
        let mut k = if i < r { z[i - l].min(r - i) } else { 0 };
        while i + k < n && s[k] == s[i + k] {
            k += 1;
        }
        z[i] = k;
        if i + k > r {
            l = i;
            r = i + k;
        }
    }
    z
}

#[cfg(test)]
mod tests;
