//! `Workspace::read_named`, the one read of a file that a language server or debug adapter
//! named: confined like `read`, regular files only, never blocking, and bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_fs::{NAMED_MAX_BYTES, Unshown, Workspace};

/// A workspace `ws/` next to `outside/secret.txt`, and a read root `deps/`.
fn scene() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, outside, deps) = (base.join("ws"), base.join("outside"), base.join("deps"));
    for d in [&root, &outside, &deps] {
        fs::create_dir(d).unwrap();
    }
    fs::write(outside.join("secret.txt"), "TOKEN=hunter2\n").unwrap();
    fs::write(root.join("main.py"), "import os\nprint(os)\n").unwrap();
    fs::write(deps.join("lib.py"), "def f(): pass\n").unwrap();
    (dir, root, outside, deps)
}

/// Reads on another thread, so a read that blocks fails the test instead of hanging it.
fn read(ws: &Workspace, path: &Path) -> Result<String, Unshown> {
    let (ws, path) = (ws.clone(), path.to_path_buf());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(ws.read_named(&path)));
    rx.recv_timeout(Duration::from_secs(10))
        .expect("read_named blocked for 10 s")
}

#[test]
fn files_inside_the_root_and_read_roots_are_read() {
    let (_d, root, _, deps) = scene();
    let ws = Workspace::new(&root)
        .unwrap()
        .with_read_roots(vec![deps.clone()]);
    assert_eq!(
        read(&ws, &root.join("main.py")).unwrap(),
        "import os\nprint(os)\n"
    );
    // Relative to the root, as servers never send but a caller may.
    assert!(read(&ws, Path::new("main.py")).is_ok());
    assert_eq!(read(&ws, &deps.join("lib.py")).unwrap(), "def f(): pass\n");
    // A symlink whose target stays inside the root is followed, as `read` does.
    symlink(root.join("main.py"), root.join("alias.py")).unwrap();
    assert!(read(&ws, &root.join("alias.py")).unwrap().contains("print"));
    assert_eq!(read(&ws, &root.join("gone.py")), Err(Unshown::Missing));
}

#[test]
fn files_outside_are_refused_directly_or_through_a_symlink() {
    let (_d, root, outside, _) = scene();
    let ws = Workspace::new(&root).unwrap();
    for path in [
        outside.join("secret.txt"),
        PathBuf::from("/etc/passwd"),
        PathBuf::from("/proc/self/environ"),
        root.join("../outside/secret.txt"),
    ] {
        assert_eq!(
            read(&ws, &path),
            Err(Unshown::Outside),
            "{}",
            path.display()
        );
    }
    symlink(outside.join("secret.txt"), root.join("secret.py")).unwrap();
    symlink(&outside, root.join("linked")).unwrap();
    for path in [root.join("secret.py"), root.join("linked/secret.txt")] {
        assert_eq!(
            read(&ws, &path),
            Err(Unshown::Outside),
            "{}",
            path.display()
        );
    }
    assert_eq!(Unshown::Outside.to_string(), "outside the workspace");
}

#[test]
fn fifos_and_devices_are_refused_without_blocking() {
    let (_d, root, _, _) = scene();
    let fifo = root.join("pipe.py");
    common::make_fifo(&fifo);
    symlink("/dev/zero", root.join("zero.c")).unwrap();
    // With /dev as a read root, /dev/zero passes confinement and only the type check is left.
    let ws = Workspace::new(&root)
        .unwrap()
        .with_read_roots(vec![PathBuf::from("/dev")]);
    let err = read(&ws, &fifo).unwrap_err();
    assert!(matches!(err, Unshown::NotRegular(_)), "{err}");
    assert!(err.to_string().contains("FIFO"), "{err}");
    let err = read(&ws, Path::new("/dev/zero")).unwrap_err();
    assert!(err.to_string().contains("character device"), "{err}");
    assert!(matches!(
        read(&ws, &root.join("zero.c")),
        Err(Unshown::NotRegular(_))
    ));
    let err = read(&ws, &root).unwrap_err();
    assert!(err.to_string().contains("folder"), "{err}");
    // Without that read root, /dev/zero is simply outside.
    let plain = Workspace::new(&root).unwrap();
    assert_eq!(read(&plain, &root.join("zero.c")), Err(Unshown::Outside));
}

#[test]
fn a_file_over_the_cap_is_refused_and_binary_is_not_text() {
    let (_d, root, _, _) = scene();
    // Sparse: the size is what counts, not the disk it takes.
    let huge = fs::File::create(root.join("huge.py")).unwrap();
    huge.set_len(NAMED_MAX_BYTES + 1).unwrap();
    fs::write(root.join("edge.py"), vec![b'x'; NAMED_MAX_BYTES as usize]).unwrap();
    fs::write(root.join("bin.py"), [0xff, 0xfe, 0x00]).unwrap();
    let ws = Workspace::new(&root).unwrap();
    assert_eq!(read(&ws, &root.join("huge.py")), Err(Unshown::TooLarge));
    assert_eq!(
        read(&ws, &root.join("edge.py")).unwrap().len() as u64,
        NAMED_MAX_BYTES
    );
    assert_eq!(read(&ws, &root.join("bin.py")), Err(Unshown::NotText));
    assert!(Unshown::TooLarge.to_string().contains("too large"));
}
