//! The `tether` command line: serve one run over MCP, call one tool from the shell, list
//! tools, report what this machine offers, and trust a workspace. A library, so a host can ship
//! the same front ends with capabilities of its own ([`main_with`]).

#![forbid(unsafe_code)]

mod images;
mod terminal;

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use tether::{Run, RunBuilder, Surface, ToolError, TrustStore};
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
    },
    /// List the tools a surface sees.
    Tools {
        #[command(flatten)]
        run: RunArgs,
        /// Print a JSON array of {name, tier, description, input_schema}.
        #[arg(long)]
        json: bool,
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
        let Some(ceiling) = std::env::var_os("TETHER_SURFACE") else {
            return Ok(self.surface);
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
        Ok(self.surface.narrower(limit))
    }
}

/// Prints a line to stdout; a closed pipe (`tether … | head`) is not an error worth a panic.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// A failure and the exit code it maps to.
struct Exit(u8, String);

fn usage(msg: impl Into<String>) -> Exit {
    Exit(2, msg.into())
}

/// Adds a host's own capabilities and tools to every run the command line opens.
pub type Extend = fn(RunBuilder) -> RunBuilder;

/// The `tether` binary's main, with every run it opens passed through `extend` first.
pub fn main_with(extend: Extend) -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
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

/// How long a run's capabilities get to stop politely when tether exits.
const SHUTDOWN_BUDGET: std::time::Duration = std::time::Duration::from_secs(3);

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
        } => {
            let surface = run.surface()?;
            let builder = RunBuilder::new(root_of(run.root)?)
                .vibe(vibe)
                .surface(surface);
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
        } => {
            let surface = run.surface()?;
            match (stdin, tool) {
                (true, None) => {
                    let builder = RunBuilder::new(root_of(run.root)?).surface(surface);
                    let tether = build(extend, builder, None)?;
                    let done = call_lines(&tether, surface).await;
                    tether.shutdown(SHUTDOWN_BUDGET).await;
                    let pending = tether.runtime().pending_staged();
                    if !pending.is_empty() {
                        eprintln!(
                            "tether: note: staged edit {} was never resolved and is dropped as \
                             this run ends; add a line such as {{\"tool\": \"resolve\", \
                             \"args\": {{\"edit_id\": \"{}\", \"action\": \"accept\"}}}} to \
                             the same input",
                            pending.join(", "),
                            pending[0]
                        );
                    }
                    done
                }
                (true, Some(_)) => Err(usage("give either TOOL 'JSON' or --stdin, not both")),
                (false, None) => Err(usage(
                    "missing TOOL: use `tether call TOOL '{...}'` or `tether call --stdin`",
                )),
                (false, Some(tool)) => {
                    let mut builder = RunBuilder::new(root_of(run.root)?)
                        .single_call()
                        .surface(surface);
                    // On a terminal, a person can answer question and approval cards.
                    if let Some(port) = terminal::TerminalPort::if_interactive() {
                        builder = builder.question_port(Arc::new(port));
                    }
                    let tether = build(extend, builder, None)?;
                    let args = parse_args(&tether, &tool, args.as_deref().unwrap_or("{}"))?;
                    let result = tether
                        .runtime()
                        .call(surface, &tool, args, CancellationToken::new())
                        .await;
                    tether.shutdown(SHUTDOWN_BUDGET).await;
                    match result {
                        Ok(out) => {
                            let root = tether.runtime().workspace().root().to_path_buf();
                            say!("{}", images::text_with_saved_images(&out, &root).0);
                            let pending = tether.runtime().pending_staged();
                            if !pending.is_empty() {
                                eprintln!(
                                    "tether: note: this one-call run ends now, so staged edit {} \
                                     is dropped; stage and resolve in one run with `tether call \
                                     --stdin` or `tether serve`",
                                    pending.join(", ")
                                );
                            }
                            Ok(())
                        }
                        Err(e) if e.is_usage() => Err(usage(e.to_string())),
                        Err(e) => {
                            say!("error: {e}");
                            Err(Exit(1, String::new()))
                        }
                    }
                }
            }
        }
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

/// Parses a call's JSON arguments; when they are not a JSON object, the usage error has the
/// same form as any other bad argument, quoting the tool's fields.
fn parse_args(run: &Run, tool: &str, text: &str) -> Result<Value, Exit> {
    let value: Result<Value, _> = serde_json::from_str(text);
    match value {
        Ok(v @ Value::Object(_)) => Ok(v),
        other => {
            let detail = match other {
                Err(e) => format!("the arguments are not valid JSON ({e})"),
                Ok(_) => "the arguments must be a JSON object".to_string(),
            };
            let expected = run
                .runtime()
                .tools(Surface::Agent)
                .into_iter()
                .find(|s| s.name == tool)
                .map(|s| tether_tool::describe_schema(&s.input_schema))
                .unwrap_or_else(|| "a JSON object of the tool's arguments".into());
            let err = ToolError::BadArgs {
                tool: tool.to_string(),
                detail,
                expected,
            };
            Err(usage(err.to_string()))
        }
    }
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

/// Runs one JSON call per stdin line in one run; prints one JSON result per line.
async fn call_lines(run: &Run, surface: Surface) -> Result<(), Exit> {
    let mut worst = 0u8;
    for (n, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| Exit(1, format!("cannot read stdin: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let (tool, result) = match serde_json::from_str::<Value>(&line) {
            Ok(call) => match (call["tool"].as_str(), call.get("args")) {
                (Some(tool), args) => {
                    let args = args.cloned().unwrap_or(json!({}));
                    let r = run
                        .runtime()
                        .call(surface, tool, args, CancellationToken::new())
                        .await;
                    (tool.to_string(), r)
                }
                (None, _) => (
                    String::new(),
                    Err(ToolError::BadArgs {
                        tool: "call --stdin".into(),
                        detail: format!("line {} has no \"tool\" string", n + 1),
                        expected: "{\"tool\": string (required), \"args\": object}".into(),
                    }),
                ),
            },
            Err(e) => (
                String::new(),
                Err(ToolError::BadArgs {
                    tool: "call --stdin".into(),
                    detail: format!("line {} is not JSON ({e})", n + 1),
                    expected: "{\"tool\": string (required), \"args\": object}".into(),
                }),
            ),
        };
        let record = match result {
            Ok(out) => {
                let root = run.runtime().workspace().root();
                let (text, saved) = images::text_with_saved_images(&out, root);
                match saved.is_empty() {
                    true => json!({"tool": tool, "ok": true, "text": text}),
                    false => json!({"tool": tool, "ok": true, "text": text, "images": saved}),
                }
            }
            Err(e) => {
                worst = worst.max(if e.is_usage() { 2 } else { 1 });
                json!({"tool": tool, "ok": false, "usage_error": e.is_usage(), "text": format!("error: {e}")})
            }
        };
        say!("{record}");
    }
    // A result may have promised a late answer as a notice on a later result; there is none
    // after the last line, so the run waits for what is owed (bounded) and prints it.
    run.settle(SETTLE_BUDGET).await;
    let (notices, dropped) = run.runtime().notices().drain();
    if !notices.is_empty() {
        let mut lines: Vec<String> = notices.iter().map(|n| n.line()).collect();
        if dropped > 0 {
            lines.push(format!("({dropped} older notices were dropped)"));
        }
        say!("{}", json!({"notices": lines.join("\n")}));
    }
    match worst {
        0 => Ok(()),
        code => Err(Exit(code, String::new())),
    }
}

/// How long `call --stdin` waits at its end for late answers its results promised.
const SETTLE_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);
