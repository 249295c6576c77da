//! "Did you mean …?" for a path that does not exist: the workspace's files (or folders) whose
//! name and path are most like it, found by a walk that respects .gitignore and is bounded in
//! entries and time, so a typo costs one call instead of a listing.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::Workspace;

use similar::TextDiff;

/// Entries looked at before the walk stops.
const MAX_ENTRIES: usize = 20_000;
/// Time the walk may take before it stops with what it has.
const MAX_WALK: Duration = Duration::from_millis(300);
/// Suggestions shown at most.
const MAX_SUGGESTIONS: usize = 3;
/// Below this score a path is not suggested.
const MIN_SCORE: f64 = 0.7;
/// Names shorter than this count their edits as if they were this long, so one typo in a
/// three-letter folder name still reads as close.
const SHORT_NAME: usize = 5;

/// What kind of entry to suggest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Regular files.
    File,
    /// Folders.
    Folder,
}

/// Up to three workspace paths (relative, `/`-separated) most like `wanted`, best first.
/// `wanted` is relative to the workspace root; anything else gets no suggestion.
pub fn similar_paths(ws: &Workspace, wanted: &str, kind: Kind) -> Vec<String> {
    let wanted = wanted.trim_start_matches("./").trim_end_matches('/');
    if wanted.is_empty() || Path::new(wanted).is_absolute() || wanted.starts_with("../") {
        return Vec::new();
    }
    let wanted_lower = wanted.to_lowercase();
    let wanted_name = file_name(&wanted_lower);
    let mut scored: Vec<(f64, String)> = Vec::new();
    let started = Instant::now();
    let walk = ignore::WalkBuilder::new(ws.root())
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| {
            let dir = e.file_type().is_some_and(|t| t.is_dir());
            let vcs = matches!(e.file_name().to_str(), Some(".git" | ".tether"));
            let installed = dir && e.depth() > 0 && not_the_projects(e.path());
            !vcs && !installed
        })
        .build();
    for entry in walk.take(MAX_ENTRIES) {
        if started.elapsed() > MAX_WALK {
            break;
        }
        let Ok(entry) = entry else { continue };
        let is_kind = entry.file_type().is_some_and(|t| match kind {
            Kind::File => t.is_file(),
            Kind::Folder => t.is_dir(),
        });
        if !is_kind || entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(ws.root()) else {
            continue;
        };
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if rel == wanted {
            continue;
        }
        let lower = rel.to_lowercase();
        let score = 0.6 * name_similarity(wanted_name, file_name(&lower))
            + 0.4 * f64::from(TextDiff::from_chars(wanted_lower.as_str(), &lower).ratio());
        if score >= MIN_SCORE {
            scored.push((score, rel));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, p)| p)
        .collect()
}

/// Whether a folder holds what was installed or generated, not the project's own files: a
/// virtual environment, installed packages, vendored code or a cache. A file there is never
/// what a model meant.
fn not_the_projects(dir: &Path) -> bool {
    let by_name = matches!(
        dir.file_name().and_then(|n| n.to_str()),
        Some("node_modules" | "site-packages" | "vendor" | "__pycache__")
    );
    by_name || dir.join("pyvenv.cfg").exists() || dir.join("CACHEDIR.TAG").exists()
}

/// How alike two file names are, from 0 to 1: the better of their matching-characters ratio
/// and their typo distance (a swap of neighbours counts as one edit) against their length.
fn name_similarity(a: &str, b: &str) -> f64 {
    let ratio = f64::from(TextDiff::from_chars(a, b).ratio());
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len()).max(SHORT_NAME);
    let typos = 1.0 - typo_distance(&a, &b) as f64 / longest as f64;
    ratio.max(typos)
}

/// Edits (insert, delete, replace, swap of neighbours) from `a` to `b`: the optimal string
/// alignment distance.
fn typo_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * width + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * width + j] + 1)
                    .min(d[i * width + j - 1] + 1)
                    .min(d[(i - 1) * width + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * width + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * width + b.len()]
}

/// The last component of a `/`-separated path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// " (did you mean a, b or c?)" for a message, or "" when there is nothing to suggest.
pub fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!(" (did you mean {one}?)"),
        [init @ .., last] => format!(" (did you mean {} or {last}?)", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x\n").unwrap();
        }
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_typo_in_the_name_or_the_folder_is_suggested() {
        let (_d, ws) = tree(&[
            "src/main.rs",
            "src/lib.rs",
            "docs/guide.md",
            "tests/main.rs",
        ]);
        let got = similar_paths(&ws, "src/mian.rs", Kind::File);
        assert_eq!(
            got.first().map(String::as_str),
            Some("src/main.rs"),
            "{got:?}"
        );
        let got = similar_paths(&ws, "scr/lib.rs", Kind::File);
        assert_eq!(got, ["src/lib.rs"]);
        let got = similar_paths(&ws, "./docs/Guide.md", Kind::File);
        assert_eq!(got, ["docs/guide.md"]);
        assert_eq!(similar_paths(&ws, "scr", Kind::Folder), ["src"]);
    }

    #[test]
    fn unrelated_ignored_and_outside_paths_get_nothing() {
        let (d, ws) = tree(&["src/main.rs", "target/debug/mian.rs"]);
        std::fs::write(d.path().join(".gitignore"), "target/\n").unwrap();
        assert!(similar_paths(&ws, "README.md", Kind::File).is_empty());
        assert_eq!(
            similar_paths(&ws, "target/debug/main.rs", Kind::File),
            ["src/main.rs"]
        );
        assert!(similar_paths(&ws, "/etc/mian.rs", Kind::File).is_empty());
        assert!(similar_paths(&ws, "../src/main.rs", Kind::File).is_empty());
    }

    #[test]
    fn a_bare_name_finds_its_folder_but_never_a_virtual_environment_or_vendored_copy() {
        let (d, ws) = tree(&[
            "src/pkg/timed.py",
            "env/lib/python3/site-packages/pkg/timed.py",
            "vendor/pkg/timed.py",
            "web/node_modules/timed.py",
        ]);
        std::fs::write(d.path().join("env/pyvenv.cfg"), "home = /usr\n").unwrap();
        assert_eq!(
            similar_paths(&ws, "timed.py", Kind::File),
            ["src/pkg/timed.py"]
        );
    }

    #[test]
    fn typos_are_counted_as_edits() {
        let d = |a: &str, b: &str| {
            typo_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("main.rs", "mian.rs"), 1);
        assert_eq!(d("scr", "src"), 1);
        assert_eq!(d("", "abc"), 3);
        assert_eq!(d("kitten", "sitting"), 3);
        assert!(name_similarity("lib.rs", "mian.rs") < 0.7);
    }

    #[test]
    fn suggestions_read_as_a_sentence() {
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a".into()]), " (did you mean a?)");
        let three = ["a".to_string(), "b".into(), "c".into()];
        assert_eq!(did_you_mean(&three), " (did you mean a, b or c?)");
    }
}
