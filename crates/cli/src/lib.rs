//! The `tether` command line: serve one run over MCP, call one tool from the shell, list
//! tools, report what this machine offers, and trust a workspace. A library, so a host can ship
//! the same front ends with capabilities of its own ([`main_with`]).

#![forbid(unsafe_code)]

mod hook;
mod install;
mod json_text;
mod servers;
mod terminal;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use tether::{Run, RunBuilder, Surface, TrustStore};
use tether_host::{Hello, Place, Printed, SHUTDOWN_BUDGET, call_lines, call_once};
use tokio_util::sync::CancellationToken;

#[derive(Parser)]
#[command(name = "tether", version, about = "Run-bound tools for coding agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Workspace root (default: the current directory).
    #[arg(long)]
    root: Option<PathBuf>,
    /// Which tools are visible: agent (the full agent: every tier), plan (the main agent in
    /// plan mode) or readonly (a read-only subagent). plan and readonly both see only read-tier
    /// tools, the same list today, and refuse write and exec calls; they name who is calling.
    #[arg(long, default_value = "agent")]
    surface: Surface,
}

/// Whether this front end attaches to the workspace's warm host.
#[derive(clap::Args, Clone, Copy)]
struct HostArgs {
    /// Attach to the workspace's warm host (started if none runs), sharing its language
    /// servers with the other runs on this checkout.
    #[arg(long, conflicts_with = "no_host")]
    host: bool,
    /// Start this run's own servers instead of attaching to the warm host.
    #[arg(long)]
    no_host: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Serve one run over MCP on stdin/stdout.
    Serve {
        #[command(flatten)]
        run: RunArgs,
        /// The conversation this run serves.
        #[arg(long)]
        conversation: Option<String>,
        /// Vibe mode: register the background-worker tools (vibe_spawn, vibe_wait, vibe_send,
        /// vibe_kill, vibe_list); `[workers]` in tether.toml names the agent CLIs they run.
        #[arg(long)]
        vibe: bool,
        #[command(flatten)]
        attach: HostArgs,
    },
    /// Call one tool in a fresh run and print its result; with --stdin, run one JSON call per
    /// line ({"tool": ..., "args": {...}}) in ONE run and print one JSON result per line.
    Call {
        /// Tool name.
        tool: Option<String>,
        /// Arguments as a JSON object.
        args: Option<String>,
        /// Read calls from standard input instead.
        #[arg(long)]
        stdin: bool,
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        attach: HostArgs,
    },
    /// An agent's hook (Claude Code, Codex): reads the hook event JSON on stdin and answers in
    /// the agent's form, with what the agent's own edit brought (PostToolUse) after taking
    /// the baseline (PreToolUse). Never blocks unless --block-on-new-errors.
    Hook {
        /// claude or codex.
        #[arg(required_unless_present = "install")]
        agent: Option<String>,
        /// Write the hook configuration for claude or codex instead, showing the diff first
        /// (Claude Code: the workspace's .claude/settings.json; Codex: ~/.codex/config.toml).
        #[arg(long, value_name = "AGENT", conflicts_with = "agent")]
        install: Option<String>,
        /// With --install: show the diff, write nothing.
        #[arg(long, requires = "install")]
        dry_run: bool,
        /// With --install claude: the user's ~/.claude/settings.json, for every project.
        #[arg(long, requires = "install")]
        user: bool,
        /// With --install: when the settings file is a symbolic link, change the file it
        /// names (without this, a link is refused).
        #[arg(long, requires = "install")]
        follow: bool,
        /// After an edit that brought new errors, block: the agent must answer them first.
        #[arg(long)]
        block_on_new_errors: bool,
        /// Workspace root (default: the project of the edited file, else of the event's cwd:
        /// its version-control root, else the nearest folder with a project marker).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Which tools the session's run may use (capped by TETHER_SURFACE, like every front
        /// end): agent, plan or readonly.
        #[arg(long, default_value = "agent")]
        surface: Surface,
    },
    /// The warm host for a workspace: runs in the foreground until idle (front ends start it
    /// themselves when they need it); --status and --stop ask the running one.
    Host {
        /// Workspace root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Print what the running host holds, as JSON.
        #[arg(long, conflicts_with = "stop")]
        status: bool,
        /// Stop the running host.
        #[arg(long)]
        stop: bool,
        /// With --status or --stop: every host of this user, whatever its workspace.
        #[arg(long)]
        all: bool,
    },
    /// List the tools a surface sees.
    Tools {
        #[command(flatten)]
        run: RunArgs,
        /// Print a JSON array of {name, tier, description, input_schema}.
        #[arg(long)]
        json: bool,
    },
    /// Install language servers into tether's own data folder (never globally), where every
    /// run looks before PATH: by server or language name (`tether install yaml`), what the
    /// workspace's files need (--for-workspace), or newer pinned versions (--update).
    Install {
        /// Servers or languages, as `tether install --list` names them.
        names: Vec<String>,
        /// List what tether can install, what it installed (and where), and what runs from
        /// PATH instead.
        #[arg(long, conflicts_with_all = ["names", "for_workspace", "update"])]
        list: bool,
        /// Install a server for each language of the workspace's files that has none.
        #[arg(long)]
        for_workspace: bool,
        /// Install the pinned version of each installed server that is older.
        #[arg(long)]
        update: bool,
        /// A version other than the pinned one, for one server.
        #[arg(long)]
        version: Option<String>,
        /// Allow servers that only Debian's archive has: apt-get installs them system-wide,
        /// as root or through sudo.
        #[arg(long)]
        system: bool,
        /// Workspace root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Remove servers `tether install` installed.
    Uninstall {
        /// Servers, as `tether install --list` names them.
        names: Vec<String>,
    },
    /// Print what a run would have on this machine.
    Doctor {
        /// Workspace root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Put one question card to the person at this terminal and print the answer as JSON:
    /// {"outcome": "answered", "chosen": [labels], "text": ...}, "skipped" (exit 3) or
    /// "timed_out" (exit 4). The card is ask_user's arguments, e.g.
    /// '{"question": "Deploy now?", "options": [{"label": "yes"}, {"label": "no"}]}'.
    Ask {
        /// The card as JSON.
        card: String,
        /// How long to wait for an answer.
        #[arg(long, default_value_t = 1800)]
        timeout_s: u64,
    },
    /// Trust this workspace, so commands its tether.toml defines may run (or, with --revoke,
    /// stop trusting it).
    Trust {
        /// Workspace root (default: the current directory).
        #[arg(long)]
        root: Option<PathBuf>,
        /// Remove the workspace from the trust list instead.
        #[arg(long)]
        revoke: bool,
    },
}

impl RunArgs {
    /// The surface asked for, narrowed to `TETHER_SURFACE` when that is set: a worker tether
    /// started passes its surface down this way, and no flag of the worker's can widen it.
    /// A value that does not name a surface is refused rather than ignored: ignoring it would
    /// serve the widest surface to a caller that was meant to be capped.
    fn surface(&self) -> Result<Surface, Exit> {
        capped(self.surface)
    }
}

/// `surface` narrowed to `TETHER_SURFACE` when that is set.
fn capped(surface: Surface) -> Result<Surface, Exit> {
    let Some(ceiling) = std::env::var_os("TETHER_SURFACE") else {
        return Ok(surface);
    };
    let limit = ceiling
        .to_str()
        .and_then(|s| s.parse::<Surface>().ok())
        .ok_or_else(|| {
            usage(format!(
                "TETHER_SURFACE is {ceiling:?}, which names no surface: set it to exactly \
                 agent, plan or readonly, or unset it"
            ))
        })?;
    Ok(surface.narrower(limit))
}

/// Prints a line to stdout; a closed pipe (`tether … | head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// A failure and the exit code it maps to.
pub(crate) struct Exit(u8, String);

pub(crate) fn usage(msg: impl Into<String>) -> Exit {
    Exit(2, msg.into())
}

pub use tether_host::Extend;

/// The `tether` binary's main, with every run it opens passed through `extend` first.
pub fn main_with(extend: Extend) -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
                // notify warns of every deleted folder it can no longer unwatch (inotify
                // dropped the watch with the folder): a branch switch printed hundreds.
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,notify=error")),
        )
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tether: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(run(cli.command, extend));
    // Work still running (a search the client abandoned) gets a moment to stop, not forever.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Exit(code, msg)) => {
            if !msg.is_empty() {
                eprintln!("tether: {msg}");
            }
            ExitCode::from(code)
        }
    }
}

