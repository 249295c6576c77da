//! A child that lives as long as the run: language servers, debug adapters, kernels, workers.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tether_base::{cut_line, lock};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use crate::ProcError;
use crate::child::{GroupGuard, group_leader, signal_group};

/// How many of the child's last stderr lines are kept for error messages.
const STDERR_LINES: usize = 40;
/// Characters kept of one stderr line.
const STDERR_LINE_CHARS: usize = 400;

/// What to start: a program with arguments, and optionally a folder and extra environment.
#[derive(Debug, Clone, Default)]
pub struct ChildSpec {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Working folder; the parent's when `None`.
    pub cwd: Option<PathBuf>,
    /// Variables added to the parent's environment.
    pub env: Vec<(String, String)>,
}

/// A running child with piped stdio, leading its own process group, killed by the kernel when
/// tether dies (`PR_SET_PDEATHSIG`), and killed with its whole group on drop or shutdown.
pub struct LongChild {
    pub(crate) program: String,
    pub(crate) child: tokio::process::Child,
    pub(crate) group: GroupGuard,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Arc<Mutex<VecDeque<String>>>,
    /// The task draining stderr; finished once the pipe closed and every line is in.
    pub(crate) stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

impl LongChild {
    /// Starts the child; its stderr is drained into a ring of its last lines.
    pub fn spawn(spec: &ChildSpec) -> Result<LongChild, ProcError> {
        let (program, args) = spec.argv.split_first().ok_or(ProcError::Empty)?;
        let mut cmd = group_leader(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        let (mut child, serial) =
            crate::tree::spawn(&mut cmd).map_err(|source| ProcError::Spawn {
                program: program.clone(),
                source,
            })?;
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut stderr_reader = None;
        if let Some(pipe) = child.stderr.take() {
            let ring = stderr.clone();
            stderr_reader = Some(tokio::spawn(async move {
                let mut lines = BufReader::new(pipe).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let mut ring = lock(&ring);
                    if ring.len() == STDERR_LINES {
                        ring.pop_front();
                    }
                    ring.push_back(cut_line(&line, STDERR_LINE_CHARS));
                }
            }));
        }
        Ok(LongChild {
            program: program.clone(),
            group: GroupGuard::new(child.id(), serial),
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            child,
            stderr,
            stderr_reader,
        })
    }

    /// Waits, at most `limit`, for the child to exit and its stderr to be read to the end, so
    /// that [`LongChild::stderr_tail`] holds its last words.
    pub async fn last_words_within(&mut self, limit: Duration) {
        let end = tokio::time::Instant::now() + limit;
        let _ = self.exited_within(limit).await;
        if let Some(reader) = self.stderr_reader.as_mut() {
            let left = end.saturating_duration_since(tokio::time::Instant::now());
            // A finished handle must not be polled again.
            if tokio::time::timeout(left, reader).await.is_ok() {
                self.stderr_reader = None;
            }
        }
    }

    /// The program's name, for messages.
    pub fn program(&self) -> &str {
        &self.program
    }

    /// The child's process id (also its process group id) while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The child's stdin, once.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The child's stdout, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The last lines the child wrote to stderr, oldest first, for "it exited; it said: ...".
    pub fn stderr_tail(&self) -> Vec<String> {
        let ring = lock(&self.stderr);
        ring.iter().cloned().collect()
    }

    /// The exit status if the child has exited, without waiting.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `limit` for the child to exit on its own (after a protocol's own "exit"),
    /// signalling nothing; `None` if it still runs.
    pub async fn exited_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Ends the child: SIGTERM to its group, up to `grace` to exit, then SIGKILL to the group.
    /// Returns the exit status when it was reaped in time.
    pub async fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        // Closing stdin is the polite "you are done" for servers that read requests from it.
        drop(self.stdin.take());
        // Descendants that left the group are asked too, and remembered, since they may not
        // be found under the child once it has exited.
        if let Some(serial) = self.group.serial() {
            crate::tree::terminate_escaped(serial);
        }
        if let Some(pid) = self.child.id() {
            signal_group(pid, rustix::process::Signal::TERM);
        }
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        };
        self.kill();
        match status {
            Some(s) => Some(s),
            None => tokio::time::timeout(Duration::from_secs(1), self.child.wait())
                .await
                .ok()
                .and_then(Result::ok),
        }
    }

    /// Kills the child's whole group at once, and every descendant that left it.
    pub fn kill(&mut self) {
        self.group.end();
        let _ = self.child.start_kill();
    }
}

impl Drop for LongChild {
    fn drop(&mut self) {
        // The sweep runs before tokio's kill of the leader, while the descendants' parents
        // still lead to it; the leader is reaped by tokio.
        self.group.end();
        let _ = self.child.start_kill();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn spec(script: &str) -> ChildSpec {
        ChildSpec {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            ..ChildSpec::default()
        }
    }

    async fn wait_gone(pid: u32) -> bool {
        for _ in 0..100 {
            if !crate::is_running(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    #[tokio::test]
    async fn talks_over_pipes_and_keeps_its_last_stderr_lines() {
        let mut c = LongChild::spawn(&spec(
            "for i in $(seq 1 100); do echo err$i >&2; done; read x; echo got $x",
        ))
        .unwrap();
        let mut stdin = c.take_stdin().unwrap();
        stdin.write_all(b"ping\n").await.unwrap();
        let mut out = String::new();
        c.take_stdout()
            .unwrap()
            .read_to_string(&mut out)
            .await
            .unwrap();
        assert_eq!(out, "got ping\n");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let tail = c.stderr_tail();
        assert_eq!(tail.len(), STDERR_LINES);
        assert_eq!(tail.last().map(String::as_str), Some("err100"));
    }

    /// Starts a child that starts a grandchild, and returns both once the grandchild runs.
    async fn with_grandchild(pidfile: &std::path::Path) -> (LongChild, u32) {
        let _ = std::fs::remove_file(pidfile);
        let script = format!("sleep 60 & echo $! > {}; wait", pidfile.display());
        let c = LongChild::spawn(&spec(&script)).unwrap();
        while !pidfile.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let pid = std::fs::read_to_string(pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(crate::is_running(pid));
        (c, pid)
    }

    #[tokio::test]
    async fn shutdown_and_drop_end_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("grandchild");
        let (mut c, grandchild) = with_grandchild(&pidfile).await;
        c.shutdown(Duration::from_millis(500)).await;
        assert!(wait_gone(grandchild).await, "shutdown left the grandchild");

        let (c, grandchild) = with_grandchild(&pidfile).await;
        drop(c);
        assert!(wait_gone(grandchild).await, "drop left the grandchild");
    }
}
