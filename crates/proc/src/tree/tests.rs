#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{ChildSpec, LongChild};

fn sh(script: &str) -> ChildSpec {
    ChildSpec {
        argv: vec!["sh".into(), "-c".into(), script.into()],
        ..ChildSpec::default()
    }
}

/// The pid written to `file`, once it is there.
fn pid_in(file: &Path) -> u32 {
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid in {}", file.display());
}

/// True once `pid` is neither running nor a zombie left unreaped.
fn reaped_within(pid: u32, limit: Duration) -> bool {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A child whose descendant leaves its group and session twice removed (`setsid` in a shell
/// that exits at once: a double-forked daemon), writing the daemon's pid to `file`.
fn with_daemon(file: &Path) -> (LongChild, u32) {
    let script = format!(
        "setsid sh -c 'sleep 300 & echo $! > {}'; sleep 300",
        file.display()
    );
    let child = LongChild::spawn(&sh(&script)).unwrap();
    let daemon = pid_in(file);
    assert!(crate::is_running(daemon));
    (child, daemon)
}

fn file(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[tokio::test]
async fn a_daemon_that_left_the_group_goes_with_its_child_and_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let (mut c, daemon) = with_daemon(&file(&dir, "shutdown"));
    c.shutdown(Duration::from_millis(300)).await;
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "shutdown left {daemon}"
    );

    let (mut c, daemon) = with_daemon(&file(&dir, "kill"));
    c.kill();
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "kill left {daemon}"
    );

    let (c, daemon) = with_daemon(&file(&dir, "drop"));
    drop(c);
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "drop left {daemon}"
    );
}

#[tokio::test]
async fn a_daemon_still_goes_after_its_child_exited_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = file(&dir, "daemon");
    let script = format!("setsid sh -c 'sleep 300 & echo $! > {}'", pidfile.display());
    let mut c = LongChild::spawn(&sh(&script)).unwrap();
    let daemon = pid_in(&pidfile);
    assert!(c.exited_within(Duration::from_secs(5)).await.is_some());
    assert!(
        crate::is_running(daemon),
        "the daemon should outlive its parent"
    );
    drop(c);
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "drop left {daemon}"
    );
}

#[tokio::test]
async fn a_daemon_that_scrubbed_its_environment_is_known_by_its_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = file(&dir, "daemon");
    // No mark (env -i) and no parent once the child exits: only the census saw where it came from.
    let script = format!(
        "setsid env -i sleep 300 & echo $! > {}; sleep 2",
        pidfile.display()
    );
    let mut c = LongChild::spawn(&sh(&script)).unwrap();
    let daemon = pid_in(&pidfile);
    assert!(c.exited_within(Duration::from_secs(5)).await.is_some());
    assert!(
        crate::is_running(daemon),
        "the daemon should outlive its parent"
    );
    drop(c);
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "drop left {daemon}"
    );
}

#[tokio::test]
async fn the_end_of_a_run_takes_strays_no_child_owns() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = file(&dir, "stray");
    // Scrubbed and orphaned at once, before any census could see it: no child owns it.
    let script = format!("setsid env -i sleep 300 & echo $! > {}", pidfile.display());
    let mut c = LongChild::spawn(&sh(&script)).unwrap();
    let stray = pid_in(&pidfile);
    assert!(c.exited_within(Duration::from_secs(5)).await.is_some());
    drop(c);
    super::sweep_strays();
    assert!(reaped_within(stray, Duration::from_secs(3)), "left {stray}");
}

#[tokio::test]
async fn a_cut_short_one_shot_takes_its_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = file(&dir, "daemon");
    let script = format!(
        "setsid sh -c 'sleep 300 & echo $! > {}'; sleep 300",
        pidfile.display()
    );
    let argv: Vec<String> = ["sh", "-c", &script]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let err = crate::output_with_deadline(&argv, Duration::from_millis(500)).await;
    assert!(err.is_err());
    let daemon = pid_in(&pidfile);
    assert!(
        reaped_within(daemon, Duration::from_secs(3)),
        "left {daemon}"
    );
}

/// Run only as the victim of the next test: a tether stand-in holding a child whose daemons
/// left its group, one of them with its environment scrubbed; it sleeps until killed.
#[tokio::test]
#[ignore = "run by a_sigkill_of_tether_leaves_no_descendant"]
async fn victim_holding_daemons() {
    let Some(dir) = std::env::var_os("TETHER_PROC_VICTIM_DIR").map(PathBuf::from) else {
        return;
    };
    let scrubbed = format!(
        "setsid env -i sleep 300 & echo $! > {}/scrubbed; sleep 300",
        dir.display()
    );
    let _c = LongChild::spawn(&sh(&scrubbed)).unwrap();
    pid_in(&dir.join("scrubbed"));
    // Two census walks, so the scrubbed one has been reported to the reaper.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    // Started just before the kill, so (most likely) only its mark names it.
    let marked = format!(
        "setsid sh -c 'sleep 300 & echo $! > {}/marked'; sleep 300",
        dir.display()
    );
    let _d = LongChild::spawn(&sh(&marked)).unwrap();
    pid_in(&dir.join("marked"));
    std::fs::write(dir.join("ready"), "").unwrap();
    tokio::time::sleep(Duration::from_secs(300)).await;
}

#[test]
fn a_sigkill_of_tether_leaves_no_descendant() {
    let dir = tempfile::tempdir().unwrap();
    let mut victim = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tree::tests::victim_holding_daemons",
            "--ignored",
            "--nocapture",
        ])
        .env("TETHER_PROC_VICTIM_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.path().join("ready");
    for _ in 0..1000 {
        if ready.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(ready.exists(), "the victim never got ready");
    let marked = pid_in(&dir.path().join("marked"));
    let scrubbed = pid_in(&dir.path().join("scrubbed"));
    assert!(crate::is_running(marked) && crate::is_running(scrubbed));
    victim.kill().unwrap();
    victim.wait().unwrap();
    for pid in [marked, scrubbed] {
        assert!(
            crate::gone_within(pid, Duration::from_secs(5)),
            "{pid} outlived a SIGKILL of its tether"
        );
    }
}
