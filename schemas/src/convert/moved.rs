//! Attributes kept in their typed column only (schema 2).
//!
//! Why: instrumentation that follows the semantic conventions sends most of a GenAI span's
//! attributes under the very names the registry lifts into typed columns (`gen_ai.tool.name`,
//! `mcp.method.name`, `gen_ai.usage.input_tokens`...). Kept in the generic `attributes` map as
//! well, each cost every row seven more Parquet leaves with their levels: on the benchmark load
//! the map was 31% of the collector's Parquet write, and the analyzer decoded it whole to learn
//! its keys. Such an attribute is now stored once, in its column, and the row's
//! `attributes_in_columns` bitmask (bit `i`: slot `i` of [`crate::lift::SLOTS`]) says which
//! registry attributes were sent, so the round trip restores them and the analyzer still sees
//! every key that was sent.
//!
//! Only an exact copy moves: the key is the registry's name for the column and the column holds
//! the value as sent (a string in a text column, an integer in an integer column, an array of
//! strings in a list column). Anything a dialect renamed, coerced or corrected stays in the map,
//! so nothing is lost.

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};

use crate::lift::{registry_slot, SlotValue, N_SLOTS};

/// Removes from `attrs` every attribute its lifted column holds whole and returns the
/// `attributes_in_columns` mask of those removed.
pub fn move_into_columns(
    attrs: &mut Vec<(&str, Option<&AnyValue>)>,
    lifted: &[Option<SlotValue>; N_SLOTS],
) -> i64 {
    let mut mask = 0i64;
    attrs.retain(|&(key, value)| {
        let Some(slot) = registry_slot(key) else {
            return true;
        };
        if !holds_whole(value, lifted[slot].as_ref()) {
            return true;
        }
        mask |= 1i64 << slot;
        false
    });
    mask
}

/// Whether the lifted `column` value is exactly the attribute's `value`.
fn holds_whole(value: Option<&AnyValue>, column: Option<&SlotValue>) -> bool {
    match (value.and_then(|v| v.value.as_ref()), column) {
        (Some(Value::StringValue(s)), Some(SlotValue::Str(c))) => s == c,
        (Some(Value::IntValue(i)), Some(SlotValue::Int(c))) => i == c,
        (Some(Value::ArrayValue(a)), Some(SlotValue::List(c))) => {
            a.values.len() == c.len()
                && a.values
                    .iter()
                    .zip(c)
                    .all(|(v, c)| matches!(&v.value, Some(Value::StringValue(s)) if s == c))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::common::v1::ArrayValue;

    use super::*;
    use crate::lift::{slot_index, SLOTS};
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
        let mask = move_into_columns(&mut attrs, &lifted);
        assert_eq!(mask, (1 << tool) | (1 << tokens) | (1 << reasons));
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

    /// Bit `i` of `attributes_in_columns` is slot `i`: stored in every schema-2 file, so the
    /// order is fixed. A new lifted column gets the next bit (append it here, at the end).
    #[test]
    fn the_bits_of_attributes_in_columns_are_pinned() {
        let names: Vec<&str> = SLOTS.iter().map(|s| s.attribute).collect();
        assert_eq!(
            names,
            [
                "gen_ai.operation.name",
                "gen_ai.provider.name",
                "gen_ai.request.model",
                "gen_ai.response.model",
                "gen_ai.response.id",
                "gen_ai.response.finish_reasons",
                "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens",
                "gen_ai.usage.cache_read.input_tokens",
                "gen_ai.usage.cache_write.input_tokens",
                "gen_ai.usage.reasoning.output_tokens",
                "gen_ai.conversation.id",
                "gen_ai.agent.name",
                "gen_ai.agent.id",
                "gen_ai.tool.name",
                "gen_ai.tool.call.id",
                "gen_ai.tool.type",
                "gen_ai.tool.description",
                "gen_ai.prompt.name",
                "mcp.method.name",
                "mcp.session.id",
                "mcp.protocol.version",
                "mcp.resource.uri",
                "atlas.mcp.transport",
                "jsonrpc.request.id",
                "rpc.response.status_code",
                "network.transport",
                "error.type",
                "skill.name",
                "skill.version",
                "skill.invocation_source",
                "guardrail.name",
                "guardrail.decision",
            ]
        );
    }
}
