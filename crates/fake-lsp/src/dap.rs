//! A debug adapter tether's catalog has never seen, for the test that adds one purely as a
//! `[debug.adapters.fake]` entry. It speaks DAP on stdio and "runs" a text program: each line
//! is a step, `print TEXT` writes TEXT to stdout, and a breakpoint stops before its line.
//! Like debugpy, it answers `launch` only after `configurationDone`.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::io::{BufReader, Write};

use serde_json::{Value, json};

mod frame;
use frame::read;

/// The adapter's side of one session.
struct Fake<W: Write> {
    out: W,
    seq: i64,
    program: String,
    lines: Vec<String>,
    args: Value,
    breakpoints: BTreeSet<usize>,
    /// The line the program is stopped before (1-based); 0 before it starts.
    at: usize,
    /// A `launch` waiting for `configurationDone`.
    launch: Option<i64>,
}

impl<W: Write> Fake<W> {
    fn send(&mut self, mut message: Value) {
        self.seq += 1;
        message["seq"] = json!(self.seq);
        frame::write(&mut self.out, &message);
    }

    fn answer(&mut self, request: &Value, body: Value) {
        self.send(
            json!({"type": "response", "request_seq": request["seq"], "success": true,
            "command": request["command"], "body": body}),
        );
    }

    fn refuse(&mut self, request: &Value, message: &str) {
        self.send(
            json!({"type": "response", "request_seq": request["seq"], "success": false,
            "command": request["command"], "message": message}),
        );
    }

    fn event(&mut self, event: &str, body: Value) {
        self.send(json!({"type": "event", "event": event, "body": body}));
    }

    fn print(&mut self, text: String) {
        self.event("output", json!({"category": "stdout", "output": text}));
    }

    /// Runs from line `from` to the next breakpoint (stopping there) or the end.
    fn run(&mut self, from: usize, reason: &str) {
        for line in from.max(1)..=self.lines.len() {
            let breaks = line != from && self.breakpoints.contains(&line);
            if breaks || (reason == "step" && line > from) {
                self.at = line;
                let reason = if reason == "step" {
                    "step"
                } else {
                    "breakpoint"
                };
                self.event("stopped", json!({"reason": reason, "threadId": 1}));
                return;
            }
            if let Some(text) = self.lines[line - 1].strip_prefix("print ") {
                self.print(format!("{text}\n"));
            }
        }
        self.event("exited", json!({"exitCode": 0}));
        self.event("terminated", json!({}));
    }

    fn handle(&mut self, request: &Value) -> bool {
        let args = &request["arguments"];
        match request["command"].as_str().unwrap_or("") {
            "initialize" => self.answer(
                request,
                json!({"supportsConfigurationDoneRequest": true, "exceptionBreakpointFilters": [
                    {"filter": "uncaught", "label": "Uncaught"},
                    {"filter": "raised", "label": "Raised"}]}),
            ),
            "launch" => {
                let (Some(program), Some(cwd)) = (args["program"].as_str(), args["cwd"].as_str())
                else {
                    self.refuse(request, "fake-dap: launch needs `program` and `cwd`");
                    return true;
                };
                if !args["args"].is_array() {
                    self.refuse(request, "fake-dap: launch needs `args` as a list");
                    return true;
                }
                self.program = program.to_string();
                self.lines = std::fs::read_to_string(program)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_string)
                    .collect();
                self.args = args["args"].clone();
                self.print(format!("fake-dap: args {} in {cwd}\n", self.args));
                self.launch = request["seq"].as_i64();
                self.event("initialized", json!({}));
            }
            "setBreakpoints" => {
                let lines: Vec<usize> = args["breakpoints"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|b| b["line"].as_u64().map(|l| l as usize))
                    .collect();
                self.breakpoints = lines.iter().copied().collect();
                let verified: Vec<Value> = lines
                    .iter()
                    .map(|l| json!({"verified": true, "line": l}))
                    .collect();
                self.answer(request, json!({"breakpoints": verified}));
            }
            "setExceptionBreakpoints" => {
                self.print(format!("fake-dap: exception filters {}\n", args["filters"]));
                self.answer(request, json!({}));
            }
            "configurationDone" => {
                self.answer(request, json!({}));
                if let Some(seq) = self.launch.take() {
                    self.answer(&json!({"seq": seq, "command": "launch"}), json!({}));
                }
                self.run(0, "start");
            }
            "threads" => self.answer(request, json!({"threads": [{"id": 1, "name": "main"}]})),
            "stackTrace" => {
                let name = self.program.rsplit('/').next().unwrap_or("").to_string();
                let frame = json!({"id": 7, "name": "main", "line": self.at, "column": 1,
                    "source": {"name": name, "path": self.program}});
                self.answer(request, json!({"stackFrames": [frame], "totalFrames": 1}));
            }
            "scopes" => self.answer(
                request,
                json!({"scopes": [{"name": "Locals", "variablesReference": 3, "expensive": false}]}),
            ),
            "variables" => {
                let vars = json!([
                    {"name": "line", "value": self.at.to_string(), "variablesReference": 0},
                    {"name": "argv", "value": self.args.to_string(), "variablesReference": 0},
                ]);
                self.answer(request, json!({"variables": vars}));
            }
            "evaluate" => {
                let result = match args["expression"].as_str() {
                    Some("line") => self.at.to_string(),
                    _ => String::new(),
                };
                self.answer(
                    request,
                    json!({"result": result, "variablesReference": 0, "context": args["context"]}),
                );
            }
            "continue" | "next" => {
                let step = request["command"] == "next";
                self.answer(request, json!({"allThreadsContinued": true}));
                let at = self.at;
                self.run(at, if step { "step" } else { "continue" });
            }
            "disconnect" => {
                self.answer(request, json!({}));
                return false;
            }
            other => {
                let why = format!("fake-dap: `{other}` is not supported");
                self.refuse(request, &why);
            }
        }
        true
    }
}

fn main() {
    let mut input = BufReader::new(std::io::stdin().lock());
    eprintln!("fake-dap starting");
    let mut fake = Fake {
        out: std::io::stdout().lock(),
        seq: 0,
        program: String::new(),
        lines: Vec::new(),
        args: json!([]),
        breakpoints: BTreeSet::new(),
        at: 0,
        launch: None,
    };
    while let Some(message) = read(&mut input) {
        if message["type"] == "request" && !fake.handle(&message) {
            break;
        }
    }
}
