//! Workers across runs of tether on one repository: runs one after another and at once each
//! get worktrees of their own, a run killed in the middle of `git worktree add` leaves nothing
//! in the way, and each run's transcript of a worker is its own, header first, end line last.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::vibe;

use std::path::{Path, PathBuf};
use std::time::Duration;

use vibe::{git_in, repository, run_with_worker, send, spawn, transcript_of, wait, worktree_of};

/// Writes its brief into `made.txt` where it runs.
const WORKER: &str = "brief=$(cat)\necho \"$brief\" > made.txt\necho \"made it in $(pwd)\"\n";

const ISOLATED: &str =
    "[workers]\nisolation = \"worktree\"\n[workers.fast]\ncommand = [\"sh\", \"SCRIPT\"]\n";

/// What a repository whose checkouts can be held holds: `slow.txt` goes through the `slow`
/// smudge filter.
const HELD_FILES: &[(&str, &str)] = &[
    ("README", "hi\n"),
    (".gitattributes", "slow.txt filter=slow\n"),
    ("slow.txt", "slow\n"),
];

/// The files that steer [`hold_first_checkout`]'s filter.
struct Hold {
    /// Exists once the first checkout is held.
    held: PathBuf,
    /// Created by the test to let it go on.
    release: PathBuf,
}

/// Installs a smudge filter in `ws`'s repository that holds the first checkout through it (at
/// most 60 s) until `release` exists; later ones pass at once. A `git worktree add` so held is
/// half done: its worktree is locked as `initializing`.
fn hold_first_checkout(dir: &Path, ws: &Path) -> Hold {
    let hold = Hold {
        held: dir.join("held"),
        release: dir.join("release"),
    };
    let filter = dir.join("filter.sh");
    let script = format!(
        "if mkdir {once} 2>/dev/null; then\n  touch {held}\n  i=0\n  \
         until [ -e {release} ] || [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done\nfi\ncat\n",
        once = dir.join("once").display(),
        held = hold.held.display(),
        release = hold.release.display(),
    );
    std::fs::write(&filter, script).unwrap();
    let smudge = format!("sh {}", filter.display());
    git_in(ws, &["config", "filter.slow.smudge", &smudge]);
    git_in(ws, &["config", "filter.slow.clean", "cat"]);
    hold
}

/// Waits (at most 60 s) until `path` exists.
async fn appears(path: &Path) {
    for _ in 0..600 {
        if path.exists() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{} never appeared", path.display());
}

/// The worktrees git lists for `ws` that are locked as `initializing`.
fn half_made(ws: &Path) -> Vec<String> {
    let list = git_in(ws, &["worktree", "list", "--porcelain"]);
    list.split("\n\n")
        .filter(|entry| entry.lines().any(|l| l == "locked initializing"))
        .filter_map(|entry| entry.lines().next()?.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

/// The `--- run … ---` lines of a transcript, in order.
fn markers(transcript: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(transcript).unwrap();
    text.lines()
        .filter(|l| l.starts_with("--- run "))
        .map(str::to_string)
        .collect()
}

/// Asserts that the transcript holds exactly one run, header first and end line last.
fn one_run(transcript: &Path, how: &str) {
    let text = std::fs::read_to_string(transcript).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"--- run 1 ---"), "{text}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with(&format!("--- run 1 {how}"))),
        "{text}"
    );
    assert_eq!(markers(transcript).len(), 2, "{text}");
}

#[tokio::test]
async fn runs_one_after_another_each_get_a_worktree_and_a_transcript_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    repository(&ws, &[("README", "hi\n")]);

    let mut seen = Vec::new();
    for brief in ["the first run's change", "the second run's change"] {
        let run = run_with_worker(dir.path(), WORKER, ISOLATED, true);
        assert_eq!(spawn(&run, brief).await, "w1");
        let done = wait(&run, "w1", 60).await;
        assert!(done.contains("completed"), "{done}");
        let (tree, branch) = worktree_of(&done);
        assert_eq!(
            std::fs::read_to_string(tree.join("made.txt")).unwrap(),
            format!("{brief}\n")
        );
        let transcript = transcript_of(&done);
        one_run(&transcript, "completed");
        run.shutdown(Duration::from_secs(5)).await;
        seen.push((tree, branch, transcript));
    }
    let [(tree1, branch1, log1), (tree2, branch2, log2)] = &seen[..] else {
        unreachable!()
    };
    assert!(
        tree1 != tree2 && branch1 != branch2 && log1 != log2,
        "{seen:?}"
    );
    // The first run's work is still there to merge.
    assert_eq!(
        std::fs::read_to_string(tree1.join("made.txt")).unwrap(),
        "the first run's change\n"
    );
    let branches = git_in(&ws, &["branch", "--list", "tether/*"]);
    assert!(
        branches.contains(branch1.as_str()) && branches.contains(branch2.as_str()),
        "{branches}"
    );
    one_run(log1, "completed");
}

