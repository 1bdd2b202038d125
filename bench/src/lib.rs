//! Benchmark harness for tripline: a load generator that speaks OTLP/HTTP and OTLP/gRPC and the
//! small measurement helpers the scripts rely on. The realistic GenAI/MCP spans it sends are
//! built by the `synth` crate, shared with the samples' scale mode and the tests.
//!
//! Why a crate of its own: benchmarks are not tests. Nothing here is timed in CI; CI only builds
//! it (`cargo build -p bench --all-targets`), and `scripts/bench` runs it to regenerate
//! BENCHMARKS.md.

pub mod files;
pub mod load;
pub mod stats;
