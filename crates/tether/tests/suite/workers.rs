//! The vibe tools with a scripted worker command standing in for an agent CLI: spawn, list,
//! wait before and after the end, a wait that times out, send while running and after the end,
//! kill (the grandchild goes too), stalled detection, the concurrency cap, the tools' absence
//! outside vibe mode, and no process left after the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::vibe;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::Run;
use vibe::{git_in, logged_pid, run_with_worker, send, spawn, transcript, wait};

/// Reads the brief from stdin and acts on its first word; prints its pid so tests can find it.
const WORKER: &str = r#"
brief=$(cat)
echo "pid $$"
echo "args $*"
echo "surface $TETHER_SURFACE"
case "$brief" in
  succeed*) echo "working on: $brief"; echo "all done";;
  fail*) echo "trying" ; echo "it broke" >&2; exit 3;;
  hang*) echo "hanging"; sleep 300;;
  grandchild*) sh -c "sleep 300; echo TETHER_GRANDCHILD_MARK" & echo "child $!"; sleep 300;;
  daemon*) setsid sh -c 'sleep 300 >/dev/null 2>&1 & echo "daemon $!"'; sleep 300;;
  silent*) until [ -e "${brief##* until }" ]; do sleep 0.05; done
    echo "woke up"; echo "finished quietly";;
  slow*) until [ -e "${brief##* until }" ]; do sleep 0.05; done; echo "slow done";;
  *) echo "unknown brief: $brief" >&2; exit 2;;
esac
"#;

fn run_vibe(dir: &Path, extra: &str, vibe: bool) -> Run {
    let config = format!(
        "[workers]\nmax_concurrent = 2\n{extra}\n[workers.fast]\ncommand = [\"sh\", \"SCRIPT\"]\n"
    );
    run_with_worker(dir, WORKER, &config, vibe)
}

#[tokio::test]
async fn workers_run_end_fail_and_are_listed_with_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "", true);
    let ok = spawn(&run, "succeed at the task").await;
    assert_eq!(ok, "w1");
    let done = wait(&run, "w1", 30).await;
    assert!(
        done.contains("w1 (succeed at the task, fast): completed")
            && done.contains("working on: succeed at the task\nall done")
            && done.contains(&format!(
                "transcript: {}",
                transcript(dir.path(), "w1").display()
            )),
        "{done}"
    );
    // Waiting again after the end answers at once, the result kept.
    assert_eq!(wait(&run, "w1", 30).await, done);
    let transcript = std::fs::read_to_string(transcript(dir.path(), "w1")).unwrap();
    assert!(
        transcript.contains("--- run 1 ---")
            && transcript.contains("all done")
            && transcript.contains("--- run 1 completed after"),
        "{transcript}"
    );

    spawn(&run, "fail loudly").await;
    let failed = wait(&run, "w2", 30).await;
    assert!(
        failed.contains("failed") && failed.contains("exit code 3") && failed.contains("it broke"),
        "{failed}"
    );
    let list = common::call_text(&run, "vibe_list", json!({})).await;
    assert!(
        list.contains("w1  succeed at the task  fast  completed"),
        "{list}"
    );
    assert!(list.contains("w2  fail loudly  fast  failed"), "{list}");

    // A tier with no backend says how to configure one.
    let good = common::call_text(
        &run,
        "vibe_spawn",
        json!({"brief": "succeed", "label": "x", "tier": "good"}),
    )
    .await;
    assert!(
        good.contains("no `[workers.good]` backend is configured; `fast` is: pass tier = \"fast\"")
            && good.contains("command = ["),
        "{good}"
    );

    // A wrong id names the ones there are.
    let wrong = wait(&run, "w9", 1).await;
    assert!(
        wrong.contains("no worker `w9`; this run has w1, w2"),
        "{wrong}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn waits_time_out_sends_rerun_and_kill_takes_the_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "", true);
    let id = spawn(&run, "hang forever").await;
    let timed_out = wait(&run, &id, 1).await;
    assert!(
        timed_out.contains("none ended within 1 s: w1 running"),
        "{timed_out}"
    );

    // Sent while running: restarted with the longer brief (which now starts "hang", still).
    let sent = send(&run, "w1", "and more").await;
    assert!(
        sent.contains("was running: stopped and restarted"),
        "{sent}"
    );
    let killed = common::call_text(&run, "vibe_kill", json!({"worker_id": "w1"})).await;
    assert!(killed.contains("w1 killed"), "{killed}");
    assert!(wait(&run, "w1", 60).await.contains("killed"));
    let transcript = std::fs::read_to_string(transcript(dir.path(), "w1")).unwrap();
    assert!(
        transcript.contains("--- run 1 stopped by vibe_send, to run again after")
            && transcript.contains("--- run 2 killed by vibe_kill after"),
        "{transcript}"
    );

    // Sent after the end: runs again.
    let quick = spawn(&run, "succeed once").await;
    wait(&run, &quick, 30).await;
    let again = send(&run, &quick, "then again").await;
    assert!(again.contains("had ended: runs again"), "{again}");
    let second = wait(&run, &quick, 30).await;
    assert!(
        second.contains("completed") && second.contains("then again"),
        "{second}"
    );

    // Kill takes the whole tree, grandchild included.
    let parent = spawn(&run, "grandchild please").await;
    let child = logged_pid(dir.path(), &parent, "child").await;

    assert!(tether_proc::is_running(child));
    common::call_text(&run, "vibe_kill", json!({"worker_id": parent})).await;
    assert!(
        tether_proc::gone_within(child, Duration::from_secs(30)),
        "the grandchild outlived the kill"
    );
    run.shutdown(Duration::from_secs(5)).await;
}

