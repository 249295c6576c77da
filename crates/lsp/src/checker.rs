//! `diagnostics "*"`: the project's own checker for each language present (cargo check,
//! pyright, tsc, go vet, dart analyze), run with a deadline after which its process group is
//! killed, and read into one list in the same format as a file's diagnostics.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tether_base::cut_line;
use tether_proc::{ChildSpec, run_with_deadline};

use crate::catalog::{Checker, checkers};
use crate::error::LspError;
use crate::protocol::{Range, lenient, list};

/// Problems listed at most, over all languages.
const CAP: usize = 100;

/// One problem a checker reported.
struct Problem {
    path: String,
    line: u64,
    severity: &'static str,
    message: String,
}

/// Reads a checker's stdout and stderr, for a project root, into problems.
type Reader = fn(&str, &str, &Path) -> Vec<Problem>;

/// How a checker's output is read into problems, by the name the catalog gives it.
fn reader(name: &str) -> Option<Reader> {
    Some(match name {
        "cargo" => read_cargo,
        "pyright" => read_pyright,
        "tsc" => read_tsc,
        "colon_lines" => read_colon_lines,
        "dart" => read_dart,
        _ => return None,
    })
}

impl Checker {
    /// Whether the checker's language is present at `root`.
    fn applies(&self, root: &Path) -> bool {
        let project = self
            .project
            .as_deref()
            .and_then(tether_toolchain::project_markers);
        let markers = self
            .markers
            .iter()
            .map(String::as_str)
            .chain(project.unwrap_or_default().iter().copied());
        markers.into_iter().any(|m| root.join(m).exists())
    }

    /// `command` with its program resolved on PATH; `None` when it is not installed.
    fn argv(&self, command: &[String]) -> Option<Vec<String>> {
        let candidates = match self.binaries.as_slice() {
            [] => command.get(..1)?,
            names => names,
        };
        let program = candidates.iter().find(|b| which::which(b).is_ok())?.clone();
        let mut argv = command.to_vec();
        argv[0] = program;
        Some(argv)
    }
}

/// Runs the checker of every language present at `root`, one after the other, each within
/// `deadline`, and renders what they found.
pub async fn check_project(root: &Path, deadline: Duration) -> String {
    let mut sections = Vec::new();
    let mut all: Vec<Problem> = Vec::new();
    for c in checkers() {
        if !c.applies(root) {
            continue;
        }
        let Some(argv) = c.argv(&c.command) else {
            sections.push(format!("{}: the checker is not installed", c.name));
            continue;
        };
        let start = std::time::Instant::now();
        let mut found = match run_one(c, argv, root, deadline).await {
            Ok(found) => found,
            Err(why) => {
                sections.push(format!("{}: {why}", c.name));
                continue;
            }
        };
        let mut header = format!("{}: {}", c.name, counts(&found));
        let has_errors = found.iter().any(|p| p.severity == "error");
        if let (Some(narrower), true) = (&c.narrower, has_errors) {
            let wider = &narrower.without;
            let left = deadline.saturating_sub(start.elapsed());
            let narrow = match c.argv(&narrower.command) {
                Some(argv) => run_one(c, argv, root, left).await,
                None => Err(LspError::refused("the checker is not installed")),
            };
            match narrow {
                Ok(narrow) => {
                    let key = |p: &Problem| (p.path.clone(), p.line, p.message.clone());
                    let there: std::collections::HashSet<_> = narrow.iter().map(key).collect();
                    let wide: std::collections::HashSet<_> = found.iter().map(key).collect();
                    header.push_str(&format!("; without {wider}: {}", counts(&narrow)));
                    for p in found.iter_mut().filter(|p| !there.contains(&key(p))) {
                        p.message.push_str(&format!(" (only with {wider})"));
                    }
                    // What only the narrower run found is listed too: a count with nothing
                    // under it sends the model looking.
                    for mut p in narrow.into_iter().filter(|p| !wide.contains(&key(p))) {
                        p.message.push_str(&format!(" (only without {wider})"));
                        found.push(p);
                    }
                }
                Err(why) => header.push_str(&format!("; without {wider}: not checked ({why})")),
            }
        }
        sections.push(header);
        all.extend(found);
    }
    if sections.is_empty() {
        return "no project checker applies here: no Cargo.toml, pyproject.toml (or other \
                Python marker), tsconfig.json, go.mod or pubspec.yaml at the workspace root"
            .into();
    }
    all.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    let mut out = sections;
    for p in all.iter().take(CAP) {
        out.push(format!(
            "{}:{}  {}  {}",
            p.path,
            p.line,
            p.severity,
            cut_line(&p.message, 300)
        ));
    }
    if all.len() > CAP {
        out.push(format!("… {} more not shown (cap {CAP})", all.len() - CAP));
    }
    out.join("\n")
}

