//! The liftable columns as slots, and how a raw attribute value is coerced into a column's type.
//!
//! The dialect registry names target columns by name; [`SLOTS`] (every lifted column of the
//! column table, [`crate::columns`], in column order) gives each a slot index and a kind, so the
//! converter fills a fixed-size array per span instead of a map. This sits beside the dialects and
//! the converter, not inside either: the dialect engine fills the slots, the converter builds
//! their columns.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};

use crate::columns::{select_columns, ColumnDef, ColumnType};

/// The Arrow shape of a lifted column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotKind {
    /// `Utf8`.
    Str,
    /// `Int64`.
    Int,
    /// `List<Utf8>`.
    StrList,
}

/// One liftable column.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// Column name in the canonical schema.
    pub column: &'static str,
    /// Its Arrow shape.
    pub kind: SlotKind,
    /// The attribute the registry lists for it (`gen_ai.tool.name`): sent under this name with
    /// exactly the column's value, the attribute is kept in the column only
    /// (`convert::moved`).
    pub attribute: &'static str,
}

impl Slot {
    /// The slot of a lifted column of a liftable type.
    const fn of(c: &ColumnDef) -> Option<Slot> {
        let Some(attribute) = c.lifted_from() else {
            return None;
        };
        let kind = match c.ty {
            ColumnType::Utf8 => SlotKind::Str,
            ColumnType::Int64 => SlotKind::Int,
            ColumnType::Utf8List => SlotKind::StrList,
            // Not liftable; `columns` tests that lifted columns never have another type.
            _ => return None,
        };
        Some(Slot {
            column: c.name,
            kind,
            attribute: attribute.name,
        })
    }
}

/// Every column a dialect mapping may target, in column order.
pub const SLOTS: &[Slot] = select_columns!(
    Slot,
    Slot {
        column: "",
        kind: SlotKind::Str,
        attribute: "",
    },
    |c| Slot::of(c)
);

/// Number of liftable columns.
pub const N_SLOTS: usize = SLOTS.len();

/// The slot whose registry attribute is `key`, if any (each attribute feeds at most one column:
/// `columns` tests it).
pub fn registry_slot(key: &str) -> Option<usize> {
    static BY_ATTRIBUTE: OnceLock<HashMap<&'static str, usize, foldhash::fast::RandomState>> =
        OnceLock::new();
    BY_ATTRIBUTE
        .get_or_init(|| {
            SLOTS
                .iter()
                .enumerate()
                .map(|(i, s)| (s.attribute, i))
                .collect()
        })
        .get(key)
        .copied()
}

/// The lifted columns in the order of their bits in `attributes_in_columns` (bit `i` is
/// `IN_COLUMNS_BITS[i]`). Stored in every schema-2 file, so the order is fixed whatever the
/// column table's order: a new lifted column is appended here (a test fails until it is).
pub const IN_COLUMNS_BITS: &[&str] = &[
    "gen_ai_operation_name",
    "gen_ai_provider_name",
    "gen_ai_request_model",
    "gen_ai_response_model",
    "gen_ai_response_id",
    "gen_ai_response_finish_reasons",
    "gen_ai_usage_input_tokens",
    "gen_ai_usage_output_tokens",
    "gen_ai_usage_cache_read_input_tokens",
    "gen_ai_usage_cache_creation_input_tokens",
    "gen_ai_usage_reasoning_output_tokens",
    "gen_ai_conversation_id",
    "gen_ai_agent_name",
    "gen_ai_agent_id",
    "gen_ai_tool_name",
    "gen_ai_tool_call_id",
    "gen_ai_tool_type",
    "gen_ai_tool_description",
    "gen_ai_prompt_name",
    "mcp_method_name",
    "mcp_session_id",
    "mcp_protocol_version",
    "mcp_resource_uri",
    "mcp_transport",
    "jsonrpc_request_id",
    "rpc_response_status_code",
    "network_transport",
    "error_type",
    "skill_name",
    "skill_version",
    "skill_invocation_source",
    "guardrail_name",
    "guardrail_decision",
];
// Bit `i` of an Int64 (its sign bit unused).
const _: () = assert!(IN_COLUMNS_BITS.len() <= 63);

/// The `attributes_in_columns` bit of each slot (`None` only for a slot missing from
/// [`IN_COLUMNS_BITS`], which a test forbids; such a slot's attribute is never moved).
pub fn in_columns_bit(slot: usize) -> Option<u32> {
    static BITS: OnceLock<Vec<Option<u32>>> = OnceLock::new();
    BITS.get_or_init(|| {
        SLOTS
            .iter()
            .map(|s| {
                IN_COLUMNS_BITS
                    .iter()
                    .position(|c| *c == s.column)
                    .map(|b| b as u32)
            })
            .collect()
    })
    .get(slot)
    .copied()
    .flatten()
}

/// The slots whose bits `mask` (an `attributes_in_columns` value) sets, in bit order.
pub fn attributes_in_columns(mask: i64) -> impl Iterator<Item = &'static Slot> + Clone {
    IN_COLUMNS_BITS
        .iter()
        .enumerate()
        .filter(move |(bit, _)| mask & (1i64 << bit) != 0)
        .filter_map(|(_, column)| slot_index(column).map(|i| &SLOTS[i]))
}

