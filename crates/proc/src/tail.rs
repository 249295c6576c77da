//! The one way a child's last stderr lines join an error message, so every front end shows a
//! dying process's last words alike.

/// Lines of a child's stderr shown at most in an error message.
pub const STDERR_SHOWN: usize = 20;

/// `message`, followed by the last [`STDERR_SHOWN`] lines of `tail` (as
/// [`crate::LongChild::stderr_tail`] gives them) when they say anything.
pub fn with_stderr_tail(message: &str, tail: &[String]) -> String {
    let lines: Vec<&str> = tail.iter().flat_map(|l| l.lines()).collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return message.to_string();
    };
    let shown = &lines[first.max((last + 1).saturating_sub(STDERR_SHOWN))..=last];
    format!("{message}; its stderr ended with:\n{}", shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_lines_that_say_something_are_shown() {
        assert_eq!(with_stderr_tail("died", &[]), "died");
        assert_eq!(with_stderr_tail("died", &[" ".into(), "".into()]), "died");
        let tail = vec!["".into(), "a".into(), "b".into(), " ".into()];
        assert_eq!(
            with_stderr_tail("died", &tail),
            "died; its stderr ended with:\na\nb"
        );
        let many: Vec<String> = (0..30).map(|n| n.to_string()).collect();
        let shown = with_stderr_tail("x", &many);
        assert!(shown.ends_with("\n28\n29"), "{shown}");
        assert_eq!(shown.lines().count(), 1 + STDERR_SHOWN);
    }
}
