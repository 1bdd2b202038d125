//! Tool definitions ([`ToolDef`], declared in [`crate::tool_def`]) as the rules need them, from `gen_ai.tool.definitions` (function-calling form,
//! possibly nested under `"function"`) or from an MCP `tools/list` result (`inputSchema`,
//! `outputSchema`, `annotations`).

use serde_json::Value;

use super::digest::json_digest;

pub use crate::tool_def::ToolDef;

/// Reads a list of tool definitions; entries that are not objects are skipped.
pub fn tool_defs_from_list(items: &[Value]) -> Vec<ToolDef> {
    items.iter().filter_map(tool_def).collect()
}

fn tool_def(item: &Value) -> Option<ToolDef> {
    let outer = item.as_object()?;
    let def = outer
        .get("function")
        .and_then(Value::as_object)
        .unwrap_or(outer);
    let get = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| def.get(*k).filter(|v| !v.is_null()))
    };
    let input = get(&["inputSchema", "input_schema", "parameters"]);
    let output = get(&["outputSchema", "output_schema"]);
    let annotations = get(&["annotations"]).and_then(Value::as_object);
    let hint = |camel: &str, snake: &str| {
        annotations
            .and_then(|a| a.get(camel).or_else(|| a.get(snake)))
            .and_then(Value::as_bool)
    };
    Some(ToolDef {
        name: get(&["name"]).and_then(Value::as_str).map(str::to_string),
        description: get(&["description"])
            .and_then(Value::as_str)
            .map(str::to_string),
        has_output_schema: Some(output.is_some()),
        read_only_hint: hint("readOnlyHint", "read_only_hint"),
        destructive_hint: hint("destructiveHint", "destructive_hint"),
        idempotent_hint: hint("idempotentHint", "idempotent_hint"),
        open_world_hint: hint("openWorldHint", "open_world_hint"),
        input_schema_digest: input.map(json_digest),
        output_schema_digest: output.map(json_digest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_and_function_forms() {
        let v: Value = serde_json::from_str(
            r#"[{"name":"get_ticket","description":"d","inputSchema":{"type":"object"},
                 "outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
                {"type":"function","function":{"name":"f","parameters":{"type":"object"}}},
                {"type":"function","name":"g","description":"x","parameters":{"type":"object"}},
                7]"#,
        )
        .unwrap();
        let defs = tool_defs_from_list(v.as_array().unwrap());
        assert_eq!(defs.len(), 3);
        assert_eq!(defs[0].name.as_deref(), Some("get_ticket"));
        assert_eq!(defs[0].has_output_schema, Some(true));
        assert_eq!(defs[0].read_only_hint, Some(true));
        assert_eq!(defs[0].destructive_hint, None);
        assert_eq!(defs[0].input_schema_digest, defs[1].input_schema_digest);
        assert_eq!(defs[1].name.as_deref(), Some("f"));
        assert_eq!(defs[1].has_output_schema, Some(false));
        assert_eq!(defs[1].output_schema_digest, None);
        assert_eq!(defs[2].description.as_deref(), Some("x"));
    }
}
