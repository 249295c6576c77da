//! Whether a process still runs, read from `/proc`: what a supervisor checks before it
//! restarts a server, and what tests check after a run ends.

use std::time::{Duration, Instant};

/// True while `pid` runs; a zombie (exited, not yet reaped) counts as gone.
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the command name, which is in parentheses and may hold any
        // character, so it is found after the last `)`.
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// `pid`'s resident memory in KiB (`VmRSS`); `None` when it is gone or has none (a zombie).
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// The pids of `parent`'s running children whose command name is `name` (the kernel keeps
/// the first 15 bytes of it): how a test or a supervisor finds the servers a process started.
pub fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // "pid (comm) state ppid ...": the name may hold anything, so split at the parens.
            let comm = &stat[stat.find('(')? + 1..stat.rfind(')')?];
            let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
            let state = rest.next()?;
            let ppid: u32 = rest.next()?.parse().ok()?;
            (ppid == parent && comm == name && state != "Z").then_some(pid)
        })
        .collect()
}

/// Waits up to `limit`, polling every 20 ms, for `pid` to stop running; true if it did. It
/// blocks the thread, so async code should prefer its own timer.
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        if !is_running(pid) {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Resolves once `pid` has exited: through a pidfd, which the kernel makes readable then,
/// else (a kernel without pidfds) by looking every half second.
pub async fn exited(pid: u32) {
    let opened = rustix::process::Pid::from_raw(pid as i32)
        .ok_or(rustix::io::Errno::INVAL)
        .and_then(|p| rustix::process::pidfd_open(p, rustix::process::PidfdFlags::NONBLOCK));
    // SAFETY: the OwnedFd moves into the AsyncFd, which holds it open, and the same, for as
    // long as it is registered.
    if let Ok(fd) = opened
        && let Ok(watched) = unsafe { tokio::io::unix::AsyncFd::register(fd) }
    {
        let _ = watched.readable().await;
        return;
    }
    while is_running(pid) {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Raises this process's soft limit on open descriptors to its hard limit, as a host serving
/// many sessions needs: (the soft limit before, the soft limit now).
pub fn raise_descriptor_limit() -> (Option<u64>, Option<u64>) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let before = limit.current;
    if limit.current < limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        let _ = setrlimit(Resource::Nofile, raised);
    }
    (before, getrlimit(Resource::Nofile).current)
}

/// Whether an I/O error says this process (or the system) has no descriptor left to give.
pub fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(
        rustix::io::Errno::from_io_error(e),
        Some(rustix::io::Errno::MFILE | rustix::io::Errno::NFILE)
    )
}

/// How many descriptors this process has open.
pub fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// The user this process runs as, for a socket that admits only its own user.
pub fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}
