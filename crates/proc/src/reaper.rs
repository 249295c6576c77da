//! A small `sh` outside tether that kills the process groups tether still holds once tether is
//! gone: `PR_SET_PDEATHSIG` ends only a group's leader, so after a SIGKILL of tether the
//! grandchildren (a worker's build, a kernel's `!cmd &`) would live on without it.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Reads `+PGID` and `-PGID` lines; at end of input (tether exited, however it died) kills
/// every group still listed. It ignores the terminal's signals, which tether may not survive.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT
groups=""
while read -r line; do
  case "$line" in
    +*) groups="$groups ${line#+}" ;;
    -*) gone="${line#-}"; kept=""
        for g in $groups; do [ "$g" = "$gone" ] || kept="$kept $g"; done
        groups="$kept" ;;
  esac
done
for g in $groups; do kill -KILL -"$g" 2>/dev/null; done
"#;

/// The reaper's stdin; `None` when it could not be started (then only the death signal acts).
static REAPER: OnceLock<Option<Mutex<ChildStdin>>> = OnceLock::new();

fn reaper() -> Option<&'static Mutex<ChildStdin>> {
    REAPER
        .get_or_init(|| {
            // Its own group, so a Ctrl-C meant for tether's group does not reach it; cwd `/`,
            // so it holds no workspace open. std's pipes are close-on-exec: no other child
            // inherits the write end, and the reaper sees end of input when tether is gone.
            let mut child = Command::new("sh")
                .args(["-c", SCRIPT, "tether-reaper"])
                .current_dir("/")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .ok()?;
            child.stdin.take().map(Mutex::new)
        })
        .as_ref()
}

fn tell(line: String) {
    if let Some(stdin) = reaper() {
        let mut stdin = stdin.lock().unwrap_or_else(|p| p.into_inner());
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
