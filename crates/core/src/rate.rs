//! Link and pacing rates in bits per second, with exact integer serialization times.

use crate::time::SimDuration;
use std::fmt;

/// A rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        Rate(mbps * 1_000_000)
    }
    pub fn bps(self) -> u64 {
        self.0
    }
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    pub fn mbps(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// Time to put `bytes` on the wire at this rate, rounded up to the next nanosecond.
    /// A zero rate never finishes: `SimDuration::MAX`.
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        if self.0 == 0 {
            return SimDuration::MAX;
        }
        // Below 2^31 bytes, bytes · 8·10^9 fits u64: avoid the much slower u128 division.
        if bytes < 1 << 31 {
            return SimDuration((bytes * 8_000_000_000).div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        let ns = bits.div_ceil(self.0 as u128);
        SimDuration(ns.min(u64::MAX as u128) as u64)
    }
}

impl fmt::Debug for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}Mbps", self.mbps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_a_full_frame_at_10_mbps_is_1_2_ms() {
        assert_eq!(Rate::from_mbps(10).tx_time(1500), SimDuration::from_micros(1200));
    }

    #[test]
    fn tx_time_rounds_up_to_the_next_nanosecond() {
        // 1 byte at 3 bps = 2.666.. s
        assert_eq!(Rate(3).tx_time(1).as_nanos(), 2_666_666_667);
    }

    #[test]
    fn huge_sizes_take_the_wide_path_with_the_same_rounding() {
        let r = Rate(3);
        assert_eq!(r.tx_time((1 << 31) - 1).as_nanos(), (((1u128 << 31) - 1) * 8_000_000_000).div_ceil(3) as u64);
        assert_eq!(r.tx_time(1 << 31).as_nanos(), ((1u128 << 31) * 8_000_000_000).div_ceil(3) as u64);
    }

    #[test]
    fn zero_rate_never_finishes() {
        assert_eq!(Rate(0).tx_time(1), SimDuration::MAX);
    }
}
