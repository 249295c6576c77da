//! A file's size and modification time, which let a server's copy of a file be known current
//! by a stat instead of a read, when they can vouch for it.

use std::path::Path;

/// A file's size and modification time.
pub(crate) type Stamp = (u64, std::time::SystemTime);

/// How recent a modification time is too recent to vouch for the text read just before it
/// was taken: the file may have changed between the read and the stat within one tick of its
/// file system's clock (a second or two on some).
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

/// A file's size and modification time, if it can be stat'ed.
pub(crate) fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// [`stamp`], kept for a text just read only when the file was last modified at least
/// [`RACY`] before now, so an equal stamp later means the same text.
pub(crate) fn settled_stamp(path: &Path) -> Option<Stamp> {
    let (len, modified) = stamp(path)?;
    let settled = std::time::SystemTime::now()
        .checked_sub(RACY)
        .is_some_and(|line| modified < line);
    settled.then_some((len, modified))
}

/// Sets `path`'s modification time a minute back, for tests of what a file's age decides.
#[cfg(test)]
pub(crate) fn backdate(path: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let file = std::fs::File::options().write(true).open(path);
    file.and_then(|f| f.set_modified(past))
        .unwrap_or_else(|e| panic!("cannot backdate {}: {e}", path.display()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_modified_just_now_has_no_settled_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        assert!(stamp(&path).is_some());
        assert_eq!(settled_stamp(&path), None, "changed within {RACY:?}");
        backdate(&path);
        assert_eq!(settled_stamp(&path), stamp(&path));
        assert_eq!(settled_stamp(&dir.path().join("gone.py")), None);
    }
}
