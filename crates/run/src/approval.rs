//! The approval gate: under `approval = "ask"`, a write- or exec-tier call first shows a card
//! (allow once, allow the tool for the rest of the run, deny) through the run's one question
//! port. Calls from inside other calls come through here too, so there is one approval path.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

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
        self.allowed.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One line on what a call will do, and the files it names, from its arguments.
fn summarize(tool: &str, args: &Value) -> (String, Vec<String>) {
    let mut paths: Vec<String> = Vec::new();
    for key in ["path", "file", "program"] {
        if let Some(p) = args[key].as_str() {
            paths.push(p.to_string());
        }
    }
    if let Some(patch) = args["patch"].as_str() {
        for line in patch.lines() {
            for head in [
                "*** Update File:",
                "*** Add File:",
                "*** Delete File:",
                "*** Move to:",
            ] {
                if let Some(p) = line.strip_prefix(head) {
                    paths.push(p.trim().to_string());
                }
            }
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
    } else if args.get("patch").is_some() {
        format!("a patch to {} files", paths.len())
    } else if let (Some(old), Some(_)) = (args["old_string"].as_str(), args["new_string"].as_str())
    {
        format!("replace text starting \"{}\"", first_line(old))
    } else if args.get("content").is_some() {
        "write the whole file".to_string()
    } else {
        let shown = args.to_string();
        format!("arguments {}", tether_tool::cut_line(&shown, 200))
    };
    if summary.is_empty() {
        return (format!("call {tool}"), paths);
    }
    (summary, paths)
}
