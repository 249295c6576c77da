//! The engine against a scripted other side over an in-memory pipe, in both envelopes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::codes;
use crate::dap::Dap;
use crate::jsonrpc::Peer;

/// Records what it was told, and refuses every request.
#[derive(Default)]
struct Heard {
    told: Mutex<Vec<String>>,
}

impl Incoming for Heard {
    fn request(&self, method: &str, _params: Value) -> BoxFuture<Reply> {
        let refusal = ResponseError::method_not_found(method);
        Box::pin(async move { Err(refusal) })
    }
    fn notification(&self, method: &str, params: crate::Payload) {
        let params = params.into_value();
        self.told.lock().unwrap().push(format!("{method} {params}"));
    }
    fn closed(&self, why: &str) {
        self.told.lock().unwrap().push(format!("closed: {why}"));
    }
}

/// The other side, driven by the test.
struct Other {
    input: BufReader<ReadHalf<DuplexStream>>,
    output: WriteHalf<DuplexStream>,
}

impl Other {
    async fn read(&mut self) -> Value {
        let body = crate::read_frame(&mut self.input).await.unwrap();
        serde_json::from_slice(&body).unwrap()
    }
    async fn write(&mut self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        crate::write_frame(&mut self.output, &body).await.unwrap();
    }
}

fn pipes() -> ((ReadHalf<DuplexStream>, WriteHalf<DuplexStream>), Other) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (their_in, their_out) = tokio::io::split(theirs);
    let other = Other {
        input: BufReader::new(their_in),
        output: their_out,
    };
    (tokio::io::split(ours), other)
}

fn json_rpc() -> (Peer, Other, Arc<Heard>) {
    let ((input, output), other) = pipes();
    let heard = Arc::new(Heard::default());
    let peer = Peer::start(input, output, heard.clone(), Some("$/cancelRequest"));
    (peer, other, heard)
}

fn dap() -> (Engine<Dap>, Other, Arc<Heard>) {
    let ((input, output), other) = pipes();
    let heard = Arc::new(Heard::default());
    let peer = Engine::connect(Dap::new(), input, output, heard.clone());
    (peer, other, heard)
}

const LONG: Duration = Duration::from_secs(10);
const SHORT: Duration = Duration::from_millis(100);

#[tokio::test]
async fn json_rpc_ids_may_be_numbers_or_strings_both_ways() {
    let (peer, mut other, _) = json_rpc();
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("a", json!({}), LONG).await }
    });
    let asked = other.read().await;
    assert!(asked["id"].is_i64());
    // An id echoed as a string still answers the request.
    let id = asked["id"].to_string();
    other
        .write(json!({"jsonrpc": "2.0", "id": id, "result": 5}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!(5));
    assert_eq!(peer.pending_count(), 0);
    // Its own requests' ids go back as they came.
    for id in [json!("s-1"), json!(42)] {
        other
            .write(json!({"jsonrpc": "2.0", "id": id, "method": "x/unknown"}))
            .await;
        let answer = other.read().await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], codes::METHOD_NOT_FOUND);
    }
}

#[tokio::test]
async fn a_timeout_drops_the_pending_entry_and_sends_a_cancel() {
    let (peer, mut other, _) = json_rpc();
    let err = peer.request("slow", json!({}), SHORT).await.unwrap_err();
    assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
    assert_eq!(peer.pending_count(), 0);
    let asked = other.read().await;
    let cancel = other.read().await;
    assert_eq!(cancel["method"], "$/cancelRequest");
    assert_eq!(cancel["params"]["id"], asked["id"]);

    // The same for a caller's cancellation, and for a pending request dropped unawaited.
    let token = CancellationToken::new();
    token.cancel();
    let err = peer
        .request_until("gone", json!({}), LONG, &token)
        .await
        .unwrap_err();
    assert!(matches!(err, RpcError::Cancelled { .. }), "{err}");
    assert_eq!(peer.pending_count(), 0);
    let pending = peer.send("dropped", json!({})).await.unwrap();
    assert_eq!(peer.pending_count(), 1);
    drop(pending);
    assert_eq!(peer.pending_count(), 0);
}

#[tokio::test]
async fn the_close_reason_reaches_every_waiter() {
    let (peer, mut other, heard) = json_rpc();
    let calls: Vec<_> = ["one", "two"]
        .into_iter()
        .map(|method| {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request(method, json!({}), LONG).await })
        })
        .collect();
    other.read().await;
    other.read().await;
    drop(other);
    for call in calls {
        let err = call.await.unwrap().unwrap_err();
        assert!(
            err.to_string()
                .ends_with("got no answer: the other side closed the connection"),
            "{err}"
        );
    }
    assert_eq!(peer.pending_count(), 0);
    assert_eq!(
        *heard.told.lock().unwrap(),
        ["closed: the other side closed the connection"]
    );
    let err = peer.notify("late", json!({})).await.unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err}");
}

