use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{BoxFuture, CallCx, Concurrency, Preview, Tier, ToolError, ToolOutput};

/// A tool: its model-visible spec and its handler in one place, so they cannot drift apart.
/// The input schema is generated from `Args`, which is also what the handler receives.
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialized from the call's JSON; use `#[serde(deny_unknown_fields)]`.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The name the model calls it by.
    fn name(&self) -> &'static str;
    /// What it does, for the model.
    fn description(&self) -> String;
    /// The tier, which decides the surfaces that see it.
    fn tier(&self) -> Tier;
    /// How this call is scheduled; it may depend on what the call names (a session key).
    fn concurrency(&self, args: &Self::Args) -> Concurrency;
    /// What a call would change, for the approval card; a tool that changes nothing, or has
    /// nothing to show beyond its name, keeps the empty default.
    fn preview(&self, _args: &Self::Args) -> Preview {
        Preview::default()
    }
    /// Runs one call.
    fn call(
        &self,
        cx: &CallCx,
        args: Self::Args,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// The model-visible description of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Tool name.
    pub name: String,
    /// Description for the model.
    pub description: String,
    /// Its tier.
    pub tier: Tier,
    /// JSON schema of the arguments (an object schema).
    pub input_schema: Value,
}

/// The object-safe form of [`Tool`] that the tool table stores.
pub trait DynTool: Send + Sync {
    /// The spec, schema included; the tool table computes it once, at registration.
    fn spec(&self) -> ToolSpec;
    /// Parses `args` once into a call ready to run, which knows the permit it needs.
    fn prepare(self: Arc<Self>, args: Value) -> Result<Prepared, ToolError>;
}

/// The handler of a prepared call: it runs once, with the call's context.
pub type RunCall =
    Box<dyn for<'a> FnOnce(&'a CallCx) -> BoxFuture<'a, Result<ToolOutput, ToolError>> + Send>;

/// A call whose arguments were parsed: its permit, and the handler to run under it.
pub struct Prepared {
    /// The permit this call needs, which may depend on its arguments.
    pub concurrency: Concurrency,
    /// What the call would change, told by the tool from its parsed arguments.
    pub preview: Preview,
    /// Runs the call.
    pub run: RunCall,
}

impl<T: Tool> DynTool for T {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_string(),
            description: self.description(),
            tier: self.tier(),
            input_schema: schema_for::<T::Args>(),
        }
    }

    fn prepare(self: Arc<Self>, args: Value) -> Result<Prepared, ToolError> {
        let parsed = parse_args::<T>(&self, args)?;
        let concurrency = Tool::concurrency(&*self, &parsed);
        let preview = match self.tier() {
            Tier::Read => Preview::default(),
            _ => Tool::preview(&*self, &parsed),
        };
        Ok(Prepared {
            concurrency,
            preview,
            run: Box::new(move |cx| Box::pin(async move { self.call(cx, parsed).await })),
        })
    }
}

fn parse_args<T: Tool>(tool: &T, args: Value) -> Result<T::Args, ToolError> {
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    serde_json::from_value(args).map_err(|e| ToolError::BadArgs {
        tool: tool.name().to_string(),
        detail: without_field_list(e.to_string()),
        expected: describe_schema(&schema_for::<T::Args>()),
    })
}

/// Serde's "unknown field `x`, expected one of …" lists accepted aliases beside the real
/// names; the schema quoted after it lists the canonical names only, so that list is dropped.
fn without_field_list(detail: String) -> String {
    match detail.find(", expected") {
        Some(at) if detail.starts_with("unknown field") => detail[..at].to_string(),
        _ => detail,
    }
}

/// The JSON schema of an argument type, inlined, as an MCP `inputSchema` object.
pub fn schema_for<A: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<A>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

/// Quotes a schema's fields for a usage error, with their allowed values and bounds, e.g.
/// `{"action": "accept"|"discard" (required), "limit": integer >= 1}`.
pub fn describe_schema(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return "no arguments".to_string();
    };
    let fields: Vec<String> = props
        .iter()
        .map(|(name, p)| {
            let req = if required.contains(&name.as_str()) {
                " (required)"
            } else {
                ""
            };
            format!("\"{name}\": {}{req}", describe_value(p))
        })
        .collect();
    format!("{{{}}}", fields.join(", "))
}

/// One property's shape: its allowed values when it is an enumeration, else its type with
/// any integer bounds.
fn describe_value(p: &Value) -> String {
    if let Some(values) = enum_values(p) {
        return values.join("|");
    }
    let ty = match &p["type"] {
        Value::String(s) => s.clone(),
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join("|"),
        _ => "value".to_string(),
    };
    match (p["minimum"].as_i64(), p["maximum"].as_i64()) {
        (Some(min), Some(max)) => format!("{ty} {min} to {max}"),
        (Some(min), None) => format!("{ty} >= {min}"),
        (None, Some(max)) => format!("{ty} <= {max}"),
        (None, None) => ty,
    }
}

/// The quoted values of an enumeration, written as `enum` or as `oneOf`/`anyOf` of `const`s
/// (schemars writes the latter when variants have doc comments).
fn enum_values(p: &Value) -> Option<Vec<String>> {
    if let Some(values) = p["enum"].as_array() {
        return Some(
            values
                .iter()
                .filter(|v| !v.is_null())
                .map(Value::to_string)
                .collect(),
        );
    }
    let alternatives = p["oneOf"].as_array().or_else(|| p["anyOf"].as_array())?;
    let mut values = Vec::new();
    // An optional enumeration nests the variants' alternatives inside an `anyOf` with null.
    for a in alternatives.iter().filter(|a| a["type"] != "null") {
        match a.get("const") {
            Some(c) => values.push(c.to_string()),
            None => values.extend(enum_values(a)?),
        }
    }
    Some(values).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Demo {
        /// A path.
        path: String,
        /// How many.
        limit: Option<u32>,
    }

    #[test]
    fn schema_is_an_inline_object() {
        let s = schema_for::<Demo>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], serde_json::json!(["path"]));
        assert!(s.get("$schema").is_none());
    }

    /// What to do, as a staged-edit tool would take it.
    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Action {
        /// Keep it.
        Accept,
        /// Drop it.
        Discard,
    }

    #[allow(dead_code)]
    #[derive(serde::Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Bounded {
        /// Which action.
        action: Action,
        /// What to do afterwards, if anything.
        then: Option<Action>,
        /// First line, 1-based.
        #[schemars(range(min = 1))]
        offset: Option<usize>,
        /// How many, 1 to 1000.
        #[schemars(range(min = 1, max = 1000))]
        max_results: Option<u32>,
        /// Any signed count.
        delta: i32,
    }

    #[test]
    fn usage_errors_spell_out_enumerations_and_bounds() {
        let schema = schema_for::<Bounded>();
        assert_eq!(schema["properties"]["offset"]["minimum"], 1);
        insta::assert_snapshot!(describe_schema(&schema));
    }

    #[test]
    fn unknown_fields_are_answered_by_the_schema_alone() {
        let detail = "unknown field `file`, expected one of `file_path`, `path`".to_string();
        assert_eq!(without_field_list(detail), "unknown field `file`");
        let detail = "unknown variant `keep`, expected `accept` or `discard`".to_string();
        assert_eq!(without_field_list(detail.clone()), detail);
    }

    #[test]
    fn schema_description_quotes_fields() {
        let d = describe_schema(&schema_for::<Demo>());
        assert_eq!(d, "{\"limit\": integer >= 0, \"path\": string (required)}");
    }
}
