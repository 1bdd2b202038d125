//! Attribute maps: OTLP `KeyValue` lists into `Map<Utf8, Struct<type, str, int, double, bool,
//! bytes>>` columns, built directly into Arrow buffers (no intermediate rows).
//!
//! Keys are unique per map (DuckDB refuses repeated keys): when a sender repeats a key, the *last*
//! value wins, at the position of the key's last occurrence. Arrays and key/value lists are kept
//! in `str` in OTLP/JSON `AnyValue` form so they round-trip exactly.

use std::sync::Arc;

use arrow::array::{
    ArrayBuilder, ArrayRef, BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder, MapArray,
    StringBuilder, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Fields};
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};

use super::builder::guessed_bytes;
use crate::encode::encode_any_value_json;
use crate::error::SchemaError;
use crate::schema::{attribute_map_type, value};

/// Value type names stored in the `type` field.
pub mod value_type {
    pub const STRING: &str = "string";
    pub const BOOL: &str = "bool";
    pub const INT: &str = "int";
    pub const DOUBLE: &str = "double";
    pub const BYTES: &str = "bytes";
    pub const ARRAY: &str = "array";
    pub const KVLIST: &str = "kvlist";
    pub const EMPTY: &str = "empty";
}

/// Text stored in place of redacted content.
pub const REDACTED: &str = "[redacted]";

/// Returns the attributes with unique keys (last value wins, at its last position).
pub fn dedup_attributes(attrs: &[KeyValue]) -> Vec<(&str, Option<&AnyValue>)> {
    let n = attrs.len();
    let mut out = Vec::with_capacity(n);
    if n <= 32 {
        for (i, kv) in attrs.iter().enumerate() {
            if !attrs[i + 1..].iter().any(|later| later.key == kv.key) {
                out.push((kv.key.as_str(), kv.value.as_ref()));
            }
        }
    } else {
        let mut last = std::collections::HashMap::with_capacity(n);
        for (i, kv) in attrs.iter().enumerate() {
            last.insert(kv.key.as_str(), i);
        }
        for (i, kv) in attrs.iter().enumerate() {
            if last.get(kv.key.as_str()) == Some(&i) {
                out.push((kv.key.as_str(), kv.value.as_ref()));
            }
        }
    }
    out
}

/// Builds one attribute-map column.
pub struct AttrMapBuilder {
    offsets: Vec<i32>,
    validity: Vec<bool>,
    keys: StringBuilder,
    types: StringBuilder,
    strs: StringBuilder,
    ints: Int64Builder,
    doubles: Float64Builder,
    bools: BooleanBuilder,
    bytes: BinaryBuilder,
    scratch: String,
}

impl Default for AttrMapBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl AttrMapBuilder {
    pub fn new() -> Self {
        Self::with_capacity(0, 0)
    }

    /// Sized for `rows` maps holding `entries` entries in all (an estimate; more still fit).
    pub fn with_capacity(rows: usize, entries: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        AttrMapBuilder {
            offsets,
            validity: Vec::with_capacity(rows),
            // Keys and type names are short; string values are not known in advance.
            keys: StringBuilder::with_capacity(entries, guessed_bytes(entries, 20)),
            types: StringBuilder::with_capacity(entries, guessed_bytes(entries, 6)),
            strs: StringBuilder::with_capacity(entries, guessed_bytes(entries, 16)),
            ints: Int64Builder::with_capacity(entries),
            doubles: Float64Builder::with_capacity(entries),
            bools: BooleanBuilder::with_capacity(entries),
            bytes: BinaryBuilder::with_capacity(entries, 0),
            scratch: String::new(),
        }
    }

