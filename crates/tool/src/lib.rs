//! What a tool author sees: the [`Tool`] trait that ties a model-visible spec to its handler,
//! the [`Tier`] that decides visibility, the [`Concurrency`] that decides scheduling, and the
//! [`CallCx`] through which a handler writes files, re-enters the run and posts notices, and
//! the [`Capability`] shape through which a family of tools joins a run.
//!
//! The crate holds no domain traits: language servers, kernels and debuggers live in their own
//! crates and reach the run only through these seams.

#![forbid(unsafe_code)]

mod approval;
mod capability;
mod cx;
mod dry_run;
mod error;
mod hooks;
mod notice;
mod output;
mod pool;
mod question;
mod report;
mod setting;
mod tier;
mod tool;

pub use approval::{ApprovalPolicy, Preview};
pub use capability::{Capability, ClientFeature, DoctorSection, Install};
pub use cx::{
    CallCx, CallCxParts, CallScope, Dispatcher, FsDoor, PROGRESS_EVERY, PermitKey, ProgressPort,
    Write,
};
pub use dry_run::stage_dry_run;
pub use error::ToolError;
pub use hooks::{Baseline, Baselines, Hold, HookBudgets, Proposed, WriteHook, WriteHooks};
pub use notice::{Notice, NoticeQueue};
pub use output::{Block, ToolOutput, capped_list, counted};
pub use pool::{Pool, Pooled};
pub use question::{
    Card, CardOption, MAX_LABEL, MAX_OPTIONS, Outcome, QuestionPort, Questions, ScriptedPort,
};
pub use report::{
    FileReport, FileStatus, Finding, ReportScope, ReportSource, format_reports,
    format_reports_after, verdict,
};
pub use setting::{Kind, Scope, Setting, SettingError, inert, markdown_table, parse_section};
pub use tier::{Concurrency, Surface, Tier};
pub use tool::{DynTool, Prepared, RunCall, Tool, ToolSpec, describe_schema, schema_for};

/// A boxed, sendable future, the shape of every object-safe async seam in this crate.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
