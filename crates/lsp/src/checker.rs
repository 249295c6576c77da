//! `diagnostics "*"`: the project's own checker for each language present (cargo check,
//! pyright, tsc, go vet, dart analyze), run with a deadline after which its process group is
//! killed, and read into one list in the same format as a file's diagnostics.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tether_proc::{ChildSpec, ProcError, run_with_deadline};

use crate::render::cut;

/// Problems listed at most, over all languages.
const CAP: usize = 100;

/// One problem a checker reported.
struct Problem {
    path: String,
    line: u64,
    severity: &'static str,
    message: String,
}

/// How a checker's command is made for a project root; `None` when it is not installed.
type Argv = fn(&Path) -> Option<Vec<String>>;

/// A checker: the marker that says the language is present, the command, and its reader.
struct Checker {
    lang: &'static str,
    marker: &'static [&'static str],
    argv: Argv,
    read: fn(&str, &str, &Path) -> Vec<Problem>,
    /// A narrower run made when the wide one finds errors, naming what it leaves out, so an
    /// error only the wider configuration has is marked as such (features may exclude one
    /// another, and then `--all-features` fails where no real build does).
    narrower: Option<(&'static str, Argv)>,
}

/// `cargo check` over every member and target, with `extra` arguments.
fn cargo_check(extra: &[&str]) -> Option<Vec<String>> {
    let base = [
        "cargo",
        "check",
        "--workspace",
        "--all-targets",
        "--message-format=json",
        "--target-dir",
        "target/rust-analyzer",
    ];
    Some(base.iter().chain(extra).map(|s| s.to_string()).collect())
}

const CHECKERS: &[Checker] = &[
    Checker {
        lang: "rust (cargo check: every member, every target with tests and examples, all \
               features)",
        marker: &["Cargo.toml"],
        // rust-analyzer's own target folder (`cargo.targetDir`), not a third cold build. Every
        // target, since an error in test code breaks `cargo test` as surely as one in the lib.
        argv: |_| cargo_check(&["--all-features"]),
        read: read_cargo,
        narrower: Some(("--all-features", |_| cargo_check(&[]))),
    },
    Checker {
        lang: "python (pyright)",
        marker: tether_proc::PYTHON_PROJECT_MARKERS,
        argv: |_| {
            let bin = ["basedpyright", "pyright"]
                .into_iter()
                .find(|b| which::which(b).is_ok())?;
            Some(vec![bin.into(), "--outputjson".into()])
        },
        read: read_pyright,
        narrower: None,
    },
    Checker {
        lang: "typescript (tsc)",
        marker: &["tsconfig.json"],
        argv: |_| {
            which::which("tsc").ok()?;
            Some(
                ["tsc", "--noEmit", "--pretty", "false"]
                    .map(String::from)
                    .to_vec(),
            )
        },
        read: read_tsc,
        narrower: None,
    },
    Checker {
        lang: "go (go vet)",
        marker: &["go.mod"],
        argv: |_| {
            which::which("go").ok()?;
            Some(["go", "vet", "./..."].map(String::from).to_vec())
        },
        read: read_colon_lines,
        narrower: None,
    },
    Checker {
        lang: "dart (dart analyze)",
        marker: &["pubspec.yaml"],
        argv: |_| {
            which::which("dart").ok()?;
            Some(
                ["dart", "analyze", "--format=machine"]
                    .map(String::from)
                    .to_vec(),
            )
        },
        read: read_dart,
        narrower: None,
    },
];

/// Runs the checker of every language present at `root`, one after the other, each within
/// `deadline`, and renders what they found.
pub async fn check_project(root: &Path, deadline: Duration) -> String {
    let mut sections = Vec::new();
    let mut all: Vec<Problem> = Vec::new();
    for c in CHECKERS {
        if !c.marker.iter().any(|m| root.join(m).exists()) {
            continue;
        }
        let Some(argv) = (c.argv)(root) else {
            sections.push(format!("{}: the checker is not installed", c.lang));
            continue;
        };
        let start = std::time::Instant::now();
        let mut found = match run_one(c, argv, root, deadline).await {
            Ok(found) => found,
            Err(why) => {
                sections.push(format!("{}: {why}", c.lang));
                continue;
            }
        };
        let mut header = format!("{}: {}", c.lang, counts(&found));
        let has_errors = found.iter().any(|p| p.severity == "error");
        if let (Some((wider, narrow)), true) = (c.narrower, has_errors) {
            let left = deadline.saturating_sub(start.elapsed());
            let narrow = match narrow(root) {
                Some(argv) => run_one(c, argv, root, left).await,
                None => Err("the checker is not installed".into()),
            };
            match narrow {
                Ok(narrow) => {
                    let key = |p: &Problem| (p.path.clone(), p.line, p.message.clone());
                    let there: std::collections::HashSet<_> = narrow.iter().map(key).collect();
                    for p in found.iter_mut().filter(|p| !there.contains(&key(p))) {
                        p.message.push_str(&format!(" (only with {wider})"));
                    }
                    header.push_str(&format!("; without {wider}: {}", counts(&narrow)));
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
            cut(&p.message, 300)
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
) -> Result<Vec<Problem>, String> {
    let spec = ChildSpec {
        argv,
        cwd: Some(root.to_path_buf()),
        env: vec![("CARGO_TERM_COLOR".into(), "never".into())],
    };
    match run_with_deadline(&spec, deadline).await {
        Ok(out) => {
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let mut found = (c.read)(&stdout, &stderr, root);
            // Every target checks the lib again (its test harness): one error, not two.
            let mut seen = std::collections::HashSet::new();
            found.retain(|p| seen.insert((p.path.clone(), p.line, p.severity, p.message.clone())));
            Ok(found)
        }
        Err(e @ ProcError::Deadline { .. }) => Err(format!(
            "{e}; its process group was killed (raise [lsp] check_timeout_s)"
        )),
        Err(e) => Err(e.to_string()),
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

fn read_cargo(stdout: &str, _: &str, root: &Path) -> Vec<Problem> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-message" {
            continue;
        }
        let m = &v["message"];
        let level = m["level"].as_str().unwrap_or("");
        if !matches!(level, "error" | "warning") {
            continue;
        }
        let spans = m["spans"].as_array().cloned().unwrap_or_default();
        let Some(span) = spans.iter().find(|s| s["is_primary"] == true) else {
            continue;
        };
        let code = m["code"]["code"]
            .as_str()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        out.push(Problem {
            path: rel(root, span["file_name"].as_str().unwrap_or("?")),
            line: span["line_start"].as_u64().unwrap_or(0),
            severity: severity(level),
            message: format!("{}{code}", m["message"].as_str().unwrap_or("")),
        });
    }
    out
}

fn read_pyright(stdout: &str, _: &str, root: &Path) -> Vec<Problem> {
    let Ok(v) = serde_json::from_str::<Value>(stdout) else {
        return Vec::new();
    };
    v["generalDiagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| matches!(d["severity"].as_str(), Some("error" | "warning")))
        .map(|d| Problem {
            path: rel(root, d["file"].as_str().unwrap_or("?")),
            line: d["range"]["start"]["line"].as_u64().unwrap_or(0) + 1,
            severity: severity(d["severity"].as_str().unwrap_or("")),
            message: d["message"].as_str().unwrap_or("").replace('\n', " "),
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
