//! Stable digests of JSON values, so equal arguments or schemas compare equal across dialects.
//!
//! The digest is XXH64 (seed 0) of the value's canonical JSON: object keys sorted, no whitespace,
//! numbers as serde_json prints them. Object key order and formatting differences between senders
//! (Python's `json.dumps` with spaces, Pydantic without) therefore do not change it.

use std::fmt::Write as _;

use serde_json::Value;
use twox_hash::XxHash64;

/// Lowercase 16-hex-digit digest of the canonical JSON of `value`.
pub fn json_digest(value: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(value, &mut canonical);
    format!("{:016x}", XxHash64::oneshot(0, canonical.as_bytes()))
}

/// Writes `value` as canonical JSON (sorted keys, compact).
pub fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(key, out);
                out.push(':');
                if let Some(v) = map.get(key.as_str()) {
                    write_canonical(v, out);
                }
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(s) => push_string(s, out),
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

fn push_string(s: &str, out: &mut String) {
    let _ = write!(out, "{}", Value::String(s.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_and_spacing_do_not_matter() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": "s"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(json_digest(&a), json_digest(&b));
        let mut s = String::new();
        write_canonical(&a, &mut s);
        assert_eq!(s, r#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
        let c: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[2,1]},"b":1}"#).unwrap();
        assert_ne!(json_digest(&a), json_digest(&c));
        assert_eq!(json_digest(&a).len(), 16);
    }
}
