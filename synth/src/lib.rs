//! Synthetic GenAI / MCP spans as OTLP messages, written once for everything in the workspace
//! that needs spans without running agents: the load generator (`bench`), the samples' scale mode
//! and the tests.
//!
//! - [`rng`]: the one pseudo-random generator (SplitMix64), so a seed gives the same spans on
//!   every machine;
//! - [`kv`]: the OTLP attribute builders;
//! - [`agent_turns`]: whole agent turns (`invoke_agent` > `chat`, guardrails, `execute_tool` >
//!   MCP `tools/call` client > server) in export requests of exactly the asked size.
//!
//! It depends only on the OTLP message types, not on `schemas`, so `schemas`' own tests can use
//! it.

pub mod agent_turns;
pub mod kv;
pub mod rng;

pub use agent_turns::{span_count, RequestBuilder, SpanMix, SPANS_PER_TURN};
pub use rng::{splitmix64, SplitMix64};
