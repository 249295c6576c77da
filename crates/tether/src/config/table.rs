//! Dotted keys over TOML tables: look-up, key-by-key merging, and the part of a table whose
//! keys pass a filter (what an untrusted or a trusted workspace file may set).

use toml::{Table, Value};

/// The part of `table` whose dotted leaf keys `keep` accepts; a table left empty is dropped.
pub(super) fn only(table: &Table, prefix: &str, keep: &dyn Fn(&str) -> bool) -> Table {
    let mut out = Table::new();
    for (k, v) in table {
        let key = dotted(prefix, k);
        match v {
            Value::Table(t) => {
                let inner = only(t, &key, keep);
                if !inner.is_empty() {
                    out.insert(k.clone(), Value::Table(inner));
                }
            }
            _ if keep(&key) => {
                out.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    out
}

/// Merges `over` into `base` key by key; tables merge recursively, anything else is replaced.
pub(super) fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The value at a dotted key.
pub(super) fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// Every leaf as its dotted key and its value as written, in the table's order.
pub(super) fn leaves(table: &Table, prefix: &str, out: &mut Vec<(String, String)>) {
    for (k, v) in table {
        let key = dotted(prefix, k);
        match v {
            Value::Table(t) => leaves(t, &key, out),
            _ => out.push((key, v.to_string())),
        }
    }
}

fn dotted(prefix: &str, key: &str) -> String {
    match prefix {
        "" => key.to_string(),
        p => format!("{p}.{key}"),
    }
}
