/// Whether write and exec calls ask a human first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// The host decides (MCP clients run their own prompts): nothing is asked here.
    #[default]
    Never,
    /// Write and exec calls go through a question card; with no one to ask, they are refused.
    Ask,
}

/// What a call would change, from its own arguments, shown before it runs: the approval card
/// quotes it, so the human allows a change they have seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preview {
    /// What it does, in the few lines a human reads before allowing it; empty when the tool
    /// has nothing to say beyond its name.
    pub summary: String,
    /// The files it names, as the call gives them.
    pub paths: Vec<String>,
}

/// Lines of a text a preview quotes at most.
const SHOWN_LINES: usize = 8;

impl Preview {
    /// A preview of `summary` about `paths`.
    pub fn new(summary: impl Into<String>, paths: Vec<String>) -> Self {
        Preview {
            summary: summary.into(),
            paths,
        }
    }

    /// The first lines of `text`, each after `mark` (`+` for what goes in, `-` for what goes
    /// out) and cut to a screen's width, with a count of the lines not shown.
    pub fn quoted(mark: char, text: &str) -> String {
        let mut rows: Vec<String> = text
            .lines()
            .take(SHOWN_LINES)
            .map(|l| format!("  {mark} {}", tether_base::cut_line(l, 120)))
            .collect();
        let n = text.lines().count();
        if n > SHOWN_LINES {
            rows.push(format!(
                "  … {} not shown",
                crate::counted(n - SHOWN_LINES, "line")
            ));
        }
        rows.join("\n")
    }

    /// The first line of `text`, cut to a screen's width.
    pub fn first_line(text: &str) -> String {
        tether_base::cut_line(text.lines().next().unwrap_or(""), 100)
    }
}
