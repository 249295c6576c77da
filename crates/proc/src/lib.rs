//! Child processes that never outlive the run: each child leads its own process group, dies
//! with its parent, and is killed (with its group) when its deadline passes or its handle drops.
//!
//! `child` is the one module with Linux-only calls.

mod child;

pub use child::{ProcError, output_with_deadline};
