//! Stable digests of JSON values, so equal arguments or schemas compare equal across dialects.
//!
//! The digest is XXH64 (seed 0) of the value's canonical JSON: object keys sorted, no whitespace,
//! numbers as serde_json prints them. Object key order and formatting differences between senders
//! (Python's `json.dumps` with spaces, Pydantic without) therefore do not change it.

use std::cell::RefCell;

use serde_json::Value;
use twox_hash::XxHash64;

/// Canonical texts longer than this are not kept in the per-thread scratch buffer after use, so
/// one huge payload does not pin its size in every request thread.
const SCRATCH_KEEP: usize = 64 * 1024;

thread_local! {
    /// Reused for every digest of the thread: a span's arguments and each tool schema would
    /// otherwise allocate (and grow) a fresh buffer per value.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Lowercase 16-hex-digit digest of the canonical JSON of `value`.
pub fn json_digest(value: &Value) -> String {
    let digest = SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            let digest = digest_into(value, &mut buf);
            if buf.capacity() > SCRATCH_KEEP {
                *buf = Vec::new();
            }
            digest
        }
        // Not reachable (nothing digests while digesting); correct anyway.
        Err(_) => digest_into(value, &mut Vec::new()),
    });
    format!("{digest:016x}")
}

/// XXH64 of `value`'s canonical JSON, written into `buf` (cleared first).
fn digest_into(value: &Value, buf: &mut Vec<u8>) -> u64 {
    buf.clear();
    write_canonical_bytes(value, buf);
    XxHash64::oneshot(0, buf)
}

/// Writes `value` as canonical JSON (sorted keys, compact).
pub fn write_canonical(value: &Value, out: &mut String) {
    let mut bytes = Vec::new();
    write_canonical_bytes(value, &mut bytes);
    // serde_json writes valid UTF-8 (escaped strings, numbers, literals).
    out.push_str(&String::from_utf8_lossy(&bytes));
}

/// [`write_canonical`] into bytes: strings are escaped straight into `out` by serde_json's
/// serializer, without a copy of the string or a formatter per value.
fn write_canonical_bytes(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.push(b'{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_string(key, out);
                out.push(b':');
                if let Some(v) = map.get(key.as_str()) {
                    write_canonical_bytes(v, out);
                }
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical_bytes(item, out);
            }
            out.push(b']');
        }
        Value::String(s) => push_string(s, out),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // serde_json's serializer, as `Value`'s Display used it; writing into a Vec cannot fail.
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
    }
}

fn push_string(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail; serde_json escapes exactly as `Value::String`'s Display.
    let _ = serde_json::to_writer(&mut *out, s);
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

    /// The first version of the canonical text, kept as the reference: strings and scalars
    /// written through `Value`'s Display.
    fn reference_canonical(value: &Value, out: &mut String) {
        use std::fmt::Write as _;
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                out.push('{');
                for (i, key) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(out, "{}", Value::String(key.to_string()));
                    out.push(':');
                    reference_canonical(&map[key.as_str()], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    reference_canonical(item, out);
                }
                out.push(']');
            }
            other => {
                let _ = write!(out, "{other}");
            }
        }
    }

    /// The byte writer gives the text (and so the digest) the first version built with
    /// `Value`'s Display (escapes, unicode, numbers, literals), so digests stored before it
    /// compare equal.
    #[test]
    fn canonical_text_is_unchanged() {
        let texts = [
            r#"{"q":"a\"b\\c\n\u0001é😀\u2028","n":[1,-2.5,1e300,0,-0.0,18446744073709551615,-9223372036854775808,true,false,null],"e":{},"l":[]}"#,
            r#"[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"enum":[1,2.5,"x"]}}}}}]"#,
            r#""just a string with \t tab""#,
            "3.14159",
            "{}",
        ];
        for text in texts {
            let v: Value = serde_json::from_str(text).unwrap();
            let (mut new, mut reference) = (String::new(), String::new());
            write_canonical(&v, &mut new);
            reference_canonical(&v, &mut reference);
            assert_eq!(new, reference, "{text}");
            assert_eq!(
                json_digest(&v),
                format!("{:016x}", XxHash64::oneshot(0, reference.as_bytes()))
            );
        }
    }
}
