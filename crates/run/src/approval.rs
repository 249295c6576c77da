//! The approval gate: under `approval = "ask"`, a write- or exec-tier call first shows a card
//! (allow once, allow the tool for the rest of the run, deny) through the run's one question
//! port. Calls from inside other calls come through here too, so there is one approval path.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;
use tether_base::lock;

use tether_tool::{ApprovalPolicy, Card, CardOption, Outcome, Preview, Questions, Tier, ToolError};

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
        preview: &Preview,
    ) -> Result<(), ToolError> {
        if tier == Tier::Read || policy == ApprovalPolicy::Never {
            return Ok(());
        }
        if self.lock().contains(tool) {
            return Ok(());
        }
        let summary = match preview.summary.as_str() {
            "" => format!("call {tool}"),
            said => said.to_string(),
        };
        let mut context = format!("{tool} ({tier} tier): {summary}");
        if !preview.paths.is_empty() {
            context.push_str(&format!("\nfiles: {}", preview.paths.join(", ")));
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
