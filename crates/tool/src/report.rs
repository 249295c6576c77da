//! The one per-file report every write hook gives: for each file a write touched and each
//! source (the syntax check, a language server), what is new, what was there before, what the
//! write fixed, or why there is no answer. One formatter renders them all, merging duplicates.

use std::collections::{BTreeMap, HashSet};

/// About how long the whole report may grow.
const BLOCK_BYTES: usize = 4096;
/// Old problems listed for a file a write changed nothing about, to orient.
const OLD_SHOWN: usize = 3;
/// Problems shown per file and source before the rest are only counted.
const ITEMS_SHOWN: usize = 10;

/// One problem a source found: where it is, how it reads, and the key it is counted under
/// (for syntax errors, the kind of node that holds the error), so a problem that only changed
/// shape or moved is not new.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line.
    pub line: usize,
    /// What the model reads.
    pub text: String,
    /// What it is counted under: a rise in a key's count is new, a fall is fixed.
    pub key: String,
    /// Its kind, severity and code ("error [E0308]", "syntax error"): a finding on the line of
    /// one that went away is that one changed only when their kinds are the same.
    pub class: String,
}

/// What one source says about one file after a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Compared with the baseline taken just before the write.
    Compared {
        /// Problems this write introduced.
        new: Vec<Finding>,
        /// Problems there before the write and still there.
        still: Vec<Finding>,
        /// Problems there before the write that now read differently (same kind, same line).
        changed: Vec<Finding>,
        /// How many problems the write removed.
        fixed: usize,
        /// Warnings the checker did not look for again, because it stops reporting them once
        /// there are errors: neither fixed nor still known to be there.
        unchecked: usize,
    },
    /// The source answered for the text as written and found nothing (said, not implied).
    Clean,
    /// The source has not answered yet (a server still indexing); why, in a few words.
    Pending(String),
    /// The source cannot tell what this write changed; why, and what it sees now, which may
    /// predate the write.
    Unavailable {
        /// Why there is no comparison.
        why: String,
        /// The problems found now, if the source could look at all.
        now: Vec<Finding>,
    },
}

impl FileStatus {
    /// Compares a file's problems after a write with those before it, key by key.
    pub fn compare(before: &[Finding], after: Vec<Finding>) -> FileStatus {
        Self::compare_with(before, after, true)
    }

    /// [`FileStatus::compare`] for a file nobody wrote: its lines did not change, so a new
    /// problem on the line of one that went away is new, not the old one reshaped.
    pub fn compare_unwritten(before: &[Finding], after: Vec<Finding>) -> FileStatus {
        Self::compare_with(before, after, false)
    }

    fn compare_with(before: &[Finding], after: Vec<Finding>, reshapes: bool) -> FileStatus {
        let mut left: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for f in before {
            left.entry(f.key.as_str()).or_default().push(f);
        }
        // Within a key, a finding whose text was there before is the old one, so when the
        // count rises the findings with unseen text are the new ones.
        let (mut seen, mut unseen): (Vec<Finding>, Vec<Finding>) =
            after.into_iter().partition(|f| {
                left.get(f.key.as_str())
                    .is_some_and(|l| l.iter().any(|b| b.text == f.text))
            });
        let (mut new, mut still) = (Vec::new(), Vec::new());
        for f in seen.drain(..).chain(unseen.drain(..)) {
            match left.get_mut(f.key.as_str()).and_then(|l| l.pop()) {
                Some(_) => still.push(f),
                None => new.push(f),
            }
        }
        // A finding on the line where one of the same kind under another key went away is
        // that one, changed in shape (`def f(:` became `def f(x:`; an E0308 whose types
        // changed): changed, not new. Of another kind (an error where a warning was), it is new.
        let mut gone: Vec<&Finding> = left.values().flatten().copied().collect();
        let (mut changed, mut new): (Vec<Finding>, Vec<Finding>) = new.into_iter().partition(|f| {
            let at = gone
                .iter()
                .position(|g| g.line == f.line && g.class == f.class);
            reshapes && at.map(|i| gone.swap_remove(i)).is_some()
        });
        let fixed = gone.len();
        new.sort_by_key(|f| f.line);
        still.sort_by_key(|f| f.line);
        changed.sort_by_key(|f| f.line);
        FileStatus::Compared {
            new,
            still,
            changed,
            fixed,
            unchecked: 0,
        }
    }

