//! The terminal's question port: the card goes to stderr, numbered, and the answer is a line
//! typed on stdin (a number, several numbers, or words where allowed). Used by `tether call` on
//! a terminal and by `tether ask`.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use tether::{Card, Outcome, QuestionPort};
use tether_tool::BoxFuture;

/// How many unreadable answers are asked again before the card counts as skipped.
const RETRIES: usize = 3;

/// Asks on this process's terminal.
pub struct TerminalPort;

impl TerminalPort {
    /// A port when stdin is a terminal a person can type into, else none.
    pub fn if_interactive() -> Option<TerminalPort> {
        std::io::stdin().is_terminal().then_some(TerminalPort)
    }
}

/// What a typed line means for `card`: an answer, or why it could not be read.
pub fn read_line(card: &Card, line: &str) -> Result<Outcome, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(Outcome::Skipped {
            cancelled: false,
            hasty: false,
        });
    }
    let words: Vec<&str> = line
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    let numbers: Option<Vec<usize>> = words.iter().map(|w| w.parse::<usize>().ok()).collect();
    if let Some(numbers) = numbers.filter(|_| !card.options.is_empty()) {
        let n = card.options.len();
        if let Some(bad) = numbers.iter().find(|&&k| k == 0 || k > n) {
            return Err(format!("there is no option {bad}: type 1 to {n}"));
        }
        if numbers.len() > 1 && !card.multi_select {
            return Err("choose one number".into());
        }
        let mut chosen: Vec<usize> = Vec::new();
        for k in numbers {
            if !chosen.contains(&(k - 1)) {
                chosen.push(k - 1);
            }
        }
        return Ok(Outcome::Answered { chosen, text: None });
    }
    if let Some(i) = card
        .options
        .iter()
        .position(|o| o.label.eq_ignore_ascii_case(line))
    {
        return Ok(Outcome::Answered {
            chosen: vec![i],
            text: None,
        });
    }
    match card.allow_free_text {
        true => Ok(Outcome::Answered {
            chosen: Vec::new(),
            text: Some(line.to_string()),
        }),
        false => Err(format!(
            "type a number from 1 to {}{}",
            card.options.len(),
            if card.multi_select {
                " (or several, like 1,3)"
            } else {
                ""
            }
        )),
    }
}

/// Shows the card and reads answers until one is readable; blocking.
fn converse(card: &Card) -> Outcome {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\n{}", card.to_text());
    let _ = writeln!(err, "(an empty line skips the question)");
    let stdin = std::io::stdin();
    for _ in 0..RETRIES {
        let _ = write!(err, "> ");
        let _ = err.flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => {
                return Outcome::Skipped {
                    cancelled: true,
                    hasty: false,
                };
            }
            Ok(_) => {}
        }
        match read_line(card, &line) {
            Ok(outcome) => return outcome,
            Err(why) => {
                let _ = writeln!(err, "{why}");
            }
        }
    }
    Outcome::Skipped {
        cancelled: false,
        hasty: false,
    }
}

impl QuestionPort for TerminalPort {
    fn ask(&self, card: Card, timeout: Duration) -> BoxFuture<'_, Outcome> {
        Box::pin(async move {
            let asking = tokio::task::spawn_blocking(move || converse(&card));
            match tokio::time::timeout(timeout, asking).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(e)) => Outcome::Unavailable(format!("the terminal could not be read: {e}")),
                Err(_) => {
                    eprintln!("\n(no answer within {} s)", timeout.as_secs());
                    Outcome::TimedOut
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tether::CardOption;

    fn card(multi: bool, free: bool) -> Card {
        Card {
            id: "q1".into(),
            question: "Which?".into(),
            context: None,
            options: ["Postgres", "SQLite", "none"]
                .iter()
                .map(|l| CardOption {
                    label: l.to_string(),
                    description: None,
                })
                .collect(),
            allow_free_text: free,
            multi_select: multi,
        }
    }

    fn chose(chosen: Vec<usize>) -> Outcome {
        Outcome::Answered { chosen, text: None }
    }

    #[test]
    fn typed_lines_become_answers_or_say_what_to_type() {
        assert_eq!(
            read_line(&card(false, false), "2\n").unwrap(),
            chose(vec![1])
        );
        assert_eq!(
            read_line(&card(false, false), "sqlite").unwrap(),
            chose(vec![1])
        );
        assert_eq!(
            read_line(&card(true, false), "3, 1").unwrap(),
            chose(vec![2, 0])
        );
        assert!(
            read_line(&card(false, false), "1 2")
                .unwrap_err()
                .contains("one number")
        );
        assert!(
            read_line(&card(false, false), "4")
                .unwrap_err()
                .contains("no option 4")
        );
        assert!(
            read_line(&card(false, false), "mysql")
                .unwrap_err()
                .contains("1 to 3")
        );
        assert_eq!(
            read_line(&card(false, true), "mysql please").unwrap(),
            Outcome::Answered {
                chosen: vec![],
                text: Some("mysql please".into())
            }
        );
        assert!(matches!(
            read_line(&card(false, false), "  ").unwrap(),
            Outcome::Skipped { .. }
        ));
    }
}
