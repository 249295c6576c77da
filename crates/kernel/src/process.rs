//! One kernel process: cells go out on its descriptor 3, its messages come back on 4, and its
//! own output is read from 1 and 2 directly. A cell's wait is an inactivity budget: output and
//! bridged calls renew it, and a bridged call in flight suspends it.
//!
//! Cell code shares the kernel's process, so it can always write on the channel. Each `run`
//! therefore carries a fresh random token that the kernel puts in every message for that cell:
//! messages with no token tether gave are ignored and said, and a `done` for a past cell is
//! discarded, so no cell can end a later one. The limit: a Python cell can read the running
//! token by introspection and end its own cell early; the real `done` that follows is then
//! recognised as a past cell's, and what came before the next cell's `begin` is not shown.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use serde_json::Value;
use tether_proc::{ChildSpec, LongChild, PipeEnd, Signal, nonblocking_reader};
use tokio::io::unix::AsyncFd;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use base64::Engine;
use tether_tool::{Block, ToolError, ToolOutput};

use crate::cell::{Cell, Stream};
use crate::channel::{Read, read_messages};
use crate::error::KernelError;
use crate::message::{FromKernel, ToKernel};

/// How long an interrupted cell has to end before its kernel is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// Past cells' tokens remembered, to tell their late messages from forged ones.
const PAST_TOKENS: usize = 64;

/// What a cell asks of the run while it runs: a bridged tool call, answered with the tool's
/// text and images, or its error.
pub type Bridge<'a> =
    &'a (dyn Fn(String, Value) -> tether_tool::BoxFuture<'a, Result<ToolOutput, ToolError>> + Sync);

/// Why a cell has no ordinary end.
pub enum Ended {
    /// The kernel process is gone; what it printed before is kept.
    Died { cell: Box<Cell>, why: String },
    /// The call was cancelled; the cell was interrupted.
    Cancelled,
}

/// A running kernel.
pub struct Kernel {
    child: LongChild,
    requests: pipe::Sender,
    messages: mpsc::Receiver<Read>,
    /// The tokens of this kernel's past cells, newest last.
    past: VecDeque<String>,
    stdout: AsyncFd<File>,
    stderr: AsyncFd<File>,
    /// The interpreter, as the first result names it.
    pub interpreter: String,
    /// What `display` writes to stdout where it is called.
    mark: Vec<u8>,
}

/// Reads whatever `fd` holds now, without waiting; false once its writer has closed it.
fn drain(fd: &AsyncFd<File>, into: &mut Vec<u8>) -> bool {
    let mut buf = [0u8; 16 << 10];
    loop {
        match fd.get_ref().read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) => {
                tracing::debug!("reading the kernel's output: {e}");
                return true;
            }
        }
    }
}

impl Kernel {
    /// Starts `argv` (the interpreter and its bootstrap) in `cwd` and waits, at most `limit`,
    /// for it to say it is ready.
    pub async fn start(
        argv: Vec<String>,
        cwd: &std::path::Path,
        mut env: Vec<(String, String)>,
        limit: Duration,
    ) -> Result<Kernel, KernelError> {
        let nonce = token();
        env.push(("TETHER_KERNEL_MARK".into(), nonce.clone()));
        let spec = ChildSpec {
            argv,
            cwd: Some(cwd.to_path_buf()),
            env,
        };
        let pipes = [
            PipeEnd::ToChild(3),
            PipeEnd::FromChild(4),
            PipeEnd::FromChild(1),
            PipeEnd::FromChild(2),
        ];
        let (child, ends) =
            LongChild::spawn_with_pipes(&spec, &pipes).map_err(KernelError::Spawn)?;
        let [requests, messages, stdout, stderr]: [OwnedFd; 4] =
            ends.try_into().map_err(|_| KernelError::MissingPipes)?;
        let io = KernelError::Pipe;
        let requests = pipe::Sender::from_owned_fd(requests).map_err(io)?;
        let messages = pipe::Receiver::from_owned_fd(messages).map_err(io)?;
        let mark = format!("\0tether-display:{nonce}\0").into_bytes();
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(read_messages(messages, mark.clone(), tx));
        let mut kernel = Kernel {
            child,
            requests,
            messages: rx,
            past: VecDeque::new(),
            stdout: nonblocking_reader(stdout).map_err(io)?,
            stderr: nonblocking_reader(stderr).map_err(io)?,
            interpreter: String::new(),
            mark,
        };
        let first = async {
            loop {
                match kernel.messages.recv().await {
                    Some(Read::Message(message)) => return Some(message),
                    Some(_) => {}
                    None => return None,
                }
            }
        };
        let ready = tokio::time::timeout(limit, first).await;
        match ready.map(|m| m.and_then(|m| serde_json::from_value::<FromKernel>(m).ok())) {
            Ok(Some(FromKernel::Ready { interpreter })) => {
                kernel.interpreter = interpreter.unwrap_or_else(|| "?".into());
                Ok(kernel)
            }
            Ok(_) => Err(kernel.exited_early().await),
            Err(_) => {
                kernel.child.kill();
                Err(KernelError::StartTimeout { after: limit })
            }
        }
    }

