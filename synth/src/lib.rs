//! Synthetic GenAI / MCP spans as OTLP messages, written once for everything in the workspace
//! that needs spans without running agents: the load generator (`bench`), the samples' scale mode
//! and the tests.
//!
//! - [`rng`]: the one pseudo-random generator (SplitMix64), so a seed gives the same spans on
//!   every machine;
//! - [`kv`]: the OTLP attribute builders;
//! - [`span`]: the one span constructor both shapes build on;
//! - [`agent_turns`]: whole agent turns (`invoke_agent` > `chat`, guardrails, `execute_tool` >
//!   MCP `tools/call` client > server) in export requests of exactly the asked size, for the load
//!   generator and the tests;
//! - [`agent_runs`]: agent runs of one to four tool calls over the caller's catalogs, the
//!   samples' scale mode (its datasets are pinned byte for byte).
//!
//! It depends only on the OTLP message types, not on `schemas`, so `schemas`' own tests can use
//! it.

pub mod agent_runs;
pub mod agent_turns;
pub mod kv;
pub mod rng;
pub mod span;

pub use agent_runs::{RunBuilder, RunSystem, RunTool};
pub use agent_turns::{span_count, RequestBuilder, SpanMix, SPANS_PER_TURN};
pub use rng::{splitmix64, SplitMix64};
