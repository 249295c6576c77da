//! A front end's side of the host: attach (starting the host when none listens), then relay.
//! Every wait has a deadline, and a host that dies mid-answer is said to have died.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::place::Place;
use crate::wire::{Hello, Printed, Reply, read_json, write_json};

/// How long a front end waits for a host it started to listen.
const START_WAIT: Duration = Duration::from_secs(15);
/// How long it waits for the host's reply to its hello (the host builds the run first).
const REPLY_WAIT: Duration = Duration::from_secs(60);

/// An attachment the host accepted.
pub struct Attachment {
    /// The host's lines.
    pub read: BufReader<OwnedReadHalf>,
    /// Lines to the host.
    pub write: OwnedWriteHalf,
    /// The host's process id.
    pub pid: u32,
}

/// Attaches to the host of `place` as `hello`, starting one when none listens.
pub async fn attach(place: &Place, hello: &Hello) -> Result<Attachment, String> {
    let stream = match UnixStream::connect(&place.socket).await {
        Ok(s) => s,
        Err(_) => start(place).await?,
    };
    greet(place, stream, hello).await
}

/// Attaches to a host already listening at `place`; never starts one.
pub async fn attach_running(place: &Place, hello: &Hello) -> Result<Option<Attachment>, String> {
    match UnixStream::connect(&place.socket).await {
        Ok(stream) => greet(place, stream, hello).await.map(Some),
        Err(_) => Ok(None),
    }
}

async fn greet(place: &Place, stream: UnixStream, hello: &Hello) -> Result<Attachment, String> {
    is_mine(place, &stream)?;
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    write_json(&mut write, hello)
        .await
        .map_err(|e| died(place, &format!("it took no hello: {e}")))?;
    let reply = tokio::time::timeout(REPLY_WAIT, read_json::<Reply>(&mut read, usize::MAX))
        .await
        .map_err(|_| {
            format!(
                "the tether host for {} did not answer within {} s (its log: {})",
                place.root.display(),
                REPLY_WAIT.as_secs(),
                place.log.display()
            )
        })?
        .map_err(|e| died(place, &e))?
        .ok_or_else(|| died(place, "it closed the connection"))?;
    match (reply.ok, reply.error) {
        (true, _) => Ok(Attachment {
            read,
            write,
            pid: reply.pid,
        }),
        (false, why) => Err(why.unwrap_or_else(|| "the host refused without a reason".into())),
    }
}

/// Refuses a socket this user's host did not make, before anything is sent on it: the process
/// listening must run as this user, and the socket file must be this user's (another user
/// may have planted it while the runtime folder was open).
fn is_mine(place: &Place, stream: &UnixStream) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = tether_proc::current_uid();
    let listener = stream.peer_cred().map(|c| c.uid()).ok();
    let file = std::fs::symlink_metadata(&place.socket)
        .map(|m| m.uid())
        .ok();
    if listener == Some(me) && file == Some(me) {
        return Ok(());
    }
    let whose =
        |uid: Option<u32>| uid.map_or("an unknown user".to_string(), |u| format!("uid {u}"));
    Err(format!(
        "refused the tether host socket {}: the socket belongs to {} and the process listening \
         on it runs as {}, not as you (uid {me}); nothing was sent to it. Another user may have \
         put it there: remove it and try again",
        place.socket.display(),
        whose(file),
        whose(listener)
    ))
}

/// The message for a host that went away while a front end needed it.
pub fn died(place: &Place, how: &str) -> String {
    tether_relay::died(&place.root, &place.log, how)
}

/// Starts `tether host` for `place` in the background and waits until it listens.
async fn start(place: &Place) -> Result<UnixStream, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find tether itself: {e}"))?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&place.log)
        .map_err(|e| format!("cannot open {}: {e}", place.log.display()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("cannot open {}: {e}", place.log.display()))?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("host")
        .arg("--root")
        .arg(&place.root)
        .current_dir(&place.root)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2)
        // The host serves every front end to come, so it is no one's child: its own group,
        // and none of this process's marks.
        .env_remove("TETHER_PROC_OWNER")
        .env_remove("TETHER_SURFACE");
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start the tether host: {e}"))?;
    let deadline = Instant::now() + START_WAIT;
    loop {
        if let Ok(stream) = UnixStream::connect(&place.socket).await {
            // Reaped by whoever adopts it; this process does not wait for it.
            drop(child);
            return Ok(stream);
        }
        if let Ok(Some(status)) = child.try_wait() {
            // Lost a race to another starting host: that one will listen shortly.
            if status.success() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
                if let Ok(stream) = UnixStream::connect(&place.socket).await {
                    return Ok(stream);
                }
                continue;
            }
            return Err(format!(
                "the tether host exited ({status}) before listening; its log {} ends:\n{}",
                place.log.display(),
                log_tail(&place.log)
            ));
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the tether host did not listen within {} s; its log {} ends:\n{}",
                START_WAIT.as_secs(),
                place.log.display(),
                log_tail(&place.log)
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}

/// Reads the one [`Printed`] a one-shot attachment answers with.
pub async fn printed(place: &Place, mut at: Attachment) -> Result<Printed, String> {
    read_json::<Printed>(&mut at.read, usize::MAX)
        .await
        .map_err(|e| died(place, &e))?
        .ok_or_else(|| died(place, "it closed the connection before the answer"))
}

/// `tether call --stdin` through the host: stdin to the host, its result lines to stdout,
/// and the closing [`Printed`].
pub async fn relay_lines(place: &Place, at: Attachment) -> Result<Printed, String> {
    let Attachment {
        read, mut write, ..
    } = at;
    let feed = tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let _ = tokio::io::copy(&mut stdin, &mut write).await;
        let _ = write.shutdown().await;
    });
    let mut lines = read.lines();
    let mut stdout = tokio::io::stdout();
    let result = loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                if let Ok(end) = serde_json::from_str::<End>(&line) {
                    break Ok(end.tether_host_end);
                }
                let _ = stdout.write_all(format!("{line}\n").as_bytes()).await;
                let _ = stdout.flush().await;
            }
            Ok(None) => break Err(died(place, "it closed the connection before the last line")),
            Err(e) => break Err(died(place, &e.to_string())),
        }
    };
    feed.abort();
    result
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct End {
    tether_host_end: Printed,
}
