//! HighSpeed TCP as Linux tcp_highspeed.c (RFC 3649, Floyd 2003): above
//! 38 packets the window grows by a(w) packets per RTT and backs off by b(w), both read from
//! RFC 3649's Appendix B table (plus one row Linux adds past its end).
//!
//! Linux counts `ai + 1` credits **per ACK** (not per packet acked), looks the row up only
//! on congestion-avoidance ACKs (a loss uses the row of the last one: row 0, b = 0.5, if
//! there was none yet), and discards the slow-start leftover. ns-3 TcpHighSpeed differs: it grows per
//! acked segment, looks a/b up from the current cwnd every time and takes ssthresh from
//! bytes in flight with b as a double. Linux is followed.

use crate::config::{AlgorithmConfig, ParamDoc};
use crate::reno::ca_after_slow_start;
use crate::{CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// RFC 3649 Appendix B, as Linux `hstcp_aimd_vals`: row i holds for T[i−1] < cwnd ≤ T[i]
/// and gives a(w) = i + 1 packets per RTT and b(w) = md/256. Re-derived from the RFC's
/// formulas in the test `table_follows_rfc_3649_formulas`: a(T[i]) rounds to i + 1 and
/// md = ⌊256·b(T[i])⌋. The last row (89053, 24) is Linux's addition.
const AIMD: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Linux `hstcp_init`: cwnd·md must fit in 32 bits, so cwnd ≤ 2³²/128.
const CWND_CLAMP_MAX: u32 = u32::MAX / 128;

/// Parameters of HighSpeed TCP (none: the Linux module has no tunables).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HighSpeedConfig {}

impl AlgorithmConfig for HighSpeedConfig {
    const NAME: &'static str = "highspeed";
    const SUMMARY: &'static str = "HighSpeed TCP, Linux tcp_highspeed.c (RFC 3649 a(w)/b(w) table)";
    const PARAMS: &'static [ParamDoc] = &[];
    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(HighSpeed::default())
    }
}

