//! `[workers]`: how many run at once, when a silent one counts as stalled, and each tier's
//! command with the format of its output.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use tether_tool::{Kind, Scope, Setting};

/// `[workers] max_concurrent`.
const MAX_CONCURRENT: Setting = Setting::new(
    "workers.max_concurrent",
    Kind::Count {
        default: 4,
        max: 64,
    },
    Scope::Trusted,
    "workers running at once; the rest queue",
);
/// `[workers] stall_after_s`.
const STALL_AFTER: Setting = Setting::new(
    "workers.stall_after_s",
    Kind::Seconds {
        default: 300,
        max: 86_400,
    },
    Scope::Trusted,
    "no output for this long: stalled",
);
/// `[workers] isolation`.
const ISOLATION: Setting = Setting::new(
    "workers.isolation",
    Kind::Choice {
        default: "none",
        of: &["none", "worktree"],
    },
    Scope::Trusted,
    "`worktree`: each worker in .tether/worktrees/RUN-wN on branch tether/RUN-wN",
);
/// `[workers.fast]` and `[workers.good]`: commands, so never before trust.
const TIERS: Setting = Setting::new(
    "workers.<id>",
    Kind::Table {
        fields: "`command`, `format`, `read_only_args`, `resume_args`, `surface`; `<id>` is `fast` or `good`",
    },
    Scope::Trusted,
    "a tier's agent CLI (see Workers)",
);

/// Every `[workers]` key.
pub const SETTINGS: &[Setting] = &[MAX_CONCURRENT, STALL_AFTER, ISOLATION, TIERS];

/// How a backend's stdout carries its final message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Plain text: the whole output is the result.
    #[default]
    Text,
    /// Claude Code's `--output-format stream-json`: the `result` event holds the final message.
    StreamJson,
    /// Codex's `exec --json`: the last `agent_message` item is the final message.
    CodexJson,
    /// opencode's `run --format json`: the text of the last step is the final message.
    OpencodeJson,
}

impl Format {
    /// The name `tether.toml` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::StreamJson => "stream-json",
            Format::CodexJson => "codex-json",
            Format::OpencodeJson => "opencode-json",
        }
    }
}

/// One tier's backend.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierConfig {
    /// The agent CLI and its flags; the brief goes in on stdin.
    pub command: Vec<String>,
    /// How its stdout carries the final message.
    #[serde(default)]
    pub format: Format,
    /// The widest surface its workers get (`agent`, `plan` or `readonly`); a worker gets the
    /// narrower of this and its caller's.
    #[serde(default)]
    pub surface: Option<String>,
    /// Flags that make the CLI read-only (a plan permission mode), added when the worker's
    /// surface is read-only; without them, a read-only caller cannot spawn on this tier.
    #[serde(default)]
    pub read_only_args: Vec<String>,
    /// Flags that continue the CLI's own session, with `{session}` for its id
    /// (`["--resume", "{session}"]`): `vibe_send` then sends only the new message.
    #[serde(default)]
    pub resume_args: Vec<String>,
}

/// The `[workers]` section.
#[derive(Debug, Clone)]
pub struct WorkersConfig {
    /// Workers running at once; the rest queue.
    pub max_concurrent: usize,
    /// Silent this long while running: stalled.
    pub stall_after: Duration,
    /// `fast`, `good`, by name.
    pub tiers: BTreeMap<String, TierConfig>,
    /// Each worker in a git worktree of its own, on a branch `tether/RUN-wN`.
    pub worktrees: bool,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig {
            max_concurrent: MAX_CONCURRENT.default_number() as usize,
            stall_after: Duration::from_secs(STALL_AFTER.default_number()),
            tiers: BTreeMap::new(),
            worktrees: false,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Section {
    max_concurrent: Option<usize>,
    stall_after_s: Option<u64>,
    isolation: Option<String>,
    fast: Option<TierConfig>,
    good: Option<TierConfig>,
}

impl WorkersConfig {
    /// Reads `[workers]`; a wrong key or value says which and what is allowed.
    pub fn from_section(section: Option<&toml::Value>) -> Result<Self, tether_tool::SettingError> {
        let mut config = WorkersConfig::default();
        let Some(section) = section else {
            return Ok(config);
        };
        let s: Section = tether_tool::parse_section("workers", section)?;
        config.max_concurrent = MAX_CONCURRENT.number(s.max_concurrent.map(|n| n as u64))? as usize;
        config.stall_after = STALL_AFTER.duration(s.stall_after_s)?;
        config.worktrees = ISOLATION.choice(s.isolation.as_deref())? == "worktree";
        for (name, tier) in [("fast", s.fast), ("good", s.good)] {
            if let Some(tier) = tier {
                if tier.command.first().is_none_or(|p| p.trim().is_empty()) {
                    return Err(tether_tool::SettingError::rule(format!(
                        "[workers.{name}]: `command` is empty: give the agent CLI and its flags, \
                         e.g. command = [\"claude\", \"-p\"]"
                    )));
                }
                if let Some(surface) = &tier.surface
                    && !["agent", "plan", "readonly"].contains(&surface.as_str())
                {
                    return Err(tether_tool::SettingError::rule(format!(
                        "[workers.{name}]: `surface = \"{surface}\"`: use \"agent\", \"plan\" or \
                         \"readonly\""
                    )));
                }
                if !tier.resume_args.is_empty()
                    && !tier.resume_args.iter().any(|a| a.contains("{session}"))
                {
                    return Err(tether_tool::SettingError::rule(format!(
                        "[workers.{name}]: `resume_args` must name the session as {{session}}, \
                         e.g. resume_args = [\"--resume\", \"{{session}}\"]"
                    )));
                }
                config.tiers.insert(name.to_string(), tier);
            }
        }
        Ok(config)
    }
}

/// Lines for `tether doctor`: each tier's program (found on PATH or not), format, and how it
/// is kept read-only and resumed.
pub(crate) fn report(config: &WorkersConfig) -> Vec<String> {
    if config.tiers.is_empty() {
        return vec![
            "none configured: vibe_spawn needs a [workers.fast] or [workers.good] command \
             (templates for Claude Code, Codex and opencode: docs/workers)"
                .into(),
        ];
    }
    let mut lines = vec![format!(
        "max_concurrent {}, stalled after {} s{}",
        config.max_concurrent,
        config.stall_after.as_secs(),
        if config.worktrees {
            ", each in a git worktree"
        } else {
            ""
        }
    )];
    for (name, tier) in &config.tiers {
        let program = &tier.command[0];
        let found = match which::which(program) {
            Ok(path) => format!("found at {}", path.display()),
            Err(_) => "NOT on PATH".into(),
        };
        let read_only = match tier.read_only_args.is_empty() {
            true => "read-only callers refused".to_string(),
            false => format!("read-only with {}", tier.read_only_args.join(" ")),
        };
        let resume = match tier.resume_args.is_empty() {
            true => "vibe_send reruns the whole brief",
            false => "vibe_send continues its session",
        };
        lines.push(format!(
            "{name}: {program} ({found}), output {}, {read_only}, {resume}",
            tier.format.name()
        ));
    }
    lines
}