    /// Appends one entry to the current row.
    pub fn entry(&mut self, key: &str, v: Option<&AnyValue>) {
        self.keys.append_value(key);
        let (ty, s, i, d, b, by): (&str, Option<&str>, _, _, _, Option<&[u8]>) = match v
            .and_then(|v| v.value.as_ref())
        {
            Some(Value::StringValue(s)) => (value_type::STRING, Some(s), None, None, None, None),
            Some(Value::BoolValue(b)) => (value_type::BOOL, None, None, None, Some(*b), None),
            Some(Value::IntValue(i)) => (value_type::INT, None, Some(*i), None, None, None),
            Some(Value::DoubleValue(d)) => (value_type::DOUBLE, None, None, Some(*d), None, None),
            Some(Value::BytesValue(b)) => (value_type::BYTES, None, None, None, None, Some(b)),
            Some(arr @ (Value::ArrayValue(_) | Value::KvlistValue(_))) => {
                self.scratch.clear();
                // Encoded from the borrowed value: cloning it first copied the whole tree.
                if let Some(any) = v {
                    encode_any_value_json(any, &mut self.scratch);
                }
                let ty = if matches!(arr, Value::ArrayValue(_)) {
                    value_type::ARRAY
                } else {
                    value_type::KVLIST
                };
                self.types.append_value(ty);
                self.strs.append_value(&self.scratch);
                self.ints.append_null();
                self.doubles.append_null();
                self.bools.append_null();
                self.bytes.append_null();
                return;
            }
            // Absent value, or the profiling-only string-table index (which OTLP says to treat
            // as absent outside profiles).
            Some(Value::StringValueStrindex(_)) | None => {
                (value_type::EMPTY, None, None, None, None, None)
            }
        };
        self.types.append_value(ty);
        self.strs.append_option(s);
        self.ints.append_option(i);
        self.doubles.append_option(d);
        self.bools.append_option(b);
        self.bytes.append_option(by);
    }

    /// Appends a string entry.
    pub fn entry_str(&mut self, key: &str, text: &str) {
        self.keys.append_value(key);
        self.types.append_value(value_type::STRING);
        self.strs.append_value(text);
        self.ints.append_null();
        self.doubles.append_null();
        self.bools.append_null();
        self.bytes.append_null();
    }

    /// Ends the current row (a valid, possibly empty map).
    pub fn end_row(&mut self) {
        self.offsets.push(self.keys.len() as i32);
        self.validity.push(true);
    }

    /// Appends a null map.
    pub fn null_row(&mut self) {
        self.offsets.push(self.keys.len() as i32);
        self.validity.push(false);
    }

    /// Appends a whole row from an OTLP attribute list (deduplicated).
    pub fn row_from(&mut self, attrs: &[KeyValue]) {
        self.row_from_unique(&dedup_attributes(attrs));
    }

    /// Appends a whole row from attributes whose keys are already unique
    /// ([`dedup_attributes`]).
    pub fn row_from_unique(&mut self, attrs: &[(&str, Option<&AnyValue>)]) {
        for &(k, v) in attrs {
            self.entry(k, v);
        }
        self.end_row();
    }

    /// Builds the `MapArray` and resets the builder.
    pub fn finish(&mut self) -> Result<ArrayRef, SchemaError> {
        let DataType::Map(entries_field, sorted) = attribute_map_type() else {
            return Err(SchemaError::ColumnType {
                column: "attributes",
                expected: "Map".into(),
                found: attribute_map_type().to_string(),
            });
        };
        let DataType::Struct(entry_fields) = entries_field.data_type().clone() else {
            return Err(SchemaError::ColumnType {
                column: "attributes",
                expected: "Map<Struct>".into(),
                found: entries_field.data_type().to_string(),
            });
        };
        let value_fields: Fields = match entry_fields[1].data_type() {
            DataType::Struct(f) => f.clone(),
            other => {
                return Err(SchemaError::ColumnType {
                    column: "attributes",
                    expected: "Struct value".into(),
                    found: other.to_string(),
                })
            }
        };
        debug_assert_eq!(value_fields[0].name(), value::TYPE);
        let values = StructArray::try_new(
            value_fields,
            vec![
                Arc::new(self.types.finish()) as ArrayRef,
                Arc::new(self.strs.finish()),
                Arc::new(self.ints.finish()),
                Arc::new(self.doubles.finish()),
                Arc::new(self.bools.finish()),
                Arc::new(self.bytes.finish()),
            ],
            None,
        )?;
        let entries = StructArray::try_new(
            entry_fields,
            vec![Arc::new(self.keys.finish()) as ArrayRef, Arc::new(values)],
            None,
        )?;
        let offsets = OffsetBuffer::new(std::mem::replace(&mut self.offsets, vec![0]).into());
        let validity = std::mem::take(&mut self.validity);
        let nulls = if validity.iter().all(|v| *v) {
            None
        } else {
            Some(NullBuffer::from(validity))
        };
        Ok(Arc::new(MapArray::try_new(
            entries_field,
            offsets,
            entries,
            nulls,
            sorted,
        )?))
    }
}
