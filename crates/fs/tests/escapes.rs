//! Attacks on the write door from a hostile workspace: crafted journals, a `.tether` symlink,
//! folders swapped for symlinks while operations run, special files, a second writer, and
//! set-id bits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tether_fs::{
    ChangeOp, FsError, Journal, RecoveryAction, Workspace, hash_bytes, workspace_state_dir,
};

/// A workspace `ws/` next to a folder `outside/` holding `victim.txt`, plus a state folder.
struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    state: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside, state) = (base.join("ws"), base.join("outside"), base.join("state"));
    for d in [&root, &outside] {
        fs::create_dir(d).unwrap();
    }
    fs::write(outside.join("victim.txt"), "precious").unwrap();
    fs::write(root.join("a.txt"), "alpha").unwrap();
    Scene {
        _dir: dir,
        root,
        outside,
        state,
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Writes a dead run's journal (`rdead`) into the workspace's state folder.
fn plant_journal(s: &Scene, ws: &Workspace, entries: serde_json::Value) -> PathBuf {
    let dir = workspace_state_dir(&s.state, ws.root());
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("journal-rdead.json");
    let body = serde_json::json!({
        "version": 2, "root": ws.root(), "run_id": "rdead", "txn_id": 1,
        "state": "applying", "entries": entries, "created_dirs": [],
    });
    fs::write(&path, body.to_string()).unwrap();
    path
}

#[test]
fn a_journal_naming_a_path_outside_is_set_aside_untouched() {
    let s = scene();
    let ws = Workspace::new(&s.root).unwrap();
    // Rollback deletes a "created" file whose hash matches: aim it at the victim.
    let journal = plant_journal(
        &s,
        &ws,
        serde_json::json!([{"target": "../outside/victim.txt", "temp": null, "backup": null,
            "new_hash": hash_bytes(b"precious").to_string()}]),
    );
    let (_j, reports) = Journal::open(&ws, &s.state).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let RecoveryAction::Refused { detail, moved_to } = &reports[0].action else {
        panic!("{reports:?}");
    };
    assert!(detail.contains("not a plain path inside"), "{detail}");
    assert!(reports[0].to_string().contains("did not act on"));
    assert_eq!(
        fs::read_to_string(s.outside.join("victim.txt")).unwrap(),
        "precious"
    );
    assert!(!journal.exists() && moved_to.exists());
    // Moved aside, it is never looked at again.
    let (_j2, reports) = Journal::open(&ws, &s.state).unwrap();
    assert!(reports.is_empty(), "{reports:?}");
}

#[test]
fn a_journal_whose_temp_is_a_user_file_is_set_aside() {
    let s = scene();
    fs::write(s.root.join("notes.txt"), "mine").unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    plant_journal(
        &s,
        &ws,
        serde_json::json!([{"target": "a.txt", "temp": "notes.txt", "backup": null,
            "new_hash": hash_bytes(b"alpha").to_string()}]),
    );
    let (_j, reports) = Journal::open(&ws, &s.state).unwrap();
    assert!(
        matches!(&reports[0].action, RecoveryAction::Refused { detail, .. } if detail.contains("temp")),
        "{reports:?}"
    );
    assert_eq!(
        fs::read_to_string(s.root.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(fs::read_to_string(s.root.join("a.txt")).unwrap(), "alpha");
}

#[test]
fn journals_shipped_inside_the_workspace_are_never_acted_on() {
    let s = scene();
    fs::create_dir(s.root.join(".tether")).unwrap();
    // The old format: absolute paths, recovered on every start.
    let body = serde_json::json!({
        "version": 1, "run_id": "rx", "txn_id": 1, "state": "applying",
        "entries": [{"target": s.outside.join("victim.txt"), "temp": null, "backup": null,
            "new_hash": hash_bytes(b"precious").to_string()}],
        "created_dirs": [],
    });
    let shipped = s.root.join(".tether/journal-rx.json");
    fs::write(&shipped, body.to_string()).unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    let (_j, reports) = Journal::open(&ws, &s.state).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let msg = reports[0].to_string();
    assert!(msg.contains("inside the workspace"), "{msg}");
    assert_eq!(
        fs::read_to_string(s.outside.join("victim.txt")).unwrap(),
        "precious"
    );
    assert!(!shipped.exists());
    assert!(s.root.join(".tether/journal-rx.json.ignored").exists());
}

#[test]
fn a_tether_symlink_refuses_to_start() {
    let s = scene();
    std::os::unix::fs::symlink(&s.outside, s.root.join(".tether")).unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    let err = Journal::open(&ws, &s.state).unwrap_err().to_string();
    assert!(err.contains("symlink") && err.contains(".tether"), "{err}");
    assert_eq!(listing(&s.outside), ["victim.txt"]);
    fs::remove_file(s.root.join(".tether")).unwrap();
    fs::write(s.root.join(".tether"), "").unwrap();
    let err = Journal::open(&ws, &s.state).unwrap_err().to_string();
    assert!(err.contains("a file"), "{err}");
}

#[test]
fn special_files_are_refused_without_blocking() {
    let s = scene();
    let fifo = s.root.join("pipe");
    common::make_fifo(&fifo);
    let ws = Workspace::new(&s.root).unwrap();
    let started = Instant::now();
    let path = ws.resolve_write("pipe").unwrap();
    let err = ws.read_hashed(&path).unwrap_err();
    assert!(matches!(err, FsError::NotRegular { .. }), "{err}");
    assert!(err.to_string().contains("FIFO"), "{err}");
    let err = ws.open_read(&fifo).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    // A hang would never get here; the bound only tells a hang from a slow machine.
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_replaced_file_keeps_its_owner_or_loses_its_set_id_bits() {
    let s = scene();
    let file = s.root.join("tool");
    fs::write(&file, "v1").unwrap();
    let root_user = rustix::process::geteuid().is_root();
    if root_user {
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    }
    fs::set_permissions(&file, fs::Permissions::from_mode(0o4755)).unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    let (j, _) = Journal::open(&ws, &s.state).unwrap();
    j.commit(vec![ChangeOp::Write {
        path: ws.resolve_write("tool").unwrap(),
        content: b"v2".to_vec(),
        expect: hash_bytes(b"v1"),
    }])
    .unwrap();
    let meta = fs::metadata(&file).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "v2");
    if root_user {
        assert_eq!((meta.uid(), meta.gid()), (65534, 65534), "owner kept");
    }
    assert_eq!(meta.mode() & 0o7777, 0o4755, "same owner, same bits");
}

/// How many reads the flip must catch between their path check and its use: a run where it
/// never did would pass without testing anything. A write's window, since a commit makes one
/// journal write, is too narrow for a flipping thread to hit often (4 in 100,000 attempts
/// under CI load), so it is hit on purpose in the test after this one.
const READS_CAUGHT: usize = 3;

/// Whether `e` is the refusal of a symlink swapped in after the path was checked.
fn caught_mid_operation(e: &FsError) -> bool {
    e.to_string()
        .contains("a symlink appeared on the path while it was used")
}

#[test]
fn a_folder_flipped_to_a_symlink_never_leads_outside() {
    let s = scene();
    let d = s.root.join("d");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("secret.txt"), "inside").unwrap();
    fs::write(s.outside.join("secret.txt"), "OUTSIDE").unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    let (j, _) = Journal::open(&ws, &s.state).unwrap();
    let stop = AtomicBool::new(false);
    let (mut created, mut read_inside, mut attempts) = (0, 0, 0);
    let (mut caught_writes, mut caught_reads) = (0, 0);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            // A write may create a fresh `d` while the real one is parked; then the flip
            // carries on with whichever `d` is there. Either way everything stays inside.
            let parked = s.root.join("d.real");
            while !stop.load(Ordering::Relaxed) {
                if fs::rename(&d, &parked).is_err() {
                    continue;
                }
                let _ = std::os::unix::fs::symlink(&s.outside, &d);
                std::thread::sleep(Duration::from_micros(50));
                let _ = fs::remove_file(&d);
                if fs::rename(&parked, &d).is_err() {
                    let _ = fs::rename(&parked, s.root.join(format!("d.{}", rand_tag())));
                }
                std::thread::sleep(Duration::from_micros(150));
            }
        });
        // However the two threads are scheduled, go on until the flip has landed mid-operation
        // often enough; the bound only ends a run in which the flipper never gets to run.
        while (attempts < 400 || caught_reads < READS_CAUGHT) && attempts < 100_000 {
            attempts += 1;
            let made = ws
                .resolve_write(&format!("d/f{attempts}.txt"))
                .and_then(|path| {
                    j.commit(vec![ChangeOp::Create {
                        path,
                        content: b"x".to_vec(),
                    }])
                });
            match made {
                Ok(_) => created += 1,
                Err(e) => caught_writes += usize::from(caught_mid_operation(&e)),
            }
            match ws
                .resolve_read("d/secret.txt")
                .and_then(|abs| ws.open_read(&abs))
            {
                Ok(mut f) => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut f, &mut text).unwrap();
                    assert_eq!(text, "inside", "read outside content");
                    read_inside += 1;
                }
                Err(e) => caught_reads += usize::from(caught_mid_operation(&e)),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert!(
        caught_reads >= READS_CAUGHT,
        "the flip landed between check and use of {caught_writes} writes and {caught_reads} \
         reads in {attempts} attempts"
    );
    assert_eq!(listing(&s.outside), ["secret.txt", "victim.txt"]);
    let inside: Vec<String> = listing(&s.root)
        .iter()
        .filter(|n| n.starts_with('d'))
        .flat_map(|n| listing(&s.root.join(n)))
        .collect();
    let made = inside.iter().filter(|n| n.starts_with('f')).count();
    assert_eq!(made, created, "every reported create landed inside");
    assert!(created > 0, "no write got through in {attempts} attempts");
    let temps: Vec<_> = inside.iter().filter(|n| n.starts_with(".tether")).collect();
    assert!(temps.is_empty(), "{temps:?}");
    eprintln!(
        "{attempts} attempts: caught mid-operation {caught_writes} writes and {caught_reads} \
         reads; created {created}, read {read_inside}"
    );
}

