//! What to do with one line from the client: hand it to rmcp, or answer it ourselves with the
//! JSON-RPC error that says what is wrong, carrying the request's id whenever it can be found.
//! rmcp answers such lines with no id at all (or not at all), which leaves the client waiting.

use rmcp::model::{
    CallToolRequestMethod, ClientJsonRpcMessage, ClientRequest, ConstString, RequestId,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::scan::id_of;

pub(crate) const PARSE_ERROR: i32 = -32700;
pub(crate) const INVALID_REQUEST: i32 = -32600;
pub(crate) const INVALID_PARAMS: i32 = -32602;

/// The fate of one line.
pub(crate) enum Verdict {
    /// A well-formed message for rmcp.
    Forward(Box<ClientJsonRpcMessage>),
    /// Our own answer, one JSON text without its line break.
    Reply(String),
    /// Nothing to answer: a notification or response (JSON-RPC never answers those).
    Ignore(String),
    /// An empty line.
    Blank,
}

/// A JSON-RPC error reply; `id` is JSON text (`null` when the id is unknown).
pub(crate) fn error_reply(id: &str, code: i32, message: &str) -> String {
    let message = Value::String(message.to_string());
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#)
}

fn reply(id: &str, code: i32, message: String) -> Verdict {
    Verdict::Reply(error_reply(id, code, &message))
}

/// Decides what to do with one line (without its `\n`).
pub(crate) fn check_line(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Blank;
    }
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let why = format!(
                "parse error: the message is not UTF-8 text (invalid byte at offset {}); send \
                 JSON-RPC messages as UTF-8",
                e.valid_up_to()
            );
            return reply(&id_of(line), PARSE_ERROR, why);
        }
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(e) => return reply(&id_of(line), PARSE_ERROR, parse_error(&e)),
    };
    match value {
        Value::Object(map) => check_object(map),
        Value::Array(items) => check_batch(&items),
        other => reply(
            "null",
            INVALID_REQUEST,
            format!(
                "invalid request: a message must be a JSON object; got {}",
                kind(&other)
            ),
        ),
    }
}

fn parse_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let hint = if text.starts_with("number out of range") {
        "numbers must fit a 64-bit float, and ids must be strings or integers within 64 bits"
    } else if text.starts_with("recursion limit exceeded") {
        "nest JSON at most 128 levels deep"
    } else {
        "send each JSON-RPC message as one complete JSON object on one line"
    };
    format!("parse error: {text}; {hint}")
}

fn check_object(map: Map<String, Value>) -> Verdict {
    if !map.contains_key("method") && (map.contains_key("result") || map.contains_key("error")) {
        // A response to a request of ours. JSON-RPC never answers a response, so a malformed
        // one is only logged.
        return match serde_json::from_value(Value::Object(map)) {
            Ok(msg) => Verdict::Forward(Box::new(msg)),
            Err(e) => Verdict::Ignore(format!("a malformed response from the client ({e})")),
        };
    }
    let echo = match map.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.to_string(),
        _ => "null".to_string(),
    };
    let invalid = |why: String| reply(&echo, INVALID_REQUEST, format!("invalid request: {why}"));
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"".into());
    }
    let method = match map.get("method") {
        Some(Value::String(m)) => m.clone(),
        None => {
            return invalid(
                "no \"method\"; a request names the MCP method it calls, e.g. \"tools/list\""
                    .into(),
            );
        }
        Some(other) => return invalid(format!("\"method\" must be a string; got {}", kind(other))),
    };
    let Some(id) = map.get("id") else {
        // A notification: JSON-RPC never answers one, so a malformed one is only logged.
        return match serde_json::from_value(Value::Object(map)) {
            Ok(msg) => Verdict::Forward(Box::new(msg)),
            Err(e) => Verdict::Ignore(format!("a malformed `{method}` notification ({e})")),
        };
    };
    if serde_json::from_value::<RequestId>(id.clone()).is_err() {
        return invalid(format!(
            "\"id\" must be a string or an integer within 64 bits; got {}",
            kind(id)
        ));
    }
    let bad_params = |why: String| {
        reply(
            &echo,
            INVALID_PARAMS,
            format!("invalid params for `{method}`: {why}"),
        )
    };
    if let Some(params) = map.get("params")
        && !params.is_object()
    {
        return bad_params(format!("params must be an object; got {}", kind(params)));
    }
    if method == CallToolRequestMethod::VALUE
        && let Err(why) = check_call(map.get("params"))
    {
        return bad_params(why);
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(map)) {
        // The envelope was checked above, so only the params can be at fault.
        Err(e) => bad_params(e.to_string()),
        Ok(ClientJsonRpcMessage::Request(req)) => {
            // rmcp takes a known method whose params do not fit for a custom request, and
            // answers "method not found".
            if let ClientRequest::CustomRequest(custom) = &req.request
                && let Some(explain) = known_method(&custom.method)
            {
                let why = explain(json!({"method": custom.method, "params": custom.params}));
                return bad_params(format!("{why}; see the MCP schema for `{method}`"));
            }
            Verdict::Forward(Box::new(ClientJsonRpcMessage::Request(req)))
        }
        Ok(other) => Verdict::Forward(Box::new(other)),
    }
}

