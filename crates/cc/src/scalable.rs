//! Scalable TCP as modern Linux tcp_scalable.c (Kelly, "Scalable TCP:
//! improving performance in highspeed wide area networks", CCR 2003): a = 0.01 (+1 packet
//! per 100 packets acked once cwnd ≥ 100, Reno below), b = 0.125 (ssthresh = cwnd − cwnd/8).
//!
//! Older Linux and ns-3 TcpScalable (`AIFactor = 50`) count ACKs instead of acked packets
//! and add 1 per min(cwnd, 50) ACKs, compensating for delayed ACKs; that variant is
//! `{ ai_cnt = 50, count_acks = true }`. Modern Linux is the default.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::reno::slow_start_then_leftover;
use crate::{CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Linux `TCP_SCALABLE_AI_CNT`: packets acked per +1 once cwnd ≥ this (a = 1/100).
const AI_CNT: u32 = 100;
/// Linux `TCP_SCALABLE_MD_SCALE`: ssthresh = cwnd − cwnd >> 3 (b = 1/8).
const MD_SHIFT: u32 = 3;

/// Parameters of Scalable TCP.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScalableConfig {
    /// Packets (or ACKs with `count_acks`) per +1 packet of cwnd once cwnd ≥ ai_cnt; below
    /// that the step is Reno's (1 per cwnd). Linux 100 (a = 0.01); old Linux/ns-3 50.
    pub ai_cnt: u32,
    /// Count ACKs instead of acked packets in congestion avoidance (old Linux, ns-3).
    pub count_acks: bool,
}

impl Default for ScalableConfig {
    fn default() -> Self {
        ScalableConfig { ai_cnt: AI_CNT, count_acks: false }
    }
}

impl AlgorithmConfig for ScalableConfig {
    const NAME: &'static str = "scalable";
    const SUMMARY: &'static str = "Scalable TCP, Linux tcp_scalable.c (+1 per 100 acked, −1/8 on loss)";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "ai_cnt", unit: "packets", doc: "acked packets per +1 of cwnd once cwnd ≥ ai_cnt" },
        ParamDoc { name: "count_acks", unit: "", doc: "count ACKs, not acked packets (old Linux/ns-3, with ai_cnt 50)" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_range("ai_cnt", self.ai_cnt, self.ai_cnt >= 1, "ai_cnt ≥ 1")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Scalable { config: self.clone() })
    }
}

#[derive(Clone, Debug)]
pub struct Scalable {
    config: ScalableConfig,
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        ScalableConfig::NAME
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        (cx.cwnd - (cx.cwnd >> MD_SHIFT)).max(2)
    }

    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        let Some(acked) = slow_start_then_leftover(cx, acked).filter(|&a| a > 0) else {
            return;
        };
        let credit = if self.config.count_acks { 1 } else { acked };
        cx.cong_avoid_ai(cx.cwnd.min(self.config.ai_cnt), credit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scalable in congestion avoidance at `cwnd` (ssthresh = cwnd), cwnd-limited.
    fn setup(config: ScalableConfig, cwnd: u32) -> (Scalable, CcCx) {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        (Scalable { config }, cx)
    }

    fn acks(s: &mut Scalable, cx: &mut CcCx, n: u32, acked: u32) {
        for _ in 0..n {
            s.cong_avoid(cx, acked);
        }
    }

    // docs/validation.md Scalable 1
    #[test]
    fn congestion_avoidance_adds_one_per_100_acked_above_100_and_reno_below() {
        // cwnd 200: w = min(200, 100) = 100 → 99 acked leave 200, the 100th makes 201.
        let (mut s, mut cx) = setup(ScalableConfig::default(), 200);
        acks(&mut s, &mut cx, 99, 1);
        assert_eq!(cx.cwnd, 200);
        acks(&mut s, &mut cx, 1, 1);
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (201, 0));
        // One RTT = 200 acked packets from 200 → +2 (≈ 1 % per RTT).
        let (mut s, mut cx) = setup(ScalableConfig::default(), 200);
        acks(&mut s, &mut cx, 200, 1);
        assert_eq!(cx.cwnd, 202);
        // Counting packets, not ACKs: 50 ACKs of 2 packets are 100 acked → +1.
        let (mut s, mut cx) = setup(ScalableConfig::default(), 200);
        acks(&mut s, &mut cx, 50, 2);
        assert_eq!(cx.cwnd, 201);
        // cwnd 50: w = min(50, 100) = 50 (Reno): 49 acked → 50, 50 → 51.
        let (mut s, mut cx) = setup(ScalableConfig::default(), 50);
        acks(&mut s, &mut cx, 49, 1);
        assert_eq!(cx.cwnd, 50);
        acks(&mut s, &mut cx, 1, 1);
        assert_eq!(cx.cwnd, 51);
    }

    #[test]
    fn legacy_counts_acks_with_ai_50() {
        // cwnd 200, w = min(200, 50) = 50 ACKs per +1 whatever each ACK covers.
        let (mut s, mut cx) = setup(ScalableConfig { ai_cnt: 50, count_acks: true }, 200);
        acks(&mut s, &mut cx, 49, 2);
        assert_eq!(cx.cwnd, 200);
        acks(&mut s, &mut cx, 1, 2);
        assert_eq!(cx.cwnd, 201);
    }

    #[test]
    fn slow_start_leftover_goes_to_congestion_avoidance() {
        let (mut s, mut cx) = setup(ScalableConfig::default(), 198);
        cx.ssthresh = 200;
        s.cong_avoid(&mut cx, 5); // +2 to ssthresh, 3 credits left
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (200, 3));
        cx.is_cwnd_limited = false;
        acks(&mut s, &mut cx, 500, 1);
        assert_eq!(cx.cwnd, 200);
    }

    // docs/validation.md Scalable 2
    #[test]
    fn loss_takes_an_eighth_never_below_two() {
        let (mut s, mut cx) = setup(ScalableConfig::default(), 200);
        assert_eq!(s.ssthresh(&mut cx), 175); // 200 − 200>>3 = 200 − 25
        cx.cwnd = 9;
        assert_eq!(s.ssthresh(&mut cx), 8); // 9 − 1
        cx.cwnd = 3;
        assert_eq!(s.ssthresh(&mut cx), 3); // 3 − 0
        cx.cwnd = 1;
        assert_eq!(s.ssthresh(&mut cx), 2); // max(1 − 0, 2)
    }
}
