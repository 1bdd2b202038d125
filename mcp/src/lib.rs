//! `tripline mcp`: tripline as an MCP server, so an agent (or the person driving one) can ask the
//! span store what broke: the detection rules (`check`), read-only SQL (`query`), one trace as a
//! tree (`trace`), the reports (`report`) and the rule documentation (`explain`).
//!
//! Layout: [`cli`] parses flags and serves over stdio or Streamable HTTP ([`http`], loopback and
//! bearer token by default); [`server`] is the rmcp handler, one span per request
//! ([`telemetry`]); [`tools`] is the registry of tools with their schemas ([`schema`]) and the
//! argument parsing; [`engine`] holds every call into the analyzer, so the analyzer's internals
//! can move without touching the rest; [`sql_guard`] keeps `query` read-only and [`deadline`] within its time limit; [`validate`]
//! checks each result against its tool's output schema; [`policy_path`] keeps caller-given
//! policy paths inside the allowed roots. Every failure of a call is a [`error::ToolError`],
//! answered as an `isError` result.

pub mod cli;
pub mod deadline;
pub mod engine;
pub mod error;
pub mod http;
pub mod policy_path;
pub mod schema;
pub mod server;
pub mod sql_guard;
pub mod telemetry;
pub mod tools;
pub mod validate;

pub use cli::{run, McpArgs};
