//! # `atlas` — the seed scenarios' custom attributes
//!
//! No convention exists for agent skills or guardrail decisions (seed 004), so the seeds use
//! namespaced custom names: `skill.name`, `skill.version`, `skill.invocation_source`
//! (model|user), `guardrail.name`, `guardrail.decision` (allow|require_approval|block), and the
//! MCP transport as `atlas.mcp.transport` (http|inproc).

use super::{Detect, Dialect, Mapping};
use crate::schema::col;

pub(super) static ATLAS: Dialect = Dialect {
    id: "atlas",
    description:
        "custom attributes of the seed scenarios (skills, guardrails, atlas.mcp.transport)",
    detect: Detect {
        scope_prefixes: &[],
        markers: &["skill.*", "guardrail.*", "atlas.*"],
    },
    mappings: &[
        Mapping::attr("skill.name", col::SKILL_NAME),
        Mapping::attr("skill.version", col::SKILL_VERSION),
        Mapping::attr("skill.invocation_source", col::SKILL_INVOCATION_SOURCE),
        Mapping::attr("guardrail.name", col::GUARDRAIL_NAME),
        Mapping::attr("guardrail.decision", col::GUARDRAIL_DECISION),
        Mapping::attr("atlas.mcp.transport", col::MCP_TRANSPORT),
    ],
    content: &[],
};