#[tokio::test]
async fn runs_at_once_each_get_a_worktree_and_leave_the_other_s_half_made_one_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    repository(&ws, HELD_FILES);
    let hold = hold_first_checkout(dir.path(), &ws);
    let first = run_with_worker(dir.path(), WORKER, ISOLATED, true);
    let second = run_with_worker(dir.path(), WORKER, ISOLATED, true);

    // The first run's `git worktree add` is held half done, its worktree locked.
    spawn(&first, "the first run's change").await;
    appears(&hold.held).await;
    let locked = half_made(&ws);
    assert_eq!(locked.len(), 1, "{locked:?}");

    // The second run makes its own meanwhile, and leaves the live run's one alone.
    spawn(&second, "the second run's change").await;
    let done2 = wait(&second, "w1", 60).await;
    assert!(done2.contains("completed"), "{done2}");
    assert_eq!(half_made(&ws), locked);

    std::fs::write(&hold.release, "").unwrap();
    let done1 = wait(&first, "w1", 60).await;
    assert!(done1.contains("completed"), "{done1}");
    let (tree1, branch1) = worktree_of(&done1);
    let (tree2, branch2) = worktree_of(&done2);
    assert_eq!(tree1.display().to_string(), locked[0]);
    assert!(tree1 != tree2 && branch1 != branch2, "{done1}\n{done2}");
    for (tree, brief) in [(&tree1, "the first"), (&tree2, "the second")] {
        assert_eq!(
            std::fs::read_to_string(tree.join("made.txt")).unwrap(),
            format!("{brief} run's change\n")
        );
        assert_eq!(
            std::fs::read_to_string(tree.join("slow.txt")).unwrap(),
            "slow\n"
        );
    }
    assert!(half_made(&ws).is_empty());
    let (log1, log2) = (transcript_of(&done1), transcript_of(&done2));
    assert_ne!(log1, log2);
    one_run(&log1, "completed");
    one_run(&log2, "completed");
    first.shutdown(Duration::from_secs(5)).await;
    second.shutdown(Duration::from_secs(5)).await;
}

/// Runs `git worktree add` for worktree `name` as a run of tether would, and kills its whole
/// group while its checkout is held: what a run killed in the middle of it leaves.
async fn killed_while_adding(ws: &Path, hold: &Hold, name: &str) {
    use std::os::unix::process::CommandExt;
    let path = ws.join(".tether/worktrees").join(name);
    let mut git = std::process::Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["worktree", "add", "-b", &format!("tether/{name}")])
        .arg(&path)
        .arg("HEAD")
        .process_group(0)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    appears(&hold.held).await;
    let group = format!("-{}", git.id());
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &group])
        .status()
        .unwrap();
    assert!(killed.success());
    git.wait().unwrap();
}

