//! # `vercel-ai` — the Vercel AI SDK's telemetry (`experimental_telemetry: { isEnabled: true }`)
//!
//! The AI SDK (npm `ai`, 5.x and 6.x) records its own `ai.*` spans, scope `ai`, every one named
//! by `ai.operationId`: `ai.generateText` / `ai.streamText` (one agent run: the prompt in, the
//! final text out), `ai.generateText.doGenerate` / `ai.streamText.doStream` (one model call: the
//! messages in `ai.prompt.messages`, the tools shown in `ai.prompt.tools`, an OTLP array of JSON
//! strings) and `ai.toolCall` (one executed tool: `ai.toolCall.name`, `.id`, `.args`, `.result`,
//! the latter the whole `CallToolResult` for a tool from its MCP client). Only a few `gen_ai.*`
//! attributes are set (`gen_ai.system`, usage, model), never `gen_ai.operation.name`: this
//! dialect gives each span its GenAI operation, so the run, its model calls and its tool calls
//! are what the rules read, and the orphaned MCP server spans (its MCP client propagates no trace
//! context) join the `ai.toolCall` they ran for.
//!
//! Not read: tool approvals (`needsApproval`, AI SDK 6) leave no span of their own; the person's
//! answer is only a `tool-approval-response` message inside the next run's `ai.prompt`.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping, Transform};
use crate::schema::col;

/// `gen_ai.operation.name` `op` for spans whose `ai.operationId` is `id`.
const fn operation(id: &'static str, op: &'static str) -> Mapping {
    Mapping::when_equals(
        "ai.operationId",
        id,
        col::GEN_AI_OPERATION_NAME,
        Transform::Constant(op),
    )
}

pub(super) static VERCEL_AI: Dialect = Dialect {
    id: "vercel-ai",
    description: "Vercel AI SDK telemetry",
    detect: Detect {
        scope_prefixes: &[],
        markers: &["ai.operationId", "ai.toolCall.*"],
    },
    mappings: &[
        operation("ai.toolCall", "execute_tool"),
        operation("ai.generateText.doGenerate", "chat"),
        operation("ai.streamText.doStream", "chat"),
        operation("ai.generateObject.doGenerate", "chat"),
        operation("ai.streamObject.doStream", "chat"),
        operation("ai.generateText", "invoke_agent"),
        operation("ai.streamText", "invoke_agent"),
        Mapping::attr("ai.toolCall.name", col::GEN_AI_TOOL_NAME),
        Mapping::attr("ai.toolCall.id", col::GEN_AI_TOOL_CALL_ID),
        Mapping::attr("ai.model.id", col::GEN_AI_REQUEST_MODEL),
        Mapping::attr("ai.telemetry.functionId", col::GEN_AI_AGENT_NAME),
    ],
    content: &[
        ContentSource::new("ai.toolCall.args", ContentRole::ToolArguments),
        ContentSource::new("ai.toolCall.result", ContentRole::ToolResult),
        ContentSource::new("ai.prompt.tools", ContentRole::ToolDefinitions),
        ContentSource::new("ai.prompt", ContentRole::Opaque),
        ContentSource::new("ai.prompt.messages", ContentRole::Opaque),
        ContentSource::new("ai.response.text", ContentRole::Opaque),
        ContentSource::new("ai.response.toolCalls", ContentRole::Opaque),
        ContentSource::new("ai.response.object", ContentRole::Opaque),
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn each_ai_span_gets_its_genai_operation() {
        let tool = lifted(
            "ai",
            "ai.toolCall",
            &[
                ("ai.operationId", "ai.toolCall"),
                ("ai.toolCall.name", "get_stock_level"),
                ("ai.toolCall.id", "call_0_0"),
                ("ai.telemetry.functionId", "warehouse-assistant"),
            ],
        );
        assert_lifted(
            &tool,
            &[
                (col::GEN_AI_OPERATION_NAME, Some("execute_tool")),
                (col::GEN_AI_TOOL_NAME, Some("get_stock_level")),
                (col::GEN_AI_TOOL_CALL_ID, Some("call_0_0")),
                (col::GEN_AI_AGENT_NAME, Some("warehouse-assistant")),
            ],
        );
        let model = lifted(
            "ai",
            "ai.generateText.doGenerate",
            &[
                ("ai.operationId", "ai.generateText.doGenerate"),
                ("ai.model.id", "m-1"),
            ],
        );
        assert_lifted(
            &model,
            &[
                (col::GEN_AI_OPERATION_NAME, Some("chat")),
                (col::GEN_AI_REQUEST_MODEL, Some("m-1")),
            ],
        );
        let run = lifted(
            "ai",
            "ai.streamText",
            &[("ai.operationId", "ai.streamText")],
        );
        assert_lifted(&run, &[(col::GEN_AI_OPERATION_NAME, Some("invoke_agent"))]);
        // an operation id of another library's making is left alone
        let other = lifted("x", "embed", &[("ai.operationId", "ai.embed")]);
        assert_lifted(&other, &[(col::GEN_AI_OPERATION_NAME, None)]);
    }
}
