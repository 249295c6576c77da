//! The lines every structural result ends with: what was searched and what was left out, so
//! that "0 matches" can be trusted, and for an empty result a hint at what to change.

use tether_base::cut_line;

use crate::budget::MAX_TREE_DEPTH;
use crate::search::SearchStats;
use crate::walk::{SkipReason, SkippedFolders};

/// Characters of one fixed text quoted in a hint.
const LITERAL_CHARS: usize = 40;

/// Fixed texts quoted in one hint.
const LITERALS_SHOWN: usize = 5;

/// `n` and the noun, singular or plural.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What was searched and skipped: one line, and a second when folders were left out.
pub(crate) fn searched_line(stats: &SearchStats, lang: &str, target: &str) -> String {
    let mut s = format!(
        "searched {} under {target} ({} ruled out by the pattern's fixed text, {} parsed, {} from cache)",
        count(
            stats.searched,
            &format!("{lang} file"),
            &format!("{lang} files")
        ),
        stats.prefiltered,
        stats.parsed,
        stats.cached
    );
    if stats.failed > 0 {
        s.push_str(&format!(
            "; {} unreadable or not UTF-8, not searched",
            stats.failed
        ));
    }
    if stats.syntax_errors > 0 {
        let (verb, was) = if stats.syntax_errors == 1 {
            ("contains", "was")
        } else {
            ("contain", "were")
        };
        s.push_str(&format!(
            "; {} {verb} syntax errors and {was} searched anyway",
            stats.syntax_errors
        ));
    }
    let mut skipped_files = Vec::new();
    if stats.too_large > 0 {
        skipped_files.push(format!("{} over 2 MiB", stats.too_large));
    }
    if stats.binary > 0 {
        skipped_files.push(format!("{} binary", stats.binary));
    }
    if !skipped_files.is_empty() {
        s.push_str(&format!("; skipped {}", skipped_files.join(" and ")));
    }
    if stats.too_deep > 0 {
        s.push_str(&format!(
            "; skipped {} nested deeper than {MAX_TREE_DEPTH} syntax-tree levels (generated, \
             not searchable structurally; use a text search there)",
            stats.too_deep
        ));
    }
    if let Some(folders) = skipped_folders_line(&stats.skipped_folders) {
        s.push('\n');
        s.push_str(&folders);
    }
    if let Some((n, rule, file, line)) = &stats.all_ignored {
        let at = match line {
            0 => file.clone(),
            l => format!("{file}, line {l}"),
        };
        let (files, are) = match n {
            1 => ("the 1 file".to_string(), "is"),
            n => (format!("all {n} files"), "are"),
        };
        s.push_str(&format!(
            "\n{files} of this language here {are} excluded by ignore files: the first by the \
             rule `{rule}` ({at}). Ignore files apply even outside a git checkout; to search \
             them, name a folder or file below the rule's reach in `path`, or remove the rule"
        ));
    }
    s
}

/// "skipped 2 folders: 1 virtual environment (.venv), 1 node_modules; …", or None.
fn skipped_folders_line(skipped: &SkippedFolders) -> Option<String> {
    if skipped.total() == 0 {
        return None;
    }
    let groups: Vec<String> = skipped
        .0
        .iter()
        .map(|(reason, group)| {
            let noun = match reason {
                SkipReason::VirtualEnv => {
                    count(group.count, "virtual environment", "virtual environments")
                }
                SkipReason::NodeModules => format!("{} node_modules", group.count),
                SkipReason::Cache => count(group.count, "cache folder", "cache folders"),
                SkipReason::DotFolder => count(group.count, "dot-folder", "dot-folders"),
            };
            // A node_modules folder's name is its reason; others name where they are.
            let mut examples = group.examples.join(", ");
            if group.count > group.examples.len() {
                examples.push_str(", …");
            }
            match reason {
                SkipReason::NodeModules => noun,
                _ => format!("{noun} ({examples})"),
            }
        })
        .collect();
    let dot = skipped.0.contains_key(&SkipReason::DotFolder);
    let vendored = skipped.0.keys().any(|r| *r != SkipReason::DotFolder);
    let advice = match (dot, vendored) {
        (true, false) => "pass `hidden: true` to include dot-folders",
        (false, _) => "name one in `path` to search it",
        (true, true) => "pass `hidden: true` to include dot-folders, or name a folder in `path`",
    };
    let what = match groups.as_slice() {
        [one] => one.clone(),
        _ => format!(
            "{}: {}",
            count(skipped.total(), "folder", "folders"),
            groups.join(", ")
        ),
    };
    Some(format!("skipped {what}; {advice}"))
}

