use std::fmt;
use std::str::FromStr;

/// The one tier a tool declares; it decides which surfaces see the tool at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Tier {
    /// No side effects.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    /// The lowercase id used on the wire and in `tether tools --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Exec => "exec",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who is calling: the full agent, plan mode, or a read-only subagent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Surface {
    /// The full agent: every tier.
    #[default]
    Agent,
    /// Plan mode: read tier only.
    Plan,
    /// A read-only subagent: read tier only.
    ReadOnlySubagent,
}

impl Surface {
    /// Whether tools of `tier` are visible and callable on this surface.
    pub fn admits(self, tier: Tier) -> bool {
        match self {
            Surface::Agent => true,
            Surface::Plan | Surface::ReadOnlySubagent => tier == Tier::Read,
        }
    }

    /// The one of the two that may do less (a read-only subagent, then plan, then the agent),
    /// for a surface handed down to something started on another's behalf.
    pub fn narrower(self, other: Surface) -> Surface {
        let rank = |s: Surface| match s {
            Surface::ReadOnlySubagent => 0,
            Surface::Plan => 1,
            Surface::Agent => 2,
        };
        if rank(other) < rank(self) {
            other
        } else {
            self
        }
    }

    /// The id accepted by `--surface`.
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Agent => "agent",
            Surface::Plan => "plan",
            Surface::ReadOnlySubagent => "readonly",
        }
    }
}

impl fmt::Display for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Surface {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "agent" => Ok(Surface::Agent),
            "plan" => Ok(Surface::Plan),
            "readonly" | "read-only" | "readonly-subagent" => Ok(Surface::ReadOnlySubagent),
            other => Err(format!(
                "unknown surface `{other}`: use one of agent, plan, readonly"
            )),
        }
    }
}

/// How calls of a tool are scheduled; declared by the tool, independent of its tier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Concurrency {
    /// Runs alongside anything (reads, and tools that block waiting on a human or a worker).
    Free,
    /// One workspace writer at a time, first come first served.
    Workspace,
    /// One call at a time per stateful session (a debugger, a kernel).
    Session(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_and_readonly_admit_only_read() {
        for s in [Surface::Plan, Surface::ReadOnlySubagent] {
            assert!(s.admits(Tier::Read));
            assert!(!s.admits(Tier::Write));
            assert!(!s.admits(Tier::Exec));
        }
        assert!(Surface::Agent.admits(Tier::Exec));
    }

    #[test]
    fn surface_ids_round_trip() {
        for s in [Surface::Agent, Surface::Plan, Surface::ReadOnlySubagent] {
            assert_eq!(s.as_str().parse::<Surface>().unwrap(), s);
        }
        assert!(
            "admin"
                .parse::<Surface>()
                .unwrap_err()
                .contains("agent, plan")
        );
    }
}
