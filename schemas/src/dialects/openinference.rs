//! # `openinference` — Arize OpenInference
//!
//! The MCP instrumentation only propagates context; tool spans from the framework
//! instrumentations carry `tool.name` and the payloads in `input.value` / `output.value`.

use super::{ContentRole, ContentSource, Detect, Dialect, Mapping};
use crate::schema::col;

pub(super) static OPENINFERENCE: Dialect = Dialect {
    id: "openinference",
    description: "Arize OpenInference instrumentations",
    detect: Detect {
        scope_prefixes: &["openinference"],
        markers: &["openinference.span.kind", "input.value", "output.value"],
    },
    mappings: &[Mapping::attr("tool.name", col::GEN_AI_TOOL_NAME)],
    content: &[
        ContentSource {
            attr: "input.value",
            role: ContentRole::ToolArguments,
        },
        ContentSource {
            attr: "output.value",
            role: ContentRole::ToolResult,
        },
    ],
};
