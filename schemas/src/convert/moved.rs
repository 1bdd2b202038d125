//! Attributes kept in their typed column only (schema 2).
//!
//! Why: instrumentation that follows the semantic conventions sends most of a GenAI span's
//! attributes under the very names the registry lifts into typed columns (`gen_ai.tool.name`,
//! `mcp.method.name`, `gen_ai.usage.input_tokens`...). Kept in the generic `attributes` map as
//! well, each cost every row seven more Parquet leaves with their levels: on the benchmark load
//! the map was 31% of the collector's Parquet write, and the analyzer decoded it whole to learn
//! its keys. Such an attribute is now stored once, in its column, and the row's
//! `attributes_in_columns` bitmask (bit `i`: the column [`crate::lift::IN_COLUMNS_BITS`] names
//! at `i`) says which registry attributes were sent, so the round trip restores them and the
//! analyzer still sees every key that was sent.
//!
//! Only an exact copy moves: the key is the registry's name for the column and the column holds
//! the value as sent (a string in a text column, an integer in an integer column, an array of
//! strings in a list column). Anything a dialect renamed, coerced or corrected stays in the map,
//! so nothing is lost.

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};

use crate::dialects::KeyFacts;
use crate::lift::{SlotValue, N_SLOTS};

/// Removes from `attrs` every attribute its lifted column holds whole and returns the
/// `attributes_in_columns` mask of those removed. `facts[i]` are the [`KeyFacts`] of `attrs[i]`:
/// they carry each name's registry slot and bit, looked up once per distinct name.
pub fn move_into_columns(
    attrs: &mut Vec<(&str, Option<&AnyValue>)>,
    facts: &[KeyFacts],
    lifted: &[Option<SlotValue<'_>>; N_SLOTS],
) -> i64 {
    debug_assert_eq!(attrs.len(), facts.len());
    let mut mask = 0i64;
    let mut kept = 0;
    for i in 0..attrs.len() {
        let (_, value) = attrs[i];
        let moved = facts
            .get(i)
            .and_then(KeyFacts::in_columns)
            .filter(|&(slot, _)| holds_whole(value, lifted[slot].as_ref()));
        match moved {
            Some((_, bit)) => mask |= 1i64 << bit,
            None => {
                attrs[kept] = attrs[i];
                kept += 1;
            }
        }
    }
    attrs.truncate(kept);
    mask
}

/// Whether the lifted `column` value is exactly the attribute's `value`.
fn holds_whole(value: Option<&AnyValue>, column: Option<&SlotValue<'_>>) -> bool {
    match (value.and_then(|v| v.value.as_ref()), column) {
        (Some(Value::StringValue(s)), Some(SlotValue::Str(c))) => same_text(s, c),
        (Some(Value::IntValue(i)), Some(SlotValue::Int(c))) => i == c,
        (Some(Value::ArrayValue(a)), Some(SlotValue::List(c))) => {
            a.values.len() == c.len()
                && a.values.iter().zip(c).all(
                    |(v, c)| matches!(&v.value, Some(Value::StringValue(s)) if same_text(s, c)),
                )
        }
        _ => false,
    }
}

/// Whether `a` and `b` hold the same text. A lifted string nearly always borrows the very
/// attribute it came from, so the same address and length answer without reading the bytes:
/// comparing them byte by byte was 2.2% of the converter thread's time under the 16 × 1,000
/// load, most of it on prompts and tool results (BENCHMARKS.md, session 32).
fn same_text(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::ArrayValue;

    use super::*;
    use crate::lift::{in_columns_bit, slot_index, IN_COLUMNS_BITS, SLOTS};
    use crate::schema::col;

    fn any(v: Value) -> AnyValue {
        AnyValue { value: Some(v) }
    }

    /// Only exact copies under the registry's name move; renamed, coerced or differing values
    /// stay in the map.
    #[test]
    fn only_exact_copies_of_registry_attributes_move() {
        let tool = slot_index(col::GEN_AI_TOOL_NAME).expect("slot");
        let tokens = slot_index(col::GEN_AI_USAGE_INPUT_TOKENS).expect("slot");
        let reasons = slot_index(col::GEN_AI_RESPONSE_FINISH_REASONS).expect("slot");
        let request = slot_index(col::JSONRPC_REQUEST_ID).expect("slot");
        let model = slot_index(col::GEN_AI_REQUEST_MODEL).expect("slot");
        let mut lifted: [Option<SlotValue>; N_SLOTS] = std::array::from_fn(|_| None);
        lifted[tool] = Some(SlotValue::Str("search".into()));
        lifted[tokens] = Some(SlotValue::Int(42));
        lifted[reasons] = Some(SlotValue::List(vec!["stop".into()]));
        // an integer request id lifted into a text column: a coercion, not a copy
        lifted[request] = Some(SlotValue::Str("7".into()));
        // a value a dialect chose over the registry attribute's
        lifted[model] = Some(SlotValue::Str("from-another-attribute".into()));

        let tool_v = any(Value::StringValue("search".into()));
        let tokens_v = any(Value::IntValue(42));
        let reasons_v = any(Value::ArrayValue(ArrayValue {
            values: vec![any(Value::StringValue("stop".into()))],
        }));
        let request_v = any(Value::IntValue(7));
        let model_v = any(Value::StringValue("gpt".into()));
        let custom_v = any(Value::StringValue("x".into()));
        let mut attrs = vec![
            ("gen_ai.tool.name", Some(&tool_v)),
            ("acme.custom", Some(&custom_v)),
            ("gen_ai.usage.input_tokens", Some(&tokens_v)),
            ("gen_ai.response.finish_reasons", Some(&reasons_v)),
            ("jsonrpc.request.id", Some(&request_v)),
            ("gen_ai.request.model", Some(&model_v)),
        ];
        let engine = crate::dialects::DialectEngine::get();
        let facts: Vec<KeyFacts> = attrs.iter().map(|(k, _)| engine.key_facts(k)).collect();
        let mask = move_into_columns(&mut attrs, &facts, &lifted);
        let bit = |slot| 1i64 << in_columns_bit(slot).expect("a bit");
        assert_eq!(mask, bit(tool) | bit(tokens) | bit(reasons));
        let kept: Vec<&str> = attrs.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kept,
            ["acme.custom", "jsonrpc.request.id", "gen_ai.request.model"]
        );
        let names: Vec<&str> = crate::lift::attributes_in_columns(mask)
            .map(|s| s.attribute)
            .collect();
        assert_eq!(
            names,
            [
                "gen_ai.response.finish_reasons",
                "gen_ai.usage.input_tokens",
                "gen_ai.tool.name"
            ]
        );
    }

    /// Every lifted column has exactly one bit, and the order is the one schema-2 files were
    /// written with (the first bits, pinned: a new lifted column only appends).
    #[test]
    fn every_lifted_column_has_one_pinned_bit() {
        for (slot, s) in SLOTS.iter().enumerate() {
            assert!(
                in_columns_bit(slot).is_some(),
                "append `{}` to lift::IN_COLUMNS_BITS",
                s.column
            );
        }
        let mut sorted = IN_COLUMNS_BITS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), IN_COLUMNS_BITS.len(), "a column listed twice");
        assert_eq!(
            IN_COLUMNS_BITS.len(),
            N_SLOTS,
            "a listed column is not lifted"
        );
        assert_eq!(IN_COLUMNS_BITS[14], "gen_ai_tool_name");
        assert_eq!(IN_COLUMNS_BITS[15], "gen_ai_tool_call_id");
        assert_eq!(IN_COLUMNS_BITS[32], "guardrail_decision");
    }
}
