//! The rules every tether crate follows, kept once at the bottom of the workspace: how a
//! mutex is taken (a poisoned one as it is), how shown text is cut (always with a mark), and
//! how a doc's generated part is checked.

mod cut;
mod generated;
mod sync;

pub use cut::{cut_line, cut_mark};
pub use generated::generated_part;
pub use sync::lock;