/// For a search that matched nothing: whether the spelling or the structure is off, as far
/// as the fixed-text prefilter can tell. None when no file was searched at all or nothing
/// can be said.
pub(crate) fn no_match_hint(stats: &SearchStats) -> Option<String> {
    if stats.searched == 0 {
        return None;
    }
    let quote = |lits: &[&String]| {
        let mut shown: Vec<String> = lits
            .iter()
            .take(LITERALS_SHOWN)
            .map(|l| format!("`{}`", cut_line(l, LITERAL_CHARS)))
            .collect();
        if lits.len() > LITERALS_SHOWN {
            shown.push(format!("{} more", lits.len() - LITERALS_SHOWN));
        }
        shown.join(", ")
    };
    let literals: Vec<&String> = stats.literals.iter().collect();
    if stats.near_misses > 0 {
        let mut files = stats.near_miss_examples.join(", ");
        if stats.near_misses > stats.near_miss_examples.len() {
            files.push_str(", …");
        }
        let one = stats.near_misses == 1;
        let held = if literals.is_empty() {
            let was = if one { "was" } else { "were" };
            format!("{was} parsed (the pattern has no fixed text to check the spelling of)")
        } else {
            format!(
                "contain{} all of the pattern's fixed text ({})",
                if one { "s" } else { "" },
                quote(&literals)
            )
        };
        if stats.in_macro_arguments > 0 {
            return Some(format!(
                "hint: {} {held}, but in {} of them it sits inside a macro call's arguments \
                 ({files}). Those are a token tree the grammar does not parse into code, so no \
                 pattern matches inside them: search for the macro call itself, such as \
                 `assert!($$$ARGS)` or `vec![$$$ITEMS]`, and read its arguments",
                count(stats.near_misses, "file", "files"),
                stats.in_macro_arguments,
            ));
        }
        return Some(format!(
            "hint: {} {held}, but no code of this shape ({files}): the structure is off, not \
             the spelling. Compare the pattern with that code; put `$X` or `$$$ITEMS` where it \
             differs, or search for a smaller part",
            count(stats.near_misses, "file", "files"),
        ));
    }
    let nowhere: Vec<&String> = stats
        .literals
        .iter()
        .zip(&stats.literal_seen)
        .filter(|(_, seen)| !**seen)
        .map(|(lit, _)| lit)
        .collect();
    if !nowhere.is_empty() {
        return Some(format!(
            "hint: no searched file contains {}, fixed text of the pattern: check its spelling \
             (names and keywords match exactly), or search a fragment without it",
            quote(&nowhere)
        ));
    }
    (!literals.is_empty()).then(|| {
        format!(
            "hint: each fixed text of the pattern ({}) occurs somewhere, but no file holds them \
             all: check the spelling, or search for the parts separately",
            quote(&literals)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::SkippedGroup;

    fn stats() -> SearchStats {
        SearchStats {
            searched: 3,
            prefiltered: 1,
            parsed: 2,
            ..SearchStats::default()
        }
    }

    fn group(count: usize, examples: &[&str]) -> SkippedGroup {
        SkippedGroup {
            count,
            examples: examples.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn the_footer_names_each_skipped_kind_once() {
        let mut s = stats();
        s.skipped_folders = SkippedFolders(
            [
                (SkipReason::VirtualEnv, group(1, &[".venv"])),
                (
                    SkipReason::NodeModules,
                    group(2, &["node_modules", "web/node_modules"]),
                ),
                (SkipReason::Cache, group(1, &["target"])),
                (
                    SkipReason::DotFolder,
                    group(4, &[".cache", ".github", ".idea"]),
                ),
            ]
            .into_iter()
            .collect(),
        );
        insta::assert_snapshot!(searched_line(&s, "python", "."));
        let mut one = stats();
        one.searched = 1;
        one.failed = 1;
        one.syntax_errors = 1;
        one.too_large = 1;
        one.skipped_folders = SkippedFolders(
            [(SkipReason::DotFolder, group(1, &[".github"]))]
                .into_iter()
                .collect(),
        );
        insta::assert_snapshot!(searched_line(&one, "rust", "src"));
        let mut venv = stats();
        venv.skipped_folders = SkippedFolders(
            [(SkipReason::VirtualEnv, group(1, &[".venv"]))]
                .into_iter()
                .collect(),
        );
        insta::assert_snapshot!(searched_line(&venv, "python", "."));
    }

    #[test]
    fn hints_tell_structure_from_spelling() {
        let lits = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let structure = SearchStats {
            near_misses: 4,
            near_miss_examples: lits(&["a.py", "b.py", "c.py"]),
            literals: lits(&["def", "handler"]),
            literal_seen: vec![true, true],
            ..stats()
        };
        insta::assert_snapshot!(no_match_hint(&structure).unwrap());
        let spelling = SearchStats {
            literals: lits(&["def", "handlr"]),
            literal_seen: vec![true, false],
            ..stats()
        };
        insta::assert_snapshot!(no_match_hint(&spelling).unwrap());
        let apart = SearchStats {
            literals: lits(&["alpha", "beta"]),
            literal_seen: vec![true, true],
            ..stats()
        };
        insta::assert_snapshot!(no_match_hint(&apart).unwrap());
        let shapeless = SearchStats {
            near_misses: 1,
            near_miss_examples: lits(&["a.py"]),
            ..stats()
        };
        insta::assert_snapshot!(no_match_hint(&shapeless).unwrap());
        let nothing_searched = SearchStats::default();
        assert_eq!(no_match_hint(&nothing_searched), None);
    }
}
