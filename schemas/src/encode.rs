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

/// A whole attribute list as one JSON object (the form of `resource_attributes_json` and
/// `scope_attributes_json`): keys unique and in the order given, each value in OTLP/JSON
/// `AnyValue` form, a missing value as `{}` (what the attribute maps store as `empty`).
/// [`crate::decode::decode_attributes_json`] reads it back.
pub fn attributes_json(attrs: &[(&str, Option<&AnyValue>)]) -> String {
    let mut out = String::with_capacity(2 + attrs.len() * 48);
    out.push('{');
    for (i, (key, value)) in attrs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json_string(key, &mut out);
        out.push(':');
        match value {
            Some(v) => encode_any_value_json(v, &mut out),
            None => out.push_str("{}"),
        }
    }
    out.push('}');
    out
}

fn push_json_string(s: &str, out: &mut String) {
    // serde_json's string escaping, without an intermediate Value.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::{
        any_value::Value, AnyValue, ArrayValue, KeyValue, KeyValueList,
    };

    use super::attributes_json;
    use crate::decode::decode_attributes_json;

    fn any(v: Value) -> AnyValue {
        AnyValue { value: Some(v) }
    }

    /// Every value type, keys that need escaping and the order sent survive the JSON text, and
    /// an empty list is `{}`.
    #[test]
    fn attribute_lists_round_trip_through_json_text_in_order() {
        let values = [
            any(Value::StringValue("crm \"notes\" \u{e9}".into())),
            any(Value::BoolValue(true)),
            any(Value::IntValue(-9_007_199_254_740_993)),
            any(Value::DoubleValue(0.1)),
            any(Value::BytesValue(vec![0, 255, 7])),
            any(Value::ArrayValue(ArrayValue {
                values: vec![any(Value::IntValue(1)), any(Value::StringValue("x".into()))],
            })),
            any(Value::KvlistValue(KeyValueList {
                values: vec![KeyValue {
                    key: "inner".into(),
                    value: Some(any(Value::BoolValue(false))),
                    ..Default::default()
                }],
            })),
            AnyValue { value: None },
        ];
        let keys = [
            "z.last.first",
            "b",
            "service.\"quoted\"",
            "d",
            "e\nline",
            "arr",
            "kv",
            "empty",
        ];
        let attrs: Vec<(&str, Option<&AnyValue>)> =
            keys.iter().copied().zip(values.iter().map(Some)).collect();
        let text = attributes_json(&attrs);
        let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(parsed["b"]["boolValue"], true);
        assert_eq!(
            parsed["service.\"quoted\""]["intValue"],
            "-9007199254740993"
        );

        let back = decode_attributes_json(&text).expect("decodes");
        let expected: Vec<KeyValue> = keys
            .iter()
            .zip(&values)
            .map(|(k, v)| KeyValue {
                key: (*k).to_string(),
                value: Some(v.clone()),
                ..Default::default()
            })
            .collect();
        assert_eq!(back, expected);

        assert_eq!(attributes_json(&[]), "{}");
        assert!(decode_attributes_json("{}").expect("empty").is_empty());
        let missing = attributes_json(&[("k", None)]);
        assert_eq!(missing, r#"{"k":{}}"#);
        assert_eq!(
            decode_attributes_json(&missing).expect("decodes")[0].value,
            Some(AnyValue { value: None })
        );
        assert!(decode_attributes_json("[1]").is_err());
    }
}
