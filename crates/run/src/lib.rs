//! The run: a registry of the tools this run's resources allow, and the ONE call pipeline
//! every call goes through, whether it came from the model or from inside another call:
//! surface check, schema, approval, gate, handler, write-hook reports, notices.

mod approval;
mod arrival;
mod gate;
mod pipeline;
mod registry;
mod wrap;

pub use arrival::Arrival;
pub use registry::{CallOptions, Registry, RegistryBuilder, RunResources};
pub use wrap::PathsOf;
