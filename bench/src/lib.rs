//! Benchmark harness for tripline: a load generator that speaks OTLP/HTTP and OTLP/gRPC, the
//! realistic GenAI/MCP spans it sends, and the small measurement helpers the scripts rely on.
//!
//! Why a crate of its own: benchmarks are not tests. Nothing here is timed in CI; CI only builds
//! it (`cargo build -p bench --all-targets`), and `scripts/bench` runs it to regenerate
//! BENCHMARKS.md.

pub mod files;
pub mod load;
pub mod spans;
pub mod stats;
