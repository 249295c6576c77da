//! Helpers for the worker tests: a vibe run whose backend is a shell script, the vibe calls,
//! the paths a worker's report names, and git as a test's user.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tether::{Run, RunBuilder};

use crate::common;

/// A run over `dir/ws` whose user config is `config` with `SCRIPT` replaced by the path of
/// a script holding `worker`.
pub fn run_with_worker(dir: &Path, worker: &str, config: &str, vibe: bool) -> Run {
    let script = dir.join("worker.sh");
    std::fs::write(&script, worker).unwrap();
    let cfg = dir.join("cfg");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::create_dir_all(dir.join("ws")).unwrap();
    let config = config.replace("SCRIPT", &script.display().to_string());
    std::fs::write(cfg.join("tether.toml"), config).unwrap();
    RunBuilder::new(dir.join("ws"))
        .user_config_dir(&cfg)
        .state_dir(dir.join("state"))
        .vibe(vibe)
        .build()
        .unwrap()
}

/// Spawns a worker on `brief` (also its label); its id.
pub async fn spawn(run: &Run, brief: &str) -> String {
    let out = common::call_text(run, "vibe_spawn", json!({"brief": brief, "label": brief})).await;
    out.split_whitespace().next().unwrap().to_string()
}

/// `vibe_wait` on one worker for at most `secs`.
pub async fn wait(run: &Run, id: &str, secs: u64) -> String {
    common::call_text(
        run,
        "vibe_wait",
        json!({"worker_id": id, "timeout_seconds": secs}),
    )
    .await
}

/// `vibe_send`.
pub async fn send(run: &Run, id: &str, message: &str) -> String {
    common::call_text(
        run,
        "vibe_send",
        json!({"worker_id": id, "message": message}),
    )
    .await
}

/// The transcript a worker's report names on its `transcript: ` line.
pub fn transcript_of(report: &str) -> PathBuf {
    let line = report.lines().find_map(|l| l.strip_prefix("transcript: "));
    PathBuf::from(line.unwrap_or_else(|| panic!("no transcript named in: {report}")))
}

/// The transcript of worker `id` in the only run over `dir/ws`: `.tether/workers/*{id}.log`.
pub fn transcript(dir: &Path, id: &str) -> PathBuf {
    let folder = dir.join("ws/.tether/workers");
    let found: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    name == format!("{id}.log") || name.ends_with(&format!("-{id}.log"))
                })
                .collect()
        })
        .unwrap_or_default();
    match found.as_slice() {
        [one] => one.clone(),
        [] => folder.join(format!("{id}.log")),
        many => panic!("several transcripts of {id}: {many:?}"),
    }
}

/// The folder and branch a worker's report names on its `its worktree: ` line.
pub fn worktree_of(report: &str) -> (PathBuf, String) {
    let line = report
        .lines()
        .find_map(|l| l.strip_prefix("its worktree: "))
        .unwrap_or_else(|| panic!("no worktree named in: {report}"));
    let (path, rest) = line.split_once(" on branch ").unwrap();
    let branch = rest.split_whitespace().next().unwrap();
    (PathBuf::from(path), branch.to_string())
}

/// The pid a worker printed on a line `PREFIX PID` of its transcript, once it has.
pub async fn logged_pid(dir: &Path, id: &str, prefix: &str) -> u32 {
    // Generous: a loaded machine may take seconds to start a shell.
    for _ in 0..600 {
        let log = std::fs::read_to_string(transcript(dir, id)).unwrap_or_default();
        let found = log
            .lines()
            .find_map(|l| l.strip_prefix(prefix)?.trim().parse().ok());
        if let Some(pid) = found {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{id} never printed `{prefix} PID` in {}", dir.display());
}

/// Runs git in `ws` as a test's user, and returns what it printed.
pub fn git_in(ws: &Path, args: &[&str]) -> String {
    let done = std::process::Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(done.status.success(), "git {args:?}: {done:?}");
    String::from_utf8_lossy(&done.stdout).to_string()
}

/// Makes `ws` a git repository with one commit holding `files` (path, text).
pub fn repository(ws: &Path, files: &[(&str, &str)]) {
    std::fs::create_dir_all(ws).unwrap();
    git_in(ws, &["init", "-q"]);
    for (path, text) in files {
        std::fs::write(ws.join(path), text).unwrap();
        git_in(ws, &["add", path]);
    }
    git_in(ws, &["commit", "-q", "-m", "first"]);
}
