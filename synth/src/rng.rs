//! The one pseudo-random generator of the synthetic data: SplitMix64.
//!
//! Why SplitMix64: no dependency, a few instructions per number, well spread bits (ids built from
//! it spread evenly over bloom filters), and the same stream for the same seed on every machine,
//! so generated datasets can be compared byte for byte.
//!
//! It steps in one of two ways, both over the same mixing function [`splitmix64`]:
//! [`SplitMix64::new`] is the standard generator (a counter advanced by the golden gamma, each
//! output the mix of the counter); [`SplitMix64::chained`] feeds each output back as the next
//! input, the stepping the samples' scale mode has always used. Its datasets are compared byte
//! for byte across benchmark runs, so that stream must not change.

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One SplitMix64 step: a well-mixed 64-bit permutation of `x + GAMMA`.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How the state advances (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stepping {
    Counter,
    Chained,
}

/// A small, fast, deterministic PRNG: the same stream for the same seed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
    stepping: Stepping,
}

impl SplitMix64 {
    /// The standard SplitMix64 stream for `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 {
            state: seed,
            stepping: Stepping::Counter,
        }
    }

    /// The chained stream for `seed`: each output is `splitmix64` of the one before.
    pub fn chained(seed: u64) -> Self {
        SplitMix64 {
            state: seed,
            stepping: Stepping::Chained,
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        match self.stepping {
            Stepping::Counter => {
                let out = splitmix64(self.state);
                self.state = self.state.wrapping_add(GAMMA);
                out
            }
            Stepping::Chained => {
                self.state = splitmix64(self.state);
                self.state
            }
        }
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[0, n)` (`n` of 0 counts as 1).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_stream_is_the_reference_splitmix64() {
        // The first outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn chained_stream_feeds_each_output_back() {
        let mut r = SplitMix64::chained(42);
        let a = r.next_u64();
        assert_eq!(a, splitmix64(42));
        assert_eq!(r.next_u64(), splitmix64(a));
    }

    #[test]
    fn below_and_next_f64_stay_in_range() {
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            assert!(r.below(3) < 3);
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
        assert_eq!(r.below(0), 0);
    }
}
