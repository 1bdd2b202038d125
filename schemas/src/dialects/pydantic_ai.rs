//! # `pydantic-ai` — Pydantic AI's agent instrumentation (`Agent.instrument_all()`)
//!
//! The agent, model and tool spans follow the GenAI semantic conventions (`invoke_agent`, `chat`,
//! `execute_tool {tool}` with `gen_ai.tool.call.arguments` / `.result`), which the `semconv`
//! dialect reads. What is Pydantic AI's own:
//!
//! - **Approval deferrals.** A tool declared `requires_approval` (or raising `ApprovalRequired`)
//!   is not run: its `execute_tool` span carries `pydantic_ai.tool.deferral.name=ApprovalRequired`
//!   and has no MCP child, the run ends with the deferred request, and once a person approved it
//!   (`DeferredToolResults`) a later run (a new trace, the same `gen_ai.conversation.id`) executes
//!   the call with the same `gen_ai.tool.call.id`. The deferral is stored as `result_type`
//!   `input_required`, the result type of an MCP round that asks for input: the analyzer then
//!   counts it as the question, not as an execution, and the later call of the same tool in the
//!   same conversation as the answered one (TL002). A denied call never runs again.
//! - **Tool annotations.** `gen_ai.tool.definitions` on a model span carries no MCP annotations;
//!   `model_request_parameters` lists the same tools with each MCP tool's annotations in its
//!   `metadata`, so it is read as tool definitions too (its annotations join the span's
//!   definitions by name) and TL006 can judge the tools the model was shown.
//! - **Whole conversations in attributes.** `pydantic_ai.all_messages` (every message of the run)
//!   and `final_result` on `invoke_agent` are content: `--redact-content` replaces them.

use super::{Condition, ContentRole, ContentSource, Detect, Dialect, Mapping, Source, Transform};
use crate::schema::col;

pub(super) static PYDANTIC_AI: Dialect = Dialect {
    id: "pydantic-ai",
    description: "Pydantic AI agent instrumentation",
    detect: Detect {
        scope_prefixes: &["pydantic-ai"],
        markers: &["pydantic_ai.*"],
    },
    mappings: &[Mapping {
        source: Source::Attr("pydantic_ai.tool.deferral.name"),
        target: col::RESULT_TYPE,
        transform: Transform::Constant("input_required"),
        when: Some(Condition::AttrEquals(
            "pydantic_ai.tool.deferral.name",
            "ApprovalRequired",
        )),
    }],
    content: &[
        ContentSource {
            attr: "model_request_parameters",
            role: ContentRole::ToolDefinitions,
        },
        ContentSource {
            attr: "pydantic_ai.all_messages",
            role: ContentRole::Opaque,
        },
        ContentSource {
            attr: "final_result",
            role: ContentRole::Opaque,
        },
    ],
};

#[cfg(test)]
mod tests {
    use crate::dialects::tests_support::{assert_lifted, lifted};
    use crate::schema::col;

    #[test]
    fn an_approval_deferral_is_an_input_round_and_other_deferrals_are_not() {
        let deferred = |name: &str| {
            lifted(
                "pydantic-ai",
                "execute_tool adjust_stock",
                &[
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.tool.name", "adjust_stock"),
                    ("gen_ai.tool.call.id", "call_1_0"),
                    ("pydantic_ai.tool.deferral.name", name),
                ],
            )
        };
        assert_lifted(
            &deferred("ApprovalRequired"),
            &[
                (col::RESULT_TYPE, Some("input_required")),
                (col::GEN_AI_TOOL_NAME, Some("adjust_stock")),
            ],
        );
        // an external execution (`CallDeferred`) asks nobody for approval
        assert_lifted(&deferred("CallDeferred"), &[(col::RESULT_TYPE, None)]);
        // the executed call: no deferral, no result type from the dialect
        let ran = lifted(
            "pydantic-ai",
            "execute_tool adjust_stock",
            &[
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.call.id", "call_1_0"),
            ],
        );
        assert_lifted(&ran, &[(col::RESULT_TYPE, None)]);
    }
}
