//! Reading a backend's stdout as it arrives: the session id it names, and the final message its
//! format puts last, kept however long the transcript grows.

use serde::Deserialize;

use crate::config::Format;

/// Bytes of plain-text output kept (its end); the transcript has all of it.
const TEXT_TAIL: usize = 1 << 20;

/// Follows one run's output line by line.
pub struct OutputReader {
    format: Format,
    /// Plain text: the last [`TEXT_TAIL`] bytes.
    tail: String,
    /// The final message so far: the `result` event's, Codex's last agent message, or the text
    /// of opencode's last step that had any.
    message: Option<String>,
    /// opencode: the text of the step under way.
    step: String,
    /// What the agent said went wrong, if it did.
    error: Option<String>,
}

impl OutputReader {
    /// A reader for output in `format`.
    pub fn new(format: Format) -> Self {
        OutputReader {
            format,
            tail: String::new(),
            message: None,
            step: String::new(),
            error: None,
        }
    }

    /// Takes one line of output; returns the session id it names, if any.
    pub fn line(&mut self, line: &str) -> Option<String> {
        if self.format == Format::Text {
            self.tail.push_str(line);
            self.tail.push('\n');
            if self.tail.len() > 2 * TEXT_TAIL {
                let mut cut = self.tail.len() - TEXT_TAIL;
                while !self.tail.is_char_boundary(cut) {
                    cut += 1;
                }
                self.tail.drain(..cut);
            }
            return None;
        }
        let ids = match self.format {
            Format::Text => return None,
            Format::StreamJson => self.claude(serde_json::from_str(line).ok()?),
            Format::CodexJson => self.codex(serde_json::from_str(line).ok()?),
            Format::OpencodeJson => self.opencode(serde_json::from_str(line).ok()?),
        };
        ids.named()
    }

    /// Claude Code: the `result` event carries the final message, or `is_error` and why.
    fn claude(&mut self, event: ClaudeEvent) -> SessionIds {
        if event.kind.text() != Some("result") {
            return event.ids;
        }
        if event.is_error.0 == Some(true) {
            let kind = event.subtype.text().unwrap_or("error");
            let mut said: Vec<&str> = event.result.text().into_iter().collect();
            let errors = event.errors.0.iter().flatten();
            said.extend(errors.filter_map(Loose::text));
            self.error = Some(format!(
                "the agent reported an error ({kind}): {}",
                said.join("; ")
            ));
        } else {
            self.message = Some(event.result.text().unwrap_or("").to_string());
        }
        event.ids
    }

    /// Codex: each `item.completed` agent message replaces the last; `turn.failed` (or an
    /// `error` event) says why a turn failed.
    fn codex(&mut self, event: CodexEvent) -> SessionIds {
        let item = event.item.0.unwrap_or_default();
        match event.kind.text() {
            Some("item.completed") if item.kind.text() == Some("agent_message") => {
                self.message = item.text.0;
            }
            Some("turn.failed") => {
                let error = event.error.0.unwrap_or_default();
                let why = error.message.text().unwrap_or("no reason given");
                self.error = Some(format!("the agent's turn failed: {why}"));
            }
            Some("error") if self.error.is_none() => {
                let why = event.message.text().unwrap_or("no reason given");
                self.error = Some(format!("the agent reported an error: {why}"));
            }
            _ => {}
        }
        event.ids
    }

    /// opencode: `text` parts make up a step; the last step with text is the final message.
    fn opencode(&mut self, event: OpencodeEvent) -> SessionIds {
        match event.kind.text() {
            Some("step_start") => self.step.clear(),
            Some("text") => {
                let part = event.part.0.unwrap_or_default();
                self.step.push_str(part.text.text().unwrap_or(""));
                self.message = Some(self.step.clone());
            }
            Some("error") => {
                let error = event.error.0.unwrap_or_default();
                let data = error.data.0.unwrap_or_default();
                let why = data.message.text().or(error.name.text());
                let why = why.unwrap_or("no reason given");
                self.error = Some(format!("the agent reported an error: {why}"));
            }
            _ => {}
        }
        event.ids
    }

