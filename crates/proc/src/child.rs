//! Linux-only: process groups and `PR_SET_PDEATHSIG`.

use std::process::{Output, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};

/// Why a short-lived child gave no output.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcError {
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The deadline passed; the child's process group was killed.
    #[error("`{program}` did not finish within {} ms and was killed", deadline.as_millis())]
    Deadline {
        /// The program.
        program: String,
        /// The deadline that passed.
        deadline: Duration,
    },
    /// An empty argv.
    #[error("no program given")]
    Empty,
}

/// Runs `argv` to completion with stdin closed, killing its whole process group if it runs
/// past `deadline`.
pub async fn output_with_deadline(
    argv: &[String],
    deadline: Duration,
) -> Result<Output, ProcError> {
    let spec = crate::ChildSpec {
        argv: argv.to_vec(),
        ..crate::ChildSpec::default()
    };
    run_with_deadline(&spec, deadline).await
}

/// Like [`output_with_deadline`], in `spec`'s folder and with its extra environment.
pub async fn run_with_deadline(
    spec: &crate::ChildSpec,
    deadline: Duration,
) -> Result<Output, ProcError> {
    let (program, args) = spec.argv.split_first().ok_or(ProcError::Empty)?;
    let mut cmd = group_leader(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    let (child, serial) = crate::tree::spawn(&mut cmd).map_err(|source| ProcError::Spawn {
        program: program.clone(),
        source,
    })?;
    // Dropping this future (a cancelled caller) kills the whole group, grandchildren too.
    let group = GroupGuard::new(child.id(), serial);
    let result = match tokio::time::timeout(deadline, child.wait_with_output()).await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(source)) => Err(ProcError::Spawn {
            program: program.clone(),
            source,
        }),
        Err(_) => Err(ProcError::Deadline {
            program: program.clone(),
            deadline,
        }),
    };
    drop(group);
    result
}

/// A command whose child leads a new process group and gets SIGKILL when tether dies.
pub(crate) fn group_leader(program: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.process_group(0).kill_on_drop(true);
    // SAFETY: the prctl system call is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
            Ok(())
        });
    }
    cmd
}

/// Sends `signal` to the process group led by `pid` (a group a [`crate::LongChild`] leads).
/// A group already gone is not an error; any other failure is logged.
pub fn signal_group(pid: u32, signal: Signal) {
    let Some(group) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        tracing::warn!(pid, "no process group has this id; not signalled");
        return;
    };
    match rustix::process::kill_process_group(group, signal) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => {}
        Err(e) => tracing::warn!(pid, ?signal, "signalling the process group failed: {e}"),
    }
}

/// Kills a child's whole process group, and every descendant that left it, when ended or
/// dropped (after the leader exited, what is left still goes); until then the reaper holds the
/// group too, for a tether that dies.
pub(crate) struct GroupGuard {
    /// The group's id (the leader's pid) until the guard ends.
    pub(crate) pid: Option<u32>,
    /// The child's serial in the tree, until the guard ends.
    serial: Option<u64>,
}

impl GroupGuard {
    /// Guards the group led by `pid`, the child with tree serial `serial`, and lists the group
    /// with the reaper.
    pub(crate) fn new(pid: Option<u32>, serial: u64) -> GroupGuard {
        if let Some(pid) = pid {
            crate::reaper::watch(pid);
        }
        GroupGuard {
            pid,
            serial: Some(serial),
        }
    }

    /// The child's serial in the tree, while the guard holds it.
    pub(crate) fn serial(&self) -> Option<u64> {
        self.serial
    }

    /// Kills the child's descendants wherever they went, then its group; once.
    pub(crate) fn end(&mut self) {
        if let Some(serial) = self.serial.take() {
            crate::tree::sweep(serial);
            if let Some(pid) = self.pid.take() {
                signal_group(pid, Signal::KILL);
                crate::reaper::forget(pid);
            }
            crate::tree::release(serial);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn captures_output() {
        let out = output_with_deadline(&argv(&["sh", "-c", "echo hi"]), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(out.stdout, b"hi\n");
    }

    #[tokio::test]
    async fn kills_the_whole_group_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("grandchild-alive");
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let err = output_with_deadline(&argv(&["sh", "-c", &script]), Duration::from_millis(300))
            .await
            .unwrap_err();
        assert!(matches!(err, ProcError::Deadline { .. }), "{err}");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "the grandchild outlived the deadline");
    }

    #[tokio::test]
    async fn a_dropped_call_kills_grandchildren_too() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("grandchild-alive");
        let script = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let cmd = argv(&["sh", "-c", &script]);
        let call = output_with_deadline(&cmd, Duration::from_secs(60));
        let dropped = tokio::time::timeout(Duration::from_millis(300), call).await;
        assert!(dropped.is_err(), "the call should still have been running");
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!marker.exists(), "the grandchild outlived the dropped call");
    }

    #[tokio::test]
    async fn missing_program_is_a_clear_error() {
        let err = output_with_deadline(&argv(&["no-such-program-xyz"]), Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot start `no-such-program-xyz`")
        );
    }
}
