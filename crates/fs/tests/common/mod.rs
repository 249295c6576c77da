//! Helpers shared by tether-fs's integration tests.

use std::path::Path;

/// Makes a FIFO at `path`: a file that would block a reader waiting for a writer.
pub fn make_fifo(path: &Path) {
    let mode = rustix::fs::Mode::from_raw_mode(0o644);
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, mode, 0)
        .expect("mknod a fifo");
}