/// Slot index of a column, if it is liftable.
pub fn slot_index(column: &str) -> Option<usize> {
    SLOTS.iter().position(|s| s.column == column)
}

/// A lifted value, already in its column's shape. Text borrows from the request wherever the
/// value is the attribute's own string (most lifted values): a span's dozen lifted strings were
/// each copied into a `String` and freed after the builder had copied them again (2% of the
/// collector's instructions per span, BENCHMARKS.md session 31).
#[derive(Debug, Clone, PartialEq)]
pub enum SlotValue<'a> {
    /// A string column value.
    Str(Cow<'a, str>),
    /// An integer column value.
    Int(i64),
    /// A list-of-strings column value.
    List(Vec<Cow<'a, str>>),
}

/// Coerces a string into `kind`; `None` when it does not fit (e.g. `"abc"` into an Int column).
pub fn coerce_str<'a>(text: impl Into<Cow<'a, str>>, kind: SlotKind) -> Option<SlotValue<'a>> {
    let text = text.into();
    match kind {
        SlotKind::Str => Some(SlotValue::Str(text)),
        SlotKind::Int => parse_int(&text).map(SlotValue::Int),
        SlotKind::StrList => {
            let trimmed = text.trim_start();
            if trimmed.starts_with('[') {
                if let Ok(list) = serde_json::from_str::<Vec<serde_json::Value>>(trimmed) {
                    return Some(SlotValue::List(
                        list.iter()
                            .map(|v| Cow::Owned(json_scalar_text(v)))
                            .collect(),
                    ));
                }
            }
            Some(SlotValue::List(vec![text]))
        }
    }
}

/// Coerces an attribute value into `kind`, borrowing its text where it is a string.
pub fn coerce_any(value: &AnyValue, kind: SlotKind) -> Option<SlotValue<'_>> {
    let v = value.value.as_ref()?;
    match (kind, v) {
        (_, Value::StringValue(s)) => coerce_str(s.as_str(), kind),
        (SlotKind::Int, Value::IntValue(n)) => Some(SlotValue::Int(*n)),
        (SlotKind::Int, Value::DoubleValue(d)) if d.fract() == 0.0 && d.abs() < 9.2e18 => {
            Some(SlotValue::Int(*d as i64))
        }
        (SlotKind::Int, _) => None,
        (SlotKind::Str, other) => scalar_text(other).map(|t| SlotValue::Str(Cow::Owned(t))),
        (SlotKind::StrList, Value::ArrayValue(a)) => Some(SlotValue::List(
            a.values
                .iter()
                .filter_map(|v| v.value.as_ref().and_then(scalar_cow))
                .collect(),
        )),
        (SlotKind::StrList, other) => {
            scalar_text(other).map(|t| SlotValue::List(vec![Cow::Owned(t)]))
        }
    }
}

/// [`scalar_text`], borrowing strings.
fn scalar_cow(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::StringValue(s) => Some(Cow::Borrowed(s.as_str())),
        other => scalar_text(other).map(Cow::Owned),
    }
}

fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    t.parse::<i64>().ok().or_else(|| {
        t.parse::<f64>()
            .ok()
            .filter(|d| d.fract() == 0.0 && d.abs() < 9.2e18)
            .map(|d| d as i64)
    })
}

/// Text of a scalar value: strings as-is, numbers and booleans in decimal / `true`.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(n) => Some(n.to_string()),
        Value::DoubleValue(d) => Some(d.to_string()),
        Value::BoolValue(b) => Some(b.to_string()),
        _ => None,
    }
}

fn json_scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_is_a_schema_column_of_its_kind() {
        use arrow::datatypes::DataType;
        let schema = crate::span_schema();
        for slot in SLOTS {
            let field = schema
                .field_with_name(slot.column)
                .expect("slot column in schema");
            let ok = match slot.kind {
                SlotKind::Str => field.data_type() == &DataType::Utf8,
                SlotKind::Int => field.data_type() == &DataType::Int64,
                SlotKind::StrList => matches!(field.data_type(), DataType::List(_)),
            };
            assert!(ok, "{} has type {}", slot.column, field.data_type());
        }
    }

    #[test]
    fn coercions() {
        assert_eq!(coerce_str("42", SlotKind::Int), Some(SlotValue::Int(42)));
        assert_eq!(coerce_str("4x", SlotKind::Int), None);
        assert_eq!(
            coerce_str("[\"stop\",\"length\"]", SlotKind::StrList),
            Some(SlotValue::List(vec!["stop".into(), "length".into()]))
        );
        assert_eq!(
            coerce_str("stop", SlotKind::StrList),
            Some(SlotValue::List(vec!["stop".into()]))
        );
        let int = AnyValue {
            value: Some(Value::IntValue(7)),
        };
        assert_eq!(
            coerce_any(&int, SlotKind::Str),
            Some(SlotValue::Str("7".into()))
        );
    }
}
