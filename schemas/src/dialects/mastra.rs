//! # `mastra` — Mastra's tracing exported over OpenTelemetry (`@mastra/otel-exporter`)
//!
//! Mastra (0.x) names its spans by `mastra.span.type` and sets `gen_ai.operation.name` to its
//! own values: `agent.run` for an agent run, `tool.execute` for a tool call, `model.step` and
//! `model.chunk` inside a model generation. The first two are corrected to the GenAI operations
//! they are (`invoke_agent`, `execute_tool`), replacing Mastra's value (the one place a vendor
//! dialect outranks the canonical name: [`Transform::Correct`]); the step and chunk spans keep
//! theirs. A tool span records the arguments in `gen_ai.tool.input` and what the MCP client
//! returned in `gen_ai.tool.output`: the whole `CallToolResult` when it has `content`, but only
//! its `structuredContent` when the server sent one (then the result's shape is not observable).
//! The generic `input` / `output` attributes of every Mastra span are content.
//!
//! Not read: no span carries a tool call id, the tools shown to the model, or a tool's MCP
//! annotations, and a tool approval (`requireApproval`) is a `chunk: 'tool-call-approval'`
//! span in a run that is never ended (its agent span is not exported), so it is not joined to
//! the resumed run that executes the call.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping, Transform};
use crate::schema::col;

/// `gen_ai.operation.name` `op` for spans whose `mastra.span.type` is `span_type`.
const fn operation(span_type: &'static str, op: &'static str) -> Mapping {
    Mapping::when_equals(
        "mastra.span.type",
        span_type,
        col::GEN_AI_OPERATION_NAME,
        Transform::Correct(op),
    )
}

pub(super) static MASTRA: Dialect = Dialect {
    id: "mastra",
    description: "Mastra tracing (OpenTelemetry exporter)",
    detect: Detect {
        scope_prefixes: &["@mastra/"],
        markers: &["mastra.span.type"],
    },
    mappings: &[
        operation("tool_call", "execute_tool"),
        operation("agent_run", "invoke_agent"),
    ],
    content: &[
        ContentSource::new("gen_ai.tool.input", ContentRole::ToolArguments),
        ContentSource::new("gen_ai.tool.output", ContentRole::ToolResult),
        ContentSource::new("input", ContentRole::Opaque),
        ContentSource::new("output", ContentRole::Opaque),
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn mastras_own_operation_names_are_corrected() {
        let tool = lifted(
            "@mastra/otel",
            "tool.execute lookup_supplier",
            &[
                ("gen_ai.operation.name", "tool.execute"),
                ("mastra.span.type", "tool_call"),
                ("gen_ai.tool.name", "lookup_supplier"),
            ],
        );
        assert_lifted(
            &tool,
            &[
                (col::GEN_AI_OPERATION_NAME, Some("execute_tool")),
                (col::GEN_AI_TOOL_NAME, Some("lookup_supplier")),
            ],
        );
        let run = lifted(
            "@mastra/otel",
            "agent.warehouse-assistant",
            &[
                ("gen_ai.operation.name", "agent.run"),
                ("mastra.span.type", "agent_run"),
            ],
        );
        assert_lifted(&run, &[(col::GEN_AI_OPERATION_NAME, Some("invoke_agent"))]);
        let step = lifted(
            "@mastra/otel",
            "step: 0",
            &[
                ("gen_ai.operation.name", "model.step"),
                ("mastra.span.type", "model_step"),
            ],
        );
        assert_lifted(&step, &[(col::GEN_AI_OPERATION_NAME, Some("model.step"))]);
        // another library's `gen_ai.operation.name` is never corrected
        let other = lifted(
            "x",
            "t",
            &[("gen_ai.operation.name", "tool.execute"), ("k", "v")],
        );
        assert_lifted(
            &other,
            &[(col::GEN_AI_OPERATION_NAME, Some("tool.execute"))],
        );
    }
}
