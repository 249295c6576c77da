//! Transaction commit and rollback tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use tether_fs::{ChangeKind, ChangeOp, FsError, Journal, Workspace, hash_bytes};

fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace, Journal) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        let p = dir.path().join(name);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    let ws = Workspace::new(dir.path()).unwrap();
    let (j, reports) =
        Journal::open(&ws, &std::env::temp_dir().join("tether-fs-test-state")).unwrap();
    assert!(reports.is_empty());
    (dir, ws, j)
}

fn read(ws: &Workspace, rel: &str) -> Option<String> {
    fs::read_to_string(ws.root().join(rel)).ok()
}

fn write(ws: &Workspace, rel: &str, new: &str) -> ChangeOp {
    let path = ws.resolve_write(rel).unwrap();
    let expect = hash_bytes(&fs::read(path.abs()).unwrap());
    ChangeOp::Write {
        path,
        content: new.into(),
        expect,
    }
}

fn create(ws: &Workspace, rel: &str, new: &str) -> ChangeOp {
    ChangeOp::Create {
        path: ws.resolve_write(rel).unwrap(),
        content: new.into(),
    }
}

/// Every file under `dir` except the state folder, to spot leftover temps.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".tether" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            out.extend(
                listing(&e.path())
                    .into_iter()
                    .map(|n| format!("{name}/{n}")),
            );
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn create_modify_delete_rename_in_one_txn() {
    let (_d, ws, j) = setup(&[("a.txt", "a"), ("b.txt", "b"), ("c.txt", "c")]);
    let ops = vec![
        write(&ws, "a.txt", "A"),
        create(&ws, "new/dir/n.txt", "N"),
        ChangeOp::Delete {
            path: ws.resolve_write("b.txt").unwrap(),
            expect: hash_bytes(b"b"),
        },
        ChangeOp::Rename {
            from: ws.resolve_write("c.txt").unwrap(),
            to: ws.resolve_write("moved/c2.txt").unwrap(),
            expect: hash_bytes(b"c"),
            content: None,
        },
    ];
    let r = j.commit(ops).unwrap();
    assert_eq!(r.txn_id, 1);
    assert_eq!(read(&ws, "a.txt").as_deref(), Some("A"));
    assert_eq!(read(&ws, "new/dir/n.txt").as_deref(), Some("N"));
    assert_eq!(read(&ws, "b.txt"), None);
    assert_eq!(read(&ws, "c.txt"), None);
    assert_eq!(read(&ws, "moved/c2.txt").as_deref(), Some("c"));

    let kinds: Vec<_> = r
        .files
        .iter()
        .map(|f| (f.path.rel().to_owned(), f.kind.clone()))
        .collect();
    assert_eq!(kinds[0], ("a.txt".into(), ChangeKind::Modified));
    assert_eq!(kinds[1], ("new/dir/n.txt".into(), ChangeKind::Created));
    assert_eq!(kinds[2], ("b.txt".into(), ChangeKind::Deleted));
    assert_eq!(kinds[3].0, "moved/c2.txt");
    assert!(matches!(&kinds[3].1, ChangeKind::Renamed { from } if from.rel() == "c.txt"));
    assert_eq!(r.files[0].hash_after, Some(hash_bytes(b"A")));
    assert_eq!(r.files[2].hash_after, None);

    // Nothing left behind: no temps, no backups, no journal.
    assert_eq!(
        listing(ws.root()),
        ["a.txt", "moved/c2.txt", "new/dir/n.txt"]
    );
    let state: Vec<_> = fs::read_dir(ws.root().join(".tether"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "write.lock" && n != ".gitignore")
        .collect();
    assert!(state.is_empty(), "{state:?}");
    assert_eq!(
        fs::read_to_string(ws.root().join(".tether/.gitignore")).unwrap(),
        "*\n"
    );

    let r = j.commit(vec![write(&ws, "a.txt", "AA")]).unwrap();
    assert_eq!(r.txn_id, 2);
}

#[test]
fn rename_with_new_content_keeps_mode() {
    let (_d, ws, j) = setup(&[("run.sh", "#!/bin/sh\n")]);
    let p = ws.root().join("run.sh");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    j.commit(vec![ChangeOp::Rename {
        from: ws.resolve_write("run.sh").unwrap(),
        to: ws.resolve_write("bin/run2.sh").unwrap(),
        expect: hash_bytes(b"#!/bin/sh\n"),
        content: Some(b"#!/bin/bash\n".to_vec()),
    }])
    .unwrap();
    let q = ws.root().join("bin/run2.sh");
    assert_eq!(fs::read_to_string(&q).unwrap(), "#!/bin/bash\n");
    assert_eq!(
        fs::metadata(&q).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

#[test]
fn write_preserves_mode() {
    let (_d, ws, j) = setup(&[("x.sh", "echo 1\n"), ("ro.txt", "r")]);
    let p = ws.root().join("x.sh");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    let q = ws.root().join("ro.txt");
    fs::set_permissions(&q, fs::Permissions::from_mode(0o640)).unwrap();
    j.commit(vec![
        write(&ws, "x.sh", "echo 2\n"),
        write(&ws, "ro.txt", "R"),
    ])
    .unwrap();
    assert_eq!(fs::read_to_string(&p).unwrap(), "echo 2\n");
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o7777,
        0o755
    );
    assert_eq!(
        fs::metadata(&q).unwrap().permissions().mode() & 0o7777,
        0o640
    );
}

#[test]
fn write_through_symlink_keeps_link() {
    let (_d, ws, j) = setup(&[("real/target.txt", "old")]);
    let link = ws.root().join("link.txt");
    symlink("real/target.txt", &link).unwrap();
    j.commit(vec![write(&ws, "link.txt", "new")]).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(&ws, "real/target.txt").as_deref(), Some("new"));
    assert_eq!(read(&ws, "link.txt").as_deref(), Some("new"));
}

#[test]
fn stale_hash_conflicts_and_writes_nothing() {
    let (_d, ws, j) = setup(&[("a.txt", "a"), ("b.txt", "b")]);
    let ops = vec![
        write(&ws, "a.txt", "A"),
        write(&ws, "b.txt", "B"),
        create(&ws, "c.txt", "C"),
    ];
    fs::write(ws.root().join("b.txt"), "changed behind our back").unwrap();
    match j.commit(ops) {
        Err(FsError::Conflict { path, detail }) => {
            assert_eq!(path, "b.txt");
            assert_eq!(detail, "its content differs");
        }
        r => panic!("expected Conflict, got {r:?}"),
    }
    assert_eq!(read(&ws, "a.txt").as_deref(), Some("a"));
    assert_eq!(
        read(&ws, "b.txt").as_deref(),
        Some("changed behind our back")
    );
    assert_eq!(read(&ws, "c.txt"), None);
    assert_eq!(listing(ws.root()), ["a.txt", "b.txt"]);
}

#[test]
fn missing_file_and_present_file_conflict() {
    let (_d, ws, j) = setup(&[("a.txt", "a"), ("b.txt", "b")]);
    let op = write(&ws, "a.txt", "A");
    fs::remove_file(ws.root().join("a.txt")).unwrap();
    assert!(matches!(j.commit(vec![op]), Err(FsError::Conflict { .. })));

    let ops = vec![create(&ws, "n.txt", "N"), create(&ws, "b.txt", "B")];
    match j.commit(ops) {
        Err(FsError::Conflict { path, .. }) => assert_eq!(path, "b.txt"),
        r => panic!("expected Conflict, got {r:?}"),
    }
    assert_eq!(read(&ws, "b.txt").as_deref(), Some("b"));
    assert_eq!(read(&ws, "n.txt"), None);
}

#[test]
fn duplicate_paths_are_refused() {
    let (_d, ws, j) = setup(&[("a.txt", "a")]);
    let ops = vec![write(&ws, "a.txt", "1"), write(&ws, "./a.txt", "2")];
    assert!(matches!(j.commit(ops), Err(FsError::DuplicatePath { .. })));
    assert_eq!(read(&ws, "a.txt").as_deref(), Some("a"));
}

#[test]
fn fault_on_third_rename_rolls_back_everything() {
    let (_d, ws, j) = setup(&[("a.txt", "a"), ("b.txt", "b"), ("sub/c.txt", "c")]);
    let ops = vec![
        write(&ws, "a.txt", "A"),
        create(&ws, "new1.txt", "N1"),
        write(&ws, "b.txt", "B"),
        create(&ws, "fresh/dir/new2.txt", "N2"),
        write(&ws, "sub/c.txt", "C"),
    ];
    let before = listing(ws.root());
    let fault = |n: usize| {
        if n == 2 {
            Err(std::io::Error::other("injected"))
        } else {
            Ok(())
        }
    };
    let err = j.commit_with_fault(ops, &fault).unwrap_err();
    assert!(err.to_string().contains("injected"), "{err}");
    assert_eq!(read(&ws, "a.txt").as_deref(), Some("a"));
    assert_eq!(read(&ws, "b.txt").as_deref(), Some("b"));
    assert_eq!(read(&ws, "sub/c.txt").as_deref(), Some("c"));
    assert_eq!(read(&ws, "new1.txt"), None);
    assert_eq!(read(&ws, "fresh/dir/new2.txt"), None);
    assert!(
        !ws.root().join("fresh").exists(),
        "created folders are removed"
    );
    assert_eq!(listing(ws.root()), before, "no temp files left");
    let journal = j.state_dir().join(format!("journal-{}.json", j.run_id()));
    assert!(!journal.exists());

    // The journal still works afterwards.
    j.commit(vec![write(&ws, "a.txt", "A2")]).unwrap();
    assert_eq!(read(&ws, "a.txt").as_deref(), Some("A2"));
}

#[test]
fn commit_from_many_threads() {
    let (_d, ws, j) = setup(&[]);
    std::thread::scope(|s| {
        for i in 0..8 {
            let (ws, j) = (&ws, &j);
            s.spawn(move || {
                j.commit(vec![create(ws, &format!("t{i}.txt"), "x")])
                    .unwrap()
            });
        }
    });
    assert_eq!(listing(ws.root()).len(), 8);
}