/// The shape of `tools/call` params, checked here so each mistake gets its own message.
fn check_call(params: Option<&Value>) -> Result<(), String> {
    let Some(Value::Object(p)) = params else {
        return Err(
            "no params; send {\"name\": the tool's name, \"arguments\": an object of its \
             parameters}"
                .into(),
        );
    };
    match p.get("name") {
        Some(Value::String(_)) => {}
        None => return Err("no \"name\"; name the tool to call (tools/list lists them)".into()),
        Some(other) => {
            return Err(format!(
                "\"name\" must be a string naming the tool; got {}",
                kind(other)
            ));
        }
    }
    match p.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => {}
        Some(other) => {
            return Err(format!(
                "\"arguments\" must be a JSON object of the tool's parameters, like \
                 {{\"path\": \"a.txt\"}}; got {}",
                kind(other)
            ));
        }
    }
    match p.get("_meta") {
        None | Some(Value::Object(_)) => Ok(()),
        Some(other) => Err(format!("\"_meta\" must be an object; got {}", kind(other))),
    }
}

/// Answers every message of a batch that needs an answer: MCP dropped JSON-RPC batching, so
/// each request in one is refused by its id.
fn check_batch(items: &[Value]) -> Verdict {
    const WHY: &str = "invalid request: batches are not supported (MCP has no JSON-RPC \
                       batching); send each message on its own line";
    if items.is_empty() {
        return reply("null", INVALID_REQUEST, WHY.into());
    }
    let replies: Vec<Value> = items
        .iter()
        .filter(|item| {
            let method = item.get("method");
            let notification = method.is_some_and(Value::is_string) && item.get("id").is_none();
            let response =
                method.is_none() && (item.get("result").is_some() || item.get("error").is_some());
            !notification && !response
        })
        .map(|item| {
            let id = match item.get("id") {
                Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
                _ => Value::Null,
            };
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST, "message": WHY}})
        })
        .collect();
    if replies.is_empty() {
        return Verdict::Ignore("a batch of notifications and responses".into());
    }
    Verdict::Reply(Value::Array(replies).to_string())
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

type Explain = fn(Value) -> String;

/// Why `request` (`{"method", "params"}`) does not fit the request type `T`.
fn explain<T: DeserializeOwned>(request: Value) -> String {
    match serde_json::from_value::<T>(request) {
        Err(e) => e.to_string(),
        Ok(_) => "the params do not fit".into(),
    }
}

