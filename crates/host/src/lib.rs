//! The warm host and the front ends that attach to it. One `tether host` per workspace keeps
//! the language servers warm for every run on that checkout; `tether call`, `call --stdin`,
//! `serve` and the agent hooks attach over a Unix socket, each as a run of its own.

#![forbid(unsafe_code)]

mod client;
mod front;
mod hook;
mod host;
mod images;
mod place;
mod relay;
mod wire;

pub use client::{Attachment, attach, attach_running, died, printed, relay_lines};
pub use front::{SHUTDOWN_BUDGET, call_lines, call_once};
pub use hook::{edited_files, not_read as hook_not_read, unreachable as hook_unreachable};
pub use host::serve;
pub use images::text_with_saved_images;
pub use place::{Place, places_of_root, project_root, running_places, runtime_dir};
pub use relay::relay_mcp;
pub use wire::{Hello, Printed, Reply};

/// Adds a host's own capabilities and tools to every run opened (by the command line here, or
/// by the warm host for an attachment).
pub type Extend = fn(tether::RunBuilder) -> tether::RunBuilder;
