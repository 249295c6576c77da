//! The two rules every tether crate follows, kept once at the bottom of the workspace: how a
//! mutex is taken (a poisoned one as it is), and how shown text is cut (always with a mark).

mod cut;
mod sync;

pub use cut::{cut_line, cut_mark};
pub use sync::lock;
