//! How long packets waited in a link direction's queue: from enqueue to the start of their
//! transmission, each packet that left the queue counted once (dropped packets are not).
//! Exact count and mean; percentiles from a log-linear histogram of nanoseconds (32
//! sub-buckets per power of two, exact below 32 ns: a reported percentile is within ±1.6 %
//! of the true value). Counting is a few integer operations, so every link of every run keeps
//! it; a packet that did not wait at all (the common case on uncongested links) touches no
//! bucket, and the buckets held reach only up to the longest wait seen (≤ 8 KiB for waits
//! up to a minute).

use tcplab_core::SimDuration;

const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SojournStats {
    /// Packets that left the queue.
    pub count: u64,
    /// Those that waited 0 ns (with `count`, all a packet that did not wait touches).
    zero: u64,
    /// Sum of their waits, ns.
    pub sum_ns: u128,
    /// Waits > 0 by bucket (`bucket`).
    buckets: Vec<u64>,
}

/// The histogram bucket of a wait of `ns` > 0: the wait itself below 32 ns, then 32 buckets
/// per power of two.
fn bucket(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let shift = 63 - ns.leading_zeros() - SUB_BITS;
    (((shift as u64 + 1) << SUB_BITS) + ((ns >> shift) - SUB)) as usize
}

/// The smallest wait in `bucket` and the bucket's width, ns.
fn bucket_span(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b, 1);
    }
    let shift = (b >> SUB_BITS) - 1;
    ((SUB + (b & (SUB - 1))) << shift, 1 << shift)
}

impl SojournStats {
    #[inline]
    pub fn add(&mut self, wait: SimDuration) {
        let ns = wait.as_nanos();
        self.count += 1;
        if ns == 0 {
            // Not even the sum: it lies past the direction's first lines (`Direction`).
            self.zero += 1;
            return;
        }
        self.sum_ns += u128::from(ns);
        let b = bucket(ns);
        if b >= self.buckets.len() {
            self.buckets.resize(b + 1, 0);
        }
        self.buckets[b] += 1;
    }

    /// Mean wait, ms (None before any packet left the queue).
    pub fn mean_ms(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e6)
    }

    /// The `q`-quantile (0 < q ≤ 1) of the waits, ms: the middle of its bucket (0 if at
    /// least that share of packets did not wait).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank <= self.zero {
            return Some(0.0);
        }
        let mut seen = self.zero;
        for (b, &c) in self.buckets.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (low, width) = bucket_span(b);
                return Some((low as f64 + (width - 1) as f64 / 2.0) / 1e6);
            }
        }
        unreachable!("rank ≤ count")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_nanoseconds_without_gaps() {
        let mut expected_low = 1;
        for b in 1..1_900 {
            let (low, width) = bucket_span(b);
            assert_eq!(low, expected_low, "bucket {b}");
            assert_eq!((bucket(low), bucket(low + width - 1)), (b, b), "bucket {b}");
            assert!(width == 1 || width * 32 <= low, "bucket {b}: {width} ns wide at {low} ns is coarser than 1/32");
            expected_low = low + width;
        }
        // 31 ns is exact; 32..63 ns one each; 64 and 65 ns share a bucket 2 ns wide.
        assert_eq!((bucket(31), bucket(32), bucket(63), bucket(64), bucket(65), bucket(66)), (31, 32, 63, 64, 64, 65));
    }

    #[test]
    fn mean_and_percentiles_of_known_waits() {
        let mut s = SojournStats::default();
        assert_eq!((s.mean_ms(), s.quantile_ms(0.5)), (None, None));
        // 50 packets that did not wait, then 1, 2, ..., 50 ms.
        for _ in 0..50 {
            s.add(SimDuration::ZERO);
        }
        for ms in 1..=50 {
            s.add(SimDuration::from_millis(ms));
        }
        assert_eq!(s.count, 100);
        // mean = (1 + ... + 50) / 100 = 1275 / 100
        assert_eq!(s.mean_ms(), Some(12.75));
        assert_eq!(s.quantile_ms(0.5), Some(0.0), "the 50th of 100 did not wait");
        // The 95th is 45 ms and the 99th 49 ms, each within the bucket's ±1/64.
        for (q, want) in [(0.95, 45.0), (0.99, 49.0), (1.0, 50.0)] {
            let got = s.quantile_ms(q).unwrap();
            assert!((got - want).abs() <= want / 64.0, "q{q}: {got} ms, want {want} ms");
        }
        assert!(s.buckets.len() < 800, "{} buckets for waits up to 50 ms", s.buckets.len());
    }
}
