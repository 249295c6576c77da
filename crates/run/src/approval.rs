//! The approval gate: under `approval = "ask"`, a write- or exec-tier call first shows a card
//! (allow once, allow the tool for the rest of the run, deny) through the run's one question
//! port. Calls from inside other calls come through here too, so there is one approval path.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;
use tether_tool::lock;

use serde_json::Value;
use tether_tool::{ApprovalPolicy, Card, CardOption, Outcome, Questions, Tier, ToolError};

/// The approval stage's memory: tools the human allowed for the rest of the run.
#[derive(Default)]
pub(crate) struct Approvals {
    allowed: Mutex<HashSet<String>>,
}

/// The card's three choices, in order.
const ALLOW_ONCE: usize = 0;
const ALLOW_RUN: usize = 1;

impl Approvals {
    /// Passes read calls, and every call under `never`; under `ask`, the human decides, and
    /// with no one to ask the call is refused at once.
    pub(crate) async fn approve(
        &self,
        policy: ApprovalPolicy,
        questions: &Questions,
        timeout: Duration,
        tool: &str,
        tier: Tier,
        args: &Value,
    ) -> Result<(), ToolError> {
        if tier == Tier::Read || policy == ApprovalPolicy::Never {
            return Ok(());
        }
        if self.lock().contains(tool) {
            return Ok(());
        }
        let (summary, paths) = summarize(tool, args);
        let mut context = format!("{tool} ({tier} tier): {summary}");
        if !paths.is_empty() {
            context.push_str(&format!("\nfiles: {}", paths.join(", ")));
        }
        let option = |label: &str, description: &str| CardOption {
            label: label.into(),
            description: Some(description.into()),
        };
        let card = Card {
            id: questions.next_id(),
            question: format!("Allow `{tool}`?"),
            context: Some(context),
            options: vec![
                option("Allow once", "run this call"),
                option(
                    &format!("Allow {tool} for this run"),
                    "run this call and every later one of this tool without asking",
                ),
                option("Deny", "refuse this call; nothing is changed"),
            ],
            allow_free_text: false,
            multi_select: false,
        };
        let refused = |why: String| Err(ToolError::NotApproved(why));
        match questions.ask(card.clone(), timeout).await {
            Outcome::Answered { chosen, .. } if chosen == [ALLOW_ONCE] => Ok(()),
            Outcome::Answered { chosen, .. } if chosen == [ALLOW_RUN] => {
                self.lock().insert(tool.to_string());
                Ok(())
            }
            Outcome::Answered { .. } => refused(format!(
                "the user denied `{tool}`; nothing was changed. Do not retry it unchanged: ask \
                 the user in your reply what they want instead"
            )),
            Outcome::Skipped { cancelled, .. } => refused(format!(
                "the user {} the approval card for `{tool}`, so it was refused; nothing was \
                 changed. Do not retry it unchanged: ask the user in your reply how to go on",
                if cancelled { "cancelled" } else { "declined" }
            )),
            Outcome::TimedOut => refused(format!(
                "no one answered the approval card for `{tool}` within {} s, so it was \
                 refused; nothing was changed",
                timeout.as_secs()
            )),
            Outcome::Deferred => Err(ToolError::NeedsInput(Box::new(card))),
            Outcome::Unavailable(why) => refused(format!(
                "`{tool}` is a {tier}-tier call and the approval policy is `ask`, but no one is \
                 connected to approve it ({why}), so it was refused; nothing was changed. Set \
                 `approval = \"never\"` in tether.toml if the host approves calls itself."
            )),
            _ => refused(format!("`{tool}` was not approved")),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        lock(&self.allowed)
    }
}

/// Lines of a write's content or an edit's text the card shows at most.
const SHOWN_LINES: usize = 8;

/// What a call will do, and the files it names, from its arguments: for a write its first
/// lines, for an edit the lines it takes out and puts in, for a patch each file with its
/// counts, so the human approves a change they have seen.
fn summarize(tool: &str, args: &Value) -> (String, Vec<String>) {
    let mut paths: Vec<String> = Vec::new();
    for key in ["path", "file", "file_path", "program"] {
        if let Some(p) = args[key].as_str() {
            paths.push(p.to_string());
        }
    }
    let first_line = |s: &str| tether_tool::cut_line(s.lines().next().unwrap_or(""), 100);
    let summary = if let Some(d) = args["description"].as_str() {
        match args["code"].as_str() {
            Some(code) => format!("{d} (first line: {})", first_line(code)),
            None => d.to_string(),
        }
    } else if let Some(action) = args["action"].as_str() {
        format!("action {action}")
    } else if let Some(patch) = args["patch"].as_str() {
        let files = patch_files(patch);
        paths.extend(files.iter().map(|f| f.path.clone()));
        let rows: Vec<String> = files.iter().map(PatchFile::row).collect();
        format!(
            "a patch to {}:\n{}",
            tether_tool::counted(files.len(), "file"),
            rows.join("\n")
        )
    } else if let (Some(old), Some(new)) =
        (args["old_string"].as_str(), args["new_string"].as_str())
    {
        let all = match args["replace_all"].as_bool() {
            Some(true) => " (every occurrence)",
            _ => "",
        };
        format!("replace{all}:\n{}\n{}", marked('-', old), marked('+', new))
    } else if let Some(content) = args["content"].as_str() {
        format!(
            "write the whole file ({}):\n{}",
            tether_tool::counted(content.lines().count(), "line"),
            marked('+', content)
        )
    } else if let (Some(pattern), Some(rewrite)) =
        (args["pattern"].as_str(), args["rewrite"].as_str())
    {
        format!(
            "rewrite `{}` as `{}`",
            first_line(pattern),
            first_line(rewrite)
        )
    } else if let (Some(symbol), Some(new)) = (args["symbol"].as_str(), args["new_name"].as_str()) {
        format!("rename `{symbol}` to `{new}` wherever the server finds it")
    } else {
        let shown = args.to_string();
        format!("arguments {}", tether_tool::cut_line(&shown, 200))
    };
    if summary.is_empty() {
        return (format!("call {tool}"), paths);
    }
    (summary, paths)
}

/// The first [`SHOWN_LINES`] lines of `text`, each after `mark`, each cut to a screen width.
fn marked(mark: char, text: &str) -> String {
    let mut rows: Vec<String> = text
        .lines()
        .take(SHOWN_LINES)
        .map(|l| format!("  {mark} {}", tether_tool::cut_line(l, 120)))
        .collect();
    let n = text.lines().count();
    if n > SHOWN_LINES {
        rows.push(format!(
            "  … {} not shown",
            tether_tool::counted(n - SHOWN_LINES, "line")
        ));
    }
    rows.join("\n")
}

/// One file of a patch as the card shows it.
struct PatchFile {
    /// A, D or M, as `git status` writes them.
    kind: char,
    path: String,
    moved_to: Option<String>,
    added: usize,
    removed: usize,
}

impl PatchFile {
    fn row(&self) -> String {
        let moved = self
            .moved_to
            .as_ref()
            .map(|to| format!(" -> {to}"))
            .unwrap_or_default();
        match self.kind {
            'D' => format!("  D {}", self.path),
            _ => format!(
                "  {} {}{moved} (+{} -{})",
                self.kind, self.path, self.added, self.removed
            ),
        }
    }
}

/// The files of an `apply_patch` patch, with the lines each adds and removes.
fn patch_files(patch: &str) -> Vec<PatchFile> {
    let mut files: Vec<PatchFile> = Vec::new();
    for line in patch.lines() {
        let heads = [
            ("*** Add File:", 'A'),
            ("*** Delete File:", 'D'),
            ("*** Update File:", 'M'),
        ];
        if let Some((path, kind)) = heads
            .iter()
            .find_map(|(head, kind)| Some((line.strip_prefix(head)?, *kind)))
        {
            files.push(PatchFile {
                kind,
                path: path.trim().to_string(),
                moved_to: None,
                added: 0,
                removed: 0,
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if let Some(to) = line.strip_prefix("*** Move to:") {
            file.moved_to = Some(to.trim().to_string());
        } else if line.starts_with('+') {
            file.added += 1;
        } else if line.starts_with('-') {
            file.removed += 1;
        }
    }
    files
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_card_shows_what_will_change() {
        let patch =
            "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n+y = 3\n*** End Patch";
        let (summary, paths) = summarize("apply_patch", &json!({"patch": patch}));
        assert_eq!(summary, "a patch to 1 file:\n  M src/a.py (+2 -1)");
        assert_eq!(paths, ["src/a.py"]);
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+hi\n*** Delete File: old.txt\n*** Update File: a\n*** Move to: b\n*** End Patch";
        let (summary, _) = summarize("apply_patch", &json!({"patch": patch}));
        assert_eq!(
            summary,
            "a patch to 3 files:\n  A n.txt (+1 -0)\n  D old.txt\n  M a -> b (+0 -0)"
        );

        let (summary, paths) = summarize(
            "write",
            &json!({"path": "cfg.toml", "content": "a = 1\nb = 2\n"}),
        );
        assert_eq!(
            summary,
            "write the whole file (2 lines):\n  + a = 1\n  + b = 2"
        );
        assert_eq!(paths, ["cfg.toml"]);
        let long: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let (summary, _) = summarize("write", &json!({"path": "l.txt", "content": long}));
        assert!(
            summary.contains("  + line 8\n  … 12 lines not shown"),
            "{summary}"
        );

        let args = json!({"path": "a.rs", "old_string": "let x = 1;", "new_string": "let x = 2;\nlet y = 3;"});
        let (summary, _) = summarize("edit", &args);
        assert_eq!(
            summary,
            "replace:\n  - let x = 1;\n  + let x = 2;\n  + let y = 3;"
        );
    }
}
