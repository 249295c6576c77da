//! What stands in for `tether serve` while a warm host runs the session: MCP lines relayed
//! both ways, and once the host is gone every pending and later request answered with that.
//! It runs as its own small binary, so each attached agent costs about 2 MiB rather than the
//! pages of all of tether that a relaying `tether` process maps.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};

/// The relay binary's file name; it is installed beside `tether`.
pub const BINARY: &str = "tether-relay";

/// How long the relay waits, once the client closed its side, for the host to end the run.
const DRAIN_WAIT: Duration = Duration::from_secs(10);

/// The message for a host that went away while a front end needed it.
pub fn died(root: &Path, log: &Path, how: &str) -> String {
    format!(
        "the tether host for {} stopped answering ({how}); run the command again to start a \
         fresh host (its log: {})",
        root.display(),
        log.display()
    )
}

/// Replaces this process with the relay binary beside it, handing over `host`; returns only
/// when that cannot be done (no such binary), so the caller relays in process instead.
pub fn exec(host: &UnixStream, root: &Path, log: &Path) -> std::io::Error {
    let Some(binary) = beside_self() else {
        return std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no tether-relay beside tether",
        );
    };
    let fd = match tether_proc::keep_across_exec(host) {
        Ok(fd) => fd,
        Err(e) => return e,
    };
    std::process::Command::new(binary)
        .arg("--fd")
        .arg(fd.to_string())
        .arg("--root")
        .arg(root)
        .arg("--log")
        .arg(log)
        .exec()
}

fn beside_self() -> Option<PathBuf> {
    let binary = std::env::current_exe().ok()?.with_file_name(BINARY);
    binary.is_file().then_some(binary)
}

/// The relay binary's main: `--fd N --root ROOT --log LOG`, as [`exec`] passes them.
pub fn main_with_args(args: impl Iterator<Item = std::ffi::OsString>) -> std::process::ExitCode {
    match parse(args)
        .and_then(|(fd, root, log)| Ok((tether_proc::socket_from_parent(fd)?, root, log)))
    {
        Ok((host, root, log)) => {
            match host.try_clone() {
                Ok(from_host) => relay(from_host, host, move |how| died(&root, &log, how)),
                Err(e) => {
                    eprintln!("tether-relay: cannot read the host's socket: {e}");
                    return std::process::ExitCode::from(1);
                }
            }
            std::process::ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("tether-relay: {why}");
            std::process::ExitCode::from(2)
        }
    }
}

fn parse(
    mut args: impl Iterator<Item = std::ffi::OsString>,
) -> Result<(i32, PathBuf, PathBuf), String> {
    let usage = "tether serve starts this with --fd N --root ROOT --log LOG; it is not run by hand";
    let (mut fd, mut root, mut log) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(usage)?;
        match flag.to_str() {
            Some("--fd") => fd = value.to_str().and_then(|v| v.parse::<i32>().ok()),
            Some("--root") => root = Some(PathBuf::from(value)),
            Some("--log") => log = Some(PathBuf::from(value)),
            _ => return Err(usage.into()),
        }
    }
    Ok((fd.ok_or(usage)?, root.ok_or(usage)?, log.ok_or(usage)?))
}

/// What the relay knows of the session: the requests the host has not answered, and, once
/// it is gone, why. One lock for both, so no request slips between the two.
#[derive(Default)]
struct Session {
    pending: HashMap<String, Value>,
    gone: Option<String>,
}

fn lock(session: &Mutex<Session>) -> MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// Relays this process's stdin and stdout to the host until the client closes stdin.
pub fn relay(
    from_host: impl Read + Send + 'static,
    to_host: UnixStream,
    died: impl Fn(&str) -> String + Send + 'static,
) {
    let session: Arc<Mutex<Session>> = Arc::default();
    let (out, lines_out) = mpsc::channel::<String>();
    let (written, writer_done) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut stdout = std::io::stdout().lock();
        for line in lines_out {
            if stdout.write_all(line.as_bytes()).is_err() || stdout.flush().is_err() {
                break;
            }
        }
        let _ = written.send(());
    });
    let (read, reader_done) = mpsc::channel::<()>();
    {
        let (session, out) = (session.clone(), out.clone());
        std::thread::spawn(move || {
            let why = read_host(from_host, &session, &out);
            let message = died(&why);
            let mut s = lock(&session);
            s.gone = Some(message.clone());
            for (_, request) in s.pending.drain() {
                let _ = out.send(failure(&request, &message));
            }
            drop(s);
            let _ = read.send(());
        });
    }
    let mut to_host_writer = &to_host;
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let request = asked(&line);
        {
            let mut s = lock(&session);
            if let Some(message) = &s.gone {
                if let Some(request) = request {
                    let _ = out.send(failure(&request, message));
                }
                continue;
            }
            if let Some(request) = request {
                s.pending.insert(request["id"].to_string(), request);
            }
        }
        // A failed write is seen by the reading side too, which answers what is pending.
        let _ = to_host_writer.write_all(format!("{line}\n").as_bytes());
    }
    // The client went away: the host ends the run when its input closes.
    let _ = to_host.shutdown(Shutdown::Write);
    let _ = reader_done.recv_timeout(DRAIN_WAIT);
    drop(out);
    let _ = writer_done.recv_timeout(DRAIN_WAIT);
}

/// Passes the host's lines on until it closes; says how it ended.
fn read_host(from_host: impl Read, session: &Mutex<Session>, out: &mpsc::Sender<String>) -> String {
    let mut lines = BufReader::new(from_host).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(id) = answered_id(&line) {
                    lock(session).pending.remove(&id);
                }
                let _ = out.send(format!("{line}\n"));
            }
            None => return "it closed the connection".into(),
            Some(Err(e)) => return e.to_string(),
        }
    }
}

/// The request on this line (one with a method and an id), if it is one.
fn asked(line: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(line).ok()?;
    (v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null())).then_some(v)
}

/// The id a response line answers, as its JSON text.
fn answered_id(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("method").is_some() {
        return None;
    }
    v.get("id").map(|id| id.to_string())
}

/// The answer to `request` once the host is gone: a tool result the model can read for a
/// tool call, a JSON-RPC error for anything else.
fn failure(request: &Value, message: &str) -> String {
    let id = &request["id"];
    let answer = if request["method"] == "tools/call" {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": format!("error: {message}")}],
            "isError": true,
        }})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}})
    };
    format!("{answer}\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_are_told_apart() {
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
        assert!(asked(call).is_some());
        assert!(asked(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        assert_eq!(
            answered_id(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(),
            Some("7")
        );
        // A request from the host (elicitation) answers nothing.
        assert!(answered_id(r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}"#).is_none());
        let answer: Value = serde_json::from_str(&failure(&asked(call).unwrap(), "gone")).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["isError"], true);
        let list = asked(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#).unwrap();
        let answer: Value = serde_json::from_str(&failure(&list, "gone")).unwrap();
        assert_eq!(answer["error"]["code"], -32603);
    }

    #[test]
    fn the_arguments_are_checked() {
        let args = |a: &[&str]| parse(a.iter().map(std::ffi::OsString::from));
        assert!(args(&["--fd", "7", "--root", "/r", "--log", "/l"]).is_ok());
        assert!(args(&["--fd", "x", "--root", "/r", "--log", "/l"]).is_err());
        assert!(args(&["--fd", "7"]).is_err());
        assert!(tether_proc::socket_from_parent(1).is_err());
    }
}
