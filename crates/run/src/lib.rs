//! The run: a frozen table of the tools this run's resources allow, and a runtime that puts
//! them to work through the ONE call pipeline every call goes through, whether it came from
//! the model or from inside another call: surface check, arguments, approval, gate, handler,
//! write-hook reports, notices.

#![forbid(unsafe_code)]

mod agent_edit;
mod approval;
mod arrival;
mod ask;
mod gate;
mod options;
mod pipeline;
mod resources;
mod runtime;
mod table;
mod wrap;

pub use agent_edit::{AgentEdit, EditReport};
pub use arrival::Arrival;
pub use ask::{AskArgs, AskUser};
pub use options::CallOptions;
pub use resources::RunResources;
pub use runtime::Runtime;
pub use table::{ToolTable, ToolTableBuilder};
