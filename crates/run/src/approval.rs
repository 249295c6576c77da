use std::time::Duration;

use tether_tool::{ApprovalPolicy, Card, CardAnswer, CardOption, QuestionPort, Tier, ToolError};

/// How long an approval card waits for the human before the call is refused.
const APPROVAL_TIMEOUT: Duration = Duration::from_secs(600);

/// The single approval path: read calls pass; write and exec calls pass under `never`, and
/// under `ask` only when a human answers "allow". With no one to ask, it fails closed.
pub(crate) async fn approve(
    policy: ApprovalPolicy,
    port: Option<&dyn QuestionPort>,
    tool: &str,
    tier: Tier,
    args: &serde_json::Value,
) -> Result<(), ToolError> {
    if tier == Tier::Read || policy == ApprovalPolicy::Never {
        return Ok(());
    }
    let Some(port) = port else {
        return Err(ToolError::NotApproved(format!(
            "`{tool}` is a {tier}-tier call and the approval policy is `ask`, but no one is \
             connected to approve it, so it was refused. Set `approval = \"never\"` in \
             tether.toml if the host approves calls itself."
        )));
    };
    let mut shown = args.to_string();
    if shown.len() > 600 {
        shown = tether_tool::cut_line(&shown, 600);
    }
    let card = Card {
        question: format!("Allow the {tier}-tier call `{tool}`?"),
        context: Some(format!("arguments: {shown}")),
        options: vec![
            CardOption {
                label: "Allow".into(),
                description: None,
            },
            CardOption {
                label: "Deny".into(),
                description: None,
            },
        ],
        allow_free_text: false,
        multi_select: false,
    };
    match port.ask(card, APPROVAL_TIMEOUT).await {
        Ok(CardAnswer::Selected(choice)) if choice == [0] => Ok(()),
        Ok(_) => Err(ToolError::NotApproved(format!(
            "the user did not approve `{tool}`; do not retry it unchanged"
        ))),
        Err(why) => Err(ToolError::NotApproved(format!(
            "`{tool}` needs approval and none came: {why}"
        ))),
    }
}
