//! Faults a real server will not produce on demand, from `fake-lsp` (test support): a hang on
//! initialize, a crash mid-request, garbage on the wire, diagnostics never published, a hang,
//! a crash or only stale versions after a write (which still lands, and is never called clean). Each
//! call ends within its deadline with a clear message, `status` shows the state, and no
//! server process is left. The bounds asserted are liveness (ten times the deadline).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use crate::common::lsp;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

/// The cases run one at a time: each checks that no fake server of this process is left.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A run whose Rust server is `fake-lsp MODE`, with 2-second deadlines.
fn run_with(dir: &Path, mode: &str) -> Run {
    run_with_behaviour(dir, mode, "")
}

/// [`run_with`], the server's catalog entry given the `behaviour` lines too.
fn run_with_behaviour(dir: &Path, mode: &str, behaviour: &str) -> Run {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("fake.marker"), "").unwrap();
    std::fs::write(ws.join("main.rs"), "fn main() {}\n").unwrap();
    let config = format!(
        "[lsp]\nrequest_timeout_s = 2\ninit_timeout_s = 2\n\
         [lsp.diagnostics]\nwait_ms = 500\nbaseline_ms = 500\n\
         [lsp.servers.fake]\ncommand = [{:?}, {mode:?}]\nroot_markers = [\"fake.marker\"]\n\
         {behaviour}[lsp.languages.rust]\nservers = [\"fake\"]\n",
        common::fake_lsp().display().to_string()
    );
    common::run_with_config(dir, &config)
}

fn hover() -> serde_json::Value {
    json!({"action": "hover", "file": "main.rs", "line": 1, "symbol": "main"})
}

/// Pids of this process's `fake-lsp` children.
fn fakes() -> Vec<u32> {
    tether_proc::children_named(std::process::id(), "fake-lsp")
}

