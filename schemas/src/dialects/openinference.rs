//! # `openinference` — Arize OpenInference
//!
//! The MCP instrumentation only propagates context; tool spans from the framework
//! instrumentations carry `tool.name` and the payloads in `input.value` / `output.value`.
//!
//! An MCP server's tools wrapped with openinference-core's `traceTool` give an INTERNAL span
//! named `{tool}` with `openinference.span.kind=TOOL` whose `input.value` is the handler's
//! arguments *and* the MCP SDK's request-handler `extra` (`[args, {"requestId", "_meta",
//! "signal"}]`). That `extra` is what makes it an MCP `tools/call` handled by a server, so the
//! method, the tool (the span name) and the JSON-RPC request id are lifted only when it is there:
//! a TOOL span of an agent framework in the host stays a plain tool span.
//!
//! The span kinds give the GenAI operation: a TOOL span is an `execute_tool` (a host's, or, when it
//! is where an MCP server's process was entered, the server's side of a `tools/call`: see the
//! analyzer's `model/server_tools.rs`), an LLM span a `chat`. An LLM span lists the tools shown to
//! the model one attribute per tool (`llm.tools.{i}.tool.json_schema`, read together as one list),
//! `llm.model_name` is the model and `session.id` the conversation (LangGraph's thread id).
//! The prompts and completions in `llm.input_messages.*` / `llm.output_messages.*` are content.

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

/// The MCP request handler's `extra` in a TOOL span's recorded input.
const MCP_HANDLER: Option<Condition> =
    Some(Condition::JsonPointerExists("input.value", "/1/requestId"));

pub(super) static OPENINFERENCE: Dialect = Dialect {
    id: "openinference",
    description: "Arize OpenInference instrumentations",
    detect: Detect {
        scope_prefixes: &["openinference"],
        markers: &["openinference.span.kind", "input.value", "output.value"],
    },
    mappings: &[
        span_kind("TOOL", "execute_tool"),
        span_kind("LLM", "chat"),
        Mapping::attr("llm.model_name", col::GEN_AI_REQUEST_MODEL),
        Mapping::attr("session.id", col::GEN_AI_CONVERSATION_ID),
        Mapping::attr("tool.name", col::GEN_AI_TOOL_NAME),
        Mapping {
            source: Source::SpanName("{tool}"),
            target: col::GEN_AI_TOOL_NAME,
            transform: Transform::Capture("tool"),
            when: MCP_HANDLER,
        },
        Mapping {
            source: Source::Attr("input.value"),
            target: col::MCP_METHOD_NAME,
            transform: Transform::Constant("tools/call"),
            when: MCP_HANDLER,
        },
        Mapping {
            source: Source::Attr("input.value"),
            target: col::JSONRPC_REQUEST_ID,
            transform: Transform::JsonPointer("/1/requestId"),
            when: MCP_HANDLER,
        },
    ],
    content: &[
        ContentSource {
            attr: "input.value",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "output.value",
            role: ContentRole::ToolResult,
        },
        ContentSource {
            attr: "llm.tools.*",
            role: ContentRole::ToolDefinitions,
        },
        ContentSource {
            attr: "llm.input_messages.*",
            role: ContentRole::Opaque,
        },
        ContentSource {
            attr: "llm.output_messages.*",
            role: ContentRole::Opaque,
        },
    ],
};

/// `gen_ai.operation.name` `op` for spans of OpenInference span kind `kind`.
const fn span_kind(kind: &'static str, op: &'static str) -> Mapping {
    Mapping::when_equals(
        "openinference.span.kind",
        kind,
        col::GEN_AI_OPERATION_NAME,
        Transform::Constant(op),
    )
}

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn mcp_server_tool_spans_by_their_handler_extra() {
        let got = lifted(
            "openinference-core",
            "get_stock_level",
            &[
                ("openinference.span.kind", "TOOL"),
                (
                    "input.value",
                    r#"[{"sku":"SKU-1001"},{"signal":{},"_meta":{},"requestId":2}]"#,
                ),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, Some("tools/call")),
                (col::GEN_AI_TOOL_NAME, Some("get_stock_level")),
                (col::JSONRPC_REQUEST_ID, Some("2")),
            ],
        );
        // a framework tool span in the host: no MCP handler, so not an MCP span
        let got = lifted(
            "openinference.instrumentation.langchain",
            "search",
            &[
                ("openinference.span.kind", "TOOL"),
                ("tool.name", "search"),
                ("input.value", r#"{"query":"x"}"#),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::MCP_METHOD_NAME, None),
                (col::JSONRPC_REQUEST_ID, None),
                (col::GEN_AI_TOOL_NAME, Some("search")),
                (col::GEN_AI_OPERATION_NAME, Some("execute_tool")),
            ],
        );
    }

    #[test]
    fn llm_spans_are_model_calls_in_their_session() {
        let got = lifted(
            "openinference.instrumentation.langchain",
            "ScriptedChatModel",
            &[
                ("openinference.span.kind", "LLM"),
                ("llm.model_name", "m-1"),
                ("session.id", "thread-1"),
            ],
        );
        assert_lifted(
            &got,
            &[
                (col::GEN_AI_OPERATION_NAME, Some("chat")),
                (col::GEN_AI_REQUEST_MODEL, Some("m-1")),
                (col::GEN_AI_CONVERSATION_ID, Some("thread-1")),
            ],
        );
        let chain = lifted(
            "openinference.instrumentation.langchain",
            "tools",
            &[("openinference.span.kind", "CHAIN")],
        );
        assert_lifted(&chain, &[(col::GEN_AI_OPERATION_NAME, None)]);
    }
}