/// True once `pid` stopped running within `limit`; it yields, so the worker's task can act.
async fn gone_soon(pid: u32, limit: Duration) -> bool {
    let end = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < end {
        if !tether_proc::is_running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_daemon_a_worker_started_goes_with_a_kill_and_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "", true);
    // The daemon left the worker's group and session, and its parent exited: a group kill
    // cannot reach it.
    let killed = spawn(&run, "daemon to kill").await;
    let daemon = logged_pid(dir.path(), &killed, "daemon").await;
    assert!(tether_proc::is_running(daemon));
    common::call_text(&run, "vibe_kill", json!({"worker_id": killed})).await;
    assert!(
        gone_soon(daemon, Duration::from_secs(30)).await,
        "the daemon outlived vibe_kill"
    );

    let ended = spawn(&run, "daemon to outlast").await;
    let daemon = logged_pid(dir.path(), &ended, "daemon").await;
    assert!(tether_proc::is_running(daemon));
    run.shutdown(Duration::from_secs(5)).await;
    assert!(
        gone_soon(daemon, Duration::from_secs(30)).await,
        "the daemon outlived the run"
    );
}

/// Spawns a worker on `brief`, naming `release`: the file whose creation lets it finish.
async fn spawn_until(run: &Run, brief: &str, release: &Path) -> String {
    let args = json!({"brief": format!("{brief} until {}", release.display()), "label": brief});
    let out = common::call_text(run, "vibe_spawn", args).await;
    out.split_whitespace().next().unwrap().to_string()
}

