//! `isolation = "worktree"`: each worker in a git worktree of its own, and what it left there
//! when its run ended, so the caller knows whether there is anything to merge.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one git command may take.
const GIT_DEADLINE: Duration = Duration::from_secs(60);
/// Changed paths named in a summary; the rest are counted.
const NAMED_PATHS: usize = 10;

/// A worker's worktree.
#[derive(Debug, Clone)]
pub struct Worktree {
    /// `.tether/worktrees/wN`.
    pub path: PathBuf,
    /// `tether/wN`.
    pub branch: String,
    /// The commit it was made from.
    pub base: String,
    /// What the last run left: commits and uncommitted changes, or "no changes".
    pub left: Option<String>,
}

/// Settings given to every git command: a repository's hooks and its file-system monitor are
/// programs it names, and tether runs git for itself, never for the repository.
const GIT_GUARDS: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut argv = vec!["git".to_string(), "-C".into(), dir.display().to_string()];
    argv.extend(GIT_GUARDS.iter().chain(args).map(|a| a.to_string()));
    let done = tether_proc::output_with_deadline(&argv, GIT_DEADLINE)
        .await
        .map_err(|e| format!("git: {e}"))?;
    if !done.status.success() {
        return Err(String::from_utf8_lossy(&done.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&done.stdout).to_string())
}

/// Makes worker `id`'s worktree on a new branch from the workspace's `HEAD`.
pub async fn make(root: &Path, id: &str) -> Result<Worktree, String> {
    let branch = format!("tether/{id}");
    let path = root.join(".tether/worktrees").join(id);
    let path_arg = path.display().to_string();
    git(root, &["worktree", "add", "-b", &branch, &path_arg, "HEAD"])
        .await
        .map_err(|why| {
            format!(
                "its worktree could not be made (`isolation = \"worktree\"` needs the workspace \
                 to be a git repository with a commit): {why}"
            )
        })?;
    let base = git(&path, &["rev-parse", "HEAD"]).await?.trim().to_string();
    Ok(Worktree {
        path,
        branch,
        base,
        left: None,
    })
}

/// What is in the worktree beyond its base: commits on its branch, and changes not committed.
pub async fn left_behind(tree: &Worktree) -> String {
    let range = format!("{}..HEAD", tree.base);
    let commits = git(&tree.path, &["rev-list", "--count", &range]).await;
    let status = git(
        &tree.path,
        &["status", "--porcelain", "--untracked-files=all"],
    )
    .await;
    let (commits, status) = match (commits, status) {
        (Ok(c), Ok(s)) => (c.trim().parse::<u32>().unwrap_or(0), s),
        (Err(why), _) | (_, Err(why)) => return format!("its changes could not be read: {why}"),
    };
    let changed: Vec<&str> = status.lines().filter(|l| l.len() > 3).collect();
    let mut parts = Vec::new();
    if commits > 0 {
        parts.push(format!(
            "{commits} commit{} on the branch",
            if commits == 1 { "" } else { "s" }
        ));
    }
    if !changed.is_empty() {
        let mut named: Vec<String> = changed
            .iter()
            .take(NAMED_PATHS)
            .map(|l| format!("{} {}", l[..2].trim(), &l[3..]))
            .collect();
        if changed.len() > NAMED_PATHS {
            named.push(format!("and {} more", changed.len() - NAMED_PATHS));
        }
        parts.push(format!("not committed: {}", named.join(", ")));
    }
    match parts.is_empty() {
        true => "no changes".into(),
        false => parts.join("; "),
    }
}
