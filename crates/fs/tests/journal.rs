//! Journal crash-recovery tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tether_fs::{ChangeOp, Journal, RecoveryAction, Workspace, hash_bytes, workspace_state_dir};

/// The state folder these tests keep journals in (keyed by each test's own root inside).
fn state() -> PathBuf {
    std::env::temp_dir().join("tether-fs-test-state")
}

/// The journal folder of `ws`.
fn sdir(ws: &Workspace) -> PathBuf {
    workspace_state_dir(&state(), ws.root())
}

const CHILD_ENV: &str = "TETHER_FS_CRASH_CHILD_ROOT";
const ORIGINALS: [(&str, &str); 3] = [
    ("a.txt", "alpha"),
    ("b.txt", "beta"),
    ("sub/c.txt", "gamma"),
];

fn seed(root: &Path) {
    for (name, body) in ORIGINALS {
        let p = root.join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
}

/// In the child: commit a 4-file transaction that hangs before its third rename.
fn act_as_child(root: &Path) {
    let ws = Workspace::new(root).unwrap();
    let (j, _) = Journal::open(&ws, &state()).unwrap();
    let mut ops: Vec<ChangeOp> = ORIGINALS
        .iter()
        .map(|(name, body)| ChangeOp::Write {
            path: ws.resolve_write(name).unwrap(),
            content: format!("{body} CHANGED").into_bytes(),
            expect: hash_bytes(body.as_bytes()),
        })
        .collect();
    ops.insert(
        1,
        ChangeOp::Create {
            path: ws.resolve_write("created.txt").unwrap(),
            content: b"new".to_vec(),
        },
    );
    let marker = root.join("marker");
    let fault = move |n: usize| {
        if n == 2 {
            fs::write(&marker, "").unwrap();
            std::thread::sleep(Duration::from_secs(60));
        }
        Ok(())
    };
    let _ = j.commit_with_fault(ops, &fault);
    panic!("the parent should have killed this process");
}

/// Runs `test` as a child that hangs mid-commit, waits for it to be half-way, and kills it.
fn crash_child_mid_commit(dir: &Path, test: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture"])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let marker = dir.join("marker");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("child never reached the third rename");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Two renames have happened: the files really are half-written.
    assert_eq!(
        fs::read_to_string(dir.join("a.txt")).unwrap(),
        "alpha CHANGED"
    );
    assert!(dir.join("created.txt").exists());
    child.kill().unwrap();
    child.wait().unwrap();
    fs::remove_file(&marker).unwrap();
}

#[test]
fn crash_mid_commit_is_rolled_back_by_next_run() {
    if let Some(root) = std::env::var_os(CHILD_ENV) {
        act_as_child(Path::new(&root));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    crash_child_mid_commit(dir.path(), "crash_mid_commit_is_rolled_back_by_next_run");

    let ws = Workspace::new(dir.path()).unwrap();
    let (_j, reports) = Journal::open(&ws, &state()).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = &reports[0];
    assert_eq!(r.action, RecoveryAction::RolledBack);
    assert_eq!(r.files, ["a.txt", "created.txt", "b.txt", "sub/c.txt"]);
    let msg = r.to_string();
    assert!(msg.starts_with(&format!("recovered an interrupted transaction of run {}: rolled back 4 files (a.txt, created.txt", r.run_id)), "{msg}");

    for (name, body) in ORIGINALS {
        assert_eq!(
            fs::read_to_string(dir.path().join(name)).unwrap(),
            body,
            "{name}"
        );
    }
    assert!(!dir.path().join("created.txt").exists());
    let left: Vec<PathBuf> = fs::read_dir(dir.path().join(".tether"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("journal-") || n.starts_with("backup-") || n.contains(&r.run_id)
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".tether", "a.txt", "b.txt", "sub"], "no temps left");
}

#[test]
fn live_runs_journal_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let ws = Workspace::new(dir.path()).unwrap();
    let (first, _) = Journal::open(&ws, &state()).unwrap();
    // Pretend the first run is mid-transaction: it has renamed a temp over a.txt, not yet
    // over b.txt.
    let backup_rel = format!(".tether/backup-{}-1-0", first.run_id());
    let backup = dir.path().join(&backup_rel);
    fs::write(&backup, "alpha").unwrap();
    fs::write(dir.path().join("a.txt"), "alpha CHANGED").unwrap();
    let backup_b = format!(".tether/backup-{}-1-1", first.run_id());
    fs::write(dir.path().join(&backup_b), "beta").unwrap();
    let journal = sdir(&ws).join(format!("journal-{}.json", first.run_id()));
    let body = serde_json::json!({
        "version": 2, "root": ws.root(), "run_id": first.run_id(), "txn_id": 1, "state": "applying",
        "entries": [{"target": "a.txt", "temp": null, "backup": backup_rel,
            "new_hash": hash_bytes(b"alpha CHANGED").to_string(),
            "old_hash": hash_bytes(b"alpha").to_string()},
            {"target": "b.txt", "temp": null, "backup": backup_b,
            "new_hash": hash_bytes(b"beta CHANGED").to_string(),
            "old_hash": hash_bytes(b"beta").to_string()}],
        "created_dirs": [],
    });
    fs::write(&journal, body.to_string()).unwrap();

    let (second, reports) = Journal::open(&ws, &state()).unwrap();
    assert_ne!(first.run_id(), second.run_id());
    assert!(reports.is_empty(), "{reports:?}");
    assert!(journal.exists());
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha CHANGED"
    );

    // Once the first run is gone, its journal is recovered.
    drop(first);
    let (_third, reports) = Journal::open(&ws, &state()).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].action, RecoveryAction::RolledBack);
    assert_eq!(reports[0].files, ["a.txt", "b.txt"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "alpha"
    );
    assert!(!journal.exists() && !backup.exists());
    drop(second);
}