#[tokio::test]
async fn a_silent_worker_is_stalled_and_the_cap_queues_the_third() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "stall_after_s = 1", true);
    // Silent until released, so it is released only once it has been seen stalled.
    let wake = dir.path().join("wake");
    let quiet = spawn_until(&run, "silent", &wake).await;
    let mut list = String::new();
    for _ in 0..600 {
        list = common::call_text(&run, "vibe_list", json!({})).await;
        if list.contains("stalled") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(list.contains("stalled"), "{list}");
    std::fs::write(&wake, "").unwrap();
    // It speaks again and finishes: completed, and the stall is in its history.
    let done = wait(&run, &quiet, 120).await;
    assert!(
        done.contains("completed") && done.contains("finished quietly"),
        "{done}"
    );
    let history = done.lines().find(|l| l.starts_with("history: ")).unwrap();
    let states: Vec<&str> = history[9..]
        .split(", ")
        .map(|s| s.split(' ').next().unwrap())
        .collect();
    // A machine slow to start the script may see it stall before its first line as well.
    let (start, end) = (&states[..2], &states[states.len() - 3..]);
    assert_eq!(start, ["queued", "running"], "{history}");
    assert_eq!(end, ["stalled", "running", "completed"], "{history}");
    let between = &states[2..states.len() - 3];
    assert!(
        between.chunks(2).all(|p| p == ["stalled", "running"]),
        "{history}"
    );

    // A cap of 2: the third waits for a slot (the first two run until released), and starts
    // once one frees.
    let go = dir.path().join("go");
    spawn_until(&run, "slow one", &go).await;
    spawn_until(&run, "slow two", &go).await;
    let brief = format!("slow three until {}", go.display());
    let third = common::call_text(
        &run,
        "vibe_spawn",
        json!({"brief": brief, "label": "third"}),
    )
    .await;
    assert!(third.contains("queued: all 2 slots are busy"), "{third}");
    std::fs::write(&go, "").unwrap();
    let done = common::call_text(
        &run,
        "vibe_wait",
        json!({"worker_ids": ["w4"], "timeout_seconds": 120}),
    )
    .await;
    assert!(
        done.contains("completed") && done.contains("slow done"),
        "{done}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn outside_vibe_mode_there_are_no_workers_and_none_outlive_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "", false);
    let names = common::agent_tools(&run);
    assert!(!names.iter().any(|n| n.starts_with("vibe_")), "{names:?}");
    run.shutdown(Duration::from_secs(5)).await;

    let dir = tempfile::tempdir().unwrap();
    let run = run_vibe(dir.path(), "", true);
    spawn(&run, "grandchild at the end").await;
    spawn(&run, "hang at the end").await;
    let pids = [
        logged_pid(dir.path(), "w1", "pid").await,
        logged_pid(dir.path(), "w1", "child").await,
        logged_pid(dir.path(), "w2", "pid").await,
    ];

    run.shutdown(Duration::from_secs(5)).await;
    let transcript = std::fs::read_to_string(transcript(dir.path(), "w2")).unwrap();
    assert!(
        transcript.contains("--- run 1 killed as the run ended after"),
        "{transcript}"
    );
    for pid in pids {
        assert!(
            tether_proc::gone_within(pid, Duration::from_secs(30)),
            "process {pid} of a worker outlived the run"
        );
    }
}

#[tokio::test]
async fn a_worker_never_gets_a_wider_surface_than_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    let command = "command = [\"sh\", \"SCRIPT\"]";
    let config = format!(
        "[workers.fast]\n{command}\nread_only_args = [\"--read-only\"]\n[workers.good]\n{command}\n"
    );
    let run = run_with_worker(dir.path(), WORKER, &config, true);
    let plan = |tool: &'static str, args: serde_json::Value| {
        let runtime = run.runtime().clone();
        async move {
            runtime
                .call(
                    tether::Surface::Plan,
                    tool,
                    args,
                    tokio_util::sync::CancellationToken::new(),
                )
                .await
                .map(|o| o.to_text())
                .unwrap_or_else(|e| format!("ERROR {e}"))
        }
    };
    // From plan mode, a tier that can say "read-only" runs with its read-only flags.
    let spawned = plan(
        "vibe_spawn",
        json!({"brief": "succeed quietly", "label": "planned"}),
    )
    .await;
    assert!(spawned.starts_with("w1 spawned"), "{spawned}");
    let done = plan("vibe_wait", json!({"worker_id": "w1"})).await;
    assert!(done.contains("completed"), "{done}");
    let log = std::fs::read_to_string(transcript(dir.path(), "w1")).unwrap();
    assert!(
        log.contains("args --read-only") && log.contains("surface plan"),
        "{log}"
    );
    // A tier that cannot is refused, and nothing starts.
    let refused = plan(
        "vibe_spawn",
        json!({"brief": "succeed", "label": "x", "tier": "good"}),
    )
    .await;
    assert!(
        refused.starts_with("ERROR") && refused.contains("has no `read_only_args`"),
        "{refused}"
    );
    assert!(!transcript(dir.path(), "w2").exists());
    // The agent surface runs with no extra flags.
    spawn(&run, "succeed openly").await;
    wait(&run, "w2", 30).await;
    let log = std::fs::read_to_string(transcript(dir.path(), "w2")).unwrap();
    assert!(log.contains("args \n") || log.contains("args\n"), "{log}");
    assert!(log.contains("surface agent"), "{log}");
    run.shutdown(Duration::from_secs(5)).await;
}

