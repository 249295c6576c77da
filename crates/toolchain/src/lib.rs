//! Which toolchain a child of a workspace runs on: the project's own Python, for an untrusted
//! workspace a PATH without its folders and a Rust toolchain chosen outside it, and the
//! servers tether installed itself. The language servers, the debugger, the kernels and the
//! command line all ask, so it sits below them.

mod install;
mod neutral;
mod python;

pub use install::{
    InstallError, Installed, Recipe, Registry, install, installed_in, installed_program,
    servers_dir, uninstall,
};

pub use neutral::{inside, neutral_rust_sysroot, path_outside, rust_pins, which_outside};
pub use python::{PYTHON_PROJECT_MARKERS, project_markers, project_python, project_venv};
