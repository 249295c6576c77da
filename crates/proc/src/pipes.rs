//! A long-lived child whose descriptors are all pipes at numbers the caller names: a kernel
//! gets its requests and sends its messages on descriptors of their own (3 and 4), so nothing a
//! cell prints on 1 or 2 can ever reach the channel.

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rustix::process::Signal;
use tokio::io::unix::AsyncFd;

use crate::ProcError;
use crate::child::{GroupGuard, group_leader};
use crate::long::{ChildSpec, LongChild};

/// One pipe between tether and a child, at descriptor `fd` in the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipeEnd {
    /// The child reads it; tether keeps the write end.
    ToChild(RawFd),
    /// The child writes it; tether keeps the read end.
    FromChild(RawFd),
}

/// Descriptors at or above this are free for the moment between fork and exec.
const SCRATCH_FD: RawFd = 100;

fn pipe() -> Result<(OwnedFd, OwnedFd), std::io::Error> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// Makes tether's read end of a pipe non-blocking and registers it with tokio, so a reader can
/// wait for it and then take what it holds without waiting more.
pub fn nonblocking_reader(fd: OwnedFd) -> std::io::Result<AsyncFd<File>> {
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    // SAFETY: the File owns the descriptor, so it stays open, and the same, while the AsyncFd
    // holds it.
    unsafe { AsyncFd::register(File::from(fd)) }.map_err(std::io::Error::from)
}

impl LongChild {
    /// Starts the child with a pipe at each of `pipes` (stdio not named is /dev/null) and
    /// returns tether's ends in the same order. The child leads its own group, as every
    /// [`LongChild`] does.
    pub fn spawn_with_pipes(
        spec: &ChildSpec,
        pipes: &[PipeEnd],
    ) -> Result<(LongChild, Vec<OwnedFd>), ProcError> {
        let (program, args) = spec.argv.split_first().ok_or(ProcError::Empty)?;
        let spawn_error = |source| ProcError::Spawn {
            program: program.clone(),
            source,
        };
        let mut cmd = group_leader(program);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        let mut ours = Vec::new();
        let mut moved: Vec<(OwnedFd, RawFd)> = Vec::new();
        for end in pipes {
            let (read, write) = pipe().map_err(spawn_error)?;
            let (theirs, target) = match *end {
                PipeEnd::ToChild(fd) => {
                    ours.push(write);
                    (read, fd)
                }
                PipeEnd::FromChild(fd) => {
                    ours.push(read);
                    (write, fd)
                }
            };
            match target {
                0 => drop(cmd.stdin(Stdio::from(theirs))),
                1 => drop(cmd.stdout(Stdio::from(theirs))),
                2 => drop(cmd.stderr(Stdio::from(theirs))),
                _ => moved.push((theirs, target)),
            }
        }
        let sources: Vec<(RawFd, RawFd)> =
            moved.iter().map(|(fd, t)| (fd.as_raw_fd(), *t)).collect();
        // SAFETY: only fcntl and dup2 run between fork and exec; both are async-signal-safe.
        // Every source is first copied above the targets, so no dup2 overwrites a source.
        unsafe {
            cmd.pre_exec(move || {
                let mut high = Vec::with_capacity(sources.len());
                for (fd, _) in &sources {
                    let copy = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, SCRATCH_FD);
                    if copy < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    high.push(copy);
                }
                for (copy, (_, target)) in high.iter().zip(&sources) {
                    if libc::dup2(*copy, *target) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let (child, serial) = crate::tree::spawn(&mut cmd).map_err(spawn_error)?;
        // The child's ends now live in the child; ours close here.
        drop(moved);
        Ok((
            LongChild {
                program: program.clone(),
                group: GroupGuard::new(child.id(), serial),
                stdin: None,
                stdout: None,
                child,
                stderr: Arc::new(Mutex::new(Default::default())),
                stderr_reader: None,
            },
            ours,
        ))
    }

    /// Sends `signal` to the child's whole group (SIGINT interrupts a kernel's cell and the
    /// commands it started).
    pub fn signal(&self, signal: Signal) {
        if let Some(pid) = self.group.pid {
            crate::child::signal_group(pid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::{Read, Write};

    #[tokio::test]
    async fn a_child_reads_and_writes_pipes_at_the_numbers_asked() {
        let spec = ChildSpec {
            // Reads a line on 3, writes it to 4, and "printed" to 1.
            argv: vec![
                "sh".into(),
                "-c".into(),
                "read line <&3; echo \"got $line\" >&4; echo printed".into(),
            ],
            ..ChildSpec::default()
        };
        let pipes = [
            PipeEnd::ToChild(3),
            PipeEnd::FromChild(4),
            PipeEnd::FromChild(1),
        ];
        let (mut child, ends) = LongChild::spawn_with_pipes(&spec, &pipes).unwrap();
        let mut ends = ends.into_iter();
        let mut to = std::fs::File::from(ends.next().unwrap());
        let mut from = std::fs::File::from(ends.next().unwrap());
        let mut out = std::fs::File::from(ends.next().unwrap());
        to.write_all(b"hello\n").unwrap();
        drop(to);
        let mut said = String::new();
        from.read_to_string(&mut said).unwrap();
        let mut printed = String::new();
        out.read_to_string(&mut printed).unwrap();
        assert_eq!(said, "got hello\n");
        assert_eq!(printed, "printed\n");
        assert!(
            child
                .exited_within(std::time::Duration::from_secs(5))
                .await
                .is_some()
        );
    }
}
