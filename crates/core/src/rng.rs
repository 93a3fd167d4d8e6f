//! Seeded random streams. Each component owns one stream derived from the run seed and a stable
//! name (e.g. "link/3/loss", "flow/0/cc"), so adding a component never shifts the draws of another
//! and the same scenario + seed is bit-identical everywhere (docs/architecture.md, rules).
//! Generator: xoshiro256** (Blackman & Vigna), seeded through SplitMix64.

/// A deterministic pseudo-random stream.
#[derive(Clone, Debug)]
pub struct SimRng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    mix64(*state)
}

/// SplitMix64's output function: a bijective mixer of 64 bits, each input bit flipping
/// about half the output bits; a cheap stateless hash (ECMP's, in tcplab-net's routing).
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a: a stable (cross-platform, cross-version) hash of a stream name.
fn fnv1a(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

impl SimRng {
    /// The stream called `name` of the run seeded with `seed`.
    pub fn stream(seed: u64, name: &str) -> Self {
        let mut st = seed ^ fnv1a(name).rotate_left(17);
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        SimRng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n); `n` must be positive.
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// A draw of the exponential distribution with `mean` (inversion of 1 − U, never ln 0).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let mut a = SimRng::stream(7, "link/0/loss");
        let mut b = SimRng::stream(7, "link/0/loss");
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn names_and_seeds_separate_streams() {
        let a = SimRng::stream(7, "link/0/loss").next_u64();
        assert_ne!(a, SimRng::stream(7, "link/1/loss").next_u64());
        assert_ne!(a, SimRng::stream(8, "link/0/loss").next_u64());
    }

    #[test]
    fn below_and_f64_stay_in_range_and_cover_it() {
        let mut r = SimRng::stream(1, "x");
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[r.below(7) as usize] += 1;
            let f = r.next_f64();
            assert!((0.0..1.0).contains(&f));
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
    }
}