    /// True when there is nothing worth saying: clean before and after.
    fn is_quiet(&self) -> bool {
        matches!(self, FileStatus::Compared { new, still, changed, fixed: 0, unchecked: 0 }
            if new.is_empty() && still.is_empty() && changed.is_empty())
    }
}

/// What a report is about, as the event that made it sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportScope {
    /// A file the event changed: the write's own file, or one changed outside tether.
    Changed,
    /// A file the event did not change, whose problems it changed (a caller a write broke).
    Other,
    /// A server's other files together, in one line (`other files: pending`); no path.
    Rest,
}

/// Who says what a report says: the write hook, and the program it asked when one answered.
/// Reports are grouped by it, and a hook finds its own reports by it, never by their heading.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ReportSource {
    /// The hook's name: "diagnostics".
    pub hook: String,
    /// The program whose word it is: "pyright"; none when no program answered.
    pub program: Option<String>,
}

impl ReportSource {
    /// A hook's own word.
    pub fn hook(name: impl Into<String>) -> Self {
        ReportSource {
            hook: name.into(),
            program: None,
        }
    }

    /// A hook's word from the program it asked.
    pub fn program(hook: impl Into<String>, program: impl Into<String>) -> Self {
        ReportSource {
            hook: hook.into(),
            program: Some(program.into()),
        }
    }
}

impl std::fmt::Display for ReportSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.program {
            Some(program) => write!(f, "{} ({program})", self.hook),
            None => f.write_str(&self.hook),
        }
    }
}

/// One source's word on one file a write touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file, as the model names it (relative to the workspace); empty for [`ReportScope::Rest`].
    pub path: String,
    /// Whether the file is one the event changed.
    pub scope: ReportScope,
    /// Who says so; its heading reads "diagnostics (pyright)".
    pub source: ReportSource,
    /// What one problem is called, singular: "syntax error".
    pub noun: String,
    /// What it says.
    pub status: FileStatus,
}

impl FileReport {
    /// The file as its lines are headed: another file is said not to have been written.
    pub fn heading(&self) -> std::borrow::Cow<'_, str> {
        match self.scope {
            ReportScope::Changed => self.path.as_str().into(),
            ReportScope::Other => format!("{} (another file, not written)", self.path).into(),
            ReportScope::Rest => "other files".into(),
        }
    }
}

/// Renders every hook's reports for one write, grouped by source, in the order they came. A
/// finding another source already listed at the same line with the same text is left out.
/// Nothing is said for files clean before and after.
pub fn format_reports(reports: &[FileReport]) -> Option<String> {
    format_reports_after(reports, "this write")
}

/// Like [`format_reports`], for what happened after something other than the write being
/// answered (a late answer for an earlier write, a change made outside tether).
pub fn format_reports_after(reports: &[FileReport], event: &str) -> Option<String> {
    format_reports_as(reports, event, "this write")
}

/// [`format_reports_after`], with what came before the event called "before `was`".
fn format_reports_as(reports: &[FileReport], event: &str, was: &str) -> Option<String> {
    let mut sources: Vec<&ReportSource> = Vec::new();
    for r in reports {
        if !r.status.is_quiet() && !sources.contains(&&r.source) {
            sources.push(&r.source);
        }
    }
    let mut listed: HashSet<(&str, usize, &str)> = HashSet::new();
    let mut out = Vec::new();
    for source in sources {
        out.push(format!("{source} after {event}:"));
        for r in reports
            .iter()
            .filter(|r| &r.source == source && !r.status.is_quiet())
        {
            out.extend(file_lines(r, &mut listed, was));
        }
    }
    if out.is_empty() {
        return None;
    }
    // Flood control: the whole block stays near 4 KB, and says how much it left out.
    let mut text = String::new();
    for (i, line) in out.iter().enumerate() {
        if text.len() + line.len() + 1 > BLOCK_BYTES {
            text.push_str(&format!(
                "\n… {} more lines cut to keep this short; in all, {}",
                out.len() - i,
                totals(reports)
            ));
            break;
        }
        if i > 0 {
            text.push('\n');
        }
        text.push_str(line);
    }
    Some(text)
}

