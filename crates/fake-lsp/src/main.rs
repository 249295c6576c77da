//! A language server that misbehaves on purpose, for the fault tests: real servers cannot be
//! made to hang, crash or send garbage on demand. `fake-lsp MODE`, where MODE is one of
//! `hang-init` (never answers initialize), `crash` (exits in the middle of the first request
//! after initialize), `garbage` (answers the first request with bytes that are not a frame),
//! `silent` (answers everything but never publishes diagnostics), `indexing-silent` (begins
//! and ends an indexing progress when a document opens, and never publishes), `indexing`
//! (begins an indexing progress at 41% that never ends, answers references with two places
//! in the document asked about and a rename with one edit there), `hang` (answers initialize
//! and shutdown, nothing else), `touch-on-rename` (changes the file on disk while it computes
//! a rename), `unhealthy` (says the project failed to load, then answers nothing useful),
//! `apply-edit` (asks the
//! client to apply an edit while answering a hover, and answers with the client's reply),
//! `flood` (publishes for tens of thousands of files, and thousands of findings for the open
//! one, each finding carrying a kilobyte of `data`), `late` (publishes an error for each
//! document version 1.5 s after it arrives), `elsewhere` (answers a definition with places in
//! `/proc/self/environ`, `/dev/zero`, `/etc/passwd` and the workspace's `fifo`), `toy` (a
//! well-behaved server of a language tether's catalog does not have: it publishes an error
//! for each line holding `BAD`, and its hover names the `languageId` it was given),
//! `late-check` (a server that checks on save, as rust-analyzer does, whose check's finding
//! is sent only after the answer to the request that follows the check's end; that answer is
//! `null`, as rust-analyzer's is while it loads files, from outside the worker its
//! publications are sent from).

#![forbid(unsafe_code)]

use std::io::{BufReader, Write};

use serde_json::{Value, json};

mod frame;
use frame::{read, write};

/// The `languageId` the `toy` mode was last given a document with.
static LANGUAGE_ID: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// What `late-check` still owes after the next answer: nothing, a check (the save was
/// taken in), or the check's finding for a document.
#[derive(Default)]
enum Owed {
    #[default]
    Nothing,
    Check(Value),
    Finding(Value),
}

static OWED: std::sync::Mutex<Owed> = std::sync::Mutex::new(Owed::Nothing);

/// `late-check`'s own publications: none of its own for a text, and a check after a save.
fn late_check_notified(method: &str, message: &Value, out: &mut impl Write) {
    let doc = &message["params"]["textDocument"];
    match method {
        "textDocument/didOpen" | "textDocument/didChange" => {
            let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": doc["uri"], "version": doc["version"], "diagnostics": []}});
            write(out, &publish);
        }
        "textDocument/didSave" => {
            *OWED.lock().unwrap_or_else(|p| p.into_inner()) = Owed::Check(doc["uri"].clone());
        }
        _ => {}
    }
}

/// After an answer, what `late-check` owed: a check's progress, or the check's finding.
fn late_check_answered(out: &mut impl Write) {
    let mut owed = OWED.lock().unwrap_or_else(|p| p.into_inner());
    match std::mem::take(&mut *owed) {
        Owed::Nothing => {}
        Owed::Check(uri) => {
            // A real check starts a moment after the save is taken in (cargo takes longer
            // than this to start): the check is not a race with the barrier's own answer.
            std::thread::sleep(std::time::Duration::from_millis(100));
            for value in [
                json!({"kind": "begin", "title": "cargo check"}),
                json!({"kind": "end"}),
            ] {
                let progress = json!({"jsonrpc": "2.0", "method": "$/progress",
                    "params": {"token": "fake/check", "value": value}});
                write(out, &progress);
            }
            *owed = Owed::Finding(uri);
        }
        Owed::Finding(uri) => {
            let warning = json!({"range": {"start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": 2}}, "severity": 2,
                "message": "unused variable: `spare`", "source": "rustc"});
            let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": uri, "diagnostics": [warning]}});
            write(out, &publish);
        }
    }
}

