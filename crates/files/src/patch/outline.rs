//! The files a patch names, read from its headers alone: what the approval card shows before a
//! patch runs and what a host's hook checks after an agent's own patch ran. It reads a patch
//! the full parser would refuse too, since both only say which files it touches.

use super::{ADD, DELETE, MOVE, UPDATE};

/// One file of a patch: how it changes, and the lines it adds and removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchOutline {
    /// `A`, `D` or `M`, as `git status` writes them.
    pub kind: char,
    /// The path as the patch writes it.
    pub path: String,
    /// Where an update moves the file to.
    pub moved_to: Option<String>,
    /// Lines it adds.
    pub added: usize,
    /// Lines it removes.
    pub removed: usize,
}

impl PatchOutline {
    /// One line of a card: `  M src/a.py -> src/b.py (+2 -1)`.
    pub fn row(&self) -> String {
        let moved = self
            .moved_to
            .as_ref()
            .map(|to| format!(" -> {to}"))
            .unwrap_or_default();
        match self.kind {
            'D' => format!("  D {}", self.path),
            _ => format!(
                "  {} {}{moved} (+{} -{})",
                self.kind, self.path, self.added, self.removed
            ),
        }
    }
}

/// The files `patch` adds, deletes or updates, in its order.
pub fn outline(patch: &str) -> Vec<PatchOutline> {
    let mut files: Vec<PatchOutline> = Vec::new();
    for line in patch.lines() {
        let heads = [(ADD, 'A'), (DELETE, 'D'), (UPDATE, 'M')];
        if let Some((path, kind)) = heads
            .iter()
            .find_map(|(head, kind)| Some((line.strip_prefix(head)?, *kind)))
        {
            files.push(PatchOutline {
                kind,
                path: path.trim().to_string(),
                moved_to: None,
                added: 0,
                removed: 0,
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix(MOVE) {
            file.moved_to = Some(to.trim().to_string());
        } else if line.starts_with('+') {
            file.added += 1;
        } else if line.starts_with('-') {
            file.removed += 1;
        }
    }
    files.retain(|f| !f.path.is_empty());
    files
}

/// Every path `patch` touches, each once: the files it changes and the places it moves them to.
pub fn touched_paths(patch: &str) -> Vec<String> {
    paths_of(&outline(patch))
}

/// Every path the outlined `files` touch, each once, in their order.
pub fn paths_of(files: &[PatchOutline]) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for file in files {
        for path in std::iter::once(&file.path).chain(&file.moved_to) {
            if !path.is_empty() && !paths.contains(path) {
                paths.push(path.clone());
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_names_its_files_once_each() {
        let patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** Update File: src/b.py\n\
                     *** Move to: src/c.py\n@@\n-x\n+y\n*** Delete File: a.py\n*** End Patch\n";
        assert_eq!(touched_paths(patch), ["a.py", "src/b.py", "src/c.py"]);
        let rows: Vec<String> = outline(patch).iter().map(PatchOutline::row).collect();
        assert_eq!(
            rows,
            [
                "  A a.py (+1 -0)",
                "  M src/b.py -> src/c.py (+1 -1)",
                "  D a.py"
            ]
        );
    }
}