/// A folder of the path turned into a link to the outside after a write's temp is in place and
/// before its rename, every time: the rename is refused and nothing lands outside. (The temp
/// stays in the folder that was moved away: its removal goes by path, which now leads to the
/// link, and is refused too.)
#[test]
fn a_folder_flipped_between_a_writes_check_and_its_rename_is_refused() {
    let s = scene();
    let d = s.root.join("d");
    fs::create_dir(&d).unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    let (j, _) = Journal::open(&ws, &s.state).unwrap();
    let parked = s.root.join("d.real");
    let path = ws.resolve_write("d/flipped.txt").unwrap();
    let flip = |n: usize| {
        if n == 0 {
            fs::rename(&d, &parked)?;
            std::os::unix::fs::symlink(&s.outside, &d)?;
        }
        Ok(())
    };
    let op = ChangeOp::Create {
        path,
        content: b"x".to_vec(),
    };
    let err = j.commit_with_fault(vec![op], &flip).unwrap_err();
    assert!(caught_mid_operation(&err), "{err}");
    assert_eq!(listing(&s.outside), ["victim.txt"]);
    assert!(!listing(&parked).contains(&"flipped.txt".to_string()));
}

/// A name no other flip has used.
fn rand_tag() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

#[test]
fn two_writers_on_one_workspace_lose_no_confirmed_edit() {
    let s = scene();
    let tokens = |p: char| (0..150).map(move |i| format!("<{p}{i:03}>"));
    let body: String = tokens('a')
        .chain(tokens('b'))
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(s.root.join("shared.txt"), &body).unwrap();
    let ws = Workspace::new(&s.root).unwrap();
    // Two journals take two separate locks, exactly as two processes do.
    let writers = [
        Journal::open(&ws, &s.state).unwrap().0,
        Journal::open(&ws, &s.state).unwrap().0,
    ];
    let confirmed: Vec<Vec<String>> = std::thread::scope(|sc| {
        let handles: Vec<_> = writers
            .iter()
            .zip(['a', 'b'])
            .map(|(j, p)| {
                let ws = &ws;
                sc.spawn(move || {
                    let mut done = Vec::new();
                    for old in tokens(p) {
                        let new = old.to_uppercase();
                        let path = ws.resolve_write("shared.txt").unwrap();
                        let (bytes, expect) = ws.read_hashed(&path).unwrap().unwrap();
                        let text = String::from_utf8(bytes).unwrap().replace(&old, &new);
                        let op = ChangeOp::Write {
                            path,
                            content: text.into_bytes(),
                            expect,
                        };
                        if j.commit(vec![op]).is_ok() {
                            done.push(new);
                        }
                    }
                    done
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let end = fs::read_to_string(s.root.join("shared.txt")).unwrap();
    let lost: Vec<&String> = confirmed
        .iter()
        .flatten()
        .filter(|t| !end.contains(*t))
        .collect();
    assert!(lost.is_empty(), "confirmed edits lost: {lost:?}");
}

#[test]
fn a_writer_that_cannot_get_the_workspace_lock_says_so() {
    let s = scene();
    let ws = Workspace::new(&s.root).unwrap();
    let (j, _) = Journal::open(&ws, &s.state).unwrap();
    let j = j.with_lock_wait(Duration::from_millis(200));
    // Another process holds the lock (a second open file description is just that).
    let other = fs::File::open(s.root.join(".tether/write.lock")).unwrap();
    other.lock().unwrap();
    let op = ChangeOp::Write {
        path: ws.resolve_write("a.txt").unwrap(),
        content: b"new".to_vec(),
        expect: hash_bytes(b"alpha"),
    };
    let err = j.commit(vec![op.clone()]).unwrap_err();
    assert!(matches!(err, FsError::Busy { .. }), "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
    assert_eq!(fs::read_to_string(s.root.join("a.txt")).unwrap(), "alpha");
    other.unlock().unwrap();
    j.commit(vec![op]).unwrap();
    assert_eq!(fs::read_to_string(s.root.join("a.txt")).unwrap(), "new");
}