/// Faults on notifications: `crash-on-change` dies when a document changes; `stale`
/// publishes an error for each document, always for the version before the one it was sent.
fn notified(mode: &str, message: &Value, out: &mut impl Write) {
    let method = message["method"].as_str().unwrap_or("");
    match (mode, method) {
        ("late-check", _) => late_check_notified(method, message, out),
        ("crash-on-change", "textDocument/didChange") => {
            eprintln!("fake-lsp: crashing on purpose in `{method}`");
            std::process::exit(3);
        }
        ("stale", "textDocument/didOpen" | "textDocument/didChange") => {
            let doc = &message["params"]["textDocument"];
            let version = doc["version"].as_i64().unwrap_or(1) - 1;
            let error = json!({"range": {"start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": 2}}, "severity": 1, "message": "stale error"});
            let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": doc["uri"], "version": version, "diagnostics": [error]}});
            write(out, &publish);
        }
        ("toy", "textDocument/didOpen" | "textDocument/didChange") => {
            let doc = &message["params"]["textDocument"];
            let text = match method {
                "textDocument/didOpen" => doc["text"].as_str().unwrap_or("").to_string(),
                _ => message["params"]["contentChanges"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            };
            if let Some(id) = doc["languageId"].as_str() {
                *LANGUAGE_ID.lock().unwrap_or_else(|p| p.into_inner()) = id.to_string();
            }
            let errors: Vec<Value> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| l.contains("BAD"))
                .map(|(n, _)| {
                    json!({"range": {"start": {"line": n, "character": 0},
                        "end": {"line": n, "character": 3}}, "severity": 1,
                        "message": "toy: BAD is not allowed", "source": "toy"})
                })
                .collect();
            let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": doc["uri"], "version": doc["version"], "diagnostics": errors}});
            write(out, &publish);
        }
        ("indexing-silent", "textDocument/didOpen") => {
            for value in [
                json!({"kind": "begin", "title": "Indexing"}),
                json!({"kind": "end"}),
            ] {
                let progress = json!({"jsonrpc": "2.0", "method": "$/progress",
                    "params": {"token": "fake/indexing", "value": value}});
                write(out, &progress);
            }
        }
        ("indexing", "textDocument/didOpen") => {
            let begin = json!({"kind": "begin", "title": "Indexing", "percentage": 41});
            let progress = json!({"jsonrpc": "2.0", "method": "$/progress",
                "params": {"token": "fake/indexing", "value": begin}});
            write(out, &progress);
        }
        ("late", "textDocument/didOpen" | "textDocument/didChange") => {
            std::thread::sleep(std::time::Duration::from_millis(1500));
            let doc = &message["params"]["textDocument"];
            let error = json!({"range": {"start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": 2}}, "severity": 1, "message": "late error"});
            let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": doc["uri"], "version": doc["version"], "diagnostics": [error]}});
            write(out, &publish);
        }
        ("flood", "textDocument/didOpen" | "textDocument/didChange") => {
            let doc = &message["params"]["textDocument"];
            let finding = |i: usize| {
                json!({"range": {"start": {"line": 0, "character": 0},
                    "end": {"line": 0, "character": 2}}, "severity": 1,
                    "message": format!("flooded {i}"), "data": "d".repeat(1024)})
            };
            let publish = |uri: &Value, items: Vec<Value>| {
                json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                    "params": {"uri": uri, "diagnostics": items}})
            };
            for n in 0..25_000 {
                let uri = json!(format!("file:///flood/f{n}.rs"));
                write(out, &publish(&uri, vec![finding(0), finding(1)]));
            }
            write(
                out,
                &publish(&doc["uri"], (0..3_000).map(finding).collect()),
            );
        }
        _ => {}
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut out = std::io::stdout().lock();
    eprintln!("fake-lsp starting in mode `{mode}`");
    while let Some(message) = read(&mut input) {
        if message.get("id").is_none() {
            notified(&mode, &message, &mut out);
            continue;
        }
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        match (mode.as_str(), method) {
            ("hang-init", "initialize") => {
                eprintln!("fake-lsp: not answering initialize");
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
            (_, "initialize") => {
                let caps = json!({"capabilities": {"hoverProvider": true,
                                  "definitionProvider": true, "renameProvider": true,
                                  "referencesProvider": true, "textDocumentSync": 1}});
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": caps}),
                );
            }
            ("crash", _) => {
                eprintln!("fake-lsp: crashing on purpose in `{method}`");
                std::process::exit(3);
            }
            ("garbage", _) => {
                let _ = out.write_all(b"this is not a header\r\n\r\n{");
                let _ = out.flush();
            }
            ("hang", m) if m != "shutdown" => {
                eprintln!("fake-lsp: not answering `{m}`");
            }
            // Answered from the worker (a list) once the finding is out; before, `null`, as
            // rust-analyzer answers while it loads files, from outside its worker.
            ("late-check", "textDocument/foldingRange") => {
                let owed = matches!(
                    *OWED.lock().unwrap_or_else(|p| p.into_inner()),
                    Owed::Finding(_)
                );
                let result = if owed { json!(null) } else { json!([]) };
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": result}),
                );
            }
            ("touch-on-rename", "textDocument/rename") => {
                let uri = message["params"]["textDocument"]["uri"].clone();
                let path = uri
                    .as_str()
                    .unwrap_or("")
                    .trim_start_matches("file://")
                    .to_string();
                let mut text = std::fs::read_to_string(&path).unwrap_or_default();
                text.push_str("// touched\n");
                let _ = std::fs::write(&path, text);
                let edit = rename_edit(uri.as_str().unwrap_or(""));
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": edit}),
                );
            }
            ("unhealthy", "textDocument/hover") => {
                let status = json!({"jsonrpc": "2.0", "method": "experimental/serverStatus",
                    "params": {"health": "error", "quiescent": true,
                               "message": "Failed to load workspace: cargo metadata exited with an error"}});
                write(&mut out, &status);
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": null}),
                );
            }
            ("elsewhere", "textDocument/definition") => {
                let uri = message["params"]["textDocument"]["uri"]
                    .as_str()
                    .unwrap_or("");
                let fifo = format!("{}/fifo", uri.rsplit_once('/').map_or("", |(d, _)| d));
                let at = |uri: &str| {
                    json!({"uri": uri, "range": {"start": {"line": 0, "character": 0},
                        "end": {"line": 0, "character": 1}}})
                };
                let places = json!([
                    at("file:///proc/self/environ"),
                    at("file:///dev/zero"),
                    at("file:///etc/passwd"),
                    at(&fifo)
                ]);
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": places}),
                );
            }
            ("apply-edit", "textDocument/hover" | "textDocument/rename") => {
                let uri = message["params"]["textDocument"]["uri"].clone();
                let edit = json!({"changes": {uri.as_str().unwrap_or(""): [{"range": {
                    "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "newText": "// injected\n"}]}});
                let ask = json!({"jsonrpc": "2.0", "id": "apply-1", "method": "workspace/applyEdit",
                                 "params": {"label": "sneaky", "edit": edit}});
                write(&mut out, &ask);
                let reply = loop {
                    match read(&mut input) {
                        Some(m) if m["id"] == "apply-1" => break m,
                        Some(_) => continue,
                        None => return,
                    }
                };
                let contents = format!("applyEdit answered: {}", reply["result"]);
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"contents": contents}}),
                );
            }
            ("indexing", "textDocument/rename") => {
                let uri = message["params"]["textDocument"]["uri"].clone();
                let edit = rename_edit(uri.as_str().unwrap_or(""));
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": edit}),
                );
            }
            ("indexing", "textDocument/references") => {
                let uri = message["params"]["textDocument"]["uri"].clone();
                let at = |line: u32| {
                    json!({"uri": uri, "range": {"start": {"line": line, "character": 3},
                        "end": {"line": line, "character": 7}}})
                };
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": [at(0), at(1)]}),
                );
            }
            ("not-found", "textDocument/hover") => write(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "Unhandled method textDocument/hover"}}),
            ),
            ("toy", "textDocument/hover") => {
                let seen = LANGUAGE_ID
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone();
                let contents = format!("toy hover; languageId {seen}");
                write(
                    &mut out,
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"contents": contents}}),
                );
            }
            (_, "shutdown") => write(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "result": null}),
            ),
            _ => write(
                &mut out,
                &json!({"jsonrpc": "2.0", "id": id, "result": null}),
            ),
        }
        if mode == "late-check" {
            late_check_answered(&mut out);
        }
    }
}

/// A rename's edit: `main` on the first line of the document at `uri` becomes `renamed`.
fn rename_edit(uri: &str) -> Value {
    json!({"changes": {uri: [{"range": {
        "start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 7}},
        "newText": "renamed"}]}})
}
