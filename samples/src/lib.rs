//! tripline's sample traces: the four seed systems (CRM assistant, Atlas field service, SWCraft,
//! Tiny-Agent support) played as real agent hosts and real MCP servers, and a fast scale mode.
//!
//! Why it exists: "run against recorded sample traces" is how users first meet tripline, and the
//! analyzer's rules need traces whose breakage is known exactly. The spans come from the real
//! OpenTelemetry Rust SDK (`tracing` + `tracing-opentelemetry` → `opentelemetry_sdk` →
//! `opentelemetry-otlp` over OTLP/HTTP), across a real MCP boundary (`rmcp` client and server in
//! separate processes, over stdio and Streamable HTTP, W3C trace context in `params._meta`).
//!
//! Map: [`scenario`] (the table of samples and expected findings) → [`generate`] (runs them) →
//! [`host`] (agent host, MCP client) + [`serve`]/[`server`] (MCP server process) →
//! [`telemetry`] (SDK pipeline; [`ids`] and [`clock`] for `--deterministic`) → [`sink`] (merge into
//! one OTLP/JSON file per sample). [`scale`] writes large datasets directly as OTLP protobuf.

pub mod behaviour;
pub mod catalog;
pub mod cli;
pub mod clock;
pub mod error;
pub mod generate;
pub mod host;
pub mod ids;
pub mod manifest;
pub mod propagation;
pub mod scale;
pub mod scenario;
pub mod serve;
pub mod server;
pub mod sink;
pub mod telemetry;

pub use error::SamplesError;