/// The requests rmcp knows, with the explanation of why params do not fit each. Deprecated
/// ones are still accepted by rmcp, so they are still explained.
#[allow(deprecated)]
fn known_method(method: &str) -> Option<Explain> {
    use rmcp::model::{
        CallToolRequest, CancelTaskMethod, CancelTaskRequest, CompleteRequest,
        CompleteRequestMethod, DiscoverRequest, DiscoverRequestMethod, GetPromptRequest,
        GetPromptRequestMethod, GetSkillRequest, GetSkillRequestMethod, GetTaskMethod,
        GetTaskRequest, InitializeRequest, InitializeResultMethod, ListPromptsRequest,
        ListPromptsRequestMethod, ListResourceTemplatesRequest, ListResourceTemplatesRequestMethod,
        ListResourcesRequest, ListResourcesRequestMethod, ListSkillsRequest,
        ListSkillsRequestMethod, ListToolsRequest, ListToolsRequestMethod, PingRequest,
        PingRequestMethod, ReadResourceDirectoryRequest, ReadResourceDirectoryRequestMethod,
        ReadResourceRequest, ReadResourceRequestMethod, SetLevelRequest, SetLevelRequestMethod,
        SubscribeRequest, SubscribeRequestMethod, SubscriptionsListenRequest,
        SubscriptionsListenRequestMethod, UnsubscribeRequest, UnsubscribeRequestMethod,
        UpdateTaskMethod, UpdateTaskRequest,
    };
    macro_rules! known {
        ($($m:ty => $t:ty),* $(,)?) => {
            [$((<$m as ConstString>::VALUE, explain::<$t> as Explain)),*]
        };
    }
    let table = known!(
        PingRequestMethod => PingRequest,
        InitializeResultMethod => InitializeRequest,
        DiscoverRequestMethod => DiscoverRequest,
        CompleteRequestMethod => CompleteRequest,
        SetLevelRequestMethod => SetLevelRequest,
        GetPromptRequestMethod => GetPromptRequest,
        ListPromptsRequestMethod => ListPromptsRequest,
        ListResourcesRequestMethod => ListResourcesRequest,
        ListResourceTemplatesRequestMethod => ListResourceTemplatesRequest,
        ReadResourceRequestMethod => ReadResourceRequest,
        SubscriptionsListenRequestMethod => SubscriptionsListenRequest,
        SubscribeRequestMethod => SubscribeRequest,
        UnsubscribeRequestMethod => UnsubscribeRequest,
        CallToolRequestMethod => CallToolRequest,
        ListToolsRequestMethod => ListToolsRequest,
        GetTaskMethod => GetTaskRequest,
        UpdateTaskMethod => UpdateTaskRequest,
        CancelTaskMethod => CancelTaskRequest,
        ListSkillsRequestMethod => ListSkillsRequest,
        GetSkillRequestMethod => GetSkillRequest,
        ReadResourceDirectoryRequestMethod => ReadResourceDirectoryRequest,
    );
    table
        .into_iter()
        .find(|(name, _)| *name == method)
        .map(|(_, explain)| explain)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The code and id of our reply, or what else the verdict was.
    fn answer(line: &[u8]) -> (i64, Value, String) {
        match check_line(line) {
            Verdict::Reply(text) => {
                let v: Value = serde_json::from_str(&text).unwrap();
                let msg = v["error"]["message"].as_str().unwrap().to_string();
                (v["error"]["code"].as_i64().unwrap(), v["id"].clone(), msg)
            }
            Verdict::Forward(_) => (0, Value::Null, "forward".into()),
            Verdict::Ignore(why) => (1, Value::Null, why),
            Verdict::Blank => (1, Value::Null, "blank".into()),
        }
    }

    #[test]
    fn good_messages_go_to_rmcp() {
        for line in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"a"}}}"#[..],
            br#"{"jsonrpc":"2.0","id":"x","method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            br#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":4,"method":"vendor/thing","params":{"a":1}}"#,
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r",
        ] {
            assert_eq!(answer(line).2, "forward", "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn each_fault_gets_its_code_and_the_id() {
        let cases: [(&[u8], i64, Value, &str); 9] = [
            (b"{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":\"\xff\"}", PARSE_ERROR.into(), json!(1), "UTF-8"),
            (br#"{"jsonrpc":"2.0","id":2,"method":"ping""#, PARSE_ERROR.into(), json!(2), "EOF"),
            (br#"{"jsonrpc":"2.0","id":3,"method":"ping","n":1e999}"#, PARSE_ERROR.into(), json!(3), "64-bit"),
            (br#"{"jsonrpc":"1.0","id":4,"method":"ping"}"#, INVALID_REQUEST.into(), json!(4), "jsonrpc"),
            (br#"{"jsonrpc":"2.0","id":5}"#, INVALID_REQUEST.into(), json!(5), "method"),
            (br#"{"jsonrpc":"2.0","id":6.5,"method":"ping"}"#, INVALID_REQUEST.into(), json!(6.5), "id"),
            (br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"w","arguments":"s"}}"#, INVALID_PARAMS.into(), json!(7), "\"arguments\" must be a JSON object"),
            (br#"{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":5}}"#, INVALID_PARAMS.into(), json!(8), "resources/read"),
            (br#"{"jsonrpc":"2.0","id":"9","method":"ping","params":[]}"#, INVALID_PARAMS.into(), json!("9"), "object"),
        ];
        for (line, code, id, says) in cases {
            let (got_code, got_id, msg) = answer(line);
            assert_eq!((got_code, &got_id), (code, &id), "{msg}");
            assert!(msg.contains(says), "{msg:?} should say {says:?}");
        }
    }

    #[test]
    fn notifications_and_responses_are_never_answered() {
        for line in [
            &br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"w","arguments":"s"}}"#[..],
            br#"{"jsonrpc":"2.0","id":"r","error":{"code":"x"}}"#,
            b"   ",
            br#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#,
        ] {
            let (code, _, what) = answer(line);
            assert!(code >= 0, "{what}: {}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_batch_is_refused_request_by_request() {
        let line =
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},7]"#;
        let Verdict::Reply(text) = check_line(line) else {
            panic!("no reply")
        };
        let v: Value = serde_json::from_str(&text).unwrap();
        let ids: Vec<Value> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        assert_eq!(ids, [json!(1), Value::Null]);
    }
}
