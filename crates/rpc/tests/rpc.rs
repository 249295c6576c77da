//! The JSON-RPC peer against a scripted other side over an in-memory pipe (for the faults a
//! real server will not produce on demand), and against the real rust-analyzer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_proc::{ChildSpec, LongChild};
use tether_rpc::{
    BoxFuture, Incoming, Peer, Reply, ResponseError, RpcError, codes, read_frame, write_frame,
};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// Records notifications and answers `workspace/configuration` requests.
#[derive(Default)]
struct Client {
    heard: Mutex<Vec<String>>,
}

impl Incoming for Client {
    fn request(&self, method: &str, params: Value) -> BoxFuture<Reply> {
        let answer = match method {
            "workspace/configuration" => Ok(json!([{"asked": params}])),
            other => Err(ResponseError::method_not_found(other)),
        };
        Box::pin(async move { answer })
    }
    fn notification(&self, method: &str, params: tether_rpc::Payload) {
        let params = params.into_value();
        self.heard
            .lock()
            .unwrap()
            .push(format!("{method} {params}"));
    }
}

/// The other side of an in-memory connection, driven by the test.
struct Server {
    input: BufReader<ReadHalf<DuplexStream>>,
    output: WriteHalf<DuplexStream>,
}

impl Server {
    async fn read(&mut self) -> Value {
        serde_json::from_slice(&read_frame(&mut self.input).await.unwrap()).unwrap()
    }
    async fn write(&mut self, message: Value) {
        write_frame(&mut self.output, &serde_json::to_vec(&message).unwrap())
            .await
            .unwrap();
    }
}

fn connect() -> (Peer, Server, Arc<Client>) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_in, our_out) = tokio::io::split(ours);
    let (their_in, their_out) = tokio::io::split(theirs);
    let client = Arc::new(Client::default());
    let peer = Peer::start(our_in, our_out, client.clone(), Some("$/cancelRequest"));
    let server = Server {
        input: BufReader::new(their_in),
        output: their_out,
    };
    (peer, server, client)
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn requests_both_ways_and_notifications_in_order() {
    let (peer, mut server, client) = connect();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move {
            peer.request("textDocument/hover", json!({"x": 1}), LONG)
                .await
        }
    });
    let asked = server.read().await;
    assert_eq!(asked["method"], "textDocument/hover");
    // Before answering, the server asks us something and tells us two things.
    let ask = json!({"jsonrpc": "2.0", "id": "s1", "method": "workspace/configuration",
                     "params": {"items": []}});
    server.write(ask).await;
    let answered = server.read().await;
    assert_eq!(answered["id"], "s1");
    assert_eq!(answered["result"][0]["asked"]["items"], json!([]));
    for n in [1, 2] {
        let log = json!({"jsonrpc": "2.0", "method": "window/logMessage", "params": n});
        server.write(log).await;
    }
    let result = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"contents": "ok"}});
    server.write(result).await;
    assert_eq!(call.await.unwrap().unwrap(), json!({"contents": "ok"}));
    assert_eq!(
        *client.heard.lock().unwrap(),
        ["window/logMessage 1", "window/logMessage 2"]
    );
    // A request we do not serve gets "method not found".
    let unknown = json!({"jsonrpc": "2.0", "id": 7, "method": "x/unknown"});
    server.write(unknown).await;
    assert_eq!(
        server.read().await["error"]["code"],
        codes::METHOD_NOT_FOUND
    );
}

#[tokio::test]
async fn an_unanswered_request_times_out_and_is_cancelled_on_the_other_side() {
    let (peer, mut server, _) = connect();
    let started = Instant::now();
    let call = tokio::spawn({
        let peer = peer.clone();
        let short = Duration::from_millis(200);
        async move {
            peer.request("textDocument/references", json!({}), short)
                .await
        }
    });
    let asked = server.read().await;
    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
    assert!(
        started.elapsed() < LONG,
        "liveness: the deadline ended the wait"
    );
    let cancel = server.read().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], asked["id"]);
    // A late answer is dropped quietly, and the connection still works.
    let late = json!({"jsonrpc": "2.0", "id": asked["id"], "result": null});
    server.write(late).await;
    let again = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("shutdown", Value::Null, LONG).await }
    });
    let asked = server.read().await;
    let error = json!({"jsonrpc": "2.0", "id": asked["id"],
                       "error": {"code": codes::INTERNAL_ERROR, "message": "boom"}});
    server.write(error).await;
    let err = again.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "`shutdown` failed: boom (code -32603)");
}

#[tokio::test]
async fn a_cancelled_request_tells_the_other_side() {
    let (peer, mut server, _) = connect();
    let token = tokio_util::sync::CancellationToken::new();
    let call = tokio::spawn({
        let (peer, token) = (peer.clone(), token.clone());
        async move { peer.request_until("x", json!({}), LONG, &token).await }
    });
    let asked = server.read().await;
    token.cancel();
    let err = call.await.unwrap().unwrap_err();
    assert!(matches!(err, RpcError::Cancelled { .. }), "{err}");
    let cancel = server.read().await;
    assert_eq!(cancel["params"]["id"], asked["id"]);
}

#[tokio::test]
async fn pending_requests_fail_at_once_when_the_stream_ends() {
    let (peer, mut server, _) = connect();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("initialize", json!({}), LONG).await }
    });
    server.read().await;
    drop(server);
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "`initialize` got no answer: the other side closed the connection"
    );
    // Once closed, a new request fails without waiting.
    let err = peer.request("x", json!({}), LONG).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err}");
}

#[tokio::test]
async fn garbage_on_the_wire_ends_the_connection_with_its_reason() {
    let (peer, mut server, _) = connect();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("initialize", json!({}), LONG).await }
    });
    server.read().await;
    let garbage = b"HTTP/1.1 200 OK\r\n\r\n";
    server.output.write_all(garbage).await.unwrap();
    let err = call.await.unwrap().unwrap_err().to_string();
    assert!(
        err.contains("garbage on the wire: a header line `HTTP/1.1 200 OK`"),
        "{err}"
    );
    assert!(peer.closed().is_some());
}

#[tokio::test]
async fn the_real_rust_analyzer_initializes_and_shuts_down() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn one() -> u32 { 1 }\n").unwrap();
    let spec = ChildSpec {
        argv: vec!["rust-analyzer".into()],
        cwd: Some(dir.path().to_path_buf()),
        env: vec![("CARGO_NET_OFFLINE".into(), "true".into())],
    };
    let mut child = LongChild::spawn(&spec).unwrap();
    let (input, output) = (child.take_stdout().unwrap(), child.take_stdin().unwrap());
    let client = Arc::new(Client::default());
    let peer = Peer::start(input, output, client, Some("$/cancelRequest"));
    let init = json!({
        "processId": std::process::id(),
        "rootUri": format!("file://{}", dir.path().display()),
        "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}},
        "initializationOptions": {
            "cargo": {"buildScripts": {"enable": false}},
            "procMacro": {"enable": false},
            "checkOnSave": false,
        },
    });
    let minute = Duration::from_secs(60);
    let answer = peer.request("initialize", init, minute).await.unwrap();
    assert_eq!(answer["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(answer["capabilities"]["hoverProvider"], true);
    peer.notify("initialized", json!({})).await.unwrap();
    let down = peer.request("shutdown", Value::Null, minute).await.unwrap();
    assert_eq!(down, Value::Null);
    peer.notify("exit", Value::Null).await.unwrap();
    let status = child.exited_within(Duration::from_secs(10)).await;
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}
