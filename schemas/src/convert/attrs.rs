//! Attribute maps: OTLP `KeyValue` lists into `Map<Utf8, Struct<type, str, int, double, bool,
//! bytes>>` columns, built directly into Arrow buffers (no intermediate rows).
//!
//! Keys are unique per map (DuckDB refuses repeated keys): when a sender repeats a key, the *last*
//! value wins, at the position of the key's last occurrence. Arrays and key/value lists are kept
//! in `str` in OTLP/JSON `AnyValue` form so they round-trip exactly.

use std::sync::Arc;

use arrow::array::BooleanBufferBuilder;
use arrow::array::{
    ArrayRef, BinaryBuilder, BooleanArray, MapArray, PrimitiveArray, StringArray, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{ArrowPrimitiveType, DataType, Fields, Float64Type, Int64Type};
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
    let mut out = Vec::with_capacity(attrs.len());
    dedup_attributes_into(attrs, &mut out);
    out
}

/// [`dedup_attributes`] into `out` (cleared first): the converter refills one vector for every
/// span instead of allocating one per span.
pub fn dedup_attributes_into<'a>(
    attrs: &'a [KeyValue],
    out: &mut Vec<(&'a str, Option<&'a AnyValue>)>,
) {
    out.clear();
    let n = attrs.len();
    if n <= 32 {
        for (i, kv) in attrs.iter().enumerate() {
            if !attrs[i + 1..]
                .iter()
                .any(|later| same_key(&later.key, &kv.key))
            {
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
}

/// Whether two attribute names are equal. Names of one span often share their length and
/// their prefix (`gen_ai.request.model`, `gen_ai.response.id`...), rarely their last byte:
/// checking it first answers most pairs without calling `memcmp` (the pairwise comparison
/// above was 1.2% of the converter thread's time, BENCHMARKS.md session 32).
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// The type of an entry's value: an index into [`TYPE_NAMES`] (one byte per entry instead of
/// a string appended per entry; the `type` column is written from these at [`AttrMapBuilder::finish`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Ty {
    String,
    Bool,
    Int,
    Double,
    Bytes,
    Array,
    Kvlist,
    Empty,
}

/// The `type` names, indexed by [`Ty`].
const TYPE_NAMES: [&str; 8] = [
    value_type::STRING,
    value_type::BOOL,
    value_type::INT,
    value_type::DOUBLE,
    value_type::BYTES,
    value_type::ARRAY,
    value_type::KVLIST,
    value_type::EMPTY,
];

/// `len` as an Arrow `i32` offset; over 2 GiB is a panic, as in Arrow's own builders (the
/// converter turns it into a refused request, never a crash).
fn offset(len: usize) -> i32 {
    i32::try_from(len).expect("byte array offset overflow")
}

/// Builds one attribute-map column.
///
/// Why not Arrow's builders per field: an entry has six value fields of which one is set, and a
/// builder call per field per entry (four `append_null`s for every string attribute) was most of
/// the converter's cost. Here an entry appends its key, a type byte and its one value; the
/// `str` field keeps an offset per entry and the rarely set `int`/`double`/`bool`/`bytes` fields
/// keep only the entries that have them; validity and the other slots are filled in once, at
/// [`finish`](Self::finish). The resource's and scope's attributes, which repeat on every row,
/// are not maps since schema 2 but one JSON text per row ([`crate::encode::attributes_json`]).
#[derive(Debug, Clone)]
pub struct AttrMapBuilder {
    offsets: Vec<i32>,
    validity: Vec<bool>,
    key_data: Vec<u8>,
    /// One offset per entry, plus the leading 0.
    key_offsets: Vec<i32>,
    types: Vec<Ty>,
    str_data: Vec<u8>,
    /// One offset per entry (an entry without a string repeats the previous offset), plus the
    /// leading 0.
    str_offsets: Vec<i32>,
    /// (entry, value) of the entries of type `int`.
    ints: Vec<(usize, i64)>,
    doubles: Vec<(usize, f64)>,
    bools: Vec<(usize, bool)>,
    /// (entry, start, end) in `bytes_data`.
    bytes: Vec<(usize, usize, usize)>,
    bytes_data: Vec<u8>,
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
        let mut key_offsets = Vec::with_capacity(entries + 1);
        key_offsets.push(0);
        let mut str_offsets = Vec::with_capacity(entries + 1);
        str_offsets.push(0);
        AttrMapBuilder {
            offsets,
            validity: Vec::with_capacity(rows),
            // Keys are short; string values are not known in advance.
            key_data: Vec::with_capacity(guessed_bytes(entries, 20)),
            key_offsets,
            types: Vec::with_capacity(entries),
            str_data: Vec::with_capacity(guessed_bytes(entries, 16)),
            str_offsets,
            ints: Vec::new(),
            doubles: Vec::new(),
            bools: Vec::new(),
            bytes: Vec::new(),
            bytes_data: Vec::new(),
            scratch: String::new(),
        }
    }

    /// Entries appended so far.
    fn entries(&self) -> usize {
        self.types.len()
    }

    fn push_key(&mut self, key: &str) {
        self.key_data.extend_from_slice(key.as_bytes());
        self.key_offsets.push(offset(self.key_data.len()));
    }

    fn push_str(&mut self, text: &str) {
        self.str_data.extend_from_slice(text.as_bytes());
        self.str_offsets.push(offset(self.str_data.len()));
    }

    fn push_no_str(&mut self) {
        self.str_offsets.push(offset(self.str_data.len()));
    }

    /// Appends one entry to the current row.
    pub fn entry(&mut self, key: &str, v: Option<&AnyValue>) {
        self.push_key(key);
        let index = self.entries();
        let ty = match v.and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(s)) => {
                self.push_str(s);
                self.types.push(Ty::String);
                return;
            }
            Some(Value::BoolValue(b)) => {
                self.bools.push((index, *b));
                Ty::Bool
            }
            Some(Value::IntValue(i)) => {
                self.ints.push((index, *i));
                Ty::Int
            }
            Some(Value::DoubleValue(d)) => {
                self.doubles.push((index, *d));
                Ty::Double
            }
            Some(Value::BytesValue(b)) => {
                let start = self.bytes_data.len();
                self.bytes_data.extend_from_slice(b);
                self.bytes.push((index, start, self.bytes_data.len()));
                Ty::Bytes
            }
            Some(arr @ (Value::ArrayValue(_) | Value::KvlistValue(_))) => {
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                // Encoded from the borrowed value: cloning it first copied the whole tree.
                if let Some(any) = v {
                    encode_any_value_json(any, &mut scratch);
                }
                self.push_str(&scratch);
                self.scratch = scratch;
                self.types.push(if matches!(arr, Value::ArrayValue(_)) {
                    Ty::Array
                } else {
                    Ty::Kvlist
                });
                return;
            }
            // Absent value, or the profiling-only string-table index (which OTLP says to treat
            // as absent outside profiles).
            Some(Value::StringValueStrindex(_)) | None => Ty::Empty,
        };
        self.push_no_str();
        self.types.push(ty);
    }

    /// Appends a string entry.
    pub fn entry_str(&mut self, key: &str, text: &str) {
        self.push_key(key);
        self.push_str(text);
        self.types.push(Ty::String);
    }

    /// Ends the current row (a valid, possibly empty map).
    pub fn end_row(&mut self) {
        self.offsets.push(offset(self.entries()));
        self.validity.push(true);
    }

    /// Appends a null map.
    pub fn null_row(&mut self) {
        self.offsets.push(offset(self.entries()));
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

    /// The `type`, `str`, `int`, `double`, `bool` and `bytes` fields of the entries, in that
    /// order; resets them.
    fn finish_values(&mut self) -> Result<Vec<ArrayRef>, SchemaError> {
        let n = self.entries();
        let types = std::mem::take(&mut self.types);

        let mut type_data = Vec::with_capacity(n * 6);
        let mut type_offsets = Vec::with_capacity(n + 1);
        type_offsets.push(0i32);
        for t in &types {
            type_data.extend_from_slice(TYPE_NAMES[*t as usize].as_bytes());
            type_offsets.push(offset(type_data.len()));
        }
        let type_array = StringArray::try_new(
            OffsetBuffer::new(type_offsets.into()),
            type_data.into(),
            None,
        )?;

        let has_str = |t: &Ty| matches!(t, Ty::String | Ty::Array | Ty::Kvlist);
        let str_nulls = if types.iter().all(has_str) {
            None
        } else {
            Some(NullBuffer::from_iter(types.iter().map(has_str)))
        };
        let str_offsets = std::mem::replace(&mut self.str_offsets, vec![0]);
        let str_array = StringArray::try_new(
            OffsetBuffer::new(str_offsets.into()),
            std::mem::take(&mut self.str_data).into(),
            str_nulls,
        )?;

        let int_array = dense::<Int64Type>(n, &std::mem::take(&mut self.ints))?;
        let double_array = dense::<Float64Type>(n, &std::mem::take(&mut self.doubles))?;

        let bools = std::mem::take(&mut self.bools);
        let mut bool_values = BooleanBufferBuilder::new(n);
        bool_values.append_n(n, false);
        for &(i, v) in &bools {
            bool_values.set_bit(i, v);
        }
        let bool_array = BooleanArray::new(
            bool_values.finish(),
            sparse_nulls(n, bools.iter().map(|(i, _)| *i)),
        );

        let bytes = std::mem::take(&mut self.bytes);
        let bytes_data = std::mem::take(&mut self.bytes_data);
        let mut bytes_builder = BinaryBuilder::with_capacity(n, bytes_data.len());
        let mut next = 0;
        for &(i, s, e) in &bytes {
            bytes_builder.append_nulls(i - next);
            bytes_builder.append_value(&bytes_data[s..e]);
            next = i + 1;
        }
        bytes_builder.append_nulls(n - next);

        self.key_offsets.truncate(1);
        Ok(vec![
            Arc::new(type_array) as ArrayRef,
            Arc::new(str_array),
            Arc::new(int_array),
            Arc::new(double_array),
            Arc::new(bool_array),
            Arc::new(bytes_builder.finish()),
        ])
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
        let keys = StringArray::try_new(
            OffsetBuffer::new(std::mem::replace(&mut self.key_offsets, vec![0]).into()),
            std::mem::take(&mut self.key_data).into(),
            None,
        )?;
        let values = StructArray::try_new(value_fields, self.finish_values()?, None)?;
        let entries = StructArray::try_new(
            entry_fields,
            vec![Arc::new(keys) as ArrayRef, Arc::new(values)],
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

/// The validity of a field set only at the entries `set` (ascending) of `n`: `None` when every
/// entry has it, as Arrow's builders leave it.
/// `n` values of which only the `(entry, value)` pairs of `set` are valid (the others null).
fn dense<T: ArrowPrimitiveType>(
    n: usize,
    set: &[(usize, T::Native)],
) -> Result<PrimitiveArray<T>, arrow::error::ArrowError> {
    let mut values = vec![T::Native::default(); n];
    for &(i, v) in set {
        values[i] = v;
    }
    PrimitiveArray::<T>::try_new(values.into(), sparse_nulls(n, set.iter().map(|(i, _)| *i)))
}

fn sparse_nulls(n: usize, set: impl ExactSizeIterator<Item = usize>) -> Option<NullBuffer> {
    if set.len() == n {
        return None;
    }
    let mut bits = BooleanBufferBuilder::new(n);
    bits.append_n(n, false);
    for i in set {
        bits.set_bit(i, true);
    }
    Some(NullBuffer::new(bits.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Float64Type, Int64Type};
    use opentelemetry_proto::tonic::common::v1::ArrayValue;

    fn any(v: Value) -> AnyValue {
        AnyValue { value: Some(v) }
    }

    /// The last value of a repeated name wins, at its last position, in both the pairwise and
    /// the hashed path; names of one length that differ only before their last byte, or only
    /// in it, stay apart. The vector handed in is cleared first.
    #[test]
    fn dedup_keeps_the_last_of_each_name() {
        let kv = |k: &str, v: i64| KeyValue {
            key: k.into(),
            value: Some(any(Value::IntValue(v))),
            ..Default::default()
        };
        let keys = |out: &[(&str, Option<&AnyValue>)]| -> Vec<(String, i64)> {
            out.iter()
                .map(|(k, v)| {
                    let Some(Value::IntValue(n)) = v.and_then(|v| v.value.as_ref()) else {
                        panic!("an int");
                    };
                    (k.to_string(), *n)
                })
                .collect()
        };
        let attrs = vec![
            kv("gen_ai.a.x", 1),
            kv("gen_ai.b.x", 2),
            kv("gen_ai.a.y", 3),
            kv("gen_ai.a.x", 4),
        ];
        let mut out = vec![("stale", None)];
        dedup_attributes_into(&attrs, &mut out);
        let want = vec![
            ("gen_ai.b.x".to_string(), 2),
            ("gen_ai.a.y".to_string(), 3),
            ("gen_ai.a.x".to_string(), 4),
        ];
        assert_eq!(keys(&out), want);
        // more than 32 attributes: the hashed path, same answer
        let mut many: Vec<KeyValue> = (0..40).map(|i| kv(&format!("k{i:02}"), i)).collect();
        many.extend(attrs.iter().cloned());
        let deduped = dedup_attributes(&many);
        assert_eq!(deduped.len(), 43);
        assert_eq!(keys(&deduped[40..]), want);
    }

    /// Every value type lands in its field with the right validity, two rows of the same entries
    /// read alike, and null and empty rows keep their offsets.
    #[test]
    fn every_value_type_and_repeated_rows() {
        let values = [
            any(Value::StringValue("s".into())),
            any(Value::BoolValue(true)),
            any(Value::IntValue(-7)),
            any(Value::DoubleValue(1.5)),
            any(Value::BytesValue(vec![1, 2])),
            any(Value::ArrayValue(ArrayValue {
                values: vec![any(Value::IntValue(1))],
            })),
            AnyValue { value: None },
        ];
        let keys = [
            "k_str", "k_bool", "k_int", "k_double", "k_bytes", "k_arr", "k_empty",
        ];
        let attrs: Vec<(&str, Option<&AnyValue>)> =
            keys.iter().copied().zip(values.iter().map(Some)).collect();

        let mut b = AttrMapBuilder::with_capacity(4, 0);
        b.row_from_unique(&attrs);
        b.null_row();
        b.row_from_unique(&attrs);
        b.end_row();
        let map = b.finish().expect("finish");
        let map = map.as_map();
        assert_eq!(map.len(), 4);
        assert_eq!(map.value_offsets(), &[0, 7, 7, 14, 14]);
        assert!(map.is_valid(0) && map.is_null(1) && map.is_valid(2) && map.is_valid(3));

        let entries = map.entries();
        let key = entries.column(0).as_string::<i32>();
        let v = entries.column(1).as_struct();
        let ty = v.column(0).as_string::<i32>();
        let s = v.column(1).as_string::<i32>();
        let i = v.column(2).as_primitive::<Int64Type>();
        let d = v.column(3).as_primitive::<Float64Type>();
        let bo = v.column(4).as_boolean();
        let by = v.column(5).as_binary::<i32>();
        for row in [0, 7] {
            let at = |n: usize| row + n;
            for (n, k) in keys.iter().enumerate() {
                assert_eq!(key.value(at(n)), *k);
            }
            let types: Vec<&str> = (0..7).map(|n| ty.value(at(n))).collect();
            assert_eq!(
                types,
                ["string", "bool", "int", "double", "bytes", "array", "empty"]
            );
            let str_valid: Vec<bool> = (0..7).map(|n| s.is_valid(at(n))).collect();
            assert_eq!(str_valid, [true, false, false, false, false, true, false]);
            assert_eq!(s.value(at(0)), "s");
            assert_eq!(
                s.value(at(5)),
                r#"{"arrayValue":{"values":[{"intValue":"1"}]}}"#
            );
            let only =
                |valid: &dyn Fn(usize) -> bool, n: usize| (0..7).all(|m| valid(at(m)) == (m == n));
            assert!(only(&|x| bo.is_valid(x), 1) && bo.value(at(1)));
            assert!(only(&|x| i.is_valid(x), 2) && i.value(at(2)) == -7);
            assert!(only(&|x| d.is_valid(x), 3) && d.value(at(3)) == 1.5);
            assert!(only(&|x| by.is_valid(x), 4) && by.value(at(4)) == [1, 2]);
        }
    }
}
