//! Tool definitions ([`ToolDef`], declared in [`crate::tool_def`]) as the rules need them, from `gen_ai.tool.definitions` (function-calling form,
//! possibly nested under `"function"`), from an MCP `tools/list` result (`inputSchema`,
//! `outputSchema`, `annotations`), whose tools may be the pydantic `str()` of the SDK's `Tool`
//! (OpenLIT's Python instrumentation), or from Pydantic AI's `model_request_parameters`
//! (`{"function_tools": [{name, parameters_json_schema, metadata: {annotations}}]}`: the tools
//! shown to the model, an MCP tool's annotations carried in its metadata).

use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::Value;

use super::digest::json_digest;

pub use crate::tool_def::ToolDef;

/// How many distinct definition lists each thread remembers. An agent sends the same catalog on
/// every model call of a run (the synthetic load: one list per agent system), so a request of
/// hundreds of chat spans repeats a handful of lists.
const CACHE_ENTRIES: usize = 8;
/// Lists longer than this are parsed every time and never kept: the cache holds at most
/// `CACHE_ENTRIES` x this many bytes of text per thread.
const CACHE_MAX_TEXT: usize = 256 * 1024;

/// A definition text and what it parsed to (None: not a JSON list).
type Parsed = (Box<str>, Option<Vec<ToolDef>>);

thread_local! {
    /// The last few definition texts seen by this thread, with what they parsed to.
    static RECENT: RefCell<VecDeque<Parsed>> = const { RefCell::new(VecDeque::new()) };
}

/// The tool definitions in `text` (a JSON list, as `gen_ai.tool.definitions` carries it), or
/// None when it is not a JSON list.
///
/// Parsing the list and digesting every schema costs more than all other facts of a chat span,
/// and the text is the same on every call of an agent: a text seen recently by this thread is
/// answered from a small per-thread cache (compared byte for byte, so equal text gives equal
/// facts by construction).
pub fn tool_defs_from_text(text: &str) -> Option<Vec<ToolDef>> {
    if text.len() > CACHE_MAX_TEXT {
        return parse(text);
    }
    let hit = RECENT.with(|cell| {
        let recent = cell.try_borrow().ok()?;
        recent
            .iter()
            .find(|(t, _)| **t == *text)
            .map(|(_, defs)| defs.clone())
    });
    if let Some(defs) = hit {
        return defs;
    }
    let defs = parse(text);
    RECENT.with(|cell| {
        if let Ok(mut recent) = cell.try_borrow_mut() {
            if recent.len() == CACHE_ENTRIES {
                recent.pop_front();
            }
            recent.push_back((text.into(), defs.clone()));
        }
    });
    defs
}

fn parse(text: &str) -> Option<Vec<ToolDef>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Some(tool_defs_from_list(&items)),
        // Pydantic AI's `ModelRequestParameters`: the function tools are the definitions.
        Ok(Value::Object(o)) => match o.get("function_tools") {
            Some(Value::Array(items)) => Some(tool_defs_from_list(items)),
            _ => gemini_declarations(&o),
        },
        _ => None,
    }
}

/// The function declarations of a Gemini `GenerateContentRequest` (`config.tools[]
/// .function_declarations[]`, as Google ADK records its model request), or None when `request`
/// declares no tools.
fn gemini_declarations(request: &serde_json::Map<String, Value>) -> Option<Vec<ToolDef>> {
    let tools = request.get("config")?.get("tools")?.as_array()?;
    let declarations: Vec<Value> = tools
        .iter()
        .filter_map(|t| t.get("function_declarations")?.as_array())
        .flatten()
        .cloned()
        .collect();
    Some(tool_defs_from_list(&declarations))
}

/// Reads a list of tool definitions; entries that are not objects are skipped. A list of bare
/// tool names (Strands' `gen_ai.agent.tools`) gives definitions with a name only: what the agent
/// could call, nothing about schemas or annotations.
pub fn tool_defs_from_list(items: &[Value]) -> Vec<ToolDef> {
    let names: Option<Vec<&str>> = items
        .iter()
        .map(|i| i.as_str().filter(|n| is_tool_name(n)))
        .collect();
    match names {
        Some(names) if !names.is_empty() => names
            .into_iter()
            .map(|n| ToolDef {
                name: Some(n.to_string()),
                ..ToolDef::default()
            })
            .collect(),
        _ => items.iter().filter_map(tool_def).collect(),
    }
}

/// A bare tool name: no spaces, quotes, `=` or brackets (which a `str()` of a definition has).
fn is_tool_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 256
        && !text
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '=' | '\'' | '"' | '(' | ')' | '{' | '}'))
}