fn root_of(root: Option<PathBuf>) -> Result<PathBuf, Exit> {
    match root {
        Some(r) => Ok(r),
        None => std::env::current_dir().map_err(|e| Exit(1, format!("no current directory: {e}"))),
    }
}

fn open(extend: Extend, root: Option<PathBuf>, conversation: Option<String>) -> Result<Run, Exit> {
    build(extend, RunBuilder::new(root_of(root)?), conversation)
}

fn build(
    extend: Extend,
    mut builder: RunBuilder,
    conversation: Option<String>,
) -> Result<Run, Exit> {
    if let Some(c) = conversation {
        builder = builder.conversation(c);
    }
    extend(builder).build().map_err(|e| Exit(1, e.to_string()))
}

async fn run(command: Command, extend: Extend) -> Result<(), Exit> {
    match command {
        Command::Serve {
            run,
            conversation,
            vibe,
            attach,
        } => {
            let surface = run.surface()?;
            let root = root_of(run.root)?;
            if attach.wanted(&root, Front::Serve)? {
                let hello = Hello::Mcp {
                    surface: surface.to_string(),
                    conversation,
                    vibe,
                };
                let (place, at) = attached(&root, &hello).await?;
                return tether_host::relay_mcp(&place, at)
                    .await
                    .map_err(|e| Exit(1, e));
            }
            let builder = RunBuilder::new(root).vibe(vibe).surface(surface);
            let tether = Arc::new(build(extend, builder, conversation)?);
            let served = tether_mcp::TetherServer::new(tether.clone(), surface)
                .serve_stdio()
                .await;
            // The client went away: end the run's resources before the process does.
            tether.shutdown(SHUTDOWN_BUDGET).await;
            served.map_err(|e| Exit(1, e.to_string()))
        }
        Command::Call {
            tool,
            args,
            stdin,
            run,
            attach,
        } => {
            let surface = run.surface()?;
            let root = root_of(run.root)?;
            match (stdin, tool) {
                (true, None) => {
                    if attach.wanted(&root, Front::Call)? {
                        let hello = Hello::Lines {
                            surface: surface.to_string(),
                        };
                        let (place, at) = attached(&root, &hello).await?;
                        let printed = tether_host::relay_lines(&place, at)
                            .await
                            .map_err(|e| Exit(1, e))?;
                        return finish(printed);
                    }
                    let builder = RunBuilder::new(root).surface(surface);
                    let tether = build(extend, builder, None)?;
                    let input = tokio::io::BufReader::new(tokio::io::stdin());
                    finish(
                        call_lines(
                            &tether,
                            surface,
                            input,
                            tokio::io::stdout(),
                            CancellationToken::new(),
                        )
                        .await,
                    )
                }
                (true, Some(_)) => Err(usage("give either TOOL 'JSON' or --stdin, not both")),
                (false, None) => Err(usage(
                    "missing TOOL: use `tether call TOOL '{...}'` or `tether call --stdin`",
                )),
                (false, Some(tool)) => {
                    let args = args.unwrap_or_else(|| "{}".into());
                    // A person at this terminal answers question and approval cards here, so
                    // such a run stays in this process.
                    let port = terminal::TerminalPort::if_interactive();
                    if port.is_none() && attach.wanted(&root, Front::Call)? {
                        let hello = Hello::Call {
                            surface: surface.to_string(),
                            tool: tool.clone(),
                            args: args.clone(),
                        };
                        // A tool that starts no server gains nothing from a host it would
                        // start and leave running for minutes: it uses one that runs, else
                        // runs here (`--host` starts one all the same).
                        let at = match attach.host || !STARTS_NO_SERVER.contains(&tool.as_str()) {
                            true => Some(attached(&root, &hello).await?),
                            false => {
                                let place = place(&root)?;
                                tether_host::attach_running(&place, &hello)
                                    .await
                                    .map_err(|e| Exit(1, e))?
                                    .map(|at| (place, at))
                            }
                        };
                        if let Some((place, at)) = at {
                            let printed = tether_host::printed(&place, at)
                                .await
                                .map_err(|e| Exit(1, e))?;
                            return finish(printed);
                        }
                    }
                    let mut builder = RunBuilder::new(root).single_call().surface(surface);
                    if let Some(port) = port {
                        builder = builder.question_port(Arc::new(port));
                    }
                    let tether = build(extend, builder, None)?;
                    finish(
                        call_once(&tether, surface, &tool, &args, CancellationToken::new()).await,
                    )
                }
            }
        }
        Command::Host {
            root,
            status,
            stop,
            all,
        } => host(extend, root_of(root)?, status, stop, all).await,
        Command::Hook {
            agent,
            install,
            dry_run,
            user,
            follow,
            block_on_new_errors,
            root,
            surface,
        } => match (install, agent) {
            (Some(agent), _) => install_hook(&agent, &root_of(root)?, user, follow, dry_run),
            (None, Some(agent)) => {
                hook::hook(&agent, block_on_new_errors, root, capped(surface)?).await
            }
            (None, None) => Err(usage(
                "name the agent: `tether hook claude` or `tether hook codex`",
            )),
        },
        Command::Tools { run, json } => {
            let surface = run.surface()?;
            let tether = open(extend, run.root, None)?;
            let specs = tether.runtime().tools(surface);
            if json {
                let list: Vec<Value> = specs
                    .iter()
                    .map(|s| {
                        json!({"name": s.name, "tier": s.tier.as_str(),
                               "description": s.description, "input_schema": s.input_schema})
                    })
                    .collect();
                say!("{}", Value::Array(list));
            } else {
                say!("{}", surface_header(surface));
                for s in specs {
                    let first = s.description.split(". ").next().unwrap_or("");
                    say!("{:<12} {:<5} {first}", s.name, s.tier.as_str());
                }
            }
            Ok(())
        }
        Command::Doctor { root } => {
            let root = root_of(root)?;
            match open(extend, Some(root.clone()), None) {
                Ok(tether) => {
                    say!("{}", tether::doctor_report(&tether, &root).await);
                    Ok(())
                }
                Err(Exit(code, why)) => {
                    // The one time doctor matters most: say what is wrong, then stop.
                    say!(
                        "tether {}\nworkspace: {}\nthe run cannot start: {why}",
                        env!("CARGO_PKG_VERSION"),
                        root.display()
                    );
                    Err(Exit(code, String::new()))
                }
            }
        }
        Command::Ask { card, timeout_s } => ask(&card, timeout_s).await,
        Command::Install {
            names,
            list,
            for_workspace,
            update,
            version,
            system,
            root,
        } => {
            let asked = servers::Asked {
                names,
                list,
                for_workspace,
                update,
                version,
                system,
            };
            servers::install_command(&root_of(root)?, asked).await
        }
        Command::Uninstall { names } => servers::uninstall_command(&names).await,
        Command::Trust { root, revoke } => {
            let store = TrustStore::new(&tether::Config::user_dir());
            if revoke {
                return revoke_trust(&store, root_of(root)?);
            }
            let root = root_of(root)?
                .canonicalize()
                .map_err(|e| Exit(1, format!("cannot trust that root: {e}")))?;
            let added = store.trust(&root).map_err(|e| Exit(1, e))?;
            let how = if added {
                "now trusted"
            } else {
                "already trusted"
            };
            say!(
                "{} is {how} (recorded in {})",
                root.display(),
                store.path().display()
            );
            Ok(())
        }
    }
}

