//! Why a kernel could not start. Each Display is the sentence the model reads after "the
//! Python kernel could not start: ", so the wording is part of the behaviour.

use std::time::Duration;

/// What went wrong starting a kernel.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The interpreter (or the sandbox before it) did not start.
    #[error("{0}")]
    Spawn(#[source] tether_proc::ProcError),
    /// Fewer pipes came back than were asked for.
    #[error("the kernel's pipes were not all made")]
    MissingPipes,
    /// A pipe could not be made ready for reading or writing.
    #[error("the kernel's pipes: {0}")]
    Pipe(#[source] std::io::Error),
    /// The process ended before it said it was ready: how, and the last lines it printed.
    #[error(
        "it exited before it was ready ({how}){}",
        it_printed(.printed)
    )]
    ExitedEarly { how: String, printed: Vec<String> },
    /// It said nothing within the start budget.
    #[error(
        "the kernel did not start within {} s; a slow interpreter or a large site-packages may \
         need more: raise `[eval] start_timeout_s`",
        .after.as_secs()
    )]
    StartTimeout { after: Duration },
}

/// `; it printed:` and the lines, or nothing when there are none.
fn it_printed(lines: &[String]) -> String {
    match lines {
        [] => String::new(),
        lines => format!("; it printed:\n{}", lines.join("\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_that_did_not_start_says_how_and_what_it_printed() {
        let quiet = KernelError::ExitedEarly {
            how: "exit code 1".into(),
            printed: Vec::new(),
        };
        assert_eq!(
            quiet.to_string(),
            "it exited before it was ready (exit code 1)"
        );
        let said = KernelError::ExitedEarly {
            how: "exit code 1".into(),
            printed: vec!["Traceback".into(), "ImportError: x".into()],
        };
        assert_eq!(
            said.to_string(),
            "it exited before it was ready (exit code 1); it printed:\nTraceback\nImportError: x"
        );
        let slow = KernelError::StartTimeout {
            after: Duration::from_secs(30),
        };
        assert!(
            slow.to_string()
                .starts_with("the kernel did not start within 30 s; a slow interpreter")
        );
    }
}