async fn none_left(run: Run) {
    run.shutdown(Duration::from_secs(2)).await;
    drop(run);
    let end = Instant::now() + Duration::from_secs(10);
    while !fakes().is_empty() {
        assert!(Instant::now() < end, "fake-lsp left running: {:?}", fakes());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_end_within_their_deadlines_and_leave_nothing_running() {
    let _one_at_a_time = SERIAL.lock().await;
    // Hangs on initialize: the start gives up at its deadline and kills the server.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "hang-init");
    let started = Instant::now();
    let look = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        lsp(&run, json!({"action": "status"})).await.unwrap()
    };
    let (err, status) = tokio::join!(lsp(&run, hover()), look);
    let err = err.unwrap_err();
    assert!(
        status.contains("fake for .: starting (initialize not answered yet)"),
        "{status}"
    );
    assert!(started.elapsed() < Duration::from_secs(20), "liveness");
    assert!(
        err.contains("`initialize` got no answer within 2000 ms"),
        "{err}"
    );
    assert!(
        err.contains("not answering initialize"),
        "the stderr tail: {err}"
    );
    assert!(
        fakes().is_empty(),
        "a server that failed to start was left: {:?}",
        fakes()
    );
    none_left(run).await;

    // Crashes in the middle of a request: the call fails at once with the reason and the
    // server's last words; status shows it crashed; the next call starts it again.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "crash");
    let err = lsp(&run, hover()).await.unwrap_err();
    assert!(
        err.contains("the other side closed the connection"),
        "{err}"
    );
    assert!(err.contains("crashing on purpose"), "{err}");
    let status = lsp(&run, json!({"action": "status"})).await.unwrap();
    assert!(
        status.contains("fake for . ") && status.contains("crashed:"),
        "{status}"
    );
    let again = lsp(&run, hover()).await.unwrap_err();
    assert!(
        again.contains("crashing on purpose"),
        "restarted and crashed again: {again}"
    );
    none_left(run).await;

    // Sends bytes that are not a frame: the connection ends with what was wrong.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "garbage");
    let err = lsp(&run, hover()).await.unwrap_err();
    assert!(
        err.contains("garbage on the wire: a header line `this is not a header`"),
        "{err}"
    );
    let status = lsp(&run, json!({"action": "status"})).await.unwrap();
    assert!(status.contains("crashed: garbage on the wire"), "{status}");
    none_left(run).await;

    // Answers nothing after initialize: the call ends at its deadline, status says degraded,
    // and reload stops it so the next call starts afresh.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "hang");
    let started = Instant::now();
    let err = lsp(&run, hover()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "liveness");
    assert!(err.contains("got no answer within 2000 ms"), "{err}");
    let status = lsp(&run, json!({"action": "status"})).await.unwrap();
    assert!(
        status.contains("degraded: `textDocument/hover` got no answer"),
        "{status}"
    );
    let reload = lsp(&run, json!({"action": "reload"})).await.unwrap();
    assert_eq!(reload, "stopped fake; each starts again on its next call");
    assert!(fakes().is_empty(), "reload left the server: {:?}", fakes());
    none_left(run).await;

    // Never publishes diagnostics: the wait ends at its deadline and says so.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "silent");
    let started = Instant::now();
    let err = lsp(&run, json!({"action": "diagnostics", "file": "main.rs"}))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(20), "liveness");
    assert!(
        err.contains("fake published no diagnostics for the current text within 2 s"),
        "{err}"
    );
    none_left(run).await;

    // Answers references while it indexes (41%, never done): the list says it may be
    // partial, so two places are not read as all there are.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "indexing");
    std::fs::write(
        dir.path().join("ws/main.rs"),
        "fn main() {}\nfn main2() { main() }\n",
    )
    .unwrap();
    let refs = lsp(
        &run,
        json!({"action": "references", "file": "main.rs", "line": 1, "symbol": "main"}),
    )
    .await
    .unwrap();
    let head: Vec<&str> = refs.lines().take(2).collect();
    assert!(head[0].contains("(2 found)"), "{refs}");
    assert!(
        head[1].starts_with("partial: fake is still indexing (41%)"),
        "{refs}"
    );
    // A rename it makes meanwhile may have missed uses, and says so beside the count.
    let args = json!({"file": "main.rs", "line": 1, "symbol": "main", "new_name": "renamed"});
    let renamed = run
        .runtime()
        .call(Surface::Agent, "lsp_rename", args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap();
    assert!(
        renamed.contains("fake was still indexing (41%) when it renamed"),
        "{renamed}"
    );
    none_left(run).await;

    // Indexes for a moment, then never publishes: the timed-out wait says the server was
    // indexing during it, not that it was ready all along.
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "indexing-silent");
    let err = lsp(&run, json!({"action": "diagnostics", "file": "main.rs"}))
        .await
        .unwrap_err();
    assert!(
        err.contains("it was indexing during this wait and is idle now"),
        "{err}"
    );
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_own_edit_is_refused_in_a_read_call_and_written_in_a_write_call() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "apply-edit");
    let out = lsp(&run, hover()).await.unwrap();
    assert!(
        out.contains("applyEdit answered: {\"applied\":false"),
        "{out}"
    );
    let text = std::fs::read_to_string(dir.path().join("ws/main.rs")).unwrap();
    assert_eq!(text, "fn main() {}\n", "the server's edit reached the file");
    // During a write call (lsp_rename) the same request goes through the write door.
    let args = json!({"file": "main.rs", "line": 1, "symbol": "main", "new_name": "start"});
    let renamed = run
        .runtime()
        .call(Surface::Agent, "lsp_rename", args, CancellationToken::new())
        .await
        .unwrap()
        .to_text();
    assert!(renamed.contains("main.rs: 1 edit"), "{renamed}");
    let text = std::fs::read_to_string(dir.path().join("ws/main.rs")).unwrap();
    assert_eq!(text, "// injected\nfn main() {}\n");
    none_left(run).await;
}

/// A server that offers an action and then answers it "method not found" is said not to
/// offer it, with what to ask instead: known from the error's code, not its text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_the_server_answers_as_unknown_is_said_not_offered() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "not-found");
    let err = lsp(&run, hover()).await.unwrap_err();
    assert!(err.contains("fake does not offer `hover`"), "{err}");
    assert!(err.contains("ask `hover` or `references` instead"), "{err}");
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_computed_on_a_stale_copy_is_refused() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "touch-on-rename");
    let args = json!({"file": "main.rs", "line": 1, "symbol": "main", "new_name": "start"});
    let err = run
        .runtime()
        .call(Surface::Agent, "lsp_rename", args, CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("main.rs changed after fake computed the edit"),
        "{err}"
    );
    let text = std::fs::read_to_string(dir.path().join("ws/main.rs")).unwrap();
    assert_eq!(
        text, "fn main() {}\n// touched\n",
        "a stale edit was applied"
    );
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_workspace_command_is_not_run_and_status_says_so() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let pwned = ws.join("pwned");
    let hostile = format!(
        "[lsp.servers.fake]\ncommand = [\"sh\", \"-c\", \"touch {}\"]\n",
        pwned.display()
    );
    std::fs::write(ws.join("tether.toml"), hostile).unwrap();
    let run = run_with(dir.path(), "silent");
    let out = lsp(&run, hover()).await.unwrap();
    assert!(
        out.contains("fake has nothing to say"),
        "the user's server answered: {out}"
    );
    assert!(!pwned.exists(), "the workspace's command ran");
    let status = lsp(&run, json!({"action": "status"})).await.unwrap();
    assert!(
        status.contains("held back until `tether trust`, from the workspace's tether.toml: lsp.servers.fake.command"),
        "{status}"
    );
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_answer_from_a_project_that_failed_to_load_says_so() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "unhealthy");
    let out = lsp(&run, hover()).await.unwrap();
    assert!(
        out.contains("fake has nothing to say about `main` at main.rs:1; but fake says the project loaded with an error: Failed to load workspace"),
        "{out}"
    );
    let status = lsp(&run, json!({"action": "status"})).await.unwrap();
    assert!(
        status.contains("fake says the project loaded with an error"),
        "{status}"
    );
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_binary_inside_an_untrusted_workspace_is_not_started() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "silent");
    drop(run);
    // The same server, but its binary came with the repository.
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("bin")).unwrap();
    let inside = ws.join("bin/fake-lsp");
    std::fs::copy(common::fake_lsp(), &inside).unwrap();
    let config = format!(
        "[lsp.servers.fake]\ncommand = [{:?}, \"silent\"]\nroot_markers = [\"fake.marker\"]\n\
         [lsp.languages.rust]\nservers = [\"fake\"]\n",
        inside.display().to_string()
    );
    let run = common::run_with_config(dir.path(), &config);
    let err = lsp(&run, hover()).await.unwrap_err();
    assert!(
        err.contains("lies inside this untrusted workspace, so it is not run (run `tether trust` to allow it)"),
        "{err}"
    );
    assert!(
        fakes().is_empty(),
        "the workspace's own binary ran: {:?}",
        fakes()
    );
    none_left(run).await;
}

