//! Child processes that never outlive the run: each child leads its own process group, dies
//! with its parent, and is killed (with its group) when its deadline passes or its handle drops.
//!
//! `child` holds the Linux-only calls (process groups, `PR_SET_PDEATHSIG`); `long` builds the
//! run-long child on them.

mod child;
mod long;
mod status;

pub use child::{ProcError, output_with_deadline};
pub use long::{ChildSpec, LongChild};
pub use status::{gone_within, is_running};