/// One line above `tether tools`, saying what the surface is for and how plan and readonly
/// differ (by who calls, not by what they see).
fn surface_header(surface: Surface) -> String {
    match surface {
        Surface::Agent => "surface agent (the full agent): tools of every tier".into(),
        Surface::Plan => "surface plan (the main agent in plan mode): read-tier tools only; \
                          readonly (a read-only subagent) sees the same list"
            .into(),
        Surface::ReadOnlySubagent => "surface readonly (a read-only subagent): read-tier tools \
                                      only; plan (the main agent in plan mode) sees the same list"
            .into(),
        other => format!("surface {other}"),
    }
}

/// `tether trust --revoke`: a root that no longer exists can still be removed, by the path given.
fn revoke_trust(store: &TrustStore, root: PathBuf) -> Result<(), Exit> {
    let root = root
        .canonicalize()
        .or_else(|_| std::path::absolute(&root))
        .map_err(|e| Exit(1, format!("cannot revoke trust for that root: {e}")))?;
    let removed = store.revoke(&root).map_err(|e| Exit(1, e))?;
    let list = store.path().display();
    if removed {
        say!(
            "{} is no longer trusted (removed from {list})",
            root.display()
        );
    } else {
        say!(
            "{} was not trusted; nothing changed ({list})",
            root.display()
        );
    }
    Ok(())
}

