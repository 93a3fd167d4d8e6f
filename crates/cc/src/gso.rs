//! GSO burst sizing as Linux tcp_output.c `tcp_tso_autosize` / `tcp_tso_segs` (since 4.17 TCP
//! builds GSO skbs even with offloads off): about 1 ms of data at the pacing rate
//! (`sk_pacing_rate >> sk_pacing_shift`), plus an allowance of 64 KB halved for every 512 µs
//! of min RTT (`sysctl_tcp_tso_rtt_log` = 9), capped at the socket's GSO size, and at least the
//! algorithm's `min_tso_segs` (default `sysctl_tcp_min_tso_segs` = 2). BBR budgets its cwnd
//! and in-flight targets with such a goal (`crate::bbr::common::TsoGoal`).

/// Linux `sk_pacing_shift` default: a burst is about 2^-10 s (≈ 1 ms) at the pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// Linux `sysctl_tcp_tso_rtt_log`: the min-RTT allowance halves every 2^9 µs of min RTT.
pub const TSO_RTT_LOG: u32 = 9;
/// Linux `GSO_LEGACY_MAX_SIZE` (64 KB), a device's default `gso_max_size`.
pub const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
/// Linux `MAX_TCP_HEADER` on x86-64 distribution kernels: L1_CACHE_ALIGN(128 + MAX_HEADER = 176).
const MAX_TCP_HEADER: u64 = 320;
/// Most payload bytes in one GSO skb (Linux `sk_gso_max_size` = `GSO_LEGACY_MAX_SIZE - 1 -
/// MAX_TCP_HEADER`): 45 segments of 1448 B.
pub const GSO_MAX_BYTES: u64 = GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER;
/// Linux `sysctl_tcp_min_tso_segs`: the least segments per burst, unless the algorithm says.
pub const TCP_MIN_TSO_SEGS: u32 = 2;

/// Linux `tcp_tso_autosize`: segments of `mss` bytes per GSO burst at `pacing_rate` (bytes/s)
/// with a min RTT of `min_rtt_us` (`u64::MAX` = none yet, no allowance), at least `min_segs`.
pub fn tso_autosize(pacing_rate: u64, mss: u32, min_rtt_us: u64, min_segs: u32) -> u32 {
    let mut bytes = pacing_rate >> PACING_SHIFT;
    let r = min_rtt_us >> TSO_RTT_LOG;
    if r < u64::from(u32::BITS) {
        bytes = bytes.saturating_add(GSO_MAX_BYTES >> r);
    }
    let segs = bytes.min(GSO_MAX_BYTES) / u64::from(mss.max(1));
    (segs as u32).max(min_segs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    /// No min-RTT allowance: 40 ms >> 9 = 78 ≥ 32.
    const RTT_40MS: u64 = 40_000;

    /// Bytes per second of `mbit` Mbit/s.
    fn rate(mbit: u64) -> u64 {
        mbit * 1_000_000 / 8
    }

    #[test]
    fn burst_is_about_1ms_at_the_pacing_rate_at_least_min_segs() {
        // 10 Mbit/s: 1 250 000 >> 10 = 1220 B < 1 MSS → the minimum, 2.
        assert_eq!(tso_autosize(rate(10), MSS, RTT_40MS, TCP_MIN_TSO_SEGS), 2);
        // 100 Mbit/s: 12 500 000 >> 10 = 12 207 B → ⌊12207/1448⌋ = 8.
        assert_eq!(tso_autosize(rate(100), MSS, RTT_40MS, TCP_MIN_TSO_SEGS), 8);
        // 300 Mbit/s: 37 500 000 >> 10 = 36 621 B → 25.
        assert_eq!(tso_autosize(rate(300), MSS, RTT_40MS, TCP_MIN_TSO_SEGS), 25);
        // 1 Gbit/s: 122 070 B, capped at 65 215 B → 45.
        assert_eq!(tso_autosize(rate(1000), MSS, RTT_40MS, TCP_MIN_TSO_SEGS), 45);
        // An algorithm may ask for fewer (BBR: 1 below 1.2 Mbit/s).
        assert_eq!(tso_autosize(rate(1), MSS, RTT_40MS, 1), 1);
    }

    #[test]
    fn short_min_rtt_adds_a_halving_allowance() {
        // 10 Mbit/s, min RTT 1000 µs: r = 1, 1220 + 65215/2 = 1220 + 32607 = 33 827 B → 23.
        assert_eq!(tso_autosize(rate(10), MSS, 1_000, TCP_MIN_TSO_SEGS), 23);
        // 2 ms: r = 3, 1220 + 8151 = 9371 B → 6.
        assert_eq!(tso_autosize(rate(10), MSS, 2_000, TCP_MIN_TSO_SEGS), 6);
        // 100 µs: r = 0, 1220 + 65215 capped at 65 215 → 45.
        assert_eq!(tso_autosize(rate(10), MSS, 100, TCP_MIN_TSO_SEGS), 45);
        // 10 ms: r = 19, 65215 >> 19 = 0: nothing added.
        assert_eq!(tso_autosize(rate(100), MSS, 10_000, TCP_MIN_TSO_SEGS), 8);
        // No RTT sample yet: no allowance.
        assert_eq!(tso_autosize(rate(10), MSS, u64::MAX, TCP_MIN_TSO_SEGS), 2);
    }
}
