//! Stdin and stdout as the event loop's own non-blocking streams when they are pipes or
//! sockets, as an MCP client's are. tokio's `stdin()`/`stdout()` hand every read and write to
//! a blocking thread, which costs two thread hand-offs per message; a terminal or a plain
//! file still gets those.

use std::io::IsTerminal;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// The process's stdin as an async reader.
pub(crate) fn input() -> Pin<Box<dyn AsyncRead + Send>> {
    let stdin = std::io::stdin();
    match own(stdin.as_fd(), stdin.is_terminal()) {
        Some(Kind::Pipe(fd)) => match pipe::Receiver::from_owned_fd(fd) {
            Ok(rx) => return Box::pin(rx),
            Err(e) => tracing::debug!("stdin as a pipe: {e}"),
        },
        Some(Kind::Socket(fd)) => match socket(fd) {
            Ok(s) => return Box::pin(s),
            Err(e) => tracing::debug!("stdin as a socket: {e}"),
        },
        None => {}
    }
    Box::pin(tokio::io::stdin())
}

/// The process's stdout as an async writer.
pub(crate) fn output() -> Pin<Box<dyn AsyncWrite + Send>> {
    let stdout = std::io::stdout();
    match own(stdout.as_fd(), stdout.is_terminal()) {
        Some(Kind::Pipe(fd)) => match pipe::Sender::from_owned_fd(fd) {
            Ok(tx) => return Box::pin(tx),
            Err(e) => tracing::debug!("stdout as a pipe: {e}"),
        },
        Some(Kind::Socket(fd)) => match socket(fd) {
            Ok(s) => return Box::pin(s),
            Err(e) => tracing::debug!("stdout as a socket: {e}"),
        },
        None => {}
    }
    Box::pin(tokio::io::stdout())
}

enum Kind {
    Pipe(OwnedFd),
    Socket(OwnedFd),
}

/// A duplicate of `fd` when it is a pipe or a socket (never a terminal).
fn own(fd: std::os::fd::BorrowedFd<'_>, terminal: bool) -> Option<Kind> {
    if terminal {
        return None;
    }
    let owned = fd.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    let kind = file.metadata().ok()?.file_type();
    let owned = OwnedFd::from(file);
    if kind.is_fifo() {
        Some(Kind::Pipe(owned))
    } else if kind.is_socket() {
        Some(Kind::Socket(owned))
    } else {
        None
    }
}

fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(std)
}
