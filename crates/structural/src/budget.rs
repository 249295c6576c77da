//! The bounds every structural call runs within: a deadline, the caller's cancellation, the
//! size of what an edit may stage, and how deep a tree may be recursed over, together with
//! the large-stack threads that recursion runs on. A call that meets a bound ends with an
//! error saying which one, never with a silently shorter answer.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Stack of every thread that compiles a pattern or matches one. ast-grep recurses once per
/// level of the pattern, and once per level of a subtree a repeated metavariable compares, so
/// that recursion runs here and never on an async worker's small stack.
pub const STACK_BYTES: usize = 64 << 20;

/// The deepest pattern accepted, in syntax-tree levels. Real patterns stay far below it (a
/// whole function is some 20 levels); at about 3 KiB of stack a level in a debug build, it
/// leaves [`STACK_BYTES`] a twenty-fold margin.
pub const MAX_PATTERN_DEPTH: usize = 1_000;

/// The longest pattern accepted, in bytes (64 KiB). A whole function is a few KiB; each rung of
/// the ladder parses the pattern again, and a 3 MB one took 7 s and 570 MB to compile.
pub const MAX_PATTERN_BYTES: usize = 64 << 10;

/// Files whose syntax tree nests deeper than this are skipped and counted, as huge files are:
/// comparing a repeated metavariable recurses over the captured subtree (about 1.3 KiB of stack
/// a level in a debug build, so this keeps a five-fold margin), and no hand-written code nests
/// anywhere near it.
pub const MAX_TREE_DEPTH: usize = 10_000;

/// How long one `ast_grep` or `ast_edit` call may search and render before it stops, unless
/// `[structural] time_budget_secs` says otherwise.
pub const TIME_BUDGET: Duration = Duration::from_secs(60);

/// How much new file content one `ast_edit` may stage, in bytes (64 MiB), unless
/// `[structural] rewrite_budget_mb` says otherwise; the staged change is held in memory.
pub const REWRITE_BUDGET: usize = 64 << 20;

/// The largest `max_results` accepted: every shown match costs a few hundred characters of
/// the model's context, and memory for its excerpt.
pub const MAX_RESULTS: usize = 1_000;

/// Nodes visited between two looks at the clock and the cancellation flag.
pub(crate) const CHECK_EVERY: usize = 256;

/// Why a call stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The caller cancelled the call.
    Cancelled,
    /// The call ran past its time budget.
    OutOfTime,
    /// The edit would stage more new content than its budget.
    TooMuchOutput,
}

impl Stop {
    fn code(self) -> u8 {
        match self {
            Stop::Cancelled => 1,
            Stop::OutOfTime => 2,
            Stop::TooMuchOutput => 3,
        }
    }

    fn from_code(code: u8) -> Option<Stop> {
        match code {
            1 => Some(Stop::Cancelled),
            2 => Some(Stop::OutOfTime),
            3 => Some(Stop::TooMuchOutput),
            _ => None,
        }
    }

    /// What the model reads: which bound was met, and what to do instead.
    pub fn message(self, tool: &str, limits: &Limits) -> String {
        match self {
            Stop::Cancelled => format!("`{tool}` was cancelled"),
            Stop::OutOfTime => format!(
                "`{tool}` stopped after its time budget of {} s (`[structural] \
                 time_budget_secs`) without finishing, so no result is shown (a partial one \
                 would look complete). Narrow `path` to fewer files, or make the pattern more \
                 specific",
                limits.time.as_secs()
            ),
            Stop::TooMuchOutput => format!(
                "`{tool}` stopped: the rewrite would stage more than {} MiB of new file \
                 content, its output budget (`[structural] rewrite_budget_mb`), so nothing was \
                 staged. Narrow `path`, make the pattern more specific, or shorten `rewrite`",
                limits.rewrite_bytes >> 20
            ),
        }
    }
}

/// The bounds of each call, from `[structural]`; [`Limits::default`] is the documented
/// constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for searching and rendering.
    pub time: Duration,
    /// New file content an edit may stage, in bytes.
    pub rewrite_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: TIME_BUDGET,
            rewrite_bytes: REWRITE_BUDGET,
        }
    }
}

