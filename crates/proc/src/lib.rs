//! Child processes that never outlive the run: each child leads its own process group, dies
//! with its parent, and is killed (with its group) when its deadline passes or its handle drops.
//!
//! `child` holds the Linux-only calls (process groups, `PR_SET_PDEATHSIG`), `tree` follows the
//! descendants that leave their group (tether is a child subreaper), and `reaper` kills what
//! is left of both if tether is killed; `long` builds the run-long child on them.
//! `frame` and `rpc` speak to such a child: `Content-Length` framing, and one request/response
//! engine with deadlines and cancellation, generic over its envelope: `jsonrpc` for language
//! servers, `dap` for debug adapters.

mod child;
mod handover;
mod lines;
mod long;
mod pipes;
mod reaper;
mod status;
mod tail;
mod tree;

pub use child::{ProcError, output_with_deadline, run_with_deadline, signal_group};
pub use handover::{keep_across_exec, socket_from_parent};
pub use lines::{CappedLine, read_line_capped};
pub use long::{ChildSpec, LongChild};
pub use pipes::{PipeEnd, nonblocking_reader};
pub use rustix::process::Signal;
pub use status::{
    children_named, current_uid, exited, gone_within, is_running, open_descriptors,
    out_of_descriptors, raise_descriptor_limit, resident_kib,
};
pub use tail::{STDERR_SHOWN, with_stderr_tail};
pub use tree::{census_passes, init, sweep_strays};
