//! # `google-adk` — Google's Agent Development Kit (scope `gcp.vertex.agent`)
//!
//! ADK's default telemetry (schema 2) follows the GenAI semantic conventions (`invoke_agent`,
//! `generate_content`, `execute_tool {tool}` with `gen_ai.tool.call.arguments` / `.result` when
//! content capture is on), which the `semconv` dialect reads. What is ADK's own:
//!
//! - **Tool confirmation.** A tool that needs a person's confirmation (`require_confirmation`) is
//!   not run: ADK records an `execute_tool` span whose result is exactly
//!   `{"error": "This tool call requires confirmation, please approve or reject."}` (no MCP span
//!   under it), ends the run, and once the person confirmed, the next run (another trace, the same
//!   session) executes the call with the same `gen_ai.tool.call.id`. That span is stored as
//!   `result_type` `input_required`, the result type of an MCP round that asks for input: the
//!   analyzer counts it as the question, not an execution, and the later call of the same tool
//!   as the answered one (TL002), as it does for Pydantic AI's approval deferrals.
//! - **Legacy attributes** (schema 1, `ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1`): the arguments
//!   in `gcp.vertex.agent.tool_call_args`, the CallToolResult in `gcp.vertex.agent.tool_response`,
//!   whole model requests and responses in `gcp.vertex.agent.llm_request` / `llm_response`. The
//!   model call is the `call_llm` span (no `gen_ai.operation.name`; read as `chat`), the only
//!   one that records the tools shown to the model: in its request, `config.tools[]
//!   .function_declarations`. Its `generate_content` child is the same call seen from the model
//!   client; the rules count a model call nested in another once.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

/// The result ADK records for a tool call that waits for a person's confirmation (Python's
/// `json.dumps` of the dict `functions.py` returns).
const CONFIRMATION_REQUESTED: &str =
    r#"{"error": "This tool call requires confirmation, please approve or reject."}"#;

/// `result_type` `input_required` when `attr` holds the confirmation request.
const fn confirmation_round(attr: &'static str) -> Mapping {
    Mapping::when_equals(
        attr,
        CONFIRMATION_REQUESTED,
        col::RESULT_TYPE,
        Transform::Constant("input_required"),
    )
}

pub(super) static GOOGLE_ADK: Dialect = Dialect {
    id: "google-adk",
    description: "Google Agent Development Kit",
    detect: Detect {
        scope_prefixes: &["gcp.vertex.agent"],
        markers: &["gcp.vertex.agent.*"],
    },
    mappings: &[
        confirmation_round("gen_ai.tool.call.result"),
        confirmation_round("gcp.vertex.agent.tool_response"),
        Mapping {
            source: Source::SpanName("call_llm"),
            target: col::GEN_AI_OPERATION_NAME,
            transform: Transform::Constant("chat"),
            when: None,
        },
    ],
    content: &[
        ContentSource {
            attr: "gcp.vertex.agent.tool_call_args",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "gcp.vertex.agent.tool_response",
            role: ContentRole::ToolResult,
        },
        ContentSource {
            attr: "gcp.vertex.agent.llm_request",
            role: ContentRole::ToolDefinitions,
        },
        ContentSource {
            attr: "gcp.vertex.agent.llm_response",
            role: ContentRole::Opaque,
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::CONFIRMATION_REQUESTED;
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn a_confirmation_request_is_an_input_round_and_an_executed_call_is_not() {
        for attr in ["gen_ai.tool.call.result", "gcp.vertex.agent.tool_response"] {
            let span = |result: &str| {
                lifted(
                    "gcp.vertex.agent",
                    "execute_tool adjust_stock",
                    &[
                        ("gen_ai.operation.name", "execute_tool"),
                        ("gen_ai.tool.name", "adjust_stock"),
                        ("gen_ai.tool.call.id", "call_1_0"),
                        (attr, result),
                    ],
                )
            };
            assert_lifted(
                &span(CONFIRMATION_REQUESTED),
                &[
                    (col::RESULT_TYPE, Some("input_required")),
                    (col::GEN_AI_TOOL_NAME, Some("adjust_stock")),
                ],
            );
            let ran =
                span(r#"{"content": [], "structuredContent": {"on_hand": 39}, "isError": false}"#);
            assert_lifted(&ran, &[(col::RESULT_TYPE, None)]);
            assert_lifted(
                &span(r#"{"error": "This tool call is rejected."}"#),
                &[(col::RESULT_TYPE, None)],
            );
        }
    }

    #[test]
    fn schema_1_call_llm_is_the_model_call() {
        let call = lifted(
            "gcp.vertex.agent",
            "call_llm",
            &[("gen_ai.system", "gcp.vertex.agent")],
        );
        assert_lifted(&call, &[(col::GEN_AI_OPERATION_NAME, Some("chat"))]);
        let other = lifted("other.scope", "call_llm", &[]);
        assert_lifted(&other, &[(col::GEN_AI_OPERATION_NAME, None)]);
    }
}
