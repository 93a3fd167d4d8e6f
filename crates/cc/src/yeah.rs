//! YeAH-TCP as modern Linux tcp_yeah.c (Baiocchi, Castellani & Vacirca,
//! "YeAH-TCP: Yet Another Highspeed TCP", PFLDnet 2007). Two modes chosen once per RTT from
//! Vegas-style RTT bookkeeping (shared with [`crate::vegas`]): "fast" (Scalable growth, +1
//! per 100 packets acked) while the estimated queue is ≤ 80 packets and the queueing delay
//! ≤ baseRTT/8, "slow" (Reno growth) otherwise, where a queue above 80 packets is also
//! drained at once (precautionary decongestion). On loss the window drops by the last queue
//! estimate (between cwnd/8 and cwnd/2) unless Reno mode has lasted 16 RTTs, which suggests
//! competing Reno flows: then it halves.
//!
//! Modern Linux counts acked packets (`tcp_cong_avoid_ai(min(cwnd, 100), acked)`); Linux ≤ 4.x
//! counted ACKs. Linux also records `beg_snd_una`/`beg_snd_cwnd` at each round end but never
//! reads them; they are left out. The queue estimate is computed in 64 bits as in Linux.
//! ns-3 TcpYeah has the same constants and embeds a TcpScalable for fast mode. Linux is
//! followed.

use crate::config::{AlgorithmConfig, ParamDoc};
use crate::reno::slow_start_then_leftover;
use crate::vegas::{vegas_rtt_hooks, RoundEnd, VegasRtt};
use crate::{AckSample, CaState, CcCx, CongestionControl, CwndEvent};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Largest queue estimate (packets) still allowed in fast mode (Linux `TCP_YEAH_ALPHA`).
const ALPHA: u32 = 80;
/// Precautionary decongestion removes queue/2^0 = the whole queue (Linux `TCP_YEAH_GAMMA`).
const GAMMA: u32 = 1;
/// A loss removes at least cwnd/2³ (Linux `TCP_YEAH_DELTA`).
const DELTA: u32 = 3;
/// Decongestion removes at most cwnd/2¹ (Linux `TCP_YEAH_EPSILON`).
const EPSILON: u32 = 1;
/// Fast mode tolerates a queueing delay of baseRTT/8 (Linux `TCP_YEAH_PHY`).
const PHY: u32 = 8;
/// RTTs in Reno mode after which a loss is blamed on competing flows (Linux `TCP_YEAH_RHO`).
const RHO: u32 = 16;
/// Fast rounds after which `reno_count` is reset (Linux `TCP_YEAH_ZETA`).
const ZETA: u32 = 50;
/// Fast-mode growth: +1 per this many packets acked (Linux `TCP_SCALABLE_AI_CNT`).
const SCALABLE_AI_CNT: u32 = 100;
/// Linux saturates `doing_reno_now` at 0xffffff.
const DOING_RENO_MAX: u32 = 0xff_ffff;

/// Parameters of YeAH (none: Linux tcp_yeah.c has no module parameters).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct YeahConfig {}

impl AlgorithmConfig for YeahConfig {
    const NAME: &'static str = "yeah";
    const SUMMARY: &'static str = "YeAH-TCP, Linux tcp_yeah.c (Scalable growth while the queue is small, Reno otherwise)";
    const PARAMS: &'static [ParamDoc] = &[];
    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Yeah::new())
    }
}

/// YeAH state (Linux `struct yeah`).
#[derive(Clone, Debug)]
pub struct Yeah {
    rtt: VegasRtt,
    /// Queue estimate of the last decision round, packets (Linux `lastQ`).
    last_q: u32,
    /// Consecutive rounds in Reno ("slow") mode; 0 = fast mode.
    doing_reno_now: u32,
    /// Floor for decongestion; grows in Reno mode, halved on loss.
    reno_count: u32,
    /// Consecutive fast rounds since the last reset of `reno_count`.
    fast_count: u32,
}

impl Default for Yeah {
    fn default() -> Self {
        Self::new()
    }
}

impl Yeah {
    pub fn new() -> Self {
        Yeah { rtt: VegasRtt::new(), last_q: 0, doing_reno_now: 0, reno_count: 2, fast_count: 0 }
    }