#[test]
fn committed_journal_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let ws = Workspace::new(dir.path()).unwrap();
    fs::create_dir_all(dir.path().join(".tether")).unwrap();
    let backup = dir.path().join(".tether/backup-rdead-1-0");
    fs::write(&backup, "old").unwrap();
    let journal = sdir(&ws).join("journal-rdead.json");
    fs::create_dir_all(sdir(&ws)).unwrap();
    let body = serde_json::json!({
        "version": 2, "root": ws.root(), "run_id": "rdead", "txn_id": 1, "state": "committed",
        "entries": [{"target": "b.txt", "temp": null, "backup": ".tether/backup-rdead-1-0", "new_hash": null}],
        "created_dirs": [],
    });
    fs::write(&journal, body.to_string()).unwrap();
    let (_j, reports) = Journal::open(&ws, &state()).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].action, RecoveryAction::Completed);
    assert_eq!(
        fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta"
    );
    assert!(!journal.exists() && !backup.exists());
}

/// A run that died after its last rename, before it removed its journal, left a commit that
/// stands: every target holds its new content, so recovery completes it rather than undoing
/// a write the agent was told had happened.
#[test]
fn a_journal_whose_renames_all_happened_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let ws = Workspace::new(dir.path()).unwrap();
    fs::create_dir_all(dir.path().join(".tether")).unwrap();
    let backup = dir.path().join(".tether/backup-rdead-1-0");
    fs::write(&backup, "beta").unwrap();
    fs::write(dir.path().join("b.txt"), "beta CHANGED").unwrap();
    let journal = sdir(&ws).join("journal-rdead.json");
    fs::create_dir_all(sdir(&ws)).unwrap();
    let entry = |new: &str| {
        serde_json::json!({"target": "b.txt", "temp": null, "backup": ".tether/backup-rdead-1-0",
            "new_hash": hash_bytes(new.as_bytes()).to_string(),
            "old_hash": hash_bytes(b"beta").to_string()})
    };
    let body = serde_json::json!({
        "version": 2, "root": ws.root(), "run_id": "rdead", "txn_id": 1, "state": "applying",
        "entries": [entry("beta CHANGED")], "created_dirs": [],
    });
    fs::write(&journal, body.to_string()).unwrap();
    let (_j, reports) = Journal::open(&ws, &state()).unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].action, RecoveryAction::Completed);
    let now = fs::read_to_string(dir.path().join("b.txt")).unwrap();
    assert_eq!(now, "beta CHANGED");
    assert!(!journal.exists() && !backup.exists());
}

#[test]
fn several_live_journals_coexist() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let ws = Workspace::new(dir.path()).unwrap();
    let (a, _) = Journal::open(&ws, &state()).unwrap();
    let (b, _) = Journal::open(&ws, &state()).unwrap();
    assert_ne!(a.run_id(), b.run_id());
    let w = |name: &str, old: &str, new: &str| ChangeOp::Write {
        path: ws.resolve_write(name).unwrap(),
        content: new.into(),
        expect: hash_bytes(old.as_bytes()),
    };
    a.commit(vec![w("a.txt", "alpha", "A")]).unwrap();
    b.commit(vec![w("b.txt", "beta", "B")]).unwrap();
    let lock = sdir(&ws).join(format!("run-{}.lock", a.run_id()));
    assert!(lock.exists());
    drop(a);
    assert!(!lock.exists());
}

#[test]
fn edits_made_after_a_crash_are_never_overwritten() {
    if let Some(root) = std::env::var_os(CHILD_ENV) {
        act_as_child(Path::new(&root));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    crash_child_mid_commit(dir.path(), "edits_made_after_a_crash_are_never_overwritten");
    // The user saves a.txt in an editor before any run recovers.
    fs::write(dir.path().join("a.txt"), "user edit").unwrap();

    let ws = Workspace::new(dir.path()).unwrap();
    for _ in 0..2 {
        let (_j, reports) = Journal::open(&ws, &state()).unwrap();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(
            matches!(reports[0].action, RecoveryAction::Incomplete { .. }),
            "{:?}",
            reports[0]
        );
        let msg = reports[0].to_string();
        assert!(
            msg.contains("a.txt") && msg.contains("changed after"),
            "{msg}"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "user edit"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "beta"
        );
        assert!(!dir.path().join("created.txt").exists());
    }
}

#[test]
fn a_run_whose_rollback_failed_makes_no_more_writes() {
    let dir = tempfile::tempdir().unwrap();
    seed(dir.path());
    let ws = Workspace::new(dir.path()).unwrap();
    let (j, _) = Journal::open(&ws, &state()).unwrap();
    let w = |name: &str, old: &str| ChangeOp::Write {
        path: ws.resolve_write(name).unwrap(),
        content: b"new".to_vec(),
        expect: hash_bytes(old.as_bytes()),
    };
    // The second rename fails, after someone else changed the first file: rollback must not
    // overwrite their bytes, so it fails for real and the journal stays.
    let a = dir.path().join("a.txt");
    let fault = move |n: usize| {
        if n == 1 {
            fs::write(&a, "someone else").unwrap();
            return Err(std::io::Error::other("injected"));
        }
        Ok(())
    };
    let err = j
        .commit_with_fault(vec![w("a.txt", "alpha"), w("b.txt", "beta")], &fault)
        .unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    let kept = sdir(&ws).join(format!("journal-{}.json", j.run_id()));
    assert!(kept.exists(), "the failed rollback's journal was not kept");
    let err = j.commit(vec![w("b.txt", "beta")]).unwrap_err().to_string();
    assert!(err.contains("could not be rolled back"), "{err}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "someone else"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("b.txt")).unwrap(),
        "beta"
    );
}