/// `tether ask`: one card on this terminal, its answer as JSON on stdout.
async fn ask(card: &str, timeout_s: u64) -> Result<(), Exit> {
    use std::io::IsTerminal;
    use tether::{Outcome, QuestionPort};
    if !std::io::stdin().is_terminal() {
        return Err(usage(
            "tether ask needs a terminal on stdin, where a person can type the answer",
        ));
    }
    let args: tether::AskArgs = serde_json::from_str(card).map_err(|e| {
        usage(format!(
            "the card is not valid: {e}; give JSON like {{\"question\": \"Deploy now?\",              \"options\": [{{\"label\": \"yes\"}}, {{\"label\": \"no\"}}]}}"
        ))
    })?;
    let card = args.into_card("q1".into()).map_err(usage)?;
    let outcome = terminal::TerminalPort
        .ask(
            card.clone(),
            std::time::Duration::from_secs(timeout_s.max(1)),
        )
        .await;
    let (record, code) = match outcome {
        Outcome::Answered { chosen, text } => {
            let labels: Vec<&str> = chosen
                .iter()
                .filter_map(|&i| card.options.get(i).map(|o| o.label.as_str()))
                .collect();
            (
                json!({"outcome": "answered", "chosen": labels, "text": text}),
                0,
            )
        }
        Outcome::Skipped { cancelled, .. } => {
            (json!({"outcome": "skipped", "cancelled": cancelled}), 3)
        }
        Outcome::TimedOut => (json!({"outcome": "timed_out"}), 4),
        other => (
            json!({"outcome": "unavailable", "why": format!("{other:?}")}),
            1,
        ),
    };
    say!("{record}");
    match code {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}

/// Tools whose one call starts no language server, kernel or adapter: a one-shot call of one
/// does not start a host.
const STARTS_NO_SERVER: &[&str] = &["ast_grep", "read"];

/// Which front end asks whether to attach to the warm host.
enum Front {
    Serve,
    Call,
}

impl HostArgs {
    /// Whether to attach: the flags, else `TETHER_HOST` (on or off), else `[host]`.
    fn wanted(self, root: &Path, front: Front) -> Result<bool, Exit> {
        if self.host || self.no_host {
            return Ok(self.host);
        }
        match std::env::var("TETHER_HOST").as_deref() {
            Ok("on") => return Ok(true),
            Ok("off") => return Ok(false),
            Ok(other) => {
                return Err(usage(format!(
                    "TETHER_HOST is {other:?}: set it to on or off, or unset it"
                )));
            }
            Err(_) => {}
        }
        let config = tether::Config::load(root, &tether::Config::user_dir())
            .map_err(|e| Exit(1, e.to_string()))?;
        let host = config.host().map_err(|e| Exit(1, e.to_string()))?;
        Ok(match front {
            Front::Serve => host.enabled && host.serve,
            Front::Call => host.enabled,
        })
    }
}

fn place(root: &Path) -> Result<Place, Exit> {
    Place::for_root(root).map_err(|e| Exit(1, e))
}

/// Attaches to the host of `root` as `hello`, starting one when none listens.
async fn attached(root: &Path, hello: &Hello) -> Result<(Place, tether_host::Attachment), Exit> {
    let place = place(root)?;
    let at = tether_host::attach(&place, hello)
        .await
        .map_err(|e| Exit(1, e))?;
    Ok((place, at))
}

/// Prints what a one-shot front end made and exits with its code.
pub(crate) fn finish(printed: Printed) -> Result<(), Exit> {
    use std::io::Write as _;
    let _ = std::io::stdout().write_all(printed.stdout.as_bytes());
    let _ = std::io::stderr().write_all(printed.stderr.as_bytes());
    match printed.code {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}

/// `tether host`: serve the workspace in the foreground, or ask the running host.
async fn host(
    extend: Extend,
    root: PathBuf,
    status: bool,
    stop: bool,
    all: bool,
) -> Result<(), Exit> {
    if status || stop || all {
        // Every host of this workspace (one per binary, config and environment that served
        // it), or with `--all` of this user (after an upgrade, say).
        let places = match all {
            true => tether_host::running_places(),
            false => tether_host::places_of_root(&root),
        }
        .map_err(|e| Exit(1, e))?;
        let mut answered = false;
        for place in &places {
            answered |= ask_host(place, stop).await?;
        }
        if !answered && all {
            say!("no tether host runs");
        } else if !answered {
            let root = root.canonicalize().unwrap_or(root);
            say!("no tether host runs for {}", root.display());
        }
        return Ok(());
    }
    let place = place(&root)?;
    let config = tether::Config::load(&place.root, &tether::Config::user_dir())
        .map_err(|e| Exit(1, e.to_string()))?;
    let settings = config.host().map_err(|e| Exit(1, e.to_string()))?;
    tether_host::serve(place, extend, settings.idle_exit)
        .await
        .map_err(|e| Exit(1, e))
}

/// `--status` (its JSON line) or `--stop` (waiting until it is gone) to the host at `place`;
/// says whether one answered. The socket a dead host left is removed on `--stop`.
async fn ask_host(place: &Place, stop: bool) -> Result<bool, Exit> {
    let hello = if stop { Hello::Stop } else { Hello::Status };
    let Some(mut at) = tether_host::attach_running(place, &hello)
        .await
        .map_err(|e| Exit(1, e))?
    else {
        if stop && place.clear_if_dead() {
            say!(
                "removed {}, which a tether host that died left behind",
                place.socket.display()
            );
        }
        return Ok(false);
    };
    if !stop {
        let mut line = String::new();
        let _ = tokio::io::AsyncBufReadExt::read_line(&mut at.read, &mut line).await;
        say!("{}", line.trim_end());
    } else if tether_proc::gone_within(at.pid, std::time::Duration::from_secs(15)) {
        say!(
            "stopped the tether host for {} (pid {})",
            label(place),
            at.pid
        );
    } else {
        return Err(Exit(
            1,
            format!("the tether host (pid {}) did not stop within 15 s", at.pid),
        ));
    }
    Ok(true)
}

/// A host by its workspace, or by its socket when the workspace is not known here.
fn label(place: &Place) -> String {
    match place.root.as_os_str().is_empty() {
        true => place.socket.display().to_string(),
        false => place.root.display().to_string(),
    }
}

/// `tether hook --install AGENT`: the diff, then the write (unless a dry run).
fn install_hook(
    agent: &str,
    root: &Path,
    user: bool,
    follow: bool,
    dry_run: bool,
) -> Result<(), Exit> {
    let plan = install::plan(agent, root, user, follow).map_err(usage)?;
    if plan.old == plan.new {
        say!(
            "{} already has tether's hooks, running {}; nothing to change",
            plan.file.display(),
            plan.program.display()
        );
        return Ok(());
    }
    say!("{}", install::diff(&plan));
    if dry_run {
        say!("(dry run: {} was not written)", plan.file.display());
    } else {
        install::write(&plan).map_err(|e| Exit(1, e))?;
        say!("wrote {}", plan.file.display());
    }
    say!(
        "the hooks run {} ({})",
        plan.program.display(),
        plan.program_note
    );
    if let Some(note) = plan.note {
        say!("{note}");
    }
    Ok(())
}