    /// The once-per-RTT mode decision with the round's minimum RTT `rtt` (µs + 1).
    fn decide(&mut self, cx: &mut CcCx, rtt: u32) {
        let base = self.rtt.base_rtt;
        let delay = rtt.saturating_sub(base);
        // Packets in the bottleneck queue: cwnd·(rtt − base)/rtt.
        let queue = (u64::from(cx.cwnd) * u64::from(delay) / u64::from(rtt)) as u32;
        if queue > ALPHA || delay > base / PHY {
            if queue > ALPHA && cx.cwnd > self.reno_count {
                let reduction = (queue / GAMMA).min(cx.cwnd >> EPSILON);
                cx.cwnd = (cx.cwnd - reduction).max(self.reno_count);
                cx.ssthresh = cx.cwnd;
            }
            self.reno_count = if self.reno_count <= 2 { (cx.cwnd >> 1).max(2) } else { self.reno_count + 1 };
            self.doing_reno_now = (self.doing_reno_now + 1).min(DOING_RENO_MAX);
        } else {
            self.fast_count += 1;
            if self.fast_count > ZETA {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        YeahConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Yeah::new();
        self.rtt.init(cx);
        // Keeps the decongestion arithmetic of Linux's u32 in range.
        cx.cwnd_clamp = cx.cwnd_clamp.min(u32::MAX / 128);
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        let half = (cx.cwnd >> 1).max(2);
        let reduction = if self.doing_reno_now < RHO {
            // Remove the queue we measured, at least cwnd/8 and at most half.
            self.last_q.min(half).max(cx.cwnd >> DELTA)
        } else {
            half
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        cx.cwnd.saturating_sub(reduction).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        let Some(acked) = slow_start_then_leftover(cx, acked) else {
            return;
        };
        if acked > 0 {
            if self.doing_reno_now == 0 {
                cx.cong_avoid_ai(cx.cwnd.min(SCALABLE_AI_CNT), acked);
            } else {
                cx.cong_avoid_ai(cx.cwnd, acked);
            }
        }
        if let Some(RoundEnd::MinRtt(rtt)) = self.rtt.end_round(cx) {
            self.decide(cx, rtt);
        }
    }

    vegas_rtt_hooks!();

    fn mode(&self) -> Option<&'static str> {
        Some(if self.doing_reno_now == 0 { "fast" } else { "slow" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vegas::testing::{limited_cx, round, samples};

    /// An initialised YeAH at `cwnd` in congestion avoidance (ssthresh `cwnd/2`) with baseRTT
    /// `base_ms` measured and a fresh round.
    fn setup(cwnd: u32, base_ms: i64) -> (Yeah, CcCx) {
        let mut cx = limited_cx(cwnd);
        cx.ssthresh = cwnd / 2;
        let mut yeah = Yeah::new();
        yeah.init(&mut cx);
        // Samples are RTT − 1 µs: Linux adds 1, so baseRTT is exactly base_ms.
        samples(&mut yeah, &mut cx, &[base_ms * 1000 - 1]);
        yeah.set_state(&mut cx, CaState::Open);
        (yeah, cx)
    }

    // docs/validation.md YeAH 1
    #[test]
    fn fast_mode_grows_one_per_hundred_acked() {
        // cwnd 1000, fast mode: cong_avoid_ai(min(cwnd, 100), 1) per ACK, so one RTT of 1000
        // ACKs (none ending the round) adds 1000/100 = 10.
        let (mut yeah, mut cx) = setup(1000, 100);
        assert_eq!(yeah.mode(), Some("fast"));
        for _ in 0..1000 {
            yeah.cong_avoid(&mut cx, 1);
        }
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (1010, 0));
        // In Reno mode the same RTT adds only 1000/1000 = 1.
        let (mut yeah, mut cx) = setup(1000, 100);
        yeah.doing_reno_now = 1;
        for _ in 0..1000 {
            yeah.cong_avoid(&mut cx, 1);
        }
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (1001, 0));
        // Below 100 packets fast mode is Reno-like: cwnd 50 → +1 per 50 acked.
        let (mut yeah, mut cx) = setup(50, 100);
        for _ in 0..50 {
            yeah.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 51);
    }

    // docs/validation.md YeAH 2
    #[test]
    fn a_queue_above_eighty_is_drained_at_once() {
        // base 70 ms, round minimum 100 ms, cwnd 400: queue = 400·30/100 = 120 > 80. The
        // round's ACK first grows (fast: 1 credit of 100, no change), then cwnd = max(400 −
        // min(120/1, 400/2), reno_count 2) = 280, ssthresh 280, reno_count = max(280/2, 2)
        // = 140 (it was ≤ 2), Reno mode.
        let (mut yeah, mut cx) = setup(400, 70);
        round(&mut yeah, &mut cx, &[99_999; 3], 1);
        assert_eq!((cx.cwnd, cx.ssthresh), (280, 280));
        assert_eq!((yeah.reno_count, yeah.doing_reno_now, yeah.last_q), (140, 1, 120));
        assert_eq!(yeah.mode(), Some("slow"));
        // Queue 120 again at cwnd 280 (queue 280·30/100 = 84 > 80): −84, reno_count 141.
        round(&mut yeah, &mut cx, &[99_999; 3], 1);
        assert_eq!((cx.cwnd, yeah.reno_count, yeah.doing_reno_now), (196, 141, 2));
    }

    #[test]
    fn queueing_delay_alone_means_reno_mode_without_a_cut() {
        // base 100 ms, 115 ms: queue = 400·15/115 = 52 ≤ 80 but 15 ms > 100/8 = 12.5 ms.
        let (mut yeah, mut cx) = setup(400, 100);
        round(&mut yeah, &mut cx, &[114_999; 3], 1);
        assert_eq!((cx.cwnd, yeah.doing_reno_now, yeah.last_q, yeah.reno_count), (400, 1, 52, 200));
        // 105 ms: queue 400·5/105 = 19, 5 ms ≤ 12.5 ms → fast again.
        round(&mut yeah, &mut cx, &[104_999; 3], 1);
        assert_eq!((yeah.doing_reno_now, yeah.fast_count, yeah.last_q), (0, 1, 19));
        // After 50 more fast rounds (51 > ζ = 50) reno_count is reset.
        for _ in 0..49 {
            round(&mut yeah, &mut cx, &[104_999; 3], 1);
        }
        assert_eq!((yeah.fast_count, yeah.reno_count), (50, 200));
        round(&mut yeah, &mut cx, &[104_999; 3], 1);
        assert_eq!((yeah.fast_count, yeah.reno_count), (0, 2));
    }

    #[test]
    fn rounds_with_two_samples_or_fewer_decide_nothing() {
        let (mut yeah, mut cx) = setup(400, 70);
        round(&mut yeah, &mut cx, &[99_999; 2], 1);
        assert_eq!((cx.cwnd, yeah.doing_reno_now), (400, 0));
    }

    // docs/validation.md YeAH 3
    #[test]
    fn loss_removes_the_queue_unless_reno_mode_lasted() {
        // doing_reno_now < 16, cwnd 200, lastQ 10: reduction = max(min(10, 100), 200/8 = 25)
        // = 25 → ssthresh 175; reno_count 140 → 70, fast_count → 0.
        let (mut yeah, mut cx) = setup(200, 100);
        yeah.last_q = 10;
        yeah.reno_count = 140;
        yeah.fast_count = 7;
        yeah.doing_reno_now = 15;
        assert_eq!(yeah.ssthresh(&mut cx), 175);
        assert_eq!((yeah.reno_count, yeah.fast_count), (70, 0));
        // lastQ 60: min(60, 100) = 60 ≥ 25 → 140. lastQ 150: capped at half → 100.
        yeah.last_q = 60;
        assert_eq!(yeah.ssthresh(&mut cx), 140);
        yeah.last_q = 150;
        assert_eq!(yeah.ssthresh(&mut cx), 100);
        // 16 rounds of Reno mode: competing flows, halve: 200 − 100 = 100 whatever lastQ.
        yeah.last_q = 10;
        yeah.doing_reno_now = 16;
        assert_eq!(yeah.ssthresh(&mut cx), 100);
        // Never below 2.
        cx.cwnd = 3;
        assert_eq!(yeah.ssthresh(&mut cx), 2);
    }
}
