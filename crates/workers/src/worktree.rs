//! `isolation = "worktree"`: each worker in a git worktree of its own, named with the run's id
//! (`.tether/worktrees/RUN-wN`, branch `tether/RUN-wN`) so runs never meet, and what it left
//! there when its run ended, so the caller knows whether there is anything to merge. A run
//! holds a lock file while it lives, so another run tidies only what ended runs left half made.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long one git command may take.
const GIT_DEADLINE: Duration = Duration::from_secs(60);
/// Changed paths named in a summary; the rest are counted.
const NAMED_PATHS: usize = 10;
/// Where worktrees and the runs' lock files are, under the workspace root.
const FOLDER: &str = ".tether/worktrees";

/// A worker's worktree.
#[derive(Debug, Clone)]
pub struct Worktree {
    /// `.tether/worktrees/RUN-wN`.
    pub path: PathBuf,
    /// `tether/RUN-wN`.
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

/// Runs git in `dir`; its stdout, or what it said went wrong. In the C locale, so the lock
/// reason `git worktree add` writes is always `initializing`.
async fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let mut argv = vec!["git".to_string(), "-C".into(), dir.display().to_string()];
    argv.extend(GIT_GUARDS.iter().chain(args).map(|a| a.to_string()));
    let spec = tether_proc::ChildSpec {
        argv,
        cwd: None,
        env: vec![("LC_ALL".into(), "C".into())],
    };
    let done = tether_proc::run_with_deadline(&spec, GIT_DEADLINE)
        .await
        .map_err(|e| format!("git: {e}"))?;
    if !done.status.success() {
        return Err(reason(&String::from_utf8_lossy(&done.stderr)));
    }
    Ok(String::from_utf8_lossy(&done.stdout).to_string())
}

/// git's own complaint in its stderr: its `fatal:` and `error:` lines, else all of it.
fn reason(stderr: &str) -> String {
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("fatal: ") || l.starts_with("error: "))
        .collect();
    match said.is_empty() {
        true => stderr.trim().to_string(),
        false => said.join("\n"),
    }
}

/// A run's hold on its worktrees: `.tether/worktrees/RUN.lock`, locked while the run lives
/// (the lock goes with the process, however it ends).
#[derive(Debug)]
pub struct Claim {
    _lock: File,
}

impl Claim {
    /// Checks that the workspace can have worktrees, takes run `run`'s lock, and tidies what
    /// ended runs left half made.
    pub async fn take(root: &Path, run: &str) -> Result<Claim, String> {
        git(root, &["rev-parse", "--verify", "HEAD^{commit}"])
            .await
            .map_err(|why| {
                format!(
                    "`isolation = \"worktree\"` needs the workspace to be a git repository with \
                     a commit; `git rev-parse --verify HEAD` said: {why}"
                )
            })?;
        let folder = root.join(FOLDER);
        let lock = lock_file(&folder, run).map_err(|e| {
            format!(
                "its worktree could not be made: cannot lock {}: {e}",
                folder.join(format!("{run}.lock")).display()
            )
        })?;
        tidy(root, &folder, run).await;
        Ok(Claim { _lock: lock })
    }
}

/// Creates and locks `RUN.lock` under a temporary name, then links it in place, so no other
/// run ever sees it unlocked; fails if the name is taken.
fn lock_file(folder: &Path, run: &str) -> std::io::Result<File> {
    std::fs::create_dir_all(folder)?;
    let fresh = folder.join(format!("{run}.lock.new"));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&fresh)?;
    let placed = match file.try_lock() {
        Ok(()) => std::fs::hard_link(&fresh, folder.join(format!("{run}.lock"))),
        Err(TryLockError::WouldBlock) => Err(std::io::ErrorKind::WouldBlock.into()),
        Err(TryLockError::Error(e)) => Err(e),
    };
    let _ = std::fs::remove_file(&fresh);
    placed.map(|()| file)
}

/// Whether run `run` still lives: its lock file is there and locked. When that cannot be
/// told, it counts as live, and what it has is left alone.
fn live(folder: &Path, run: &str) -> bool {
    match File::open(folder.join(format!("{run}.lock"))) {
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        Ok(file) => !matches!(file.try_lock(), Ok(())),
    }
}