/// What a change not yet written would bring, as the hooks' previews judged it: a headline
/// ("would bring: 2 new problems in 1 file") and the reports under it. A file no preview could
/// judge is said so, so an incomplete verdict never reads as a clean one.
pub fn verdict(reports: &[FileReport]) -> String {
    let Tally {
        new,
        files,
        fixed,
        open,
    } = tally(reports);
    let mut unjudged: Vec<&str> = Vec::new();
    for r in open {
        let what = match r.scope {
            ReportScope::Rest => "other files",
            _ => r.path.as_str(),
        };
        if !unjudged.contains(&what) {
            unjudged.push(what);
        }
    }
    let mut head = match new {
        0 if reports.is_empty() => {
            "would bring: not judged, as no checker looks at these files".to_string()
        }
        0 => "would bring: no new problems".to_string(),
        n => format!(
            "would bring: {} in {}",
            crate::output::counted(n, "new problem"),
            crate::output::counted(files.len(), "file")
        ),
    };
    if fixed > 0 {
        head.push_str(&format!(
            ", and fix {}",
            crate::output::counted(fixed, "problem")
        ));
    }
    if !unjudged.is_empty() {
        head.push_str(&format!(
            "; not judged for {} (see below), so this is not the whole verdict",
            unjudged.join(", ")
        ));
    }
    match format_reports_as(reports, "this change, if written", "this change") {
        Some(block) => format!("{head}\n{block}"),
        None => head,
    }
}

/// What reports add up to: new problems, the files they are in, problems fixed, and the
/// reports with no comparison (pending or unavailable).
struct Tally<'a> {
    new: usize,
    files: HashSet<std::borrow::Cow<'a, str>>,
    fixed: usize,
    open: Vec<&'a FileReport>,
}

fn tally(reports: &[FileReport]) -> Tally<'_> {
    let mut t = Tally {
        new: 0,
        files: HashSet::new(),
        fixed: 0,
        open: Vec::new(),
    };
    for r in reports.iter().filter(|r| !r.status.is_quiet()) {
        match &r.status {
            FileStatus::Compared {
                new: added,
                fixed: gone,
                ..
            } => {
                t.new += added.len();
                if !added.is_empty() {
                    t.files.insert(r.heading());
                }
                t.fixed += gone;
            }
            FileStatus::Pending(_) | FileStatus::Unavailable { .. } => t.open.push(r),
            FileStatus::Clean => {}
        }
    }
    t
}

/// What a cut block's reports add up to, so the count survives the cut: "2000 files: 2000
/// new problems in 2000 files, 3 fixed, 1 not answered".
fn totals(reports: &[FileReport]) -> String {
    let Tally {
        new,
        files: new_files,
        fixed,
        open,
    } = tally(reports);
    let (new_files, open) = (new_files.len(), open.len());
    let files = reports.iter().filter(|r| !r.status.is_quiet()).count();
    let mut parts = vec![format!(
        "{}: {} in {}",
        crate::output::counted(files, "file"),
        crate::output::counted(new, "new problem"),
        crate::output::counted(new_files, "file")
    )];
    if fixed > 0 {
        parts.push(format!(
            "{} fixed",
            crate::output::counted(fixed, "problem")
        ));
    }
    if open > 0 {
        parts.push(format!(
            "{} without a comparison",
            crate::output::counted(open, "file")
        ));
    }
    parts.join(", ")
}

