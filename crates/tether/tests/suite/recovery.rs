//! A run killed half-way through a transaction leaves its journal; the next run rolls it back
//! before anything else and says so on its first result.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tether::{RunBuilder, Surface};
use tether_fs::{ChangeOp, Journal, Workspace};
use tokio_util::sync::CancellationToken;

const CHILD_ENV: &str = "TETHER_RECOVERY_CHILD_ROOT";

/// In the child: commit a 3-file change and hang before the second rename.
fn child(root: &Path) {
    let ws = Workspace::new(root).unwrap();
    let (journal, _) = Journal::open(&ws, &root.join("state")).unwrap();
    let ops = ["a.txt", "b.txt", "c.txt"]
        .iter()
        .map(|name| {
            let path = ws.resolve_write(name).unwrap();
            let (_, expect) = ws.read_hashed(&path).unwrap().unwrap();
            ChangeOp::Write {
                path,
                content: b"new\n".to_vec(),
                expect,
            }
        })
        .collect();
    let marker = root.join("child-is-hanging");
    let _ = journal.commit_with_fault(ops, &|n| {
        if n == 1 {
            std::fs::write(&marker, "").unwrap();
            std::thread::sleep(Duration::from_secs(60));
        }
        Ok(())
    });
}

#[tokio::test]
async fn the_next_run_rolls_back_and_says_so() {
    if let Some(root) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&root));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(dir.path().join(name), "old\n").unwrap();
    }
    let mut kid = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "recovery::the_next_run_rolls_back_and_says_so",
            "--nocapture",
        ])
        .env(CHILD_ENV, dir.path())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join("child-is-hanging").exists() {
        assert!(
            Instant::now() < deadline,
            "the child never reached the fault"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kid.kill().unwrap();
    kid.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "new\n"
    );

    let run = RunBuilder::new(dir.path())
        .user_config_dir(dir.path().join("cfg"))
        .state_dir(dir.path().join("state"))
        .build()
        .unwrap();
    assert_eq!(run.recovered().len(), 1);
    for name in ["a.txt", "b.txt", "c.txt"] {
        assert_eq!(
            std::fs::read_to_string(dir.path().join(name)).unwrap(),
            "old\n",
            "{name}"
        );
    }
    let out = run
        .runtime()
        .call(
            Surface::Agent,
            "read",
            json!({"path": "a.txt"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert!(
        out.contains("Notices:") && out.contains("rolled back"),
        "{out}"
    );
    let again = run
        .runtime()
        .call(
            Surface::Agent,
            "read",
            json!({"path": "a.txt"}),
            CancellationToken::new(),
        )
        .await
        .unwrap()
        .to_text();
    assert!(!again.contains("Notices:"), "{again}");
}