/// Prints what Claude Code's `-p --output-format stream-json` prints, in shape: an init event
/// naming the session, an assistant message, then the result event; resumes with `--resume`.
const STREAM_JSON_WORKER: &str = r#"
input=$(cat)
if [ "$1" = "--resume" ]; then
  case "$input" in lose*)
    echo '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"00000000-0000-0000-0000-000000000000","errors":["No conversation found with session ID: s-42"]}'
    exit 1;;
  esac
  echo "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"$2\"}"
  echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"resumed $2 with: $input\",\"session_id\":\"$2\"}"
  exit 0
fi
echo '{"type":"system","subtype":"init","session_id":"s-42","tools":["Bash","Edit"],"model":"m"}'
echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"working"}]},"session_id":"s-42"}'
case "$input" in
  fail*) echo '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":9,"session_id":"s-42"}';;
  *) first=$(printf '%s\n' "$input" | head -n 1); last=$(printf '%s\n' "$input" | tail -n 1)
     echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"first: $first, last: $last\",\"session_id\":\"s-42\"}";;
esac
"#;

#[tokio::test]
async fn stream_json_results_and_a_send_that_continues_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let config = "[workers.fast]\ncommand = [\"sh\", \"SCRIPT\"]\nformat = \"stream-json\"\n\
                  resume_args = [\"--resume\", \"{session}\"]\n";
    let run = run_with_worker(dir.path(), STREAM_JSON_WORKER, config, true);
    spawn(&run, "tidy up").await;
    let first = wait(&run, "w1", 30).await;
    assert!(
        first.contains("completed") && first.contains("result:\nfirst: tidy up, last: tidy up"),
        "{first}"
    );
    let sent = send(&run, "w1", "and the docs").await;
    assert!(
        sent.contains("had ended: its session continues with the message"),
        "{sent}"
    );
    let second = wait(&run, "w1", 30).await;
    assert!(
        second.contains("result:\nresumed s-42 with: and the docs"),
        "{second}"
    );
    // The agent lost its session: said, and the next send runs the whole brief.
    send(&run, "w1", "lose the session").await;
    let lost = wait(&run, "w1", 30).await;
    assert!(
        lost.contains("failed")
            && lost.contains("No conversation found with session ID: s-42")
            && lost.contains("the next vibe_send runs the whole brief instead"),
        "{lost}"
    );
    let again = send(&run, "w1", "start over").await;
    assert!(
        again.contains("had ended: runs again with the longer brief"),
        "{again}"
    );
    let whole = wait(&run, "w1", 30).await;
    assert!(
        whole.contains("result:\nfirst: tidy up, last: start over"),
        "{whole}"
    );

    spawn(&run, "fail at once").await;
    let failed = wait(&run, "w2", 30).await;
    assert!(
        failed.contains("failed")
            && failed.contains("the agent reported an error (error_max_turns)"),
        "{failed}"
    );
    run.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn under_worktree_isolation_each_worker_works_on_a_branch_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let worker = "brief=$(cat)\necho \"$brief\" > made.txt\necho \"made it in $(pwd)\"\n\
                  case \"$brief\" in commit*) git add made.txt && \
                  git -c user.name=w -c user.email=w@w commit -qm w;; esac\n";
    let config =
        "[workers]\nisolation = \"worktree\"\n[workers.fast]\ncommand = [\"sh\", \"SCRIPT\"]\n";
    // Not a git repository yet: the worker fails and says why.
    let run = run_with_worker(dir.path(), worker, config, true);
    spawn(&run, "no repository").await;
    let failed = wait(&run, "w1", 30).await;
    assert!(
        failed.contains("failed") && failed.contains("needs the workspace to be a git repository"),
        "{failed}"
    );
    run.shutdown(Duration::from_secs(5)).await;

    let ws = dir.path().join("ws");
    let git = |args: &[&str]| git_in(&ws, args);
    git(&["init", "-q"]);
    std::fs::write(ws.join("README"), "hi\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "first"]);
    let run = run_with_worker(dir.path(), worker, config, true);
    spawn(&run, "the change").await;
    let done = wait(&run, "w1", 30).await;
    // Its folder and branch carry the run's id, so a later run's `w1` never meets this one's.
    let (tree, branch) = vibe::worktree_of(&done);
    let name = tree.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.ends_with("-w1") && tree.parent() == Some(ws.join(".tether/worktrees").as_path()),
        "{done}"
    );
    assert_eq!(branch, format!("tether/{name}"));
    assert!(
        done.contains("completed") && done.contains("(not committed: ?? made.txt)"),
        "{done}"
    );
    spawn(&run, "commit this").await;
    let done = wait(&run, "W2", 30).await;
    assert!(
        done.contains(&format!(
            "on branch {} (1 commit on the branch)",
            branch.replace("-w1", "-w2")
        )),
        "{done}"
    );
    assert_eq!(
        std::fs::read_to_string(tree.join("made.txt")).unwrap(),
        "the change\n"
    );
    assert!(
        !ws.join("made.txt").exists(),
        "the worker wrote into the workspace itself"
    );
    assert!(git(&["branch", "--list", &branch]).contains(&branch));
    run.shutdown(Duration::from_secs(5)).await;
}