/// The lines for one file: a summary, then its findings (new ones marked).
fn file_lines<'a>(
    r: &'a FileReport,
    listed: &mut HashSet<(&'a str, usize, &'a str)>,
    was: &str,
) -> Vec<String> {
    let count = |n: usize| crate::output::counted(n, &r.noun);
    let mut items: Vec<(&Finding, bool)> = Vec::new();
    // Per key, how many there are now and how many of them are new, so a second copy of an
    // old problem reads as such.
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut reshaped: HashSet<(usize, &str)> = HashSet::new();
    let summary = match &r.status {
        FileStatus::Compared {
            new,
            still,
            changed,
            fixed,
            unchecked,
        } => {
            let mut parts = Vec::new();
            if !new.is_empty() {
                parts.push(format!(
                    "{} new {}",
                    new.len(),
                    noun_for(new.len(), &r.noun)
                ));
            }
            if !changed.is_empty() {
                parts.push(format!(
                    "{} changed (one of its kind was at this place before {was}; it now reads differently)",
                    count(changed.len())
                ));
            }
            if *fixed > 0 {
                parts.push(format!("fixed {}", count(*fixed)));
                if new.is_empty() && still.is_empty() && changed.is_empty() && *unchecked == 0 {
                    parts.push("none left".into());
                }
            }
            let quiet = new.is_empty() && *fixed == 0 && changed.is_empty();
            match (quiet, still.len()) {
                (_, 0) => {}
                (true, n) => parts.push(format!("still {} (there before {was})", count(n))),
                (false, n) => parts.push(format!("still {n} more (there before {was})")),
            }
            if *unchecked > 0 {
                parts.push(format!(
                    "{} not re-checked while errors stand",
                    crate::output::counted(*unchecked, "warning")
                ));
            }
            for (f, is_new) in new
                .iter()
                .map(|f| (f, true))
                .chain(still.iter().map(|f| (f, false)))
            {
                let c = counts.entry(f.key.as_str()).or_default();
                c.0 += 1;
                c.1 += usize::from(is_new);
            }
            // What the write broke is what the model must see: when there is any, only the old
            // problems of the same kind are listed with it (all its places), the rest counted.
            // With nothing new, the first few old ones are listed to orient.
            items.extend(new.iter().map(|f| (f, true)));
            items.extend(changed.iter().map(|f| (f, false)));
            reshaped.extend(changed.iter().map(|f| (f.line, f.text.as_str())));
            let risen = |f: &&Finding| counts[f.key.as_str()].1 > 0;
            match new.is_empty() {
                false => items.extend(still.iter().filter(risen).map(|f| (f, false))),
                true => items.extend(still.iter().take(OLD_SHOWN).map(|f| (f, false))),
            }
            items.sort_by_key(|(f, _)| f.line);
            parts.join("; ")
        }
        FileStatus::Clean => "clean".to_string(),
        FileStatus::Pending(why) => format!("pending ({why})"),
        FileStatus::Unavailable { why, now } => {
            items.extend(now.iter().map(|f| (f, false)));
            match now.len() {
                0 => format!("unavailable ({why})"),
                n => format!(
                    "unavailable ({why}); {} now, which may predate this change",
                    count(n)
                ),
            }
        }
    };
    let mut lines = vec![format!("  {}: {summary}", r.heading())];
    let (mut hidden, mut repeated) = (0, 0);
    let mut hidden_by_severity: BTreeMap<&str, usize> = BTreeMap::new();
    for (f, is_new) in items {
        if !listed.insert((r.path.as_str(), f.line, f.text.as_str())) {
            repeated += 1;
            continue;
        }
        if lines.len() > ITEMS_SHOWN {
            hidden += 1;
            let word = f.text.split_whitespace().next().unwrap_or("");
            if ["error", "warning", "information", "hint"].contains(&word) {
                *hidden_by_severity.entry(word).or_default() += 1;
            }
            continue;
        }
        let mark = match counts.get(f.key.as_str()) {
            Some(&(now, rose)) if is_new && now > rose => {
                format!(" (new; now {now} of these, was {})", now - rose)
            }
            _ if is_new => " (new)".to_string(),
            _ if reshaped.contains(&(f.line, f.text.as_str())) => " (changed)".to_string(),
            _ => String::new(),
        };
        lines.push(format!("    line {}{mark}: {}", f.line, f.text));
    }
    if hidden > 0 {
        let by: Vec<String> = hidden_by_severity
            .iter()
            .map(|(severity, n)| format!("{n} {severity}"))
            .collect();
        match by.is_empty() {
            true => lines.push(format!("    … and {hidden} more")),
            false => lines.push(format!("    … and {hidden} more ({})", by.join(", "))),
        }
    }
    if repeated > 0 {
        lines.push(format!("    ({repeated} more, listed above)"));
    }
    lines
}