/// The run a worktree's folder name belongs to: `RUN` in `RUN-wN`.
fn run_of(name: &str) -> Option<&str> {
    let (run, n) = name.rsplit_once("-w")?;
    n.parse::<u32>().ok()?;
    let plain = !run.is_empty() && run.chars().all(|c| c.is_ascii_alphanumeric());
    plain.then_some(run)
}

/// Removes what runs that ended in the middle of `git worktree add` left: worktrees still
/// locked `initializing` (no worker ever ran in them) with their branches, the records of
/// worktrees whose folders are gone (`git worktree prune`), and the ended runs' lock files.
/// Finished worktrees of ended runs stay: they hold work to merge. Failures are only logged.
async fn tidy(root: &Path, folder: &Path, ours: &str) {
    let listed = match git(root, &["worktree", "list", "--porcelain"]).await {
        Ok(listed) => listed,
        Err(why) => return tracing::warn!("cannot list the worktrees to tidy them: {why}"),
    };
    let real = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    let mut prunable = false;
    for entry in listed.split("\n\n") {
        let mut lines = entry.lines();
        let Some(path) = lines.next().and_then(|l| l.strip_prefix("worktree ")) else {
            continue;
        };
        let path = PathBuf::from(path);
        let inside = path.parent() == Some(folder) || path.parent() == Some(real.as_path());
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name.filter(|_| inside) else {
            continue;
        };
        match run_of(&name) {
            Some(run) if run != ours && !live(folder, run) => {}
            _ => continue,
        }
        if entry.lines().any(|l| l == "locked initializing") {
            discard(root, &path, &name, true).await;
        } else if entry.lines().any(|l| l.starts_with("prunable")) {
            prunable = true;
        }
    }
    if prunable && let Err(why) = git(root, &["worktree", "prune"]).await {
        tracing::warn!("git worktree prune: {why}");
    }
    forget_ended_runs(folder, ours);
}

/// Removes the lock files of ended runs that have no worktree folder left.
fn forget_ended_runs(folder: &Path, ours: &str) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let names: Vec<String> = entries
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .collect();
    for name in &names {
        let Some(run) = name.strip_suffix(".lock") else {
            continue;
        };
        let has_worktrees = names.iter().any(|n| run_of(n) == Some(run));
        if run != ours && !has_worktrees && !live(folder, run) {
            let _ = std::fs::remove_file(folder.join(name));
        }
    }
}

/// Removes worktree `name`, which `git worktree add` never finished, and its branch `tether/
/// name`: no worker ran there, and the name is used by no other run. `ended`: an ended run's,
/// whose folder goes even when git no longer knows it as a worktree.
async fn discard(root: &Path, path: &Path, name: &str, ended: bool) {
    let path_arg = path.display().to_string();
    let _ = git(root, &["worktree", "unlock", &path_arg]).await;
    if path.exists() {
        let removed = git(root, &["worktree", "remove", "--force", &path_arg]).await;
        // Cut off before its `.git` file was written, git no longer knows it as a worktree.
        if removed.is_err() && ended {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    if let Err(why) = git(root, &["worktree", "prune"]).await {
        tracing::warn!("git worktree prune: {why}");
    }
    let branch = format!("tether/{name}");
    if let Err(why) = git(root, &["branch", "-D", &branch]).await {
        tracing::debug!("no branch {branch} to remove: {why}");
    }
}

/// Makes worktree `name` (`RUN-wN`) on a new branch `tether/RUN-wN` from the workspace's
/// `HEAD`; the run must hold its [`Claim`]. What git said when it cannot.
pub async fn make(root: &Path, name: &str) -> Result<Worktree, String> {
    let branch = format!("tether/{name}");
    let path = root.join(FOLDER).join(name);
    let path_arg = path.display().to_string();
    let added = git(root, &["worktree", "add", "-b", &branch, &path_arg, "HEAD"]).await;
    if let Err(why) = added {
        // A branch made, or a checkout cut off by the deadline, would be in the way of a retry.
        discard(root, &path, name, false).await;
        return Err(format!(
            "its worktree could not be made: `git worktree add` said: {why}"
        ));
    }
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
