//! The library a host embeds. [`RunBuilder`] loads `tether.toml`, opens the run's file
//! resources (recovering any transaction a dead run left half-done), installs the write
//! hooks and registers the tools whose resources this run has.
//!
//! MCP is one front end over this library; an agent runtime can use it directly.

#![forbid(unsafe_code)]

mod builder;
mod config;
mod doctor;
mod installable;
mod settings;
mod toml_file;
mod trust;

pub use builder::{BuildError, Run, RunBuilder, programs};
pub use config::{Config, ConfigError, ConfigSource, HostSettings, Loaded};
pub use doctor::doctor_report;
pub use installable::{Installable, installable, languages_present};
pub use settings::{settings, settings_table};
pub use trust::{TrustState, TrustStore, Untrusted};

pub use tether_run::{AgentEdit, AskArgs};

/// The files an apply_patch patch touches, read from its headers (a host's hook checks an
/// agent's own patch with it).
pub use tether_files::patch_paths;
pub use tether_tool::{
    ApprovalPolicy, Block, Card, CardOption, Outcome, Pool, Preview, QuestionPort, ScriptedPort,
    Surface, Tier, ToolError, ToolOutput, ToolSpec,
};
