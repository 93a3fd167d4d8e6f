//! TCP Small Queues (`tcp.tsq`, docs/models.md): Linux `tcp_small_queue_check()` stops a
//! socket from writing while more than `limit` bytes of it sit below TCP (qdisc and driver),
//! and `tcp_wfree()` / `tcp_tsq_handler()` let it go on when a transmission completes.
//!
//! Here the bytes below TCP are the flow's data packets in its sender's own egress link,
//! queued or being serialized, each charged its skb truesize; they are released when the
//! link finishes serializing the packet or its queue discards it. limit = max(2 · truesize of
//! a full segment, pacing rate >> 10 (about 1 ms of data)), capped at
//! `tcp_limit_output_bytes` unless the flow is paced (BBR, `tcp.pacing = "fq"`), doubled for
//! retransmissions; the check passes while the held bytes are not above the limit, or when at
//! most one segment is unacknowledged. A radio hop (WiFi station, mmWave UE) is no wired
//! egress and is not counted.

use tcplab_core::LinkId;

/// What an skb of a TCP segment takes beyond its payload (`skb->truesize - len`): the
/// `MAX_TCP_HEADER` head with its `skb_shared_info` rounds up to a 1 KiB kmalloc, plus the
/// cache-aligned `struct sk_buff` (256 B) — the payload itself lies in page fragments
/// charged byte for byte.
pub const SKB_OVERHEAD_BYTES: u64 = 1280;

/// Linux `sysctl_tcp_limit_output_bytes` default (4 MiB since Linux 6.7; 1 MiB before).
pub const LIMIT_OUTPUT_BYTES: u64 = 4 << 20;

/// Linux `sk_pacing_shift` default: the rate term is 2^-10 s of data.
pub const PACING_SHIFT: u32 = 10;

/// One flow's bytes in its sender's egress link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tsq {
    /// The sender's egress link: the only one whose bytes count.
    pub egress: LinkId,
    /// Truesize bytes of the flow's data packets queued or in service there.
    held: u64,
    /// The flow stopped for the limit (Linux `TSQ_THROTTLED`): a release wakes it.
    throttled: bool,
}

impl Tsq {
    pub fn new(egress: LinkId) -> Self {
        Tsq { egress, held: 0, throttled: false }
    }

    pub fn truesize(payload: u32) -> u64 {
        u64::from(payload) + SKB_OVERHEAD_BYTES
    }

    /// The limit for new data, bytes: `pacing_rate` in bytes/s (0 = not yet known, which
    /// Linux's initial `~0` rate makes unlimited), `paced` when the flow is not
    /// `SK_PACING_NONE`.
    pub fn limit(pacing_rate: u64, paced: bool, mss: u32) -> u64 {
        let rate = if pacing_rate == 0 { u64::MAX } else { pacing_rate };
        let limit = (2 * Self::truesize(mss)).max(rate >> PACING_SHIFT);
        if paced {
            limit
        } else {
            limit.min(LIMIT_OUTPUT_BYTES)
        }
    }

    /// Whether the next segment must wait; marks the flow throttled if so. `retransmission`
    /// (whether the next segment is one) is asked only when the held bytes are over `limit`.
    pub fn holds_back(&mut self, limit: u64, packets_out: u32, retransmission: impl FnOnce() -> bool) -> bool {
        self.throttled = self.held > limit && packets_out > 1 && (self.held > limit << 1 || !retransmission());
        self.throttled
    }

    /// A data segment of `payload` bytes entered the egress link.
    pub fn sent(&mut self, payload: u32) {
        self.held += Self::truesize(payload);
    }

    /// A data segment left the egress link (serialized or discarded); returns whether the
    /// flow was throttled and should try again.
    pub fn released(&mut self, payload: u32) -> bool {
        self.held -= Self::truesize(payload);
        std::mem::take(&mut self.throttled)
    }

    pub fn held(&self) -> u64 {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_two_segments_or_a_millisecond_capped_when_unpaced() {
        // 2 · (1448 + 1280) = 5456 B beats 10 Mbit/s >> 10 = 1220 B.
        assert_eq!(Tsq::limit(1_250_000, false, 1448), 5456);
        // 1 Gbit/s: 125e6 >> 10 = 122070 B.
        assert_eq!(Tsq::limit(125_000_000, true, 1448), 122_070);
        // No rate yet: unlimited, so the sysctl cap unless paced.
        assert_eq!(Tsq::limit(0, false, 1448), 4 << 20);
        assert_eq!(Tsq::limit(0, true, 1448), u64::MAX >> 10);
        assert_eq!(Tsq::limit(10_000_000_000, false, 1448), 4 << 20);
    }

    #[test]
    fn three_segments_pass_the_check_then_a_release_wakes_the_flow() {
        let mut t = Tsq::new(3);
        let limit = Tsq::limit(1_250_000, false, 1448);
        for held in [0, 2728, 5456] {
            assert_eq!(t.held(), held);
            assert!(!t.holds_back(limit, 5, || false));
            t.sent(1448);
        }
        assert!(t.holds_back(limit, 5, || false), "8184 B > 5456 B");
        assert!(!t.holds_back(limit, 5, || true), "a retransmission may use twice the limit");
        assert!(!t.holds_back(limit, 1, || false), "one segment out: never held back");
        t.sent(1448);
        t.sent(1448);
        assert!(t.holds_back(limit, 5, || true), "13640 B > 10912 B: retransmissions wait too");
        t.released(1448);
        assert!(!t.released(1448), "not throttled: no wake");
        assert!(t.holds_back(limit, 5, || false));
        assert!(t.released(1448), "throttled: wake it");
        assert!(!t.released(1448), "woken once");
        assert_eq!(t.held(), 2728);
    }
}
