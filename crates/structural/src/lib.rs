//! Structural search and staged rewrite over bundled tree-sitter grammars (`ast_grep`,
//! `ast_edit`), the run's tree cache, and a syntax-error write hook that needs no server.
//!
//! Patterns are parsed by the same grammar as the files, inside a ladder of scaffolds
//! (statement, expression, class member, declaration); a pattern no rung parses cleanly is an
//! error, never an empty result. Searches skip files lacking the pattern's fixed text before
//! parsing, and validate cached trees by content hash, so a warm search costs little more
//! than reading the files.
//!
//! Every call is bounded: it compiles and matches on a thread with a known large stack
//! ([`STACK_BYTES`]), refuses patterns longer than [`MAX_PATTERN_BYTES`] or deeper than
//! [`MAX_PATTERN_DEPTH`], skips files nested deeper than [`MAX_TREE_DEPTH`], stops at its
//! time budget or when cancelled, and an edit stages at most its rewrite budget ([`Limits`]:
//! [`TIME_BUDGET`] and [`REWRITE_BUDGET`] unless `[structural]` sets them).
//! Meeting a bound is an error that names it, never a silently shorter answer.

#![forbid(unsafe_code)]

mod budget;
mod cache;
mod capability;
#[cfg(test)]
mod cli_parity;
mod config;
mod excerpt;
mod footer;
mod hint;
mod index;
mod lang;
mod pattern;
mod preview;
mod render;
mod search;
mod stage;
mod syntax;
mod template;
mod tools;
mod walk;

pub use budget::{
    Limits, MAX_PATTERN_BYTES, MAX_PATTERN_DEPTH, MAX_RESULTS, MAX_TREE_DEPTH, REWRITE_BUDGET,
    STACK_BYTES, TIME_BUDGET,
};
pub use cache::TreeCache;
pub use capability::Structural;
pub use config::{SETTINGS, StructuralConfig};
pub use lang::Lang;
pub use pattern::{Compiled, Unparseable, compile};
pub use syntax::SyntaxCheck;
pub use tools::{AstEditTool, AstGrepTool};
