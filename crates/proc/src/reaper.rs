//! A small `sh` outside tether that kills what tether still holds once tether is gone:
//! `PR_SET_PDEATHSIG` ends only tether's own children, so after a SIGKILL of tether the rest
//! (a worker's build, a kernel's `!cmd &`, a daemon that left its group) would live on.
//!
//! Once tether is dead its tree is gone (the orphans re-parent to init), so the reaper finds
//! them three ways: the process groups tether listed, the escaped descendants the census
//! reported (pid and start time, so a reused pid is spared), and every process whose
//! environment carries this run's mark, which also catches what forked after the last census.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use tether_base::lock;

/// Reads `+PGID`/`-PGID` (groups) and `pPID:START`/`qPID:START` (escaped descendants) lines;
/// at end of input (tether exited, however it died) kills the groups, the listed processes
/// still alive under the same start time, then, in rounds until none is left, every process
/// marked with this run (`$1` is tether's pid, `$2` its start time). It ignores the
/// terminal's signals, which tether may not survive.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT
mark="^TETHER_PROC_OWNER=$1\.$2\.[0-9]+$"
groups=""
pids=""
while read -r line; do
  case "$line" in
    +*) groups="$groups ${line#+}" ;;
    -*) gone="${line#-}"; kept=""
        for g in $groups; do [ "$g" = "$gone" ] || kept="$kept $g"; done
        groups="$kept" ;;
    p*) pids="$pids ${line#p}" ;;
    q*) gone="${line#q}"; kept=""
        for p in $pids; do [ "$p" = "$gone" ] || kept="$kept $p"; done
        pids="$kept" ;;
  esac
done
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
for e in $pids; do
  pid="${e%:*}"
  { read -r stat < "/proc/$pid/stat"; } 2>/dev/null || continue
  set -- ${stat##*") "}
  shift 19
  [ "$1" = "${e#*:}" ] && kill -KILL "$pid" 2>/dev/null
done
n=0
while [ "$n" -lt 10 ]; do
  n=$((n + 1))
  # grep fails (2) on any environment it may not read, so only its output counts.
  found=$(grep -lszE "$mark" /proc/[0-9]*/environ)
  [ -n "$found" ] || break
  for f in $found; do p="${f#/proc/}"; kill -KILL "${p%/environ}" 2>/dev/null; done
done
"#;

/// The reaper's stdin; `None` when it could not be started (then only the death signal acts).
static REAPER: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

/// Starts the reaper for run `PID.START` (once); returns its pid, which sweeps must spare.
pub(crate) fn start(run: &str) -> Option<u32> {
    let (pid, start) = run.split_once('.')?;
    let mut spawned = None;
    REAPER.get_or_init(|| {
        // Its own group, so a Ctrl-C meant for tether's group does not reach it; cwd `/`,
        // so it holds no workspace open. std's pipes are close-on-exec: no other child
        // inherits the write end, and the reaper sees end of input when tether is gone.
        let mut child = Command::new("sh")
            .args(["-c", SCRIPT, "tether-reaper", pid, start])
            .current_dir("/")
            .env_remove(crate::tree::OWNER_VAR)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok()?;
        spawned = Some(child.id());
        child.stdin.take().map(Mutex::new)
    });
    spawned
}

fn tell(line: String) {
    if let Some(Some(stdin)) = REAPER.get() {
        let mut stdin = lock(stdin);
        let _ = stdin.write_all(line.as_bytes());
    }
}

/// Asks the reaper to kill group `pgid` if tether ends while it is still listed.
pub(crate) fn watch(pgid: u32) {
    tell(format!("+{pgid}\n"));
}

/// Takes group `pgid` off the list, once tether has killed it itself (its id may be reused).
pub(crate) fn forget(pgid: u32) {
    tell(format!("-{pgid}\n"));
}

/// Asks the reaper to kill process `pid` (if it still has start time `start`) when tether ends.
pub(crate) fn report(pid: u32, start: u64) {
    tell(format!("p{pid}:{start}\n"));
}

/// Takes a reported process off the list once it is gone.
pub(crate) fn unreport(pid: u32, start: u64) {
    tell(format!("q{pid}:{start}\n"));
}
