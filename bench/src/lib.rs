//! Benchmark harness: load generator and measurement helpers (see BENCHMARKS.md).