/// The repository's own hooks and file-system monitor are programs it names; the git commands
/// tether runs for worktree isolation must start neither.
#[tokio::test]
async fn worktree_isolation_runs_no_hook_or_fsmonitor_of_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let config =
        "[workers]\nisolation = \"worktree\"\n[workers.fast]\ncommand = [\"sh\", \"SCRIPT\"]\n";
    let run = run_with_worker(dir.path(), "cat > made.txt\necho done\n", config, true);
    let ws = dir.path().join("ws");
    let git = |args: &[&str]| git_in(&ws, args);
    git(&["init", "-q"]);
    std::fs::write(ws.join("README"), "hi\n").unwrap();
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "first"]);
    // Installed after the commit, so only tether's git commands could start them.
    let ran = dir.path().join("ran.log");
    let hook = format!("#!/bin/sh\necho \"$0\" >> {}\n", ran.display());
    for name in [
        "post-checkout",
        "reference-transaction",
        "post-index-change",
    ] {
        let path = ws.join(".git/hooks").join(name);
        std::fs::write(&path, &hook).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let monitor = dir.path().join("fsmonitor.sh");
    std::fs::write(&monitor, &hook).unwrap();
    std::fs::set_permissions(
        &monitor,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    git(&["config", "core.fsmonitor", &monitor.display().to_string()]);

    spawn(&run, "the change").await;
    let done = wait(&run, "w1", 30).await;
    assert!(
        done.contains("completed") && done.contains("not committed: ?? made.txt"),
        "{done}"
    );
    run.shutdown(Duration::from_secs(5)).await;
    assert!(
        !ran.exists(),
        "tether's git ran the repository's programs: {}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
}
