//! Every tool a real run registers has an input schema that follows the MCP rules for tool
//! input schemas and tells the truth: the bounds it states are the ones the tool enforces,
//! and every value of an enumeration is accepted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{call, open, write};
use serde_json::{Map, Value, json};

/// The JSON Schema type names.
const TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];

/// Valid arguments for each tool that has a bounded or enumerated argument, so the bound can be
/// tried on a call that would otherwise succeed. A new tool with such an argument must be added.
/// Tools whose calls need a language server, which this workspace has none of.
const NEEDS_A_SERVER: &[&str] = &["lsp_rename", "lsp_fix"];

fn base_args(tool: &str) -> Option<Value> {
    match tool {
        "read" => Some(json!({"path": "a.txt"})),
        "ast_grep" => Some(json!({"pattern": "print($X)", "path": "a.py"})),
        "resolve" => Some(json!({"edit_id": "edit_404"})),
        "lsp" => Some(json!({"action": "status", "line": 1})),
        "lsp_rename" => Some(json!({"file": "a.py", "line": 1, "symbol": "x", "new_name": "y"})),
        "lsp_fix" => Some(json!({"file": "a.py", "action": 1})),
        "debug" => Some(json!({"action": "status"})),
        "eval" => Some(json!({"code": "1", "description": "a schema check"})),
        _ => None,
    }
}

/// Checks one schema node and everything under it; `at` names it in failures.
fn check_node(node: &Value, at: &str) {
    let Some(obj) = node.as_object() else {
        panic!("{at}: a schema must be an object, got {node}");
    };
    match obj.get("type") {
        None => {}
        Some(Value::String(t)) => assert!(TYPES.contains(&t.as_str()), "{at}: type {t}"),
        Some(Value::Array(ts)) => {
            assert!(!ts.is_empty(), "{at}: empty type list");
            for t in ts {
                assert!(TYPES.contains(&t.as_str().unwrap_or("?")), "{at}: type {t}");
            }
        }
        Some(other) => panic!("{at}: type must be a string or a list, got {other}"),
    }
    for key in ["minimum", "maximum"] {
        if let Some(v) = obj.get(key) {
            assert!(v.is_number(), "{at}: {key} {v}");
        }
    }
    if let Some(props) = obj.get("properties") {
        let props = props
            .as_object()
            .unwrap_or_else(|| panic!("{at}: properties"));
        for (name, p) in props {
            check_node(p, &format!("{at}.{name}"));
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(list) = obj.get(key) {
            for (i, p) in list.as_array().unwrap().iter().enumerate() {
                check_node(p, &format!("{at}/{key}[{i}]"));
            }
        }
    }
    if let Some(items) = obj.get("items") {
        check_node(items, &format!("{at}[]"));
    }
}

/// The values an enumerated property allows, written either way schemars writes them.
fn enum_values(p: &Value) -> Vec<Value> {
    if let Some(values) = p["enum"].as_array() {
        return values.clone();
    }
    let alternatives = p["oneOf"].as_array().or_else(|| p["anyOf"].as_array());
    alternatives
        .map(|a| a.iter().filter_map(|x| x.get("const").cloned()).collect())
        .unwrap_or_default()
}

fn with(base: &Value, name: &str, value: Value) -> Value {
    let mut args: Map<String, Value> = base.as_object().unwrap().clone();
    args.insert(name.to_string(), value);
    Value::Object(args)
}

#[tokio::test]
async fn every_registered_schema_follows_the_mcp_rules_and_its_own_bounds() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\ntwo\n");
    write(dir.path(), "a.py", "print(1)\n");
    let run = open(dir.path());
    let specs = run.runtime().tools(tether::Surface::Agent);
    assert!(specs.len() >= 7, "{specs:?}");
    let mut bounds_tried = 0;
    for spec in &specs {
        let tool = spec.name.as_str();
        let schema = &spec.input_schema;
        assert_eq!(schema["type"], "object", "{tool}: MCP wants an object");
        let props = schema["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{tool}: no properties"));
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap();
            assert!(
                props.contains_key(name),
                "{tool}: required {name} is no property"
            );
        }
        assert_eq!(
            schema["additionalProperties"], false,
            "{tool}: unknown fields are refused, so the schema must say so"
        );
        check_node(schema, tool);

        for (name, p) in props {
            let min = p["minimum"].as_i64();
            let max = p["maximum"].as_i64();
            let values = enum_values(p);
            if min.is_none() && max.is_none() && values.is_empty() {
                continue;
            }
            let base = base_args(tool)
                .unwrap_or_else(|| panic!("{tool}.{name} is bounded: add valid base args"));
            for value in &values {
                let r = call(&run, tool, with(&base, name, value.clone())).await;
                if let Err(e) = r {
                    assert!(!e.is_usage(), "{tool}.{name} = {value} is refused: {e}");
                }
            }
            if let Some(min) = min {
                let r = call(&run, tool, with(&base, name, json!(min))).await;
                // A tool that needs a language server may fail here, but never over this field.
                let fine = match &r {
                    Ok(_) => true,
                    Err(e) => NEEDS_A_SERVER.contains(&tool) && !e.to_string().contains(name),
                };
                assert!(fine, "{tool}.{name} = {min} (the minimum) fails: {r:?}");
                if min > 0 {
                    let r = call(&run, tool, with(&base, name, json!(min - 1))).await;
                    assert!(
                        r.is_err(),
                        "{tool}.{name} = {} is below the minimum",
                        min - 1
                    );
                }
                bounds_tried += 1;
            }
            if let Some(max) = max {
                let r = call(&run, tool, with(&base, name, json!(max))).await;
                assert!(
                    r.is_ok(),
                    "{tool}.{name} = {max} (the maximum) fails: {r:?}"
                );
                let r = call(&run, tool, with(&base, name, json!(max + 1))).await;
                assert!(
                    r.is_err(),
                    "{tool}.{name} = {} is above the maximum",
                    max + 1
                );
                bounds_tried += 1;
            }
        }
    }
    // read's offset and limit, ast_grep's max_results (both ends).
    assert!(bounds_tried >= 4, "{bounds_tried}");
}

#[tokio::test]
async fn usage_errors_quote_canonical_names_enumerations_and_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let run = open(dir.path());
    let err = call(
        &run,
        "resolve",
        json!({"edit_id": "edit_1", "action": "keep"}),
    )
    .await
    .unwrap_err();
    assert!(err.is_usage());
    insta::assert_snapshot!("resolve_bad_action", err.to_string());
    let err = call(&run, "read", json!({"file": "a.txt", "offset": 1}))
        .await
        .unwrap_err();
    insta::assert_snapshot!("read_unknown_field", err.to_string());
    let err = call(&run, "edit", json!({"file_path": "a.txt", "path": "a.txt"}))
        .await
        .unwrap_err();
    assert!(err.is_usage(), "{err}");
    assert!(err.to_string().contains("duplicate field `path`"), "{err}");
}