    /// The run's outcome once the process exited with `code` (`None`: a signal ended it).
    pub fn finish(self, code: Option<i32>) -> Result<String, String> {
        match (code, self.error) {
            (Some(0), None) => Ok(match self.format {
                Format::Text => self.tail.trim().to_string(),
                _ => self.message.unwrap_or_else(|| {
                    format!(
                        "(it exited 0, but its {} output had no final message; see the \
                         transcript)",
                        self.format.name()
                    )
                }),
            }),
            (Some(0), Some(error)) => Err(error),
            (Some(code), None) => Err(format!("exit code {code}")),
            (Some(code), Some(error)) => Err(format!("exit code {code}: {error}")),
            (None, _) => Err("killed by a signal".into()),
        }
    }
}

/// A field as this reader expects it, or absent when it has another shape: an event whose
/// other fields changed shape in a new version of the CLI is still read.
#[derive(Debug)]
struct Loose<T>(Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Loose<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        Ok(Loose(serde_json::from_value(value).ok()))
    }
}

impl Loose<String> {
    fn text(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// The session id an event names, under the key each CLI uses.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SessionIds {
    session_id: Loose<String>,
    thread_id: Loose<String>,
    #[serde(rename = "sessionID")]
    opencode_session_id: Loose<String>,
}

impl SessionIds {
    fn named(self) -> Option<String> {
        (self.session_id.0)
            .or(self.thread_id.0)
            .or(self.opencode_session_id.0)
    }
}

/// A Claude Code `stream-json` event, as far as it is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaudeEvent {
    #[serde(rename = "type")]
    kind: Loose<String>,
    is_error: Loose<bool>,
    subtype: Loose<String>,
    result: Loose<String>,
    errors: Loose<Vec<Loose<String>>>,
    #[serde(flatten)]
    ids: SessionIds,
}

/// A Codex `--json` event, as far as it is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CodexEvent {
    #[serde(rename = "type")]
    kind: Loose<String>,
    item: Loose<CodexItem>,
    error: Loose<Said>,
    message: Loose<String>,
    #[serde(flatten)]
    ids: SessionIds,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CodexItem {
    #[serde(rename = "type")]
    kind: Loose<String>,
    text: Loose<String>,
}

/// An error's `message`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Said {
    message: Loose<String>,
}

