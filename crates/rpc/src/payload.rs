//! A message's result or params as read: kept as its JSON text until its reader asks for it,
//! so a large answer (a file's diagnostics) is parsed once, straight into the type that reads
//! it, instead of first into a tree of values.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

/// A result, params or body, as its JSON text or, from an envelope that reads whole
/// messages, as a value.
#[derive(Debug)]
pub enum Payload {
    /// The JSON text, checked to be well formed.
    Raw(Box<RawValue>),
    /// A value already parsed.
    Value(Value),
}

impl Payload {
    /// The payload as a value (parsed now if it is text).
    pub fn into_value(self) -> Value {
        match self {
            Payload::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Payload::Value(value) => value,
        }
    }

    /// The payload as JSON text (written now if it is a value).
    pub fn into_raw(self) -> Box<RawValue> {
        match self {
            Payload::Raw(raw) => raw,
            Payload::Value(value) => serde_json::value::to_raw_value(&value)
                .unwrap_or_else(|_| RawValue::from_string("null".into()).unwrap_or_default()),
        }
    }

    /// The payload read as a `T`, straight from its text when it is text.
    pub fn read<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        match self {
            Payload::Raw(raw) => serde_json::from_str(raw.get()),
            Payload::Value(value) => serde_json::from_value(value),
        }
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Payload::Value(value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn text_and_value_read_alike() {
        let text = r#"{"a": [1, "two", null]}"#;
        let raw = Payload::Raw(serde_json::from_str(text).unwrap());
        let value = Payload::Value(serde_json::from_str(text).unwrap());
        assert_eq!(raw.into_value(), value.into_value());
        let raw = Payload::Raw(serde_json::from_str(text).unwrap());
        let read: std::collections::HashMap<String, Vec<Value>> = raw.read().unwrap();
        assert_eq!(read["a"].len(), 3);
    }
}