/// An edit of main.rs under `mode`: it lands, within the budget, and the result says
/// `expect` and never clean.
async fn a_write_lands_and_says(mode: &str, expect: &str) {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), mode);
    // Starts the server; a hanging one answers nothing, which is fine here.
    let _ = lsp(&run, hover()).await;
    let args =
        json!({"path": "main.rs", "old_string": "fn main() {}", "new_string": "fn main() { }"});
    let started = Instant::now();
    let out = run
        .runtime()
        .call(Surface::Agent, "edit", args, CancellationToken::new())
        .await
        .unwrap()
        .to_text();
    assert!(started.elapsed() < Duration::from_secs(15), "liveness");
    assert!(out.contains(expect), "{mode}: {out}");
    assert!(
        !out.contains("clean") && !out.contains("(new"),
        "{mode}: {out}"
    );
    let text = std::fs::read_to_string(dir.path().join("ws/main.rs")).unwrap();
    assert_eq!(text, "fn main() { }\n", "{mode}: the write did not land");
    none_left(run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lands_and_says_pending_when_the_server_never_answers() {
    let expect = "diagnostics (fake) after this write:\n  main.rs: pending (fake gave no answer for this version within 500 ms";
    a_write_lands_and_says("silent", expect).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lands_when_the_server_crashes_on_it() {
    a_write_lands_and_says("crash-on-change", "main.rs: unavailable (fake is crashed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lands_and_is_pending_while_the_server_publishes_only_stale_versions() {
    let expect = "main.rs: pending (fake gave no answer for this version within 500 ms";
    a_write_lands_and_says("stale", expect).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_lands_and_says_pending_when_the_server_hangs() {
    a_write_lands_and_says("hang", "main.rs: pending (fake gave no answer").await;
}

/// This process's resident memory, in MiB.
fn rss_mib() -> u64 {
    tether_proc::resident_kib(std::process::id()).unwrap_or(0) / 1024
}

#[tokio::test]
async fn a_server_that_floods_diagnostics_is_kept_within_bounds_and_status_says_so() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "flood");
    let before = rss_mib();
    let _ = lsp(&run, hover()).await;
    let end = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let status = lsp(&run, json!({"action": "status"})).await.unwrap();
        // The open file's 3,000 findings come last, after the 25,000 other files.
        if status.contains("2000 finding(s) cut") || Instant::now() > end {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(status.contains("file(s) dropped"), "{status}");
    assert!(status.contains("2000 finding(s) cut"), "{status}");
    // Writes take snapshots of everything published; they share the store's lists.
    for n in 0..5 {
        let args =
            json!({"path": "main.rs", "content": format!("fn main() {{ let _x = {n}; }}\n")});
        let _ = run
            .runtime()
            .call(Surface::Agent, "write", args, CancellationToken::new())
            .await;
    }
    eprintln!(
        "resident memory: {before} MiB before the flood, {} MiB after it and 5 writes",
        rss_mib()
    );
    none_left(run).await;
}

/// A write's result names its number, the late answer it promised names the same number, and
/// a front end ending the run can wait for that answer instead of leaving the promise unkept.
#[tokio::test]
async fn a_late_answer_names_the_write_and_is_waited_for_at_the_end() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "late");
    // Started and given the file first (this server takes 1.5 s over every text it is sent,
    // one after the other), so the writes' own texts are all it still has to get through.
    let _ = lsp(&run, hover()).await;
    let write = |content: &str| {
        let runtime = run.runtime().clone();
        let args = json!({"path": "main.rs", "content": content});
        async move {
            runtime
                .call(Surface::Agent, "write", args, CancellationToken::new())
                .await
                .map(|o| o.to_text())
                .unwrap_or_else(|e| e.to_string())
        }
    };
    let first = write("fn main() { let a = 1; }\n").await;
    assert!(first.contains("write #1:"), "{first}");
    let failed = run
        .runtime()
        .call(
            Surface::Agent,
            "edit",
            json!({"path": "main.rs", "old_string": "no such text", "new_string": "x"}),
            CancellationToken::new(),
        )
        .await;
    assert!(failed.is_err(), "the edit should have failed");
    let second = write("fn main() { let b = 2; }\n").await;
    // A failed call is not a write: the numbers run without gaps.
    assert!(
        second.contains("write #2:\ndiagnostics (fake) after this write:"),
        "{second}"
    );
    assert!(
        second.contains("pending") && second.contains("notice about write #2"),
        "{second}"
    );
    run.settle(Duration::from_secs(20)).await;
    let (notices, _) = run.runtime().notices().drain();
    let text: Vec<String> = notices.iter().map(|n| n.line()).collect();
    let text = text.join("\n");
    assert!(
        text.contains("write #2") && text.contains("late error"),
        "no late answer after settling: {text}"
    );
    none_left(run).await;
}

/// A server that names places outside the workspace, a device and a FIFO: each is shown as
/// `path:line` without its content, at once, and nothing of them reaches the answer.
#[tokio::test]
async fn places_outside_the_workspace_or_not_regular_files_are_named_not_read() {
    let _serial = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let run = run_with(dir.path(), "elsewhere");
    let fifo = dir.path().join("ws/fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let definition =
        json!({"action": "definition", "file": "main.rs", "line": 1, "symbol": "main"});
    let out = tokio::time::timeout(Duration::from_secs(60), lsp(&run, definition))
        .await
        .expect("the answer hung on a place it should not read")
        .unwrap();
    for place in [
        "/proc/self/environ:1",
        "/dev/zero:1",
        "/etc/passwd:1",
        "fifo:1",
    ] {
        assert!(out.contains(place), "{place} not named: {out}");
    }
    assert!(out.contains("not shown"), "{out}");
    assert!(!out.contains("root:"), "/etc/passwd was read: {out}");
    assert!(!out.contains("PATH="), "the environment was read: {out}");
    none_left(run).await;
}

/// A server that checks on save sends the check's finding only after the answer to the
/// request that follows the check's end, an answer of `null` that did not come from the worker
/// its publications are sent from (rust-analyzer answers so while it loads files): that answer
/// is not taken as proof that the check's findings are all in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checks_finding_sent_after_the_next_answer_is_still_waited_for() {
    let _one_at_a_time = SERIAL.lock().await;
    let dir = tempfile::tempdir().unwrap();
    // A separate check runs only in a trusted workspace.
    let (ws, cfg) = (dir.path().join("ws"), dir.path().join("cfg"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&cfg).unwrap();
    tether::TrustStore::new(&cfg)
        .trust(&ws.canonicalize().unwrap())
        .unwrap();
    let run = run_with_behaviour(dir.path(), "late-check", "separate_check = true\n");
    let out = lsp(&run, json!({"action": "diagnostics", "file": "main.rs"}))
        .await
        .unwrap();
    assert!(out.contains("unused variable: `spare`"), "{out}");
    none_left(run).await;
}

/// A burst of outside changes a server is slow to answer is told in parts, each within two
/// answer budgets of the last, with a count of what is still being diagnosed: on x/tools a
/// 20,000-file switch kept gopls busy and tether silent for more than 15 minutes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_diagnosis_of_outside_changes_is_told_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_with_behaviour(dir.path(), "late", "done = \"publish\"\n");
    lsp(&run, hover()).await.unwrap();
    run.warm().await;
    // 80 files: the fake takes each in turn and answers it 1.5 s later, so most outlast the
    // 2 s budget and the burst runs far past the 4 s between its notices.
    let ws = dir.path().join("ws");
    for n in 0..80 {
        std::fs::write(ws.join(format!("m{n:02}.rs")), format!("fn m{n}() {{}}\n")).unwrap();
    }
    let began = Instant::now();
    let told = common::read_until(&run, "main.rs", 120, |out| {
        out.contains("still being diagnosed")
    })
    .await;
    assert!(
        told.contains("of the 80 files changed outside are still being diagnosed"),
        "{told}"
    );
    assert!(began.elapsed() < Duration::from_secs(30), "liveness");
    none_left(run).await;
}
