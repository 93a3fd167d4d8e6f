//! NewReno / Reno as Linux "reno" (RFC 5681, RFC 6582, RFC 6675): slow
//! start by packets acked, +1 packet per cwnd acked in congestion avoidance, halving on loss.
//! Recovery itself (PRR, SACK) lives in the sender. ns-3 TcpNewReno grows per ACK instead of
//! per packet acked (half as fast per RTT with delayed ACKs); Linux counting is used here.

use crate::config::{AlgorithmConfig, ParamDoc};
use crate::{CcCx, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Parameters of NewReno (none: Linux reno has no tunables).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenoConfig {}

impl AlgorithmConfig for RenoConfig {
    const NAME: &'static str = "newreno";
    const SUMMARY: &'static str = "NewReno with SACK and PRR, Linux \"reno\" counting (RFC 5681/6582/6675)";
    const PARAMS: &'static [ParamDoc] = &[];
    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Reno)
    }
}

#[derive(Debug, Default)]
pub struct Reno;

/// Linux `tcp_reno_cong_avoid`.
pub fn reno_cong_avoid(cx: &mut CcCx, acked: u32) {
    if let Some(leftover) = slow_start_then_leftover(cx, acked).filter(|&a| a > 0) {
        cx.cong_avoid_ai(cx.cwnd, leftover);
    }
}

/// The prologue of `tcp_reno_cong_avoid` that Reno-like algorithms share (Reno, Scalable,
/// YeAH): None unless cwnd-limited; in slow start grow by `acked` up to ssthresh. Returns
/// the packets left for congestion avoidance on this ACK (0 if slow start used them all).
pub(crate) fn slow_start_then_leftover(cx: &mut CcCx, acked: u32) -> Option<u32> {
    if !cx.is_cwnd_limited() {
        return None;
    }
    Some(if cx.in_slow_start() { cx.slow_start(acked) } else { acked })
}

/// The prologue Linux algorithms share that, unlike Reno, drop the slow-start leftover
/// (HighSpeed, BIC, H-TCP, Illinois): nothing unless cwnd-limited; in slow start grow by
/// `acked` (up to ssthresh). Returns true if congestion avoidance should run on this ACK.
pub(crate) fn ca_after_slow_start(cx: &mut CcCx, acked: u32) -> bool {
    if !cx.is_cwnd_limited() {
        return false;
    }
    if cx.in_slow_start() {
        cx.slow_start(acked);
        return false;
    }
    true
}

/// Linux `tcp_reno_ssthresh`: half the window, at least 2.
pub fn reno_ssthresh(cx: &CcCx) -> u32 {
    (cx.cwnd >> 1).max(2)
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        reno_ssthresh(cx)
    }
    fn cong_avoid(&mut self, cx: &mut CcCx, acked: u32) {
        reno_cong_avoid(cx, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited_cx(cwnd: u32) -> CcCx {
        let mut cx = CcCx::new(1500);
        cx.cwnd = cwnd;
        cx.max_packets_out = cwnd;
        cx.is_cwnd_limited = true;
        cx
    }

    // docs/validation.md Reno 1
    #[test]
    fn slow_start_doubles_per_rtt_whatever_the_ack_ratio() {
        let mut cx = limited_cx(10);
        for _ in 0..10 {
            Reno.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 20);
        let mut cx = limited_cx(10);
        for _ in 0..5 {
            Reno.cong_avoid(&mut cx, 2);
        }
        assert_eq!(cx.cwnd, 20);
    }

    // docs/validation.md Reno 2
    #[test]
    fn congestion_avoidance_adds_one_per_window_acked() {
        let mut cx = limited_cx(20);
        cx.ssthresh = 20;
        for _ in 0..19 {
            Reno.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 20);
        Reno.cong_avoid(&mut cx, 1);
        assert_eq!(cx.cwnd, 21);
    }

    #[test]
    fn slow_start_leftover_goes_to_congestion_avoidance() {
        let mut cx = limited_cx(18);
        cx.ssthresh = 20;
        Reno.cong_avoid(&mut cx, 5); // 2 to reach ssthresh, 3 credits left
        assert_eq!((cx.cwnd, cx.cwnd_cnt), (20, 3));
    }

    // docs/validation.md Reno 3 (the ssthresh part; PRR is tested in the sender)
    #[test]
    fn loss_halves_never_below_two() {
        let mut cx = limited_cx(40);
        assert_eq!(Reno.ssthresh(&mut cx), 20);
        cx.cwnd = 3;
        assert_eq!(Reno.ssthresh(&mut cx), 2);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut cx = limited_cx(20);
        cx.ssthresh = 10;
        cx.is_cwnd_limited = false;
        for _ in 0..100 {
            Reno.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.cwnd, 20);
    }
}