#[tokio::test]
async fn dap_answers_match_by_request_seq_and_events_come_first() {
    let (peer, mut other, heard) = dap();
    let first = peer.send("threads", json!({})).await.unwrap();
    let second = peer
        .send("evaluate", json!({"expression": "x"}))
        .await
        .unwrap();
    let (a, b) = (other.read().await, other.read().await);
    assert_eq!(
        (a["type"].as_str(), a["command"].as_str()),
        (Some("request"), Some("threads"))
    );
    assert_eq!(b["arguments"]["expression"], "x");
    // Answered out of order, the second with a refusal; an event comes before both.
    other
        .write(json!({"seq": 1, "type": "event", "event": "stopped", "body": {"threadId": 3}}))
        .await;
    let refusal = json!({"seq": 2, "type": "response", "request_seq": b["seq"], "success": false,
        "command": "evaluate", "message": "no frame", "body": {"error": {"id": 7, "format": "x?"}}});
    other.write(refusal).await;
    other
        .write(
            json!({"seq": 3, "type": "response", "request_seq": a["seq"], "success": true,
            "command": "threads", "body": {"threads": []}}),
        )
        .await;
    let err = second
        .wait(LONG, &CancellationToken::new())
        .await
        .unwrap_err();
    let RpcError::Remote { error, .. } = err else {
        panic!("{err}")
    };
    assert_eq!((error.code, error.message.as_str()), (7, "no frame"));
    assert_eq!(error.data.unwrap()["error"]["format"], "x?");
    let body = first.wait(LONG, &CancellationToken::new()).await.unwrap();
    assert_eq!(body, json!({"threads": []}));
    assert_eq!(*heard.told.lock().unwrap(), [r#"stopped {"threadId":3}"#]);

    // The adapter's own request is answered by seq, with a number of ours.
    other
        .write(json!({"seq": 4, "type": "request", "command": "runInTerminal", "arguments": {}}))
        .await;
    let answer = other.read().await;
    assert_eq!(answer["type"], "response");
    assert_eq!(answer["request_seq"], 4);
    assert_eq!(answer["command"], "runInTerminal");
    assert_eq!(answer["success"], false);
    assert!(answer["seq"].as_i64().unwrap() > b["seq"].as_i64().unwrap());
}

#[tokio::test]
async fn dap_cancels_only_for_an_adapter_that_takes_it() {
    let (peer, mut other, _) = dap();
    let err = peer.request("next", json!({}), SHORT).await.unwrap_err();
    assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
    assert_eq!(peer.pending_count(), 0);
    other.read().await;
    peer.envelope().set_cancels(true);
    let err = peer
        .request("continue", json!({}), SHORT)
        .await
        .unwrap_err();
    assert!(matches!(err, RpcError::Timeout { .. }), "{err}");
    assert_eq!(peer.pending_count(), 0);
    // The next message after `continue` is its cancel: none was sent for `next`.
    let asked = other.read().await;
    assert_eq!(asked["command"], "continue");
    let cancel = other.read().await;
    assert_eq!(cancel["command"], "cancel");
    assert_eq!(cancel["arguments"]["requestId"], asked["seq"]);
    // A late answer to it is ignored, and the connection still works.
    other
        .write(json!({"seq": 9, "type": "response", "request_seq": asked["seq"], "success": true}))
        .await;
    let call = tokio::spawn({
        let peer = peer.clone();
        async move { peer.request("threads", json!({}), LONG).await }
    });
    let asked = other.read().await;
    other
        .write(json!({"seq": 10, "type": "response", "request_seq": asked["seq"], "success": true}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), Value::Null);
}

#[tokio::test]
async fn a_dap_close_fails_waiters_and_later_sends() {
    let (peer, mut other, heard) = dap();
    let pending = peer.send("launch", json!({})).await.unwrap();
    other.read().await;
    let not_json = b"Content-Length: 3\r\n\r\nxyz";
    other.output.write_all(not_json).await.unwrap();
    let err = pending
        .wait(LONG, &CancellationToken::new())
        .await
        .unwrap_err();
    let RpcError::Closed { why, .. } = &err else {
        panic!("{err}")
    };
    assert!(why.starts_with("garbage on the wire"), "{why}");
    assert_eq!(heard.told.lock().unwrap().len(), 1);
    let err = peer.send("threads", json!({})).await.err().unwrap();
    assert!(matches!(err, RpcError::Closed { .. }), "{err}");
    assert_eq!(peer.pending_count(), 0);
}

#[test]
fn error_codes_are_named() {
    assert_eq!(codes::METHOD_NOT_FOUND, -32601);
    assert_eq!(codes::REQUEST_CANCELLED, -32800);
    assert_eq!(codes::CONTENT_MODIFIED, -32801);
    assert_eq!(codes::SERVER_CANCELLED, -32802);
}

/// A message given up on while its frame is part written (the other side reads nothing for a
/// while, so the pipe is full) still goes out whole, and what follows is read as it was sent.
#[tokio::test]
async fn a_message_given_up_on_mid_write_still_goes_out_whole() {
    let (ours, theirs) = tokio::io::duplex(1024);
    let (input, output) = tokio::io::split(ours);
    let (their_in, their_out) = tokio::io::split(theirs);
    let mut other = Other {
        input: BufReader::new(their_in),
        output: their_out,
    };
    let peer = Peer::start(input, output, Arc::new(Heard::default()), None);
    let text = "x".repeat(64 * 1024);
    let big = peer.notify("textDocument/didOpen", json!({ "text": text }));
    assert!(
        tokio::time::timeout(SHORT, big).await.is_err(),
        "the pipe was not full"
    );
    let after = tokio::spawn({
        let peer = peer.clone();
        async move { peer.notify("after", json!({})).await }
    });
    let first = tokio::time::timeout(LONG, other.read()).await.unwrap();
    assert_eq!(
        first["params"]["text"].as_str().map(str::len),
        Some(text.len())
    );
    let second = tokio::time::timeout(LONG, other.read()).await.unwrap();
    assert_eq!(second["method"], "after");
    after.await.unwrap().unwrap();
}
