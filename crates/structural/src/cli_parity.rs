//! Tether against the ast-grep CLI (`@ast-grep/cli`, installed by `scripts/test` into
//! `target/ast-grep-cli`): for every bundled language, a function, a method and a field
//! pattern must match the same byte ranges as the CLI's queries in `testdata/cli_parity.toml`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::Deserialize;

use crate::budget::{Budget, Limits, STACK_BYTES};
use crate::cache::TreeCache;
use crate::lang::Lang;
use crate::pattern::compile;
use crate::search::{Io, Mode, search};

const DATA: &str = include_str!("../testdata/cli_parity.toml");

#[derive(Deserialize)]
struct Data {
    lang: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    id: String,
    file: String,
    source: String,
    function: Check,
    method: Check,
    field: Check,
}

/// One declaration kind: a pattern and the CLI queries it must agree with, or why the
/// language has no such declaration.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Check {
    pattern: Option<String>,
    #[serde(default)]
    cli: Vec<Query>,
    none: Option<String>,
}

/// A CLI query: the pattern itself, or put into `context` at `@@` with a `selector`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Query {
    context: Option<String>,
    selector: Option<String>,
}

/// One match: its first line (1-based) and byte range.
type Found = BTreeSet<(usize, usize, usize)>;

/// The CLI's binary: where `scripts/test` says (it must be there), else where it installs it;
/// None (the test is skipped, saying why) only outside `scripts/test` when it is absent.
fn cli_binary() -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("TETHER_AST_GREP_CLI") {
        let given = PathBuf::from(given);
        assert!(
            given.is_file(),
            "TETHER_AST_GREP_CLI names {}, which is missing: scripts/test installs @ast-grep/cli \
             there from npm",
            given.display()
        );
        return Some(given);
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/ast-grep-cli/node_modules/.bin/ast-grep");
    if default.is_file() {
        return Some(default);
    }
    eprintln!(
        "SKIPPED: the ast-grep CLI is not at {}; run scripts/test, or `npm install --prefix \
         target/ast-grep-cli @ast-grep/cli@~0.51.1`, to compare tether with it",
        default.display()
    );
    None
}

/// What the CLI finds in `file` with every query of `check`, together.
fn cli_finds(
    cli: &Path,
    dir: &Path,
    case: &Case,
    pattern: &str,
    queries: &[Query],
) -> Result<Found, String> {
    let rules: Vec<String> = queries
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let rule = match (&q.context, &q.selector) {
                (Some(context), Some(selector)) => serde_json::json!({
                    "context": context.replace("@@", pattern),
                    "selector": selector,
                }),
                (None, None) => serde_json::json!(pattern),
                _ => panic!("{}: a query needs both context and selector", case.id),
            };
            // JSON is YAML, so each rule needs no escaping of its own.
            serde_json::json!({"id": format!("q{i}"), "language": case.id, "rule": {"pattern": rule}})
                .to_string()
        })
        .collect();
    let out = std::process::Command::new(cli)
        .args(["scan", "--json=compact", "--inline-rules"])
        .arg(rules.join("\n---\n"))
        .arg(&case.file)
        .current_dir(dir)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(format!(
            "the CLI refuses its queries: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let matches: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    Ok(matches
        .iter()
        .map(|m| {
            let r = &m["range"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap() as usize;
            (
                n(&r["start"]["line"]) + 1,
                n(&r["byteOffset"]["start"]),
                n(&r["byteOffset"]["end"]),
            )
        })
        .collect())
}

/// What tether's own search (prefilter, kind index and all) finds in `path`.
fn tether_finds(path: &Path, lang: Lang, pattern: &str) -> Result<Found, String> {
    let compiled = compile(pattern, lang).map_err(|e| e.message)?;
    let stop = AtomicBool::new(false);
    let budget = Budget::new(Limits::default(), &stop);
    let display = |p: &Path| p.display().to_string();
    let open = |p: &Path| std::fs::File::open(p);
    let io = Io {
        display: &display,
        open: &open,
    };
    let find = Mode::Find { keep: usize::MAX };
    let cache = TreeCache::new(1 << 20);
    let (found, _) = search(&[path.to_path_buf()], &compiled, find, &cache, &io, &budget)
        .map_err(|e| format!("{e:?}"))?;
    Ok(found
        .iter()
        .flat_map(|f| &f.matches)
        .map(|m| (m.line, m.range.start, m.range.end))
        .collect())
}

#[test]
fn functions_methods_and_fields_match_what_the_ast_grep_cli_finds() {
    let Some(cli) = cli_binary() else { return };
    let data: Data = toml::from_str(DATA).unwrap();
    let covered: BTreeSet<&str> = data.lang.iter().map(|c| c.id.as_str()).collect();
    let bundled: BTreeSet<&str> = Lang::ids().into_iter().collect();
    assert_eq!(covered, bundled, "every bundled language needs its case");
    let disagreements = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(s, || {
                let mut wrong = Vec::new();
                for case in &data.lang {
                    let lang = Lang::by_id(&case.id).unwrap();
                    let dir = tempfile::tempdir().unwrap();
                    let path = dir.path().join(&case.file);
                    std::fs::write(&path, &case.source).unwrap();
                    for (what, check) in [
                        ("function", &case.function),
                        ("method", &case.method),
                        ("field", &case.field),
                    ] {
                        let Some(pattern) = &check.pattern else {
                            let why = check.none.as_deref().unwrap_or("");
                            assert!(!why.is_empty(), "{} {what}: a pattern or `none`", case.id);
                            continue;
                        };
                        let expected = match cli_finds(&cli, dir.path(), case, pattern, &check.cli)
                        {
                            Ok(expected) => expected,
                            Err(e) => {
                                wrong.push(format!("{} {what} {pattern:?}: {e}", case.id));
                                continue;
                            }
                        };
                        if expected.is_empty() {
                            wrong.push(format!(
                                "{} {what} {pattern:?}: the CLI finds nothing, so this case \
                                 compares nothing",
                                case.id
                            ));
                            continue;
                        }
                        match tether_finds(&path, lang, pattern) {
                            Ok(found) if found == expected => {}
                            Ok(found) => wrong.push(format!(
                                "{} {what} {pattern:?}: the CLI finds (line, start, end) \
                                 {expected:?}, tether {found:?}",
                                case.id
                            )),
                            Err(e) => wrong.push(format!("{} {what} {pattern:?}: {e}", case.id)),
                        }
                    }
                }
                wrong
            })
            .unwrap()
            .join()
            .unwrap()
    });
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