/// The noun for `n` of them: "syntax error", "syntax errors".
fn noun_for(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// An LSP-like finding: its class is the text up to the code's closing bracket.
    fn lsp(line: usize, text: &str) -> Finding {
        let class = text.find(']').map_or(text, |at| &text[..=at]);
        Finding {
            line,
            text: text.to_string(),
            key: text.to_string(),
            class: class.to_string(),
        }
    }

    #[test]
    fn a_finding_of_another_kind_on_the_line_of_a_gone_one_is_new() {
        // An error where only a warning went away is new, written or not.
        let before = [lsp(5, "warning [unused_variables] unused variable: `x`")];
        let after = vec![lsp(5, "error [E0308] mismatched types")];
        let written = FileStatus::compare(&before, after.clone());
        assert!(
            matches!(&written, FileStatus::Compared { new, fixed: 1, changed, .. }
                if new.len() == 1 && changed.is_empty()),
            "{written:?}"
        );
        // Another code is another kind too.
        let before = [lsp(5, "error [reportReturnType] wrong return")];
        let after = vec![lsp(5, "error [reportCallIssue] argument missing")];
        let written = FileStatus::compare(&before, after);
        assert!(
            matches!(&written, FileStatus::Compared { new, fixed: 1, .. } if new.len() == 1),
            "{written:?}"
        );
    }

    #[test]
    fn a_finding_of_the_same_kind_that_reads_differently_is_changed_not_old() {
        let before = [lsp(5, "error [E0308] expected `u32`, found `&str`")];
        let after = vec![lsp(5, "error [E0308] expected `u32`, found `bool`")];
        let written = FileStatus::compare(&before, after.clone());
        let FileStatus::Compared {
            new,
            still,
            changed,
            fixed,
            ..
        } = &written
        else {
            panic!()
        };
        assert!(
            new.is_empty() && still.is_empty() && *fixed == 0,
            "{written:?}"
        );
        assert_eq!(changed, &after);
        let text = format_reports(&[report("lib.rs", written.clone())]).unwrap();
        assert!(
            text.contains(
                "1 syntax error changed (one of its kind was at this place before this write; it now reads differently)"
            ) && text.contains("line 5 (changed): error [E0308]")
                && !text.contains("still"),
            "{text}"
        );
        // In a file nobody wrote, nothing reshapes: the old one went, a new one came.
        let unwritten = FileStatus::compare_unwritten(&before, after);
        assert!(
            matches!(&unwritten, FileStatus::Compared { new, fixed: 1, .. } if new.len() == 1),
            "{unwritten:?}"
        );
    }

    #[test]
    fn warnings_not_re_checked_are_said_in_one_line_and_never_fixed() {
        let status = FileStatus::Compared {
            new: vec![lsp(2, "error [E0308] mismatched types")],
            still: Vec::new(),
            changed: Vec::new(),
            fixed: 0,
            unchecked: 3,
        };
        let text = format_reports(&[report("lib.rs", status)]).unwrap();
        assert!(
            text.contains("1 new syntax error; 3 warnings not re-checked while errors stand"),
            "{text}"
        );
        assert!(!text.contains("fixed"), "{text}");
    }

    fn f(line: usize, text: &str, key: &str) -> Finding {
        Finding {
            line,
            text: text.into(),
            key: key.into(),
            class: "syntax error".into(),
        }
    }

    fn report(path: &str, status: FileStatus) -> FileReport {
        FileReport {
            path: path.into(),
            scope: ReportScope::Changed,
            source: ReportSource::hook("syntax (tree-sitter)"),
            noun: "syntax error".into(),
            status,
        }
    }

    /// A file the write did not change is said so in its heading, and a server's other files
    /// together are one line with no path.
    #[test]
    fn a_report_is_headed_by_its_scope() {
        let pending = || FileStatus::Pending("later".into());
        let mut other = report("lib/a.py", pending());
        other.scope = ReportScope::Other;
        let mut rest = report("", pending());
        rest.scope = ReportScope::Rest;
        let text = format_reports(&[report("lib/core.py", pending()), other, rest]).unwrap();
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(
            lines,
            [
                "  lib/core.py: pending (later)",
                "  lib/a.py (another file, not written): pending (later)",
                "  other files: pending (later)",
            ]
        );
    }

    #[test]
    fn a_rise_in_a_key_is_new_a_fall_is_fixed_and_the_rest_is_still() {
        let before = [
            f(3, "at `def f(:`", "parameters"),
            f(9, "missing `)`", "call"),
        ];
        // The first error changed shape but kept its key; the second is gone; one is new.
        let after = vec![f(3, "at `def f(x:`", "parameters"), f(12, "at `]`", "list")];
        let FileStatus::Compared {
            new, still, fixed, ..
        } = FileStatus::compare(&before, after)
        else {
            panic!()
        };
        assert_eq!(new, [f(12, "at `]`", "list")]);
        assert_eq!(still, [f(3, "at `def f(x:`", "parameters")]);
        assert_eq!(fixed, 1);
    }

    #[test]
    fn a_syntax_error_that_changed_shape_on_its_line_is_changed_not_new() {
        let before = [f(1, "missing `)`", "parameters")];
        let after = vec![f(1, "at `def f(x:`", "module")];
        let FileStatus::Compared {
            new,
            still,
            changed,
            fixed,
            ..
        } = FileStatus::compare(&before, after)
        else {
            panic!()
        };
        assert!(new.is_empty() && still.is_empty(), "{new:?} {still:?}");
        assert_eq!(changed, [f(1, "at `def f(x:`", "module")]);
        assert_eq!(fixed, 0);
    }

    #[test]
    fn a_flood_is_cut_to_a_few_per_file_and_about_four_kilobytes() {
        let many: Vec<Finding> = (1..=300)
            .map(|n| f(n, &"x".repeat(60), &format!("k{n}")))
            .collect();
        let reports: Vec<FileReport> = (0..20)
            .map(|i| report(&format!("f{i}.py"), FileStatus::compare(&[], many.clone())))
            .collect();
        let text = format_reports(&reports).unwrap();
        assert!(text.len() <= 4096 + 80, "{}", text.len());
        assert!(text.contains("  f0.py: 300 new syntax errors"), "{text}");
        assert!(text.contains("… and 290 more"), "{text}");
        // What was cut still counts: the totals close the block.
        assert!(
            text.ends_with(
                "more lines cut to keep this short; in all, 20 files: 6000 new problems in 20 \
                 files"
            ),
            "{text}"
        );
    }

    #[test]
    fn within_a_key_the_finding_with_unseen_text_is_the_new_one() {
        let before = [f(5, "at `x`", "block")];
        let after = vec![f(2, "at `y`", "block"), f(7, "at `x`", "block")];
        let FileStatus::Compared { new, still, .. } = FileStatus::compare(&before, after) else {
            panic!()
        };
        assert_eq!(new, [f(2, "at `y`", "block")]);
        assert_eq!(still, [f(7, "at `x`", "block")]);
    }

    #[test]
    fn clean_files_say_nothing_and_fixes_say_so() {
        let clean = FileStatus::compare(&[], Vec::new());
        assert_eq!(format_reports(&[report("a.py", clean)]), None);
        let fixed = FileStatus::compare(&[f(1, "at `(`", "module")], Vec::new());
        insta::assert_snapshot!(format_reports(&[report("a.py", fixed)]).unwrap());
    }

    #[test]
    fn every_status_in_one_report_with_duplicates_merged() {
        let mixed = FileStatus::Compared {
            new: vec![f(4, "at `]`", "list")],
            still: vec![f(1, "missing `)`", "call")],
            changed: Vec::new(),
            fixed: 0,
            unchecked: 0,
        };
        let still = FileStatus::compare(&[f(2, "at `:`", "if")], vec![f(3, "at `:`", "if")]);
        let late = FileStatus::Unavailable {
            why: "no baseline was taken in time".into(),
            now: vec![f(8, "at `}`", "block")],
        };
        let lsp = FileReport {
            path: "a.py".into(),
            scope: ReportScope::Changed,
            source: ReportSource::program("diagnostics", "pyright"),
            noun: "error".into(),
            // The same problem the syntax check listed is not listed twice.
            status: FileStatus::Compared {
                new: vec![
                    f(4, "at `]`", "list"),
                    f(6, "`y` is not defined", "undefined"),
                ],
                still: Vec::new(),
                changed: Vec::new(),
                fixed: 0,
                unchecked: 0,
            },
        };
        let reports = [
            report("a.py", mixed),
            report("b.py", still),
            report("c.py", late),
            report(
                "d.py",
                FileStatus::Pending("the server is still indexing".into()),
            ),
            lsp,
        ];
        insta::assert_snapshot!(format_reports(&reports).unwrap());
    }

    /// A verdict counts what a change would bring, says what no preview judged, and calls
    /// what was there before "before this change": nothing was written.
    #[test]
    fn a_verdict_counts_new_problems_and_never_hides_a_file_it_did_not_judge() {
        let old = f(1, "old problem", "old");
        let compared = FileStatus::Compared {
            new: vec![f(2, "new problem", "new")],
            still: vec![old],
            changed: Vec::new(),
            fixed: 0,
            unchecked: 0,
        };
        let why = "the server was busy".to_string();
        let unjudged = FileStatus::Unavailable {
            why,
            now: Vec::new(),
        };
        let reports = [report("a.py", compared), report("b.py", unjudged)];
        let text = verdict(&reports);
        assert!(
            text.starts_with("would bring: 1 new problem in 1 file; not judged for b.py"),
            "{text}"
        );
        assert!(
            text.contains("still 1 more (there before this change)"),
            "{text}"
        );
        assert!(!text.contains("this write"), "{text}");
        assert_eq!(
            verdict(&[]),
            "would bring: not judged, as no checker looks at these files"
        );
    }
}
