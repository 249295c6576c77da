//! The host's socket protocol: the front end's first line says what it attaches as, the
//! host's first line says yes or why not, and then each kind speaks its own way.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};

/// The front end's first line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Hello {
    /// One tool call in a fresh run (`tether call TOOL ARGS`); the answer is one [`Printed`].
    Call {
        /// The surface the front end may use.
        surface: String,
        /// The tool's name.
        tool: String,
        /// The arguments as given on the command line, parsed by the host.
        args: String,
    },
    /// One run serving JSON calls line by line (`tether call --stdin`); after the last result
    /// line comes one [`Printed`] line with the exit code.
    Lines {
        /// The surface the front end may use.
        surface: String,
    },
    /// One run served over MCP (`tether serve`): raw MCP lines both ways after the reply.
    Mcp {
        /// The surface the front end may use.
        surface: String,
        /// The conversation this run serves.
        conversation: Option<String>,
        /// Vibe mode.
        vibe: bool,
    },
    /// One agent hook event (`tether hook claude|codex`); the answer is one [`Printed`].
    Hook {
        /// `claude` or `codex`.
        agent: String,
        /// The event as the agent gave it.
        event: Value,
        /// Block the agent's turn when the edit brought new errors.
        block_on_new_errors: bool,
        /// The surface the front end may use (`--surface`, capped by `TETHER_SURFACE`).
        surface: String,
    },
    /// What the host holds; the answer is one JSON object.
    Status,
    /// Ends the host; the reply is the last line.
    Stop,
}

/// The host's first line: `{"ok": true, "pid": N}`, or why it will not serve the front end.
#[derive(Debug, Serialize, Deserialize)]
pub struct Reply {
    /// Whether the host serves this attachment.
    pub ok: bool,
    /// The host's process id.
    pub pid: u32,
    /// Why not, when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a one-shot front end prints and how it exits, made by the host for the process that
/// asked.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Printed {
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The exit code.
    pub code: u8,
}

/// The longest line the host reads from a front end: a hook event of the most tether reads,
/// and room for the hello around it.
pub const MAX_LINE: usize = 17 << 20;

/// Reads one line (without its newline) of at most `cap` bytes; `Ok(None)` at a clean end of
/// input. A longer line is an error, and what was read of it is dropped, never kept.
pub async fn read_line_capped(
    input: &mut (impl AsyncBufRead + Unpin),
    cap: usize,
) -> Result<Option<String>, String> {
    let mut line = Vec::new();
    match tether_proc::read_line_capped(input, &mut line, cap)
        .await
        .map_err(|e| format!("cannot read from the host socket: {e}"))?
    {
        tether_proc::CappedLine::Line => Ok(Some(String::from_utf8_lossy(&line).into_owned())),
        tether_proc::CappedLine::End => Ok(None),
        tether_proc::CappedLine::Over => Err(format!(
            "a line longer than {} MiB, more than tether reads",
            cap >> 20
        )),
    }
}

/// Reads one line of JSON as `T`, of at most `cap` bytes; `Ok(None)` at a clean end of input.
pub async fn read_json<T: for<'de> Deserialize<'de>>(
    input: &mut (impl AsyncBufRead + Unpin),
    cap: usize,
) -> Result<Option<T>, String> {
    let Some(line) = read_line_capped(input, cap).await? else {
        return Ok(None);
    };
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| format!("not a line of the host protocol ({e}): {}", line.trim()))
}

/// Writes `value` as one line of JSON and flushes.
pub async fn write_json<T: Serialize>(
    output: &mut (impl AsyncWrite + Unpin),
    value: &T,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    output.write_all(&line).await?;
    output.flush().await
}