/// HighSpeed state (Linux `struct hstcp`).
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    /// Current table row (Linux `ai`).
    ai: usize,
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        HighSpeedConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        self.ai = 0;
        cx.cwnd_clamp = cx.cwnd_clamp.min(CWND_CLAMP_MAX);
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        let md = ((u64::from(cx.cwnd) * u64::from(AIMD[self.ai].1)) >> 8) as u32;
        (cx.cwnd - md).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        if !ca_after_slow_start(cx, acked) {
            return;
        }
        // Keep T[ai−1] < cwnd ≤ T[ai] (the last row also covers everything above it).
        while cx.cwnd > AIMD[self.ai].0 && self.ai < AIMD.len() - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && cx.cwnd <= AIMD[self.ai - 1].0 {
            self.ai -= 1;
        }
        // cwnd += a(w)/cwnd per ACK.
        if cx.cwnd < cx.cwnd_clamp {
            cx.cwnd_cnt += self.ai as u32 + 1;
            if cx.cwnd_cnt >= cx.cwnd {
                cx.cwnd_cnt -= cx.cwnd;
                cx.cwnd += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HighSpeed in congestion avoidance at `cwnd` (ssthresh = cwnd), cwnd-limited.
    fn setup(cwnd: u32) -> (HighSpeed, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        let mut hs = HighSpeed::default();
        hs.init(&mut cx);
        (hs, cx)
    }

    #[test]
    fn table_follows_rfc_3649_formulas() {
        // RFC 3649 §5: b(w) = (0.1 − 0.5)·(ln w − ln 38)/(ln 83000 − ln 38) + 0.5 and
        // a(w) = w²·p(w)·2·b(w)/(2 − b(w)) with p(w) = 0.078/w^1.2 (Low_Window 38,
        // High_Window 83000, High_Decrease 0.1). Row 7: a(1058) = 8.011, 256·b = 83.70.
        let b = |w: f64| -0.4 * (w.ln() - 38f64.ln()) / (83000f64.ln() - 38f64.ln()) + 0.5;
        let a = |w: f64| w * w * (0.078 / w.powf(1.2)) * 2.0 * b(w) / (2.0 - b(w));
        assert_eq!(AIMD[0], (38, 128)); // at Low_Window: a = 1, b = 0.5 (Reno)
        for (i, &(t, md)) in AIMD.iter().enumerate().skip(1) {
            let t = f64::from(t);
            assert_eq!(a(t).round(), (i + 1) as f64, "row {i}: a({t}) = {}", a(t));
            assert_eq!((256.0 * b(t)).floor(), f64::from(md), "row {i}: 256·b({t}) = {}", 256.0 * b(t));
            assert!(AIMD[i - 1].0 < AIMD[i].0);
        }
    }

    // docs/validation.md HighSpeed 1
    #[test]
    fn loss_uses_b_of_the_current_row() {
        // Row 0: 38 − (38·128 >> 8) = 38 − 19 = 19 (Reno halving).
        let (mut hs, mut cx) = setup(38);
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 0);
        assert_eq!(hs.ssthresh(&mut cx), 19);
        // cwnd 1000: 851 < 1000 ≤ 1058 → row 7, md 83: 1000 − ⌊83000/256⌋ = 1000 − 324 = 676.
        let (mut hs, mut cx) = setup(1000);
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 7);
        assert_eq!(hs.ssthresh(&mut cx), 676);
        // Linux looks the row up only in congestion avoidance: without a CA ACK at 1000
        // the row is still 0 and b = 0.5.
        let (mut hs, mut cx) = setup(1000);
        assert_eq!(hs.ssthresh(&mut cx), 500);
        cx.cwnd = 3;
        assert_eq!(hs.ssthresh(&mut cx), 2); // max(3 − 1, 2)
    }

    // docs/validation.md HighSpeed 2
    #[test]
    fn congestion_avoidance_at_1000_adds_8_credits_per_ack() {
        // Row 7 → a(w) = 8: 8 credits per ACK, +1 packet per 1000 credits = 125 ACKs.
        let (mut hs, mut cx) = setup(1000);
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd_cnt, 8);
        for _ in 1..124 {
            hs.cong_avoid(&mut cx, 1);
        }
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (1000, 992)); // 124 ACKs
        hs.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (1001, 0)); // the 125th
                                                       // Per ACK, not per packet: an ACK of 2 packets still adds 8.
        hs.cong_avoid(&mut cx, 2);
        assert_eq!(cx.cwnd_cnt, 8);
        // One RTT of 1000 ACKs: ≈ +8 packets (8000 credits / ≈1004 per packet).
        let (mut hs, mut cx) = setup(1000);
        for _ in 0..1000 {
            hs.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 1007); // 7 steps cost 1000+…+1006 = 7021 credits, 979 left
        assert_eq!(cx.cwnd_cnt, 979);
    }

    #[test]
    fn row_follows_cwnd_both_ways_and_stops_at_the_last() {
        let (mut hs, mut cx) = setup(39);
        cx.ssthresh = 2; // stay in congestion avoidance below 39
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 1); // 38 < 39 ≤ 118
        cx.cwnd = 200_000;
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 71);
        cx.cwnd = 118;
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 1);
        cx.cwnd = 38;
        hs.cong_avoid(&mut cx, 1);
        assert_eq!(hs.ai, 0);
    }

    #[test]
    fn slow_start_discards_the_leftover_and_init_clamps_cwnd() {
        let (mut hs, mut cx) = setup(98);
        assert_eq!(cx.cwnd_clamp, u32::MAX / 128);
        cx.ssthresh = 100;
        hs.cong_avoid(&mut cx, 5);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (100, 0));
        cx.is_cwnd_limited = false;
        hs.cong_avoid(&mut cx, 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (100, 0));
    }
}
