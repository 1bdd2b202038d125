//! Facts derived at ingest from content payloads, in whatever dialect they were recorded.
//!
//! The analyzer's rules read only these columns (plus canonical ones), never vendor attribute
//! names: a tool result is a `CallToolResult` in `gen_ai.tool.call.result`, a JSON-RPC envelope in
//! Traceloop's `mcp.response.value`, `{"result": first text, "is_error"}` in Traceloop's
//! `traceloop.entity.output`, a bare content-block list on FastMCP's wrapper span, the Python
//! `repr` of the SDK's `CallToolResult` (ADOT; read only when the whole text is exactly that
//! shape, see `python_repr`), OpenLIT's `mcp.response.payload`. Each shape yields what it can observe and leaves the rest NULL: Traceloop's client output cannot show
//! `structuredContent`, so `result_has_structured_content` stays NULL there (not observable),
//! never `false` (not healthy, not broken: unknown).
//!
//! Payload JSON is parsed only for spans that carry a content attribute.

pub mod digest;
pub mod input_waits;
mod python_repr;
mod shapes;
pub mod tool_defs;

use serde_json::Value;

use crate::dialects::ContentRole;
pub use tool_defs::ToolDef;

/// Derived facts of one span (each NULL until some payload shows it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derived {
    pub result_has_structured_content: Option<bool>,
    pub result_is_error: Option<bool>,
    pub result_content_types: Option<Vec<String>>,
    pub result_type: Option<&'static str>,
    pub result_text_is_json_object: Option<bool>,
    pub tool_call_arguments_digest: Option<String>,
    pub tool_definitions: Option<Vec<ToolDef>>,
    pub mcp_meta_traceparent: Option<String>,
}

impl Derived {
    /// Records what the payload `text` (in role `role`) shows; facts already known are kept
    /// (payloads are fed highest-precedence dialect first).
    pub fn observe(&mut self, role: ContentRole, text: &str) {
        match role {
            ContentRole::Opaque => {}
            ContentRole::ToolArguments => {
                let value = parse_json_or_string(text);
                match shapes::handler_call(&value) {
                    // `[arguments, extra]` of an MCP request handler: the arguments are the first
                    // element; the rest (request id, `_meta`) differs per call.
                    Some((args, extra)) => {
                        self.set_arguments(args);
                        shapes::observe_meta(self, extra);
                    }
                    None => self.set_arguments(&value),
                }
            }
            ContentRole::ToolResult => {
                let parsed = serde_json::from_str::<Value>(text)
                    .ok()
                    .or_else(|| python_repr::call_tool_result(text));
                let recognised = parsed
                    .as_ref()
                    .is_some_and(|v| shapes::observe_response(self, v));
                if !recognised {
                    // Some result was returned even if we cannot read its shape.
                    self.result_type.get_or_insert("complete");
                }
            }
            ContentRole::Response => {
                if let Ok(v) = serde_json::from_str::<Value>(text) {
                    shapes::observe_response(self, &v);
                }
            }
            ContentRole::Request => {
                if let Ok(v) = serde_json::from_str::<Value>(text) {
                    shapes::observe_request(self, &v);
                }
            }
            ContentRole::ToolDefinitions => {
                if let Some(defs) = tool_defs::tool_defs_from_text(text) {
                    self.add_tool_defs(defs);
                }
            }
        }
    }

    /// Records tool call arguments given as one JSON value.
    pub fn set_arguments(&mut self, arguments: &Value) {
        if self.tool_call_arguments_digest.is_none() {
            self.tool_call_arguments_digest = Some(digest::json_digest(arguments));
        }
    }

    /// Keeps the first list; a later list of the same span (another dialect's record of the
    /// same tools, e.g. Pydantic AI's `model_request_parameters` beside `gen_ai.tool.definitions`)
    /// only adds the annotations the first did not record, by tool name.
    fn add_tool_defs(&mut self, defs: Vec<ToolDef>) {
        let Some(kept) = &mut self.tool_definitions else {
            self.tool_definitions = Some(defs);
            return;
        };
        for def in kept.iter_mut().filter(|d| !d.is_annotated()) {
            if let Some(other) = defs
                .iter()
                .find(|o| o.name.is_some() && o.name == def.name && o.is_annotated())
            {
                def.read_only_hint = other.read_only_hint;
                def.destructive_hint = other.destructive_hint;
                def.idempotent_hint = other.idempotent_hint;
                def.open_world_hint = other.open_world_hint;
            }
        }
    }
}

/// Parses `text` as JSON, or treats it as a JSON string when it is not JSON.
pub(crate) fn parse_json_or_string(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pydantic AI records the tools shown to the model twice on its chat span: in
    /// `gen_ai.tool.definitions` (no annotations) and in `model_request_parameters` (annotations
    /// in each tool's metadata). The span's definitions are the first list with the second's
    /// annotations, whichever order they come in.
    #[test]
    fn a_second_list_adds_the_annotations_the_first_lacks() {
        let semconv = r#"[{"type":"function","name":"adjust_stock","parameters":{"type":"object"}},
                          {"type":"function","name":"get_stock_level","parameters":{"type":"object"}}]"#;
        let pydantic = r#"{"function_tools":[
            {"name":"adjust_stock","parameters_json_schema":{"type":"object"},
             "metadata":{"annotations":{"readOnlyHint":false,"destructiveHint":true}}},
            {"name":"get_stock_level","parameters_json_schema":{"type":"object"},"metadata":null}]}"#;
        for order in [[semconv, pydantic], [pydantic, semconv]] {
            let mut d = Derived::default();
            for text in order {
                d.observe(ContentRole::ToolDefinitions, text);
            }
            let defs = d.tool_definitions.unwrap();
            assert_eq!(defs.len(), 2);
            assert_eq!(defs[0].name.as_deref(), Some("adjust_stock"));
            assert_eq!(defs[0].destructive_hint, Some(true));
            assert_eq!(defs[0].read_only_hint, Some(false));
            assert!(!defs[1].is_annotated());
        }
        // an annotated first list is kept as it is
        let mut d = Derived::default();
        d.observe(
            ContentRole::ToolDefinitions,
            r#"[{"name":"adjust_stock","inputSchema":{},"annotations":{"readOnlyHint":true}}]"#,
        );
        d.observe(ContentRole::ToolDefinitions, pydantic);
        let defs = d.tool_definitions.unwrap();
        assert_eq!(defs[0].read_only_hint, Some(true));
        assert_eq!(defs[0].destructive_hint, None);
    }
}
