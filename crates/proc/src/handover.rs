//! A connected socket handed to the program this process execs: an attached `tether serve`
//! becomes the small relay binary and passes its host connection on by descriptor number.

use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// Lets `socket` survive an exec, and gives the number the new program finds it at.
pub fn keep_across_exec(socket: &UnixStream) -> std::io::Result<RawFd> {
    rustix::io::fcntl_setfd(socket, rustix::io::FdFlags::empty())?;
    Ok(socket.as_raw_fd())
}

/// The connected Unix socket that the program which exec'd this one handed over at `fd`.
pub fn socket_from_parent(fd: RawFd) -> Result<UnixStream, String> {
    if fd <= 2 {
        return Err(format!(
            "descriptor {fd} is standard input, output or error"
        ));
    }
    // SAFETY: the parent cleared close-on-exec on this descriptor for this process alone to
    // own (keep_across_exec); nothing in this process opened it or holds it otherwise.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    stream
        .peer_addr()
        .map_err(|e| format!("descriptor {fd} is not a connected socket: {e}"))?;
    Ok(stream)
}