/// An opencode `--format json` event, as far as it is read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OpencodeEvent {
    #[serde(rename = "type")]
    kind: Loose<String>,
    part: Loose<OpencodePart>,
    error: Loose<OpencodeError>,
    #[serde(flatten)]
    ids: SessionIds,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OpencodePart {
    text: Loose<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OpencodeError {
    name: Loose<String>,
    data: Loose<Said>,
}

/// The final message of a whole output that exited 0, by format.
#[cfg(test)]
fn final_message(format: Format, output: &str) -> Result<String, String> {
    let mut reader = OutputReader::new(format);
    for line in output.lines() {
        reader.line(line);
    }
    reader.finish(Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_message_follows_the_format() {
        assert_eq!(
            final_message(Format::Text, "\nall done\n").unwrap(),
            "all done"
        );
        let stream = "{\"type\":\"system\"}\n{\"type\":\"assistant\",\"message\":{}}\n\
                      {\"type\":\"result\",\"subtype\":\"success\",\"result\":\"fixed it\"}\n";
        assert_eq!(
            final_message(Format::StreamJson, stream).unwrap(),
            "fixed it"
        );
        let none = final_message(Format::StreamJson, "not json").unwrap();
        assert!(none.contains("had no final message"), "{none}");
        let failed = "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true}";
        let err = final_message(Format::StreamJson, failed).unwrap_err();
        assert!(err.contains("error_max_turns"), "{err}");
    }

    #[test]
    fn each_format_names_its_session() {
        let mut reader = OutputReader::new(Format::StreamJson);
        assert_eq!(
            reader.line("{\"type\":\"system\",\"session_id\":\"s-1\"}"),
            Some("s-1".into())
        );
        let mut reader = OutputReader::new(Format::CodexJson);
        assert_eq!(
            reader.line("{\"type\":\"thread.started\",\"thread_id\":\"t-9\"}"),
            Some("t-9".into())
        );
        let mut reader = OutputReader::new(Format::OpencodeJson);
        assert_eq!(
            reader.line("{\"type\":\"step_start\",\"sessionID\":\"ses_1\"}"),
            Some("ses_1".into())
        );
        assert_eq!(
            OutputReader::new(Format::Text).line("{\"session_id\":\"x\"}"),
            None
        );
    }

    #[test]
    fn plain_text_keeps_its_end() {
        let mut reader = OutputReader::new(Format::Text);
        let line = "x".repeat(1000);
        for _ in 0..3000 {
            reader.line(&line);
        }
        reader.line("the end");
        let result = reader.finish(Some(0)).unwrap();
        assert!(result.ends_with("the end"));
        assert!(result.len() <= 2 * TEXT_TAIL, "{}", result.len());
    }

    /// Replays the output each real CLI wrote (see `fixtures/README.md`) with its exit code.
    fn replay(format: Format, fixture: &str, code: i32) -> Result<String, String> {
        let mut reader = OutputReader::new(format);
        let mut sessions = Vec::new();
        for line in fixture.lines() {
            sessions.extend(reader.line(line));
        }
        assert!(!sessions.is_empty(), "no session id found");
        reader.finish(Some(code))
    }

    #[test]
    fn the_real_clis_output_is_read() {
        let done = Ok("DONE: the brief was read".to_string());
        let claude = include_str!("../fixtures/claude-basic.jsonl");
        assert_eq!(replay(Format::StreamJson, claude, 0), done);
        let codex = include_str!("../fixtures/codex-basic.jsonl");
        assert_eq!(replay(Format::CodexJson, codex, 0), done);
        let opencode = include_str!("../fixtures/opencode-basic.jsonl");
        assert_eq!(replay(Format::OpencodeJson, opencode, 0), done);

        let claude = include_str!("../fixtures/claude-error400.jsonl");
        let err = replay(Format::StreamJson, claude, 1).unwrap_err();
        assert!(
            err.starts_with("exit code 1: the agent reported an error"),
            "{err}"
        );
        assert!(err.contains("API Error: 400 stub: forced error"), "{err}");
        let claude = include_str!("../fixtures/claude-resume-bad.jsonl");
        let err = replay(Format::StreamJson, claude, 1).unwrap_err();
        assert!(
            err.contains("No conversation found with session ID"),
            "{err}"
        );
        let codex = include_str!("../fixtures/codex-error400.jsonl");
        let err = replay(Format::CodexJson, codex, 1).unwrap_err();
        assert!(
            err.starts_with("exit code 1: the agent's turn failed"),
            "{err}"
        );
        assert!(err.contains("stub: forced error"), "{err}");
        let opencode = include_str!("../fixtures/opencode-error400.jsonl");
        assert_eq!(
            replay(Format::OpencodeJson, opencode, 1).unwrap_err(),
            "exit code 1: the agent reported an error: stub: forced error"
        );
    }

    /// A field whose shape a new version of a CLI changed is left out, and the rest of its
    /// event is still read.
    #[test]
    fn a_field_of_another_shape_leaves_the_rest_of_the_event_read() {
        let mut reader = OutputReader::new(Format::StreamJson);
        let event = r#"{"type":"result","result":"fine","errors":{"odd":1},"is_error":"no","session_id":7}"#;
        assert_eq!(reader.line(event), None);
        assert_eq!(reader.finish(Some(0)).unwrap(), "fine");
    }

    #[test]
    fn a_failed_exit_carries_what_the_agent_said() {
        let mut reader = OutputReader::new(Format::CodexJson);
        reader.line("{\"type\":\"turn.failed\",\"error\":{\"message\":\"quota\"}}");
        assert_eq!(
            reader.finish(Some(1)).unwrap_err(),
            "exit code 1: the agent's turn failed: quota"
        );
    }
}