/// The live budget of one call, shared by its worker threads: the first bound any worker
/// meets stops them all.
pub struct Budget<'a> {
    limits: Limits,
    deadline: Instant,
    cancel: &'a AtomicBool,
    stopped: AtomicU8,
    output: AtomicUsize,
}

impl<'a> Budget<'a> {
    /// A budget starting now, stopped early when `cancel` is set.
    pub fn new(limits: Limits, cancel: &'a AtomicBool) -> Self {
        Budget {
            limits,
            deadline: Instant::now() + limits.time,
            cancel,
            stopped: AtomicU8::new(0),
            output: AtomicUsize::new(0),
        }
    }

    /// The bounds this budget enforces.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// When the time budget runs out.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Err once the call was cancelled, ran out of time, or another worker met a bound.
    pub fn check(&self) -> Result<(), Stop> {
        if let Some(stop) = Stop::from_code(self.stopped.load(Ordering::Relaxed)) {
            return Err(stop);
        }
        if self.cancel.load(Ordering::Relaxed) {
            return Err(self.stop(Stop::Cancelled));
        }
        if Instant::now() >= self.deadline {
            return Err(self.stop(Stop::OutOfTime));
        }
        Ok(())
    }

    /// Counts `bytes` of new content an edit produces; Err once the total passes the budget.
    pub(crate) fn add_output(&self, bytes: usize) -> Result<(), Stop> {
        let total = self.output.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total > self.limits.rewrite_bytes {
            return Err(self.stop(Stop::TooMuchOutput));
        }
        Ok(())
    }

    /// Counts a replacement: `removed` bytes of counted content give way to `added` new ones.
    pub(crate) fn replace_output(&self, removed: usize, added: usize) -> Result<(), Stop> {
        let _ = self
            .output
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(removed))
            });
        self.add_output(added)
    }

    /// How many more bytes of new content fit the budget.
    pub(crate) fn output_left(&self) -> usize {
        self.limits
            .rewrite_bytes
            .saturating_sub(self.output.load(Ordering::Relaxed))
    }

    /// Records the first stop, so every worker reports the same one.
    pub(crate) fn stop(&self, stop: Stop) -> Stop {
        match self
            .stopped
            .compare_exchange(0, stop.code(), Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => stop,
            Err(first) => Stop::from_code(first).unwrap_or(stop),
        }
    }
}

/// Runs `job` on a new thread with a [`STACK_BYTES`] stack and hands its result to the
/// returned receiver; a panic drops the sender, which the receiver reports as an error.
pub(crate) fn on_large_stack<T, F>(
    name: &str,
    job: F,
) -> std::io::Result<tokio::sync::oneshot::Receiver<T>>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            // The receiver is gone when the call was cancelled; nobody wants the result then.
            let _ = tx.send(job());
        })?;
    Ok(rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_stop_is_the_one_every_worker_reports() {
        let cancel = AtomicBool::new(false);
        let limits = Limits {
            time: Duration::from_secs(60),
            rewrite_bytes: 10,
        };
        let budget = Budget::new(limits, &cancel);
        assert_eq!(budget.check(), Ok(()));
        assert_eq!(budget.add_output(10), Ok(()));
        assert_eq!(budget.output_left(), 0);
        assert_eq!(budget.add_output(1), Err(Stop::TooMuchOutput));
        cancel.store(true, Ordering::Relaxed);
        assert_eq!(budget.check(), Err(Stop::TooMuchOutput));
        let expired = Budget::new(
            Limits {
                time: Duration::ZERO,
                ..limits
            },
            &cancel,
        );
        assert_eq!(expired.check(), Err(Stop::Cancelled));
        let never_cancelled = AtomicBool::new(false);
        let expired = Budget::new(
            Limits {
                time: Duration::ZERO,
                ..limits
            },
            &never_cancelled,
        );
        assert_eq!(expired.check(), Err(Stop::OutOfTime));
    }

    #[test]
    fn messages_name_the_bound_and_what_to_do() {
        let limits = Limits::default();
        let m = Stop::OutOfTime.message("ast_grep", &limits);
        assert!(m.contains("60 s") && m.contains("Narrow `path`"), "{m}");
        let m = Stop::TooMuchOutput.message("ast_edit", &limits);
        assert!(
            m.contains("64 MiB") && m.contains("nothing was staged"),
            "{m}"
        );
    }
}