#[tokio::test]
async fn a_run_killed_while_adding_a_worktree_leaves_nothing_in_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    repository(&ws, HELD_FILES);
    let hold = hold_first_checkout(dir.path(), &ws);
    // An ended run's id: no live run holds it.
    killed_while_adding(&ws, &hold, "dead00-w1").await;
    let leftover = ws.join(".tether/worktrees/dead00-w1");
    assert_eq!(half_made(&ws), [leftover.display().to_string()]);
    // That run's other worker finished: its worktree is work to merge, and stays.
    git_in(
        &ws,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "tether/dead00-w2",
            ".tether/worktrees/dead00-w2",
            "HEAD",
        ],
    );

    let run = run_with_worker(dir.path(), WORKER, ISOLATED, true);
    spawn(&run, "a change").await;
    let done = wait(&run, "w1", 60).await;
    assert!(done.contains("completed"), "{done}");
    assert!(half_made(&ws).is_empty(), "{:?}", half_made(&ws));
    assert!(!leftover.exists());
    let branches = git_in(&ws, &["branch", "--list", "tether/*"]);
    assert!(
        !branches.contains("tether/dead00-w1") && branches.contains("tether/dead00-w2"),
        "{branches}"
    );
    assert!(ws.join(".tether/worktrees/dead00-w2/slow.txt").exists());
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn git_s_own_reason_is_quoted_when_a_worktree_cannot_be_made() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    repository(&ws, &[("README", "hi\n")]);
    // A file where git keeps its worktrees' records: git cannot make one, and says why.
    std::fs::write(ws.join(".git/worktrees"), "in the way\n").unwrap();
    let run = run_with_worker(dir.path(), WORKER, ISOLATED, true);
    spawn(&run, "a change").await;
    let failed = wait(&run, "w1", 60).await;
    assert!(
        failed.contains("failed")
            && !failed.contains("needs the workspace to be a git repository")
            && failed.contains("git worktree add")
            && failed.contains(".git/worktrees"),
        "{failed}"
    );
    one_run(&transcript_of(&failed), "failed");
    // The branch that `git worktree add` made before it failed is not left in a retry's way.
    assert_eq!(git_in(&ws, &["branch", "--list", "tether/*"]), "");
    std::fs::remove_file(ws.join(".git/worktrees")).unwrap();
    send(&run, "w1", "again").await;
    let done = wait(&run, "w1", 60).await;
    assert!(done.contains("completed"), "{done}");
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_run_that_fails_before_its_process_starts_has_its_header_and_end_line() {
    let dir = tempfile::tempdir().unwrap();
    // Not a git repository: the worktree cannot be made, so no process starts.
    let run = run_with_worker(dir.path(), WORKER, ISOLATED, true);
    spawn(&run, "a change").await;
    let failed = wait(&run, "w1", 60).await;
    assert!(
        failed.contains("failed") && failed.contains("needs the workspace to be a git repository"),
        "{failed}"
    );
    one_run(&transcript_of(&failed), "failed");
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_run_killed_while_its_worktree_is_made_ends_before_the_next_begins() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    repository(&ws, HELD_FILES);
    let hold = hold_first_checkout(dir.path(), &ws);
    let run = run_with_worker(dir.path(), WORKER, ISOLATED, true);
    spawn(&run, "a change").await;
    appears(&hold.held).await;
    // Killed while git still makes its worktree, then sent more: the second run waits for
    // that worktree and works in it.
    let killed = common::call_text(&run, "vibe_kill", serde_json::json!({"worker_id": "w1"})).await;
    assert!(killed.contains("w1 killed"), "{killed}");
    let sent = send(&run, "w1", "and more").await;
    assert!(sent.contains("had ended: runs again"), "{sent}");
    std::fs::write(&hold.release, "").unwrap();
    let done = wait(&run, "w1", 60).await;
    assert!(done.contains("completed"), "{done}");
    let (tree, _) = worktree_of(&done);
    assert_eq!(
        std::fs::read_to_string(tree.join("made.txt")).unwrap(),
        "a change\n\nand more\n"
    );
    let marks = markers(&transcript_of(&done));
    let shape: Vec<&str> = marks
        .iter()
        .map(|m| {
            let words: Vec<&str> = m.split_whitespace().collect();
            match words.as_slice() {
                ["---", "run", n, "---"] => {
                    if *n == "1" {
                        "begin 1"
                    } else {
                        "begin 2"
                    }
                }
                ["---", "run", "1", "killed", ..] => "killed 1",
                ["---", "run", "2", "completed", ..] => "completed 2",
                _ => "other",
            }
        })
        .collect();
    assert_eq!(
        shape,
        ["begin 1", "killed 1", "begin 2", "completed 2"],
        "{marks:?}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}
