//! OTLP attribute builders: `KeyValue`s of a string, an integer, a boolean or a string array.
//! Every synthetic span in the workspace builds its attributes with these, so a span built by a
//! test and one built by the load generator carry attributes of the same shape.

use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::{AnyValue, ArrayValue, KeyValue};

/// `key` = any OTLP value.
pub fn kv(key: &str, value: Value) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        key_strindex: 0,
    }
}

/// `key` = a string.
pub fn kv_str(key: &str, value: impl Into<String>) -> KeyValue {
    kv(key, Value::StringValue(value.into()))
}

/// `key` = an integer.
pub fn kv_int(key: &str, value: i64) -> KeyValue {
    kv(key, Value::IntValue(value))
}

/// `key` = a boolean.
pub fn kv_bool(key: &str, value: bool) -> KeyValue {
    kv(key, Value::BoolValue(value))
}

/// `key` = an array of strings.
pub fn kv_strs(key: &str, values: &[&str]) -> KeyValue {
    let values = values
        .iter()
        .map(|v| AnyValue {
            value: Some(Value::StringValue((*v).to_string())),
        })
        .collect();
    kv(key, Value::ArrayValue(ArrayValue { values }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_land_where_otlp_puts_them() {
        assert_eq!(
            kv_str("a", "b").value.unwrap().value,
            Some(Value::StringValue("b".into()))
        );
        assert_eq!(
            kv_int("n", 3).value.unwrap().value,
            Some(Value::IntValue(3))
        );
        let Some(Value::ArrayValue(a)) = kv_strs("l", &["x", "y"]).value.unwrap().value else {
            panic!("an array")
        };
        assert_eq!(a.values.len(), 2);
    }
}