    /// The kernel's process id, which is also its group's.
    pub fn pid(&self) -> Option<u32> {
        self.child.pid()
    }

    /// Whether the process is still there (it may have died between cells).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_status()
    }

    /// Why the kernel ended: `what`, and its exit status once it has one.
    pub async fn ended(&mut self, what: &str) -> String {
        format!("{what} ({})", self.how_ended().await)
    }

    /// Its exit status as words, once it has one.
    async fn how_ended(&mut self) -> String {
        let status = self.child.exited_within(Duration::from_secs(2)).await;
        status.map_or("it did not exit".to_string(), describe)
    }

    /// Why the kernel ended before it was ready, with the last lines it printed.
    async fn exited_early(&mut self) -> KernelError {
        let how = self.how_ended().await;
        let mut said = Vec::new();
        drain(&self.stdout, &mut said);
        drain(&self.stderr, &mut said);
        let text = String::from_utf8_lossy(&said);
        let lines: Vec<&str> = text.lines().collect();
        let printed = lines[lines.len().saturating_sub(10)..]
            .iter()
            .map(|l| l.to_string())
            .collect();
        KernelError::ExitedEarly { how, printed }
    }

    /// Runs one cell until it ends, its kernel dies, or the call is cancelled; `idle` is the
    /// inactivity budget, past which the cell is interrupted and its state kept.
    pub async fn run(
        &mut self,
        code: &str,
        idle: Duration,
        cancel: &CancellationToken,
        bridge: Bridge<'_>,
    ) -> Result<Cell, Ended> {
        let mut cell = Cell::new(&self.mark);
        let token = token();
        if self
            .send(&ToKernel::Run { code, cell: &token })
            .await
            .is_err()
        {
            let why = self.ended("the kernel died before the cell began").await;
            self.take_output(&mut cell);
            return Err(Ended::Died {
                cell: Box::new(cell),
                why,
            });
        }
        let mut active = Instant::now();
        // When the cell was interrupted: it then has a grace period to end.
        let mut interrupted: Option<Instant> = None;
        let mut cancelled = false;
        // Whether stdout and stderr may still bring output (the kernel moves its stderr onto
        // stdout as it starts, which closes the first).
        let mut open = (true, true);
        loop {
            let deadline = match interrupted {
                Some(at) => at + INTERRUPT_GRACE,
                None => active + idle,
            };
            tokio::select! {
                read = self.messages.recv() => {
                    // What was printed before the message was sent is in the pipes now.
                    self.take_output(&mut cell);
                    let message = match read {
                        Some(Read::Message(message)) => message,
                        Some(Read::Stray(n)) => {
                            cell.note(format!(
                                "{n} bytes on the kernel's message channel that are not \
                                 messages were ignored"
                            ));
                            continue;
                        }
                        Some(Read::Bad(why)) => {
                            cell.note(format!("ignored on the kernel's message channel: {why}"));
                            continue;
                        }
                        None => {
                            let why = self.ended("the kernel died during the cell").await;
                            self.child.kill();
                            self.take_output(&mut cell);
                            return Err(Ended::Died { cell: Box::new(cell), why });
                        }
                    };
                    let message = match serde_json::from_value::<FromKernel>(message) {
                        Ok(message) => message,
                        Err(e) => {
                            cell.note(format!("ignored on the kernel's message channel: a message that does not fit ({e})"));
                            continue;
                        }
                    };
                    let from = match message.cell() {
                        Some(t) if t == token => Whose::This,
                        Some(t) if self.past.iter().any(|p| p == t) => Whose::Past,
                        _ => Whose::Nobody,
                    };
                    let kind = message.kind();
                    match (message, from) {
                        (FromKernel::Display { shown, .. }, Whose::This | Whose::Past) => {
                            cell.display(&shown, from == Whose::Past);
                        }
                        (FromKernel::Tool { id, name, args, .. }, Whose::This) => {
                            if let Err(why) = self.bridged(id, name, args, bridge).await {
                                let why = self.ended(why).await;
                                self.take_output(&mut cell);
                                return Err(Ended::Died { cell: Box::new(cell), why });
                            }
                            active = Instant::now();
                        }
                        (FromKernel::Tool { id, .. }, _) => {
                            // Answered, so a kernel waiting for it goes on; the kernel ignores
                            // an answer to a call it did not make.
                            let text = "refused: the call did not come from the cell tether is running";
                            if from == Whose::Nobody {
                                cell.note("a `tool` message that no cell sent was refused".into());
                            }
                            let _ = self.send(&refused(id, text.into())).await;
                        }
                        (FromKernel::Done { error, summary, .. }, Whose::This) => {
                            self.remember(token);
                            cell.finish();
                            if cancelled {
                                return Err(Ended::Cancelled);
                            }
                            cell.error = error;
                            cell.summary = summary;
                            cell.interrupted_after = interrupted.map(|_| idle);
                            return Ok(cell);
                        }
                        (FromKernel::Done { .. }, Whose::Past) => cell.earlier_done(),
                        (FromKernel::Begin { n, .. }, Whose::This) => cell.begin(n),
                        _ => cell.note(format!(
                            "a `{kind}` message that no cell of this kernel sent was ignored"
                        )),
                    }
                }
                ready = self.stdout.readable(), if open.0 => {
                    if let Ok(mut guard) = ready {
                        let mut bytes = Vec::new();
                        open.0 = drain(&self.stdout, &mut bytes);
                        cell.push(Stream::Stdout, &bytes);
                        if !bytes.is_empty() { active = Instant::now(); }
                        guard.clear_ready();
                    }
                }
                ready = self.stderr.readable(), if open.1 => {
                    if let Ok(mut guard) = ready {
                        let mut bytes = Vec::new();
                        open.1 = drain(&self.stderr, &mut bytes);
                        cell.push(Stream::Stderr, &bytes);
                        if !bytes.is_empty() { active = Instant::now(); }
                        guard.clear_ready();
                    }
                }
                () = cancel.cancelled(), if !cancelled => {
                    cancelled = true;
                    interrupted.get_or_insert_with(Instant::now);
                    self.child.signal(Signal::INT);
                }
                () = tokio::time::sleep_until(deadline.into()) => {
                    if interrupted.is_some() {
                        self.child.kill();
                        let why = self.ended(&format!(
                            "the kernel did not stop within {} s of an interrupt and was killed",
                            INTERRUPT_GRACE.as_secs()
                        )).await;
                        self.take_output(&mut cell);
                        return Err(Ended::Died { cell: Box::new(cell), why });
                    }
                    interrupted = Some(Instant::now());
                    self.child.signal(Signal::INT);
                }
            }
        }
    }

    /// Keeps a finished cell's token, to know its late messages.
    fn remember(&mut self, token: String) {
        if self.past.len() == PAST_TOKENS {
            self.past.pop_front();
        }
        self.past.push_back(token);
    }

    /// Moves what the kernel printed so far into `cell`.
    fn take_output(&self, cell: &mut Cell) {
        let mut bytes = Vec::new();
        drain(&self.stdout, &mut bytes);
        cell.push(Stream::Stdout, &bytes);
        bytes.clear();
        drain(&self.stderr, &mut bytes);
        cell.push(Stream::Stderr, &bytes);
    }

    /// Makes the tool call a cell asked for and gives the kernel its answer; the error says
    /// the kernel died before it took the answer.
    async fn bridged(
        &mut self,
        id: Value,
        name: String,
        args: Value,
        bridge: Bridge<'_>,
    ) -> Result<(), &'static str> {
        let reply = match bridge(name, args).await {
            Ok(out) => answer(id, &out),
            Err(e) => refused(id, e.to_string()),
        };
        self.send(&reply)
            .await
            .map_err(|_| "the kernel died during a bridged call")
    }

    async fn send(&mut self, message: &ToKernel<'_>) -> std::io::Result<()> {
        let body = serde_json::to_vec(message)?;
        tether_rpc::write_frame(&mut self.requests, &body).await
    }

    /// Ends the kernel: its requests close (it exits on its own), then its group is killed.
    pub async fn stop(mut self) {
        drop(self.requests);
        if self
            .child
            .exited_within(Duration::from_millis(300))
            .await
            .is_none()
        {
            self.child.shutdown(Duration::from_millis(500)).await;
        }
    }
}

