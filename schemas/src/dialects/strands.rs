//! # `strands` — AWS Strands Agents (scope `strands.telemetry.tracer`)
//!
//! Strands follows the GenAI semantic conventions for its spans (`invoke_agent`, `chat`,
//! `execute_tool {tool}`), which the `semconv` dialect reads. What is its own: with its default
//! conventions no model span records the tools shown to the model; the agent span lists the
//! agent's tools by name in `gen_ai.agent.tools` (a JSON array of names), read as the run's tool
//! definitions (names only), so TL005 can tell a tool the agent was never given.
//!
//! Not read: the rest of its content is in span events (`gen_ai.tool.message`, `gen_ai.choice`
//! with the tool result), and a tool call stopped for approval (an interrupt raised in a
//! `BeforeToolCallEvent` hook) leaves no span; the interrupt is only text in an event.

use super::{ContentRole, ContentSource, Detect, Dialect};

pub(super) static STRANDS: Dialect = Dialect {
    id: "strands",
    description: "AWS Strands Agents",
    detect: Detect {
        scope_prefixes: &["strands.telemetry"],
        markers: &[],
    },
    mappings: &[],
    content: &[ContentSource {
        attr: "gen_ai.agent.tools",
        role: ContentRole::ToolDefinitions,
    }],
};