/// One checker run within `deadline`, its findings read and deduplicated; `Err` says why
/// there are none.
async fn run_one(
    c: &Checker,
    argv: Vec<String>,
    root: &Path,
    deadline: Duration,
) -> Result<Vec<Problem>, LspError> {
    let spec = ChildSpec {
        argv,
        cwd: Some(root.to_path_buf()),
        env: vec![("CARGO_TERM_COLOR".into(), "never".into())],
    };
    match run_with_deadline(&spec, deadline).await {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let read = reader(&c.reader)
                .ok_or_else(|| LspError::refused(format!("no reader `{}`", c.reader)))?;
            let mut found = read(&stdout, &stderr, root);
            // Every target checks the lib again (its test harness): one error, not two.
            let mut seen = std::collections::HashSet::new();
            found.retain(|p| seen.insert((p.path.clone(), p.line, p.severity, p.message.clone())));
            Ok(found)
        }
        Err(e) => Err(LspError::Checker(std::sync::Arc::new(e))),
    }
}

fn counts(found: &[Problem]) -> String {
    let errors = found.iter().filter(|p| p.severity == "error").count();
    let warnings = found.len() - errors;
    match (errors, warnings) {
        (0, 0) => "no errors or warnings".into(),
        (e, 0) => tether_tool::counted(e, "error"),
        (0, w) => tether_tool::counted(w, "warning"),
        (e, w) => format!(
            "{}, {}",
            tether_tool::counted(e, "error"),
            tether_tool::counted(w, "warning")
        ),
    }
}

/// A checker's path, relative to the root when it lies inside.
fn rel(root: &Path, path: &str) -> String {
    let p = PathBuf::from(path);
    let p = if p.is_absolute() { p } else { root.join(p) };
    p.strip_prefix(root)
        .map_or(path.to_string(), |r| r.display().to_string())
}

fn severity(level: &str) -> &'static str {
    match level {
        "error" | "fatal" | "ERROR" => "error",
        _ => "warning",
    }
}

/// One line of `cargo check --message-format=json`, of what tether reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CargoLine {
    #[serde(deserialize_with = "lenient")]
    reason: String,
    #[serde(deserialize_with = "lenient")]
    message: CargoMessage,
}

/// A compiler message: its level, text, code and spans.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CargoMessage {
    #[serde(deserialize_with = "lenient")]
    level: String,
    #[serde(deserialize_with = "lenient")]
    message: String,
    #[serde(deserialize_with = "lenient")]
    code: Option<CargoCode>,
    #[serde(deserialize_with = "list")]
    spans: Vec<CargoSpan>,
}

/// A compiler message's code (`E0308`).
#[derive(Default, Deserialize)]
#[serde(default)]
struct CargoCode {
    #[serde(deserialize_with = "lenient")]
    code: Option<String>,
}

/// Where a compiler message points.
#[derive(Default, Deserialize)]
#[serde(default)]
struct CargoSpan {
    #[serde(deserialize_with = "lenient")]
    is_primary: bool,
    #[serde(deserialize_with = "lenient")]
    file_name: Option<String>,
    #[serde(deserialize_with = "lenient")]
    line_start: u64,
}

fn read_cargo(stdout: &str, _: &str, root: &Path) -> Vec<Problem> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<CargoLine>(line) else {
            continue;
        };
        if v.reason != "compiler-message" {
            continue;
        }
        let m = v.message;
        let level = m.level.as_str();
        if !matches!(level, "error" | "warning") {
            continue;
        }
        let Some(span) = m.spans.iter().find(|s| s.is_primary) else {
            continue;
        };
        let code = m
            .code
            .and_then(|c| c.code)
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        out.push(Problem {
            path: rel(root, span.file_name.as_deref().unwrap_or("?")),
            line: span.line_start,
            severity: severity(level),
            message: format!("{}{code}", m.message),
        });
    }
    out
}

/// `pyright --outputjson`, of what tether reads.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PyrightReport {
    #[serde(deserialize_with = "list")]
    general_diagnostics: Vec<PyrightDiagnostic>,
}

/// One of pyright's findings; its severity is a word (`error`, `warning`, `information`).
#[derive(Default, Deserialize)]
#[serde(default)]
struct PyrightDiagnostic {
    #[serde(deserialize_with = "lenient")]
    file: Option<String>,
    #[serde(deserialize_with = "lenient")]
    severity: String,
    #[serde(deserialize_with = "lenient")]
    message: String,
    #[serde(deserialize_with = "lenient")]
    range: Range,
}

