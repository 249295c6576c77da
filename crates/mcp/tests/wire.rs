//! The MCP server over in-memory pipes, with the real run and rmcp: malformed lines are
//! answered by id, the server keeps serving after them, and pipelined writes keep their order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tether::{RunBuilder, Surface};
use tether_mcp::TetherServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

struct Client {
    to_server: WriteHalf<DuplexStream>,
    from_server: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    seen: Vec<Value>,
    server: tokio::task::JoinHandle<Result<(), tether_mcp::ServeError>>,
    dir: tempfile::TempDir,
}

impl Client {
    async fn start() -> Client {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        let run = RunBuilder::new(&root)
            .user_config_dir(dir.path().join("cfg"))
            .state_dir(dir.path().join("state"))
            .build()
            .unwrap();
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_end);
        let server = tokio::spawn(
            TetherServer::new(Arc::new(run), Surface::Agent).serve_io(server_in, server_out),
        );
        let (from_server, to_server) = tokio::io::split(client_end);
        Client {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            seen: Vec::new(),
            server,
            dir,
        }
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("ws")
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.unwrap();
        self.to_server.flush().await.unwrap();
    }

    async fn send_json(&mut self, messages: &[Value]) {
        let mut bytes = Vec::new();
        for m in messages {
            bytes.extend(serde_json::to_vec(m).unwrap());
            bytes.push(b'\n');
        }
        self.send(&bytes).await;
    }

    /// The reply with `id`, waiting at most ten seconds for it.
    async fn reply(&mut self, id: Value) -> Value {
        let wait = async {
            loop {
                if let Some(i) = self.seen.iter().position(|m| m["id"] == id) {
                    return self.seen.remove(i);
                }
                let line = self
                    .from_server
                    .next_line()
                    .await
                    .unwrap()
                    .expect("server closed");
                let msg: Value = serde_json::from_str(&line).expect("a line that is not JSON");
                self.seen.push(msg);
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| panic!("no reply with id {id}"))
    }

    async fn initialize(&mut self) {
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}});
        self.send_json(&[init]).await;
        assert!(self.reply(json!("init")).await.get("result").is_some());
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.send_json(&[done]).await;
    }
}

fn call(id: &str, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_lines_are_answered_by_id_and_serving_goes_on() {
    let mut c = Client::start().await;
    // Before initialize, a notification used to end the session.
    c.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await;
    c.initialize().await;
    c.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"write\",\"arguments\":\"str\"}}\n").await;
    c.send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"params\":\"\xff\"}\n")
        .await;
    c.send(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",,\n")
        .await;
    for (id, code) in [(1, -32602), (2, -32700), (3, -32700)] {
        assert_eq!(c.reply(json!(id)).await["error"]["code"], code, "id {id}");
    }
    c.send_json(&[call(
        "w",
        "write",
        json!({"path": "ok.txt", "content": "ok"}),
    )])
    .await;
    assert_eq!(c.reply(json!("w")).await["result"]["isError"], false);
    assert_eq!(
        std::fs::read_to_string(c.root().join("ok.txt")).unwrap(),
        "ok"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_dependent_edits_apply_in_arrival_order() {
    let mut c = Client::start().await;
    c.initialize().await;
    for trial in 0..10 {
        let path = format!("t{trial}.txt");
        c.send_json(&[call("w", "write", json!({"path": path, "content": "s0\n"}))])
            .await;
        assert_eq!(c.reply(json!("w")).await["result"]["isError"], false);
        let edits: Vec<Value> = (0..3)
            .map(|i| {
                let args = json!({"path": path, "old_string": format!("s{i}"),
                                  "new_string": format!("s{}", i + 1)});
                call(&format!("e{i}"), "edit", args)
            })
            .collect();
        c.send_json(&edits).await;
        for i in 0..3 {
            let reply = c.reply(json!(format!("e{i}"))).await;
            assert_eq!(reply["result"]["isError"], false, "trial {trial}: {reply}");
        }
        assert_eq!(
            std::fs::read_to_string(c.root().join(&path)).unwrap(),
            "s3\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_ends_when_the_client_closes_its_input() {
    let mut c = Client::start().await;
    c.initialize().await;
    c.to_server.shutdown().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(20), &mut c.server).await;
    assert!(
        ended
            .expect("the server outlived its client")
            .unwrap()
            .is_ok()
    );
}
