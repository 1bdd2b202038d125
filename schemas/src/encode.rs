//! The OTLP/JSON writer for one attribute value: array and key/value-list attribute values are
//! stored in the `str` field of the attribute value struct in the canonical OTLP/JSON `AnyValue`
//! form, so they survive a round trip exactly ([`crate::decode`] reads them back).

use std::fmt::Write as _;

use base64::Engine as _;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue};

/// Appends `value` in canonical OTLP/JSON `AnyValue` form (`{"stringValue":"x"}`,
/// `{"intValue":"5"}`, `{"arrayValue":{"values":[...]}}`) to `out`.
pub fn encode_any_value_json(value: &AnyValue, out: &mut String) {
    use any_value::Value;
    match &value.value {
        None => out.push_str("{}"),
        Some(Value::StringValue(s)) => {
            out.push_str("{\"stringValue\":");
            push_json_string(s, out);
            out.push('}');
        }
        Some(Value::BoolValue(b)) => {
            let _ = write!(out, "{{\"boolValue\":{b}}}");
        }
        Some(Value::IntValue(i)) => {
            let _ = write!(out, "{{\"intValue\":\"{i}\"}}");
        }
        Some(Value::DoubleValue(d)) => {
            out.push_str("{\"doubleValue\":");
            if d.is_nan() {
                out.push_str("\"NaN\"");
            } else if d.is_infinite() {
                out.push_str(if *d > 0.0 {
                    "\"Infinity\""
                } else {
                    "\"-Infinity\""
                });
            } else {
                // serde_json writes the shortest representation that parses back to the same f64.
                out.push_str(
                    &serde_json::Number::from_f64(*d).map_or_else(|| "0".into(), |n| n.to_string()),
                );
            }
            out.push('}');
        }
        Some(Value::BytesValue(b)) => {
            out.push_str("{\"bytesValue\":\"");
            out.push_str(&base64::engine::general_purpose::STANDARD.encode(b));
            out.push_str("\"}");
        }
        Some(Value::StringValueStrindex(i)) => {
            // Profiling-only dictionary reference; keep it visible rather than lose it.
            let _ = write!(out, "{{\"stringValueStrindex\":{i}}}");
        }
        Some(Value::ArrayValue(a)) => {
            out.push_str("{\"arrayValue\":{\"values\":[");
            for (i, v) in a.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode_any_value_json(v, out);
            }
            out.push_str("]}}");
        }
        Some(Value::KvlistValue(l)) => {
            out.push_str("{\"kvlistValue\":{\"values\":[");
            for (i, kv) in l.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"key\":");
                push_json_string(&kv.key, out);
                if let Some(v) = &kv.value {
                    out.push_str(",\"value\":");
                    encode_any_value_json(v, out);
                }
                out.push('}');
            }
            out.push_str("]}}");
        }
    }
}

fn push_json_string(s: &str, out: &mut String) {
    // serde_json's string escaping, without an intermediate Value.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}
