//! The library's integration tests, as one binary: each module was a test binary of its own,
//! and every one of them linked the whole library with its grammars again.

mod common;
mod vibe;

mod ask_user;
mod debug_catalog;
mod debug_faults;
mod debug_go;
mod debug_native;
mod debug_python;
mod eval_bridge;
mod eval_channel;
mod eval_javascript;
mod eval_python;
mod eval_sandbox;
mod example_host;
mod file_tools;
mod layers;
mod lsp_answers;
mod lsp_catalog_entry;
mod lsp_faults;
mod lsp_fix;
mod lsp_languages;
mod lsp_move;
mod lsp_on_write;
mod lsp_on_write_go;
mod lsp_on_write_native;
mod lsp_on_write_ts;
mod lsp_preview;
mod lsp_rename_leftovers;
mod lsp_rust;
mod lsp_rust_labels;
mod lsp_rust_phases;
mod lsp_trust;
mod lsp_watch;
mod recovery;
mod schemas;
mod shown_files;
mod shutdown;
mod staged;
mod structural;
mod structural_rewrite;
mod structural_scope;
mod worker_runs;
mod workers;
mod write_receipts;
