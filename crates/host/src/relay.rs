//! `tether serve` through the host: MCP lines relayed both ways. The relay keeps the ids of
//! requests not yet answered, so when the host dies each of them, and every request after,
//! gets an answer saying so instead of a wait that never ends.

use std::collections::HashMap;

use serde_json::{Value, json};
use tether_tool::lock;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::client::{Attachment, died};
use crate::place::Place;

/// How long the relay waits, once the client closed its side, for the host to end the run.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Relays MCP between this process's stdin/stdout and the host until the client goes away.
pub async fn relay_mcp(place: &Place, at: Attachment) -> Result<(), String> {
    let Attachment {
        read, mut write, ..
    } = at;
    let pending: std::sync::Arc<std::sync::Mutex<HashMap<String, Value>>> = Default::default();
    let dead: std::sync::Arc<std::sync::Mutex<Option<String>>> = Default::default();
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = out_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    // The host's lines to the client; at its end, what was still asked is answered.
    let from_host = {
        let (pending, dead, out) = (pending.clone(), dead.clone(), out_tx.clone());
        let place = place.clone();
        tokio::spawn(async move {
            let mut lines = read.lines();
            let why = loop {
                match lines.next_line().await {
                    Ok(Some(line)) => {
                        if let Some(id) = answered_id(&line) {
                            lock(&pending).remove(&id);
                        }
                        let _ = out.send(format!("{line}\n"));
                    }
                    Ok(None) => break "it closed the connection".to_string(),
                    Err(e) => break e.to_string(),
                }
            };
            let message = died(&place, &why);
            *lock(&dead) = Some(message.clone());
            for (_, request) in lock(&pending).drain() {
                let _ = out.send(failure(&request, &message));
            }
        })
    };
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = stdin.next_line().await {
        let request = asked(&line);
        if let Some(message) = lock(&dead).clone() {
            if let Some(request) = request {
                let _ = out_tx.send(failure(&request, &message));
            }
            continue;
        }
        if let Some(request) = &request {
            lock(&pending).insert(request["id"].to_string(), request.clone());
        }
        if write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .is_err()
        {
            // The reading task sees the same end and answers what is pending.
            continue;
        }
    }
    // The client went away: the host ends the run when its input closes.
    let _ = write.shutdown().await;
    let _ = tokio::time::timeout(DRAIN_WAIT, from_host).await;
    drop(out_tx);
    let _ = tokio::time::timeout(DRAIN_WAIT, writer).await;
    Ok(())
}

/// The request on this line (one with a method and an id), if it is one.
fn asked(line: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(line).ok()?;
    (v.get("method").is_some() && v.get("id").is_some_and(|id| !id.is_null())).then_some(v)
}

/// The id a response line answers, as its JSON text.
fn answered_id(line: &str) -> Option<String> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("method").is_some() {
        return None;
    }
    v.get("id").map(|id| id.to_string())
}

/// The answer to `request` once the host is gone: a tool result the model can read for a
/// tool call, a JSON-RPC error for anything else.
fn failure(request: &Value, message: &str) -> String {
    let id = &request["id"];
    let answer = if request["method"] == "tools/call" {
        json!({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": format!("error: {message}")}],
            "isError": true,
        }})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}})
    };
    format!("{answer}\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_answers_are_told_apart() {
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
        assert!(asked(call).is_some());
        assert!(asked(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        assert_eq!(
            answered_id(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(),
            Some("7")
        );
        // A request from the host (elicitation) answers nothing.
        assert!(answered_id(r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}"#).is_none());
        let answer: Value = serde_json::from_str(&failure(&asked(call).unwrap(), "gone")).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["isError"], true);
        let list = asked(r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#).unwrap();
        let answer: Value = serde_json::from_str(&failure(&list, "gone")).unwrap();
        assert_eq!(answer["error"]["code"], -32603);
    }
}
