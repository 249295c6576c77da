//! Which toolchain a child of a workspace runs on: the project's own Python, and for an
//! untrusted workspace a PATH without its folders and a Rust toolchain chosen outside it. The
//! language servers, the debugger and the kernels all ask, so it sits below them.

mod neutral;
mod python;

pub use neutral::{inside, neutral_rust_sysroot, path_outside, rust_pins, which_outside};
pub use python::{PYTHON_PROJECT_MARKERS, project_markers, project_python, project_venv};
