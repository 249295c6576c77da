//! Language servers through tether, next to the same servers spoken to directly.
//!
//! 1. For each server on PATH: the time from the first `lsp` call through `tether serve` to
//!    the first answer (the server starts, loads the project, answers a hover).
//! 2. rust-analyzer, warm: a `hover` round trip through `tether serve` (raw JSON-RPC over the
//!    pipe) against a hover sent straight to rust-analyzer by the same kind of minimal client.
//!    Prints medians and what tether adds.
//!
//! `cargo bench -p tether-cli --bench lsp_hover [-- ROUNDS]`

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{McpPipe, report};
use serde_json::{Value, json};

const LIB: &str =
    "/// Sums the areas.\npub fn total(items: &[u32]) -> u32 {\n    items.iter().sum()\n}\n";

/// (server binary, files, hover target: file, line, symbol)
type Fixture = (
    &'static str,
    &'static [(&'static str, &'static str)],
    (&'static str, usize, &'static str),
);

const FIXTURES: &[Fixture] = &[
    (
        "rust-analyzer",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            ("src/lib.rs", LIB),
        ],
        ("src/lib.rs", 2, "total"),
    ),
    (
        "clangd-19",
        &[
            ("compile_flags.txt", "-std=c11\n"),
            (
                "main.c",
                "/* Doubles. */\nint twice(int x) { return 2 * x; }\nint main(void) { return twice(1); }\n",
            ),
        ],
        ("main.c", 3, "twice"),
    ),
    (
        "pyright-langserver",
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"b\"\nversion = \"0.1\"\n",
            ),
            (
                "main.py",
                "def twice(x: int) -> int:\n    return 2 * x\n\nprint(twice(1))\n",
            ),
        ],
        ("main.py", 4, "twice"),
    ),
    (
        "typescript-language-server",
        &[
            ("package.json", "{\"name\": \"b\"}\n"),
            (
                "main.ts",
                "export function twice(x: number): number {\n  return 2 * x;\n}\nconsole.log(twice(1));\n",
            ),
        ],
        ("main.ts", 4, "twice"),
    ),
    (
        "gopls",
        &[
            ("go.mod", "module example.com/b\n\ngo 1.19\n"),
            (
                "main.go",
                "package main\n\nfunc twice(x int) int { return 2 * x }\n\nfunc main() { println(twice(1)) }\n",
            ),
        ],
        ("main.go", 5, "twice"),
    ),
];

fn on_path(program: &str) -> bool {
    which(program).is_some()
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn write_fixture(root: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn hover_args(target: (&str, usize, &str)) -> Value {
    json!({"action": "hover", "file": target.0, "line": target.1, "symbol": target.2})
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(300);
    println!("time from the first lsp call to the first answer, through tether serve:");
    for (binary, files, target) in FIXTURES {
        if !on_path(binary) {
            println!("  {binary:<28} not on PATH, skipped");
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        write_fixture(dir.path(), files);
        let mut pipe = McpPipe::start(dir.path(), &dir.path().join("cfg"));
        let start = Instant::now();
        let out = pipe.call("lsp", &hover_args(*target));
        let took = start.elapsed();
        assert!(out.contains(target.2), "{binary}: {out}");
        println!("  {binary:<28} {:>8.0} ms", took.as_secs_f64() * 1e3);
        pipe.finish();
    }

    if !on_path("rust-analyzer") {
        println!("rust-analyzer is not on PATH: no warm hover comparison");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    write_fixture(dir.path(), FIXTURES[0].1);
    let args = hover_args(FIXTURES[0].2);
    let mut pipe = McpPipe::start(dir.path(), &dir.path().join("cfg"));
    let mut raw = RawServer::start(dir.path());
    for _ in 0..20 {
        pipe.call("lsp", &args);
        raw.hover();
    }
    let (mut through, mut direct) = (Vec::new(), Vec::new());
    // Taking turns, so a busy moment of the machine hits both alike.
    for _ in 0..rounds {
        let start = Instant::now();
        let out = pipe.call("lsp", &args);
        through.push(start.elapsed());
        assert!(out.contains("pub fn total"), "{out}");
        let start = Instant::now();
        raw.hover();
        direct.push(start.elapsed());
    }
    pipe.finish();
    raw.finish();
    let t = report("hover through tether serve (MCP)", through);
    let d = report("hover straight to rust-analyzer", direct);
    println!(
        "tether adds {:.3} ms at the median ({:.2}x)",
        (t.as_secs_f64() - d.as_secs_f64()) * 1e3,
        t.as_secs_f64() / d.as_secs_f64()
    );
}

/// rust-analyzer spoken to directly by a minimal blocking JSON-RPC client.
struct RawServer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
    uri: String,
}

impl RawServer {
    fn start(root: &Path) -> RawServer {
        let mut child = Command::new("rust-analyzer")
            .current_dir(root)
            .env("CARGO_NET_OFFLINE", "true")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let uri = format!("file://{}/src/lib.rs", root.display());
        let mut s = RawServer {
            child,
            input,
            output,
            next: 0,
            uri,
        };
        let init = json!({"processId": std::process::id(), "rootUri": format!("file://{}", root.display()),
            "capabilities": {"general": {"positionEncodings": ["utf-8"]}},
            "initializationOptions": {"cargo": {"sysrootQueryMetadata": false}}});
        s.request("initialize", init);
        s.notify("initialized", json!({}));
        let open = json!({"textDocument": {"uri": s.uri, "languageId": "rust", "version": 1, "text": LIB}});
        s.notify("textDocument/didOpen", open);
        // Until the project is loaded, hovers come back empty.
        let end = Instant::now() + Duration::from_secs(120);
        while s.hover().is_null() {
            assert!(
                Instant::now() < end,
                "rust-analyzer never answered the hover"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        s
    }

    fn hover(&mut self) -> Value {
        let params =
            json!({"textDocument": {"uri": self.uri}, "position": {"line": 1, "character": 7}});
        self.request("textDocument/hover", params)
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.input.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and reads until its answer, answering the server's own requests with
    /// null and skipping its notifications.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.read();
            if message.get("method").is_some() {
                if let Some(their) = message.get("id") {
                    let reply = json!({"jsonrpc": "2.0", "id": their, "result": null});
                    self.send(reply);
                }
                continue;
            }
            if message["id"] == json!(id) {
                return message.get("result").cloned().unwrap_or(Value::Null);
            }
        }
    }

    fn read(&mut self) -> Value {
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.output.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length:") {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.output.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn finish(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}
