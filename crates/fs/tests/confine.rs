//! Workspace confinement tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::symlink;

use tether_fs::{FsError, Workspace};

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Workspace) {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("a")).unwrap();
    std::fs::write(root.path().join("a/real.txt"), "x").unwrap();
    std::fs::write(outside.path().join("secret.txt"), "s").unwrap();
    let ws = Workspace::new(root.path()).unwrap();
    (root, outside, ws)
}

fn outside(r: Result<impl std::fmt::Debug, FsError>) {
    match r {
        Err(FsError::OutsideRoot { .. }) => {}
        other => panic!("expected OutsideRoot, got {other:?}"),
    }
}

#[test]
fn rejects_escapes() {
    let (_r, out, ws) = setup();
    outside(ws.resolve_write("../x"));
    outside(ws.resolve_write("a/../../x"));
    outside(ws.resolve_write(out.path().join("new.txt").to_str().unwrap()));
    outside(ws.resolve_write("/etc/passwd"));

    symlink(out.path(), ws.root().join("link")).unwrap();
    outside(ws.resolve_write("link/f"));
    outside(ws.resolve_write("link/secret.txt"));
    symlink(out.path().join("secret.txt"), ws.root().join("filelink")).unwrap();
    outside(ws.resolve_write("filelink"));
    // A dangling link pointing outside would create the file out there.
    symlink(out.path().join("nope.txt"), ws.root().join("dangling")).unwrap();
    outside(ws.resolve_write("dangling"));

    let err = ws.resolve_write("../x").unwrap_err().to_string();
    assert!(
        err.contains("../x") && err.contains(&ws.root().display().to_string()),
        "{err}"
    );
}

#[test]
fn accepts_inside_paths() {
    let (_r, _out, ws) = setup();
    let p = ws.resolve_write("a/./b/../new.txt").unwrap();
    assert_eq!(p.rel(), "a/new.txt");
    assert_eq!(p.abs(), ws.root().join("a/new.txt"));
    let p = ws.resolve_write("deep/er/file.rs").unwrap();
    assert_eq!(p.rel(), "deep/er/file.rs");
    let abs = ws.root().join("a/real.txt");
    assert_eq!(
        ws.resolve_write(abs.to_str().unwrap()).unwrap().rel(),
        "a/real.txt"
    );

    symlink("a/real.txt", ws.root().join("alias")).unwrap();
    let p = ws.resolve_write("alias").unwrap();
    assert_eq!(p.rel(), "a/real.txt");
    assert_eq!(p.abs(), abs);
}

#[test]
fn refuses_state_dir_and_root() {
    let (_r, _out, ws) = setup();
    assert!(matches!(
        ws.resolve_write(".tether/x"),
        Err(FsError::Reserved { .. })
    ));
    assert!(matches!(
        ws.resolve_write("a/../.tether"),
        Err(FsError::Reserved { .. })
    ));
    assert!(ws.resolve_write(".tetherish").is_ok());
    // An absolute path inside the root is shown relative, as every result shows it.
    let abs = ws.root().join("a/../.tether/journal");
    let err = ws.resolve_write(abs.to_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        ".tether/journal is inside tether's state folder .tether/; write somewhere else in the \
         workspace"
    );
    assert!(matches!(
        ws.resolve_write("."),
        Err(FsError::InvalidPath { .. })
    ));
    assert!(matches!(
        ws.resolve_write(""),
        Err(FsError::InvalidPath { .. })
    ));
}

#[test]
fn read_roots() {
    let (_r, out, ws) = setup();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("o.txt"), "o").unwrap();
    let ws = ws.with_read_roots(vec![out.path().into(), "/definitely/not/here".into()]);
    assert_eq!(ws.read_roots().len(), 1);

    let secret = out.path().join("secret.txt");
    let got = ws.resolve_read(secret.to_str().unwrap()).unwrap();
    assert_eq!(got, std::fs::canonicalize(&secret).unwrap());
    assert_eq!(
        ws.resolve_read("a/real.txt").unwrap(),
        ws.root().join("a/real.txt")
    );

    let o = other.path().join("o.txt");
    match ws.resolve_read(o.to_str().unwrap()) {
        Err(e @ FsError::NotReadable { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains(&ws.read_roots()[0].display().to_string()),
                "{msg}"
            );
        }
        r => panic!("expected NotReadable, got {r:?}"),
    }
    assert!(matches!(
        ws.resolve_read("../../../../../../etc/passwd"),
        Err(FsError::NotReadable { .. })
    ));
}

#[test]
fn display_paths() {
    let (_r, out, ws) = setup();
    assert_eq!(ws.display(&ws.root().join("a/real.txt")), "a/real.txt");
    assert_eq!(ws.display(ws.root()), ".");
    assert_eq!(ws.display(out.path()), out.path().display().to_string());
}

#[test]
fn root_must_be_a_dir() {
    let (r, _out, _ws) = setup();
    assert!(Workspace::new(&r.path().join("a/real.txt")).is_err());
    assert!(Workspace::new(&r.path().join("missing")).is_err());
}

#[test]
fn backing_out_of_a_missing_folder_still_checks_symlinks() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("root");
    let outside = outer.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    let ws = Workspace::new(&root).unwrap();
    for path in ["nope/../link/pwn.txt", "a/b/../../link/pwn.txt"] {
        let err = ws.resolve_write(path).unwrap_err();
        assert!(matches!(err, FsError::OutsideRoot { .. }), "{path}: {err}");
    }
    let err = ws.resolve_read("nope/../link/secret.txt").unwrap_err();
    assert!(matches!(err, FsError::NotReadable { .. }), "{err}");
    // Backing out of a missing folder into a real one inside the root is fine.
    let ok = ws.resolve_write("nope/../fine.txt").unwrap();
    assert_eq!(ok.rel(), "fine.txt");
}
