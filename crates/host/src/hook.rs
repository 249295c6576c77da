//! Agent hooks (`tether hook claude|codex`): the agent's own edit tools, reported like a
//! tether write. Not built yet: an event gets a clear error, never a silent pass.

use serde_json::Value;

use crate::host::Host;
use crate::wire::Printed;

/// The hook sessions a host keeps, one run per agent session.
#[derive(Default)]
pub(crate) struct Sessions {}

impl Sessions {
    /// How many agent sessions have a run here.
    pub(crate) fn len(&self) -> usize {
        0
    }

    /// Ends every session's run.
    pub(crate) async fn end_all(&self) {}
}

/// Answers one hook event.
pub(crate) async fn handle(_host: &Host, agent: &str, _event: Value, _block: bool) -> Printed {
    Printed {
        stderr: format!("tether: hooks for {agent} are not built yet\n"),
        code: 1,
        ..Printed::default()
    }
}