/// A bridged call's failure for the kernel.
fn refused(id: Value, text: String) -> ToKernel<'static> {
    ToKernel::ToolResult {
        id,
        ok: false,
        text,
        images: Vec::new(),
    }
}

/// A bridged call's result for the kernel: its text blocks, and its images apart.
fn answer(id: Value, out: &ToolOutput) -> ToKernel<'static> {
    let mut text = Vec::new();
    let mut images = Vec::new();
    for block in out.blocks() {
        match block {
            Block::Text(t) => text.push(t.as_str()),
            Block::Png(png) => images.push(base64::engine::general_purpose::STANDARD.encode(png)),
            _ => {}
        }
    }
    ToKernel::ToolResult {
        id,
        ok: true,
        text: text.join("\n\n"),
        images,
    }
}

/// Whose a message on the channel is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Whose {
    /// The running cell's.
    This,
    /// A cell tether already ended.
    Past,
    /// No cell's: its token is missing or was never given.
    Nobody,
}

/// 128 random bits as hex, for a kernel's mark and a cell's token.
fn token() -> String {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No /dev/urandom: the clock and the process still differ between kernels and cells.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (now ^ u128::from(std::process::id()) << 96).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An exit status as words: "exit code 1" or "killed by signal 9".
fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "it ended".to_string(),
    }
}