fn tool_def(item: &Value) -> Option<ToolDef> {
    // A tool written as the pydantic `str()` of the SDK's `Tool` (OpenLIT's Python
    // instrumentation): read as the object it shows, when it is exactly that shape.
    if let Value::String(text) = item {
        let fields = super::python_repr::pydantic_fields(text)?;
        return fields
            .contains_key("name")
            .then(|| tool_def(&Value::Object(fields)))
            .flatten();
    }
    let outer = item.as_object()?;
    let def = outer
        .get("function")
        .and_then(Value::as_object)
        .unwrap_or(outer);
    let get = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| def.get(*k).filter(|v| !v.is_null()))
    };
    let input = get(&[
        "inputSchema",
        "input_schema",
        "parameters",
        "parameters_json_schema",
    ]);
    let output = get(&["outputSchema", "output_schema"]);
    // Pydantic AI keeps an MCP tool's annotations in the definition's `metadata`.
    let annotations = get(&["annotations"])
        .or_else(|| get(&["metadata"]).and_then(|m| m.get("annotations")))
        .and_then(Value::as_object);
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

    #[test]
    fn a_tool_as_the_pydantic_str_of_the_sdk_model() {
        let items = vec![
            Value::String("name='adjust_stock' title=None description='d' inputSchema={'type': 'object'} outputSchema={'type': 'object'} icons=None annotations=ToolAnnotations(title=None, readOnlyHint=False, destructiveHint=True, idempotentHint=None, openWorldHint=None) meta=None execution=None".into()),
            Value::String("get_stock_level".into()),
            Value::String("title='no name' inputSchema={}".into()),
        ];
        let defs = tool_defs_from_list(&items);
        assert_eq!(defs.len(), 1, "{defs:?}");
        assert_eq!(defs[0].name.as_deref(), Some("adjust_stock"));
        assert_eq!(defs[0].has_output_schema, Some(true));
        assert_eq!(defs[0].destructive_hint, Some(true));
        assert_eq!(defs[0].read_only_hint, Some(false));
        assert_eq!(defs[0].idempotent_hint, None);
        let json: Value = serde_json::from_str(r#"[{"name":"adjust_stock","description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}]"#).unwrap();
        assert_eq!(
            defs[0].input_schema_digest,
            tool_defs_from_list(json.as_array().unwrap())[0].input_schema_digest,
            "the same schema digests alike in either form"
        );
    }

    #[test]
    fn pydantic_ai_model_request_parameters() {
        let text = r#"{"function_tools":[
            {"name":"adjust_stock","parameters_json_schema":{"type":"object"},"description":"d",
             "metadata":{"meta":null,"annotations":{"title":null,"readOnlyHint":false,"destructiveHint":true,"idempotentHint":null}},
             "return_schema":null},
            {"name":"local","parameters_json_schema":{"type":"object"},"metadata":null}],
            "output_mode":"text"}"#;
        let defs = tool_defs_from_text(text).unwrap();
        assert_eq!(defs.len(), 2);
        assert_eq!(defs[0].name.as_deref(), Some("adjust_stock"));
        assert_eq!(defs[0].read_only_hint, Some(false));
        assert_eq!(defs[0].destructive_hint, Some(true));
        assert_eq!(defs[0].idempotent_hint, None);
        let plain: Value =
            serde_json::from_str(r#"[{"name":"adjust_stock","inputSchema":{"type":"object"}}]"#)
                .unwrap();
        assert_eq!(
            defs[0].input_schema_digest,
            tool_defs_from_list(plain.as_array().unwrap())[0].input_schema_digest
        );
        assert!(!defs[1].is_annotated());
        assert_eq!(tool_defs_from_text(r#"{"output_mode":"text"}"#), None);
    }

    #[test]
    fn a_gemini_request_declares_its_function_tools() {
        let request = r#"{"model":"m","config":{"system_instruction":"x","tools":[
            {"function_declarations":[{"name":"get_stock_level","description":"d",
              "parameters_json_schema":{"type":"object"}},{"name":"lookup_supplier","parameters":{"type":"object"}}]},
            {"google_search":{}}]},"contents":[]}"#;
        let defs = tool_defs_from_text(request).unwrap();
        let names: Vec<_> = defs.iter().map(|d| d.name.as_deref()).collect();
        assert_eq!(names, [Some("get_stock_level"), Some("lookup_supplier")]);
        assert!(defs.iter().all(|d| d.input_schema_digest.is_some()));
        assert_eq!(tool_defs_from_text(r#"{"model":"m","config":{}}"#), None);
    }

    #[test]
    fn a_list_of_bare_names_names_the_tools() {
        let defs = tool_defs_from_text(r#"["get_stock_level","lookup_supplier"]"#).unwrap();
        let names: Vec<_> = defs.iter().map(|d| d.name.as_deref()).collect();
        assert_eq!(names, [Some("get_stock_level"), Some("lookup_supplier")]);
        assert!(defs
            .iter()
            .all(|d| d.input_schema_digest.is_none() && d.has_output_schema.is_none()));
        assert_eq!(tool_defs_from_text("[]"), Some(vec![]));
    }

    /// The cache answers what a parse answers, for hits, misses, evictions and non-lists.
    #[test]
    fn cached_text_gives_the_parsed_facts() {
        let texts: Vec<String> = (0..CACHE_ENTRIES + 3)
            .map(|i| format!(r#"[{{"name":"t{i}","inputSchema":{{"type":"object","n":{i}}}}}]"#))
            .chain(["not json".to_string(), "{\"name\":\"x\"}".to_string()])
            .collect();
        for round in 0..3 {
            for t in texts.iter().chain(texts.iter().rev()) {
                assert_eq!(tool_defs_from_text(t), parse(t), "round {round}: {t}");
            }
        }
        let first = tool_defs_from_text(&texts[0]).unwrap();
        assert_eq!(first[0].name.as_deref(), Some("t0"));
        assert_ne!(
            first[0].input_schema_digest,
            tool_defs_from_text(&texts[1]).unwrap()[0].input_schema_digest
        );
        assert_eq!(tool_defs_from_text("not json"), None);
        let big = format!(
            "[{}]",
            vec![r#"{"name":"b"}"#; CACHE_MAX_TEXT / 8].join(",")
        );
        assert_eq!(tool_defs_from_text(&big).unwrap().len(), CACHE_MAX_TEXT / 8);
    }
}