fn read_pyright(stdout: &str, _: &str, root: &Path) -> Vec<Problem> {
    let Ok(v) = serde_json::from_str::<PyrightReport>(stdout) else {
        return Vec::new();
    };
    v.general_diagnostics
        .iter()
        .filter(|d| matches!(d.severity.as_str(), "error" | "warning"))
        .map(|d| Problem {
            path: rel(root, d.file.as_deref().unwrap_or("?")),
            line: u64::from(d.range.start.line) + 1,
            severity: severity(&d.severity),
            message: crate::protocol::one_line(&d.message),
        })
        .collect()
}

/// `file(line,col): error TS2322: message`.
fn read_tsc(stdout: &str, _: &str, root: &Path) -> Vec<Problem> {
    stdout
        .lines()
        .filter_map(|l| {
            let (file, rest) = l.split_once('(')?;
            let (pos, rest) = rest.split_once("): ")?;
            let line = pos.split(',').next()?.parse().ok()?;
            let (level, message) = rest.split_once(' ')?;
            Some(Problem {
                path: rel(root, file),
                line,
                severity: severity(level),
                message: message.to_string(),
            })
        })
        .collect()
}

/// `file:line:col: message` lines, as `go vet` writes them to stderr.
fn read_colon_lines(_: &str, stderr: &str, root: &Path) -> Vec<Problem> {
    stderr
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(4, ':');
            let (file, line, _col, message) =
                (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            Some(Problem {
                path: rel(root, file.trim_start_matches("./")),
                line: line.parse().ok()?,
                severity: "error",
                message: message.trim().to_string(),
            })
        })
        .collect()
}

/// `SEVERITY|TYPE|CODE|FILE|LINE|COL|LEN|MESSAGE`.
fn read_dart(stdout: &str, stderr: &str, root: &Path) -> Vec<Problem> {
    stdout
        .lines()
        .chain(stderr.lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(8, '|').collect();
            (f.len() == 8).then(|| Problem {
                path: rel(root, f[3]),
                line: f[4].parse().unwrap_or(0),
                severity: severity(f[0]),
                message: format!("{} [{}]", f[7], f[2]),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalog_checker_has_a_reader_and_a_command() {
        let checkers = crate::catalog::checkers();
        assert_eq!(checkers.len(), 5);
        for c in checkers {
            assert!(
                reader(&c.reader).is_some(),
                "{}: no reader `{}`",
                c.name,
                c.reader
            );
            assert!(!c.command.is_empty(), "{}", c.name);
            assert!(!c.markers.is_empty() || c.project.is_some(), "{}", c.name);
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("setup.cfg"), "").unwrap_or_else(|e| panic!("{e}"));
        let python = checkers.iter().find(|c| c.reader == "pyright");
        assert!(python.is_some_and(|c| c.applies(dir.path())));
    }

    /// What a reader found, field by field, for comparing.
    fn fields(found: &[Problem]) -> Vec<(&str, u64, &str, &str)> {
        found
            .iter()
            .map(|p| (p.path.as_str(), p.line, p.severity, p.message.as_str()))
            .collect()
    }

    #[test]
    fn cargo_and_pyright_output_is_read_leniently() {
        let root = Path::new("/w");
        let cargo = concat!(
            r#"{"reason":"compiler-artifact","target":{}}"#,
            "\nnot json\n",
            r#"{"reason":"compiler-message","message":{"level":"error","message":"mismatched types","#,
            r#""code":{"code":"E0308","explanation":null},"spans":[{"is_primary":false},"#,
            r#"{"is_primary":true,"file_name":"src/lib.rs","line_start":4}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","message":{"level":"warning","message":"unused","code":null,"#,
            r#""spans":[{"is_primary":true,"file_name":"/w/src/a.rs","line_start":2}]}}"#,
        );
        let found = read_cargo(cargo, "", root);
        assert_eq!(
            fields(&found),
            [
                ("src/lib.rs", 4, "error", "mismatched types [E0308]"),
                ("src/a.rs", 2, "warning", "unused")
            ]
        );
        let pyright = r#"{"version":"1","generalDiagnostics":[
            {"file":"/w/a.py","severity":"error","message":"bad\nthing","range":{"start":{"line":1,"character":0}}},
            {"file":"/w/b.py","severity":"information","message":"fyi"},
            {"severity":"warning","message":"no file","range":null}]}"#;
        let found = read_pyright(pyright, "", root);
        assert_eq!(
            fields(&found),
            [
                ("a.py", 2, "error", "bad; thing"),
                ("?", 1, "warning", "no file")
            ]
        );
    }
}
