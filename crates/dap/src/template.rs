//! Placeholders in an adapter's command and its `launch` and `attach` templates: checked when
//! the catalog is built, so a typo is said at start-up rather than sent to an adapter.

use std::path::Path;

use serde_json::{Value, json};
use tether_tool::SettingError;

use crate::error::NoValue;

/// Which template a placeholder stands in; each knows different values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Launch,
    Attach,
}

impl Context {
    /// The catalog key of the template.
    pub fn key(self) -> &'static str {
        match self {
            Context::Launch => "launch",
            Context::Attach => "attach",
        }
    }

    fn known(self) -> &'static [&'static str] {
        match self {
            Context::Launch => &[
                "program",
                "program_dir",
                "args",
                "cwd",
                "python",
                "init_commands",
            ],
            Context::Attach => &["port", "cwd", "python", "init_commands"],
        }
    }
}

/// Placeholders whose value is a list or number: they must stand alone in their string.
const WHOLE: &[&str] = &["args", "init_commands", "port"];

/// The values a template is filled with.
pub struct Values<'a> {
    pub program: Option<&'a Path>,
    pub args: &'a [String],
    pub cwd: &'a Path,
    pub port: Option<u16>,
    pub python: Option<&'a str>,
    pub init_commands: &'a [String],
}

/// Each `{name}` in `text` (lowercase letters and `_`), with where it stands.
fn names(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let open = from + text[from..].find('{')?;
            let close = open + text[open..].find('}')?;
            from = open + 1;
            let name = &text[open + 1..close];
            if !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                from = close + 1;
                return Some((open, close + 1, name));
            }
        }
    })
}

/// Calls `each` on every string in `value`, stopping at its first error.
fn strings<E>(value: &Value, each: &mut dyn FnMut(&str) -> Result<(), E>) -> Result<(), E> {
    match value {
        Value::String(s) => each(s),
        Value::Array(items) => items.iter().try_for_each(|v| strings(v, each)),
        Value::Object(map) => map.values().try_for_each(|v| strings(v, each)),
        _ => Ok(()),
    }
}

/// Whether a template names `{python}`.
pub fn mentions_python(value: &Value) -> bool {
    strings(
        value,
        &mut |s| match names(s).any(|(_, _, n)| n == "python") {
            true => Err(()),
            false => Ok(()),
        },
    )
    .is_err()
}

/// Every placeholder in `template` is one `what` fills, and a list or number stands alone.
pub fn check(template: &Value, what: Context) -> Result<(), SettingError> {
    let known = what.known();
    strings(template, &mut |s| {
        for (start, end, name) in names(s) {
            if !known.contains(&name) {
                let all: Vec<String> = known.iter().map(|k| format!("{{{k}}}")).collect();
                return Err(SettingError::rule(
                    match ["port", "program", "program_dir", "args"].contains(&name) {
                        true => format!("{{{name}}} has no value in `{}`", what.key()),
                        false => format!(
                            "unknown placeholder {{{name}}}; known are {}",
                            all.join(", ")
                        ),
                    },
                ));
            }
            if WHOLE.contains(&name) && (start, end) != (0, s.len()) {
                return Err(SettingError::rule(format!(
                    "{{{name}}} is a list or number: give it as the whole value (\"{{{name}}}\")"
                )));
            }
        }
        Ok(())
    })
}

/// An adapter's command may name `{binary}` and `{python}` only.
pub fn check_command(command: &[String]) -> Result<(), SettingError> {
    for part in command {
        if let Some((_, _, name)) = names(part).find(|(_, _, n)| !["binary", "python"].contains(n))
        {
            return Err(SettingError::rule(format!(
                "unknown placeholder {{{name}}}; known are {{binary}} and {{python}}"
            )));
        }
    }
    Ok(())
}

/// `template` with its placeholders filled from `values`.
pub fn render(template: &Value, values: &Values) -> Result<Value, NoValue> {
    Ok(match template {
        Value::String(s) => fill(s, values)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render(v, values))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render(v, values)?)))
                .collect::<Result<_, NoValue>>()?,
        ),
        other => other.clone(),
    })
}

fn fill(s: &str, v: &Values) -> Result<Value, NoValue> {
    let missing = |name: &str| NoValue(name.to_string());
    let whole = |name: &str| -> Result<Option<Value>, NoValue> {
        Ok(match name {
            "args" => Some(json!(v.args)),
            "init_commands" => Some(json!(v.init_commands)),
            "port" => Some(json!(v.port.ok_or_else(|| missing("port"))?)),
            _ => None,
        })
    };
    let mut out = String::new();
    let mut at = 0;
    for (start, end, name) in names(s) {
        if (start, end) == (0, s.len())
            && let Some(value) = whole(name)?
        {
            return Ok(value);
        }
        let text = match name {
            "program" => v
                .program
                .ok_or_else(|| missing(name))?
                .display()
                .to_string(),
            "program_dir" => {
                let program = v.program.ok_or_else(|| missing(name))?;
                program.parent().unwrap_or(program).display().to_string()
            }
            "cwd" => v.cwd.display().to_string(),
            "python" => v.python.ok_or_else(|| missing(name))?.to_string(),
            "port" => v.port.ok_or_else(|| missing(name))?.to_string(),
            _ => return Err(missing(name)),
        };
        out.push_str(&s[at..start]);
        out.push_str(&text);
        at = end;
    }
    out.push_str(&s[at..]);
    Ok(Value::String(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn placeholders_become_their_values_and_types() {
        let template = json!({"program": "{program}", "dir": "{program_dir}", "args": "{args}",
            "cwd": "{cwd}", "python": ["{python}"], "at": "host:{port}", "port": "{port}",
            "init": "{init_commands}", "plain": "{not a placeholder}", "n": 3});
        let args = vec!["a".to_string(), "b c".to_string()];
        let values = Values {
            program: Some(Path::new("/w/src/app.py")),
            args: &args,
            cwd: Path::new("/w"),
            port: Some(5678),
            python: Some("/w/.venv/bin/python"),
            init_commands: &[],
        };
        assert_eq!(
            render(&template, &values).unwrap(),
            json!({"program": "/w/src/app.py", "dir": "/w/src", "args": ["a", "b c"],
                "cwd": "/w", "python": ["/w/.venv/bin/python"], "at": "host:5678", "port": 5678,
                "init": [], "plain": "{not a placeholder}", "n": 3})
        );
        assert!(mentions_python(&template));
        assert!(!mentions_python(&json!({"a": "{program}"})));
    }

    #[test]
    fn checks_name_what_is_wrong() {
        let launch = Context::Launch;
        assert!(check(&json!({"p": "{program}", "a": "{args}"}), launch).is_ok());
        let glued = check(&json!({"a": "--{args}"}), launch)
            .unwrap_err()
            .to_string();
        assert!(glued.contains("{args} is a list or number"), "{glued}");
        let port = check(&json!({"p": "{port}"}), launch).unwrap_err();
        assert_eq!(port.to_string(), "{port} has no value in `launch`");
        assert!(check(&json!({"p": "{program}"}), Context::Attach).is_err());
        assert!(check_command(&["{binary}".into(), "{python}".into()]).is_ok());
        assert!(check_command(&["{bin}".into()]).is_err());
    }
}
