//! Child processes that never outlive the run: each child leads its own process group, dies
//! with its parent, and is killed (with its group) when its deadline passes or its handle drops.
//!
//! `child` holds the Linux-only calls (process groups, `PR_SET_PDEATHSIG`), `tree` follows the
//! descendants that leave their group (tether is a child subreaper), and `reaper` kills what
//! is left of both if tether is killed; `long` builds the run-long child on them.
//! `frame` and `rpc` speak to such a child: `Content-Length` framing, and a JSON-RPC peer with
//! deadlines, for language servers (and framing for debug adapters).

mod child;
mod frame;
mod long;
mod neutral;
mod pipes;
mod python;
mod reaper;
mod rpc;
mod status;
mod tree;

pub use child::{ProcError, output_with_deadline, run_with_deadline, signal_group};
pub use frame::{FrameError, MAX_FRAME, read_frame, write_frame};
pub use long::{ChildSpec, LongChild};
pub use neutral::{inside, neutral_rust_sysroot, path_outside, rust_pins, which_outside};
pub use pipes::PipeEnd;
pub use python::project_python;
pub use rpc::{BoxFuture, Incoming, Peer, Reply, ResponseError, RpcError};
pub use status::{children_named, gone_within, is_running};
pub use tree::{init, sweep_strays};
