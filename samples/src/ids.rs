//! Deterministic trace and span ids for `--deterministic`.
//!
//! Why: committed sample files must regenerate byte-identically, and ids are the one part of a span
//! the SDK would otherwise draw at random. Each process (host, every MCP server) gets its own seed,
//! derived from the scenario and its role, and numbers its ids with a counter run through
//! SplitMix64, so ids look random (realistic, well spread for bloom filters) but are a pure function
//! of (seed, order of creation). The order of creation is fixed because every scenario is a
//! sequential script.

use std::sync::atomic::{AtomicU64, Ordering};

use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::IdGenerator;

/// SplitMix64's mixing step, the one of the synthetic data (`synth::rng`).
pub use synth::splitmix64;

/// A stable 64-bit seed from text (FNV-1a), so seeds can be derived from scenario names.
pub fn seed_from(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// [`IdGenerator`] numbering ids from a seed; never yields the invalid all-zero id.
#[derive(Debug)]
pub struct SeededIds {
    seed: u64,
    counter: AtomicU64,
}

impl SeededIds {
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            counter: AtomicU64::new(0),
        }
    }

    fn next(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        match splitmix64(self.seed ^ splitmix64(n)) {
            0 => 1,
            v => v,
        }
    }
}

impl IdGenerator for SeededIds {
    fn new_trace_id(&self) -> TraceId {
        let hi = self.next();
        let lo = self.next();
        TraceId::from(((u128::from(hi)) << 64) | u128::from(lo))
    }

    fn new_span_id(&self) -> SpanId {
        SpanId::from(self.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_different_seed_differs() {
        let a = SeededIds::new(7);
        let b = SeededIds::new(7);
        let c = SeededIds::new(8);
        let ta = a.new_trace_id();
        assert_eq!(ta, b.new_trace_id());
        assert_ne!(ta, c.new_trace_id());
        assert_eq!(a.new_span_id(), b.new_span_id());
        assert_ne!(a.new_span_id(), a.new_span_id());
    }

    #[test]
    fn seed_from_is_fnv1a() {
        assert_eq!(seed_from(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(seed_from("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
