//! TCP Prague, the L4S scalable congestion control (RFC 9331 §4 "Prague L4S requirements"),
//! as the L4STeam kernel's `net/ipv4/tcp_prague.c` (module version 0.6) computes it. DCTCP's
//! scheme (RFC 8257) with:
//! * α as an upscaled EWMA (`prague_update_alpha`): α·16 in 2^-20 units is kept so the
//!   remainder carries over; once per round (snd_una past the round's snd_nxt) α ← α − α/16 +
//!   F/16 with F the CE-marked fraction of the packets delivered in the round, updated only
//!   once a CE mark has been seen (`saw_ce`); α starts at 1;
//! * a fractional window (`frac_cwnd`, 2^-20 packets) behind cwnd: on entering CWR it drops
//!   by α/2 of itself, rounded to nearest (`prague_enter_cwr`); each ACK adds
//!   `ai_ack_increase`·acked/cwnd for the packets it delivered unmarked (`prague_update_cwnd`,
//!   the ACK's CE count taken off: "unsaturated" increase); cwnd then moves one packet per ACK
//!   toward ⌈frac_cwnd⌉ (and ssthresh follows a decrease), so Prague is a `cong_control`
//!   algorithm: no PRR, it is paced, and it stays in CWR much of the time on DualPI2;
//! * RTT independence (`prague_rtt_scaling`, default RTT_CONTROL_RATE): after
//!   `rtt_transition` rounds out of slow start, a flow whose smoothed RTT is below
//!   `rtt_target` (25 ms) grows by (RTT/target)² of a packet per RTT, as a flow at the target
//!   RTT would in rate (`prague_rate_scaled_ai_ack_increase`); it then updates α and reduces
//!   at most once per target RTT (`prague_target_rtt_elapsed`, `cwr_stamp`). RTTs are in
//!   units of 128 µs (`RTT_UNIT`). The other heuristics are there too: "scalable"
//!   (`prague_scalable_ai_ack_increase`), "additive" (target = rtt_target + SRTT), "none";
//! * loss as Reno: entering Recovery or an RTO halves frac_cwnd (`prague_enter_loss`) and
//!   freezes growth until Open; undo restores the window of before (`prague_cwnd_undo`);
//! * pacing at 100 % of frac_cwnd·MTU/SRTT (200 % while cwnd < ssthresh/2) and GSO bursts of
//!   at most 2^-`burst_shift` s (≈ 0.25 ms) at that rate (`prague_update_pacing_rate`,
//!   `prague_tso_segs`), the L4STeam kernel's `tso_segs` hook replacing `tcp_tso_autosize`.
//!
//! ECN: flows with Prague send ECT(1) on every data segment with accurate CE feedback (the
//! tcplab-tcp `L4s` ECN mode; Linux `TCP_CONG_NEEDS_ACCECN` and `TCP_ECN_ECT_1`). The
//! simulator's receivers always negotiate it, so Linux's `prague_reno` fallback (pure Reno
//! when AccECN is not negotiated) never applies and is not modelled.
//!
//! Departures from tcp_prague.c 0.6, and what is left out:
//! * 0.6 does not carry slow-start growth into `frac_cwnd` (its window would fall back to the
//!   initial one, a packet per ACK, after slow start); later L4STeam versions set frac_cwnd =
//!   cwnd after `tcp_slow_start`, which is done here;
//! * classic-ECN detection and fallback (`prague_ecn_fallback`, default 0 = off in the
//!   module: its srtt/mdev "pace" estimator and `classic_ecn` score) is left out, as the
//!   module's default is. Over a classic RFC 3168 AQM Prague therefore reacts as DCTCP
//!   would (α-scaled reductions), not as Reno; only loss gets a Reno halving;
//! * the `ece_delta` of the rate sample is the number of CE-marked packets the ACK newly
//!   delivered (`delivered_ce` growth), which is what AccECN's ACE counter conveys;
//! * `MAX_SCALED_RTT` (100 ms) is compared, as in the module, with an RTT in 128 µs units,
//!   so in effect scaling stops only above 12.8 s;
//! * the pacing rate is Linux's value in wire bytes (MTU = MSS + 52 header bytes); the
//!   sender spaces payload bytes by it, so Prague is paced ≈ 3.6 % faster than Linux would;
//!   before the first RTT sample Linux's rate is not divided by any SRTT (so huge: in effect
//!   unpaced), here it is left unset (unpaced);
//! * the later L4STeam versions' rate-based mode and MSS adaptation are not modelled.

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::gso::TCP_MIN_TSO_SEGS;
use crate::{CaState, CcCx, CongestionControl, CwndEvent, RateSample};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::packet::HEADER_BYTES;
use tcplab_core::{SimRng, SimTime};

/// Linux `MIN_CWND`.
const MIN_CWND: u32 = 2;
/// α's fixed point: 2^20 = 1 (`PRAGUE_ALPHA_BITS`, `PRAGUE_MAX_ALPHA`).
const ALPHA_BITS: u32 = 20;
const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// frac_cwnd's fixed point: 2^20 = one packet (`CWND_UNIT`, `ONE_CWND`).
const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
/// EWMA gain g = 1/2^4 (`PRAGUE_SHIFT_G`).
const SHIFT_G: u32 = 4;
/// RTTs in units of 2^7 µs (`RTT_UNIT`).
const RTT_UNIT: u32 = 7;
/// Linux `MAX_SCALED_RTT`: 100 ms in µs, compared with an RTT in 128 µs units.
const MAX_SCALED_RTT: u32 = 100_000;

/// RTT-independence heuristic (Linux `prague_rtt_scaling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttScaling {
    /// No RTT independence (`RTT_CONTROL_NONE`).
    None,
    /// Flows with an RTT up to the target get the same rate (`RTT_CONTROL_RATE`, default).
    Rate,
    /// A floor on marks per RTT at very low RTTs (`RTT_CONTROL_SCALABLE`).
    Scalable,
    /// Behave as a flow with `rtt_target` of extra RTT (`RTT_CONTROL_ADDITIVE`).
    Additive,
}

/// Parameters of TCP Prague (the module parameters of tcp_prague.c).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PragueConfig {
    /// RTT-independence heuristic (Linux `prague_rtt_scaling`).
    pub rtt_scaling: RttScaling,
    /// Reference RTT of RTT independence, µs (Linux `prague_rtt_target`); 0 turns it off.
    pub rtt_target_us: u32,
    /// Rounds out of slow start before a flow becomes RTT-independent (`prague_rtt_transition`).
    pub rtt_transition: u32,
    /// Longest GSO burst as 2^-burst_shift s at the pacing rate (`prague_burst_shift`).
    pub burst_shift: u32,
    /// Most segments per GSO burst, 0 = no cap (`prague_max_tso_segs`).
    pub max_tso_segs: u32,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig { rtt_scaling: RttScaling::Rate, rtt_target_us: 25_000, rtt_transition: 500, burst_shift: 12, max_tso_segs: 0 }
    }
}

impl AlgorithmConfig for PragueConfig {
    const NAME: &'static str = "prague";
    const SUMMARY: &'static str = "TCP Prague (L4S, L4STeam tcp_prague.c): DCTCP-like, ECT(1), RTT-independent, paced; turns L4S ECN on";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "rtt_scaling", unit: "", doc: "RTT independence: \"none\", \"rate\", \"scalable\" or \"additive\"" },
        ParamDoc { name: "rtt_target_us", unit: "µs", doc: "reference RTT of RTT independence; 0 = off" },
        ParamDoc { name: "rtt_transition", unit: "rounds", doc: "rounds after slow start before RTT independence" },
        ParamDoc { name: "burst_shift", unit: "", doc: "longest GSO burst 2^-burst_shift s at the pacing rate" },
        ParamDoc { name: "max_tso_segs", unit: "segments", doc: "most segments per GSO burst, 0 = no cap" },
    ];

    fn validate(&self) -> Result<(), String> {
        let s = self.burst_shift;
        check_range("burst_shift", s, s < 64, "0 ≤ burst_shift ≤ 63")
    }

    fn build(&self, _rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Prague::new(self))
    }
}

/// Linux `before(a, b)` on 32-bit sequence numbers.
fn seq_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[derive(Debug)]
pub struct Prague {
    cfg: PragueConfig,
    /// The heuristic in force: `cfg.rtt_scaling`, or None when the target is 0.
    rtt_indep: RttScaling,
    /// The reference RTT, 128 µs units.
    rtt_target: u32,
    /// When the window was last reduced for ECN (`cwr_stamp`).
    cwr_stamp: SimTime,
    /// When α was last updated (`alpha_stamp`).
    alpha_stamp: SimTime,
    /// α·16 in 2^-20 units (`upscaled_alpha`).
    upscaled_alpha: u64,
    /// Growth per unmarked packet delivered, 2^-20 packets, before the division by cwnd.
    ai_ack_increase: u64,
    /// The window in 2^-20 packets (`frac_cwnd`).
    frac_cwnd: u64,
    /// frac_cwnd and cwnd when a loss reduction began, for undo.
    loss_frac_cwnd: u64,
    loss_cwnd: u32,
    /// Segments per GSO burst the pacing rate allows (`max_tso_burst`).
    max_tso_burst: u32,
    /// `delivered` / `delivered_ce` at the start of the round, and its end (snd_nxt then).
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u32,
    /// Rounds since the last slow-start exit (`round`).
    round: u32,
    /// A CE mark was seen: there is an AQM on the path (`saw_ce`).
    saw_ce: bool,
    /// In a loss reduction: no growth until Open (`in_loss`).
    in_loss: bool,
    /// `delivered_ce` after the previous ACK, to count each ACK's marks.
    last_delivered_ce: u64,
}

impl Prague {
    pub fn new(cfg: &PragueConfig) -> Self {
        Prague {
            cfg: cfg.clone(),
            rtt_indep: RttScaling::None,
            rtt_target: 0,
            cwr_stamp: SimTime::ZERO,
            alpha_stamp: SimTime::ZERO,
            upscaled_alpha: MAX_ALPHA << SHIFT_G,
            ai_ack_increase: ONE_CWND,
            frac_cwnd: 0,
            loss_frac_cwnd: 0,
            loss_cwnd: 0,
            max_tso_burst: 1,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            last_delivered_ce: 0,
        }
    }

    /// α in 2^-20 units.
    fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// Linux `prague_is_rtt_indep`.
    fn is_rtt_indep(&self, cx: &CcCx) -> bool {
        self.rtt_indep != RttScaling::None && !cx.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    /// Linux `prague_target_rtt`, 128 µs units.
    fn target_rtt(&self, cx: &CcCx) -> u64 {
        let target = u64::from(self.rtt_target);
        match self.rtt_indep {
            RttScaling::Additive => target + (cx.srtt_us >> RTT_UNIT),
            _ => target,
        }
    }

    /// Linux `prague_target_rtt_elapsed` since `since`.
    fn target_rtt_elapsed(&self, cx: &CcCx, since: SimTime) -> bool {
        (self.target_rtt(cx) << RTT_UNIT) <= cx.now.saturating_since(since).as_micros()
    }

    /// Linux `prague_should_update_ewma`: a round has ended and, when RTT-independent, a
    /// target RTT has passed since the last update.
    fn should_update_ewma(&self, cx: &CcCx) -> bool {
        !seq_before(cx.snd_una, self.next_seq)
            && (self.rtt_indep == RttScaling::None || !self.is_rtt_indep(cx) || self.target_rtt_elapsed(cx, self.alpha_stamp))
    }

    /// Linux `prague_ai_ack_increase`.
    fn update_ai_ack_increase(&mut self, cx: &CcCx) {
        let rtt = (cx.srtt_us >> RTT_UNIT) as u32;
        self.ai_ack_increase =
            if self.rtt_indep == RttScaling::None || self.round < self.cfg.rtt_transition || rtt == 0 || rtt > MAX_SCALED_RTT {
                ONE_CWND
            } else if self.rtt_indep == RttScaling::Scalable {
                scalable_ai_ack_increase(u64::from(rtt))
            } else {
                rate_scaled_ai_ack_increase(u64::from(rtt), self.target_rtt(cx))
            };
    }

    /// Linux `prague_frac_cwnd_to_snd_cwnd`: ⌈frac_cwnd⌉, at least 1.
    fn frac_cwnd_packets(&self) -> u32 {
        (((self.frac_cwnd + ONE_CWND - 1) >> CWND_UNIT) as u32).max(1)
    }

    /// Linux `prague_new_round`.
    fn new_round(&mut self, cx: &CcCx) {
        self.next_seq = cx.snd_nxt;
        self.old_delivered_ce = cx.delivered_ce;
        self.old_delivered = cx.delivered;
        if !cx.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.cfg.rtt_transition;
            }
        }
        self.update_ai_ack_increase(cx);
    }

    /// Linux `prague_update_alpha`: α ← α − α/16 + F/16, kept ×16 (no update before the
    /// first CE mark); then a new round.
    fn update_alpha(&mut self, cx: &CcCx) {
        if self.saw_ce {
            let mut ecn_segs = cx.delivered_ce - self.old_delivered_ce;
            if ecn_segs > 0 {
                let acked = (cx.delivered - self.old_delivered).max(1);
                ecn_segs = (ecn_segs << ALPHA_BITS) / acked;
            }
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> SHIFT_G) + ecn_segs;
            self.alpha_stamp = cx.now;
            self.upscaled_alpha = alpha.min(MAX_ALPHA << SHIFT_G);
        }
        self.new_round(cx);
    }

    /// Linux `prague_update_cwnd`: grow frac_cwnd by the unmarked packets this ACK delivered,
    /// then move cwnd one packet toward it.
    fn update_cwnd(&mut self, cx: &mut CcCx, rs: &RateSample) {
        let ece_delta = cx.delivered_ce - self.last_delivered_ce;
        self.last_delivered_ce = cx.delivered_ce;
        let mut acked = i64::from(rs.acked_sacked);
        if ece_delta > 0 {
            self.saw_ce = true;
            acked -= ece_delta as i64;
        }
        if acked > 0 && !self.in_loss && cx.is_cwnd_limited() {
            let mut acked = acked as u32;
            if cx.in_slow_start() {
                acked = cx.slow_start(acked);
                self.frac_cwnd = u64::from(cx.cwnd) << CWND_UNIT;
                if acked == 0 {
                    self.update_ai_ack_increase(cx);
                    return;
                }
            }
            let cwnd = u64::from(self.frac_cwnd_packets());
            let increase = (u64::from(acked) * self.ai_ack_increase + (cwnd >> 1)) / cwnd;
            self.frac_cwnd += increase.max(u64::from(acked));
        }
        let target = self.frac_cwnd_packets();
        if cx.cwnd > target && cx.cwnd > MIN_CWND {
            cx.cwnd -= 1;
            cx.ssthresh = cx.cwnd;
            self.update_ai_ack_increase(cx);
        } else if cx.cwnd < target && cx.cwnd < cx.cwnd_clamp {
            cx.cwnd += 1;
            self.update_ai_ack_increase(cx);
        }
    }

    /// Linux `prague_update_pacing_rate` (bytes/s of wire bytes) and the GSO burst it allows.
    fn update_pacing_rate(&mut self, cx: &mut CcCx) {
        let mtu = u64::from(cx.mss + HEADER_BYTES);
        let mut rate = (1_000_000u64 << 3) * mtu;
        if cx.cwnd < cx.ssthresh / 2 {
            rate <<= 1;
        }
        // Linux divides by its srtt_us, which is 8 × the SRTT in µs.
        rate /= cx.srtt_us << 3;
        rate = rate.wrapping_mul(self.frac_cwnd).wrapping_add(ONE_CWND >> 1) >> CWND_UNIT;
        self.max_tso_burst = ((rate / mtu) >> self.cfg.burst_shift).max(1) as u32;
        cx.pacing_rate = rate;
    }

    /// Linux `prague_enter_loss`: halve frac_cwnd and stop growing until Open.
    fn enter_loss(&mut self, cx: &CcCx) {
        self.loss_cwnd = cx.cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd -= self.frac_cwnd >> 1;
        self.in_loss = true;
        self.update_ai_ack_increase(cx);
    }

    /// Linux `prague_enter_cwr`: frac_cwnd −= frac_cwnd·α/2, rounded to nearest; when
    /// RTT-independent at most once per target RTT.
    fn enter_cwr(&mut self, cx: &CcCx) {
        if self.is_rtt_indep(cx) && !self.target_rtt_elapsed(cx, self.cwr_stamp) {
            return;
        }
        self.cwr_stamp = cx.now;
        let reduction = self.alpha().wrapping_mul(self.frac_cwnd).wrapping_add(MAX_ALPHA) >> (ALPHA_BITS + 1);
        self.frac_cwnd -= reduction;
    }
}

/// Linux `prague_rate_scaled_ai_ack_increase`: (rtt/target)² of a packet, rounded (RTTs in
/// 128 µs units); a whole packet at or above the target.
fn rate_scaled_ai_ack_increase(rtt: u64, target: u64) -> u64 {
    if rtt >= target {
        return ONE_CWND;
    }
    let divisor = target * target;
    (((rtt << CWND_UNIT) * rtt) + (divisor >> 1)) / divisor
}

/// Linux `prague_scalable_ai_ack_increase`: at least 1/8 packet per RTT below R1 ≈ 1.5 ms,
/// growing to the rate-scaled increase toward R0 ≈ 16 ms (RTTs in 128 µs units).
fn scalable_ai_ack_increase(rtt: u64) -> u64 {
    const R0: u64 = (1 << 14) >> RTT_UNIT;
    const R1: u64 = ((1 << 10) + (1 << 9)) >> RTT_UNIT;
    let increase = ((ONE_CWND >> 3) * R0 + ONE_CWND * rtt.saturating_sub(R1).min(R0)) * rtt;
    (increase + ((R0 * R0) >> 1)) / (R0 * R0)
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    /// Linux `prague_init` (the ECN-capable path).
    fn init(&mut self, cx: &mut CcCx) {
        self.rtt_target = self.cfg.rtt_target_us >> RTT_UNIT;
        self.rtt_indep = if self.rtt_target > 0 { self.cfg.rtt_scaling } else { RttScaling::None };
        // Linux computes a pacing rate here when it has an SRTT, but from frac_cwnd before
        // setting it, i.e. 0: the flow stays unpaced until its first ACK, as here.
        self.alpha_stamp = cx.now;
        self.upscaled_alpha = MAX_ALPHA << SHIFT_G;
        self.frac_cwnd = u64::from(cx.cwnd) << CWND_UNIT;
        self.loss_frac_cwnd = 0;
        self.max_tso_burst = 1;
        self.round = 0;
        self.saw_ce = cx.delivered_ce > 0;
        self.last_delivered_ce = cx.delivered_ce;
        self.new_round(cx);
    }

    /// Linux `prague_ssthresh`: unchanged (the window is cut through frac_cwnd).
    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        cx.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// Linux `prague_cong_control`.
    fn cong_control(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.update_cwnd(cx, rs);
        if self.should_update_ewma(cx) {
            self.update_alpha(cx);
        }
        if cx.srtt_us > 0 {
            self.update_pacing_rate(cx);
        }
    }

    /// Linux `prague_state`.
    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        if new_state == cx.ca_state {
            return;
        }
        match new_state {
            CaState::Recovery => self.enter_loss(cx),
            CaState::Cwr => self.enter_cwr(cx),
            CaState::Open => self.in_loss = false,
            CaState::Disorder | CaState::Loss => {}
        }
    }

    /// Linux `prague_cwnd_event`: an RTO halves frac_cwnd.
    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        if ev == CwndEvent::Loss {
            self.enter_loss(cx);
        }
    }

    /// Linux `prague_cwnd_undo`.
    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        self.loss_cwnd.max(cx.cwnd)
    }

    /// Linux `prague_tso_segs`.
    fn tso_segs(&self, _cx: &CcCx) -> Option<u32> {
        let segs = self.max_tso_burst.max(TCP_MIN_TSO_SEGS);
        Some(if self.cfg.max_tso_segs > 0 { segs.min(self.cfg.max_tso_segs) } else { segs })
    }

    fn needs_accurate_ecn(&self) -> bool {
        true
    }

    fn sends_ect1(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::SimDuration;

    /// A Prague connection initialised at `cwnd` in congestion avoidance (ssthresh = cwnd),
    /// cwnd-limited, SRTT 20 ms, ECN negotiated, snd_nxt = 0.
    fn prague_at(cfg: &PragueConfig, cwnd: u32) -> (Prague, CcCx) {
        let mut cx = CcCx::new(1448);
        cx.ecn_enabled = true;
        cx.cwnd = cwnd;
        cx.ssthresh = cwnd;
        cx.is_cwnd_limited = true;
        cx.srtt_us = 20_000;
        let mut p = Prague::new(cfg);
        p.init(&mut cx);
        (p, cx)
    }

    /// One ACK delivering `acked` packets, `ce` of them CE-marked.
    fn ack(p: &mut Prague, cx: &mut CcCx, acked: u32, ce: u64) {
        cx.delivered += u64::from(acked);
        cx.delivered_ce += ce;
        let rs = RateSample { acked_sacked: acked, ..RateSample::invalid() };
        p.cong_control(cx, &rs);
    }

    /// A round of `sent` packets, `ce` of them marked, fully acknowledged; α updates at its end.
    fn round(p: &mut Prague, cx: &mut CcCx, sent: u32, ce: u64) {
        cx.snd_nxt = cx.snd_una + sent;
        p.new_round(cx);
        cx.snd_una = cx.snd_nxt;
        cx.delivered += u64::from(sent);
        cx.delivered_ce += ce;
        p.update_alpha(cx);
    }

    #[test]
    fn starts_with_alpha_one_and_the_window_as_its_fraction() {
        let (p, _) = prague_at(&PragueConfig::default(), 10);
        assert_eq!((p.alpha(), p.frac_cwnd, p.ai_ack_increase), (1 << 20, 10 << 20, 1 << 20));
        // 25 ms in 128 µs units: 25000 >> 7 = 195.
        assert_eq!((p.rtt_target, p.rtt_indep), (195, RttScaling::Rate));
        // Out of slow start the init counts a round.
        assert_eq!(p.round, 1);
        assert!(p.needs_accurate_ecn() && p.sends_ect1() && p.has_cong_control());
    }

    #[test]
    fn alpha_is_an_upscaled_ewma_with_gain_one_sixteenth() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 20);
        // No CE seen yet: α is not touched.
        round(&mut p, &mut cx, 20, 0);
        assert_eq!(p.upscaled_alpha, 1 << 24);
        p.saw_ce = true;
        // 5 of 20 marked: F = (5 << 20)/20 = 262144; 2^24 − 2^20 + 262144 = 15990784,
        // α = 15990784 >> 4 = 999424 (0.953).
        round(&mut p, &mut cx, 20, 5);
        assert_eq!((p.upscaled_alpha, p.alpha()), (15_990_784, 999_424));
        // No marks: 15990784 − 999424 = 14991360; the remainder is kept in the upscaled value.
        round(&mut p, &mut cx, 20, 0);
        assert_eq!(p.upscaled_alpha, 14_991_360);
        // All marked: + 2^20 − 14991360/16 = 14991360 − 936960 + 1048576, capped at 2^24.
        round(&mut p, &mut cx, 20, 20);
        assert_eq!(p.upscaled_alpha, 15_102_976);
    }

    #[test]
    fn a_marked_ack_sets_saw_ce_and_alpha_updates_once_per_round() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 20);
        cx.snd_nxt = 20;
        p.new_round(&cx);
        cx.snd_una = 10;
        ack(&mut p, &mut cx, 10, 2);
        assert!(p.saw_ce);
        assert_eq!(p.upscaled_alpha, 1 << 24, "the round has not ended");
        cx.snd_una = 20;
        ack(&mut p, &mut cx, 10, 0);
        // 2 of 20: (2 << 20)/20 = 104857; 2^24 − 2^20 + 104857.
        assert_eq!(p.upscaled_alpha, (1 << 24) - (1 << 20) + 104_857);
    }

    #[test]
    fn cwr_cuts_frac_cwnd_by_alpha_over_two_and_cwnd_follows_one_per_ack() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 100);
        // α = 0.5: (2^19·(100 << 20) + 2^20) >> 21 = 26214400 = 25 packets: 100·α/2.
        p.upscaled_alpha = 1 << 23;
        p.set_state(&mut cx, CaState::Cwr);
        cx.ca_state = CaState::Cwr;
        assert_eq!(p.frac_cwnd, 75 << 20);
        // A marked ACK grows nothing; cwnd steps down by one and ssthresh follows.
        ack(&mut p, &mut cx, 1, 1);
        assert_eq!((cx.cwnd, cx.ssthresh), (99, 99));
        for _ in 0..30 {
            ack(&mut p, &mut cx, 1, 1);
        }
        assert_eq!((cx.cwnd, cx.ssthresh, p.frac_cwnd), (75, 75, 75 << 20));
        // α = 0.1 (104858): (104858·(75 << 20) + 2^20) >> 21 = 3932175 (3.75 packets).
        p.upscaled_alpha = 104_858 << 4;
        cx.ca_state = CaState::Open;
        p.set_state(&mut cx, CaState::Cwr);
        assert_eq!(p.frac_cwnd, (75 << 20) - 3_932_175);
    }

    #[test]
    fn additive_increase_is_one_packet_per_window_of_unmarked_acks() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 10);
        // (1·2^20 + 10/2)/10 = 104858: frac 10590618, ⌈10.1⌉ = 11 packets at once.
        ack(&mut p, &mut cx, 1, 0);
        assert_eq!((p.frac_cwnd, cx.cwnd), (10_590_618, 11));
        // Nine more ACKs, each 2^20/11 rounded (95325): 10590618 + 9·95325 = 11448543 < 11·2^20.
        for _ in 0..9 {
            ack(&mut p, &mut cx, 1, 0);
        }
        assert_eq!((p.frac_cwnd, cx.cwnd), (11_448_543, 11));
        // A marked packet of the two this ACK delivers counts out: one unmarked.
        ack(&mut p, &mut cx, 2, 1);
        assert_eq!(p.frac_cwnd, 11_448_543 + 95_325);
        // Not cwnd-limited: no growth.
        cx.is_cwnd_limited = false;
        ack(&mut p, &mut cx, 5, 0);
        assert_eq!(p.frac_cwnd, 11_448_543 + 95_325);
    }

    #[test]
    fn slow_start_grows_cwnd_and_carries_it_into_the_fraction() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 10);
        cx.ssthresh = crate::INFINITE_SSTHRESH;
        cx.max_packets_out = 10; // cwnd-limited in slow start: cwnd < 2·max_packets_out
        ack(&mut p, &mut cx, 2, 0);
        assert_eq!((cx.cwnd, p.frac_cwnd), (12, 12 << 20));
        // A marked ACK: nothing grows; cwnd is not above ⌈frac⌉, so it stays.
        ack(&mut p, &mut cx, 1, 1);
        assert_eq!(cx.cwnd, 12);
    }

    #[test]
    fn rtt_independence_scales_the_increase_after_the_transition() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 100);
        assert_eq!(p.ai_ack_increase, 1 << 20, "round 1 < 500");
        p.round = 499;
        p.new_round(&cx);
        // SRTT 20 ms = 156 units, target 195: (156·156·2^20 + 38025/2) / 38025 = 671089 (0.64).
        assert_eq!((p.round, p.ai_ack_increase), (500, 671_089));
        // At or above the target: a whole packet.
        cx.srtt_us = 30_000;
        p.update_ai_ack_increase(&cx);
        assert_eq!(p.ai_ack_increase, 1 << 20);
        // "scalable" at 20 ms: R0 = 128, R1 = 12: ((2^17·128 + 2^20·128)·156 + 8192)/16384 = 1437696.
        cx.srtt_us = 20_000;
        p.rtt_indep = RttScaling::Scalable;
        p.update_ai_ack_increase(&cx);
        assert_eq!(p.ai_ack_increase, 1_437_696);
        // "additive": target 195 + 156 = 351: (156²·2^20 + 351²/2) / 351² = 207126.
        p.rtt_indep = RttScaling::Additive;
        p.update_ai_ack_increase(&cx);
        assert_eq!(p.ai_ack_increase, 207_126);
        // A target of 0 turns RTT independence off.
        let (p, _) = prague_at(&PragueConfig { rtt_target_us: 0, ..PragueConfig::default() }, 10);
        assert_eq!(p.rtt_indep, RttScaling::None);
    }

    #[test]
    fn when_rtt_independent_reductions_and_alpha_updates_wait_a_target_rtt() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 100);
        p.round = 500;
        cx.now = SimTime::ZERO + SimDuration::from_millis(10);
        p.cwr_stamp = SimTime::ZERO;
        // 10 ms since the last reduction < 195 units = 24.96 ms: no cut.
        p.set_state(&mut cx, CaState::Cwr);
        assert_eq!(p.frac_cwnd, 100 << 20);
        cx.now = SimTime::ZERO + SimDuration::from_micros(24_960);
        p.set_state(&mut cx, CaState::Cwr);
        assert_eq!(p.frac_cwnd, 50 << 20, "α = 1 halves");
        assert_eq!(p.cwr_stamp, cx.now);
        // A round has ended but the target RTT has not passed since the last α update.
        p.alpha_stamp = SimTime::ZERO + SimDuration::from_millis(10);
        cx.snd_una = p.next_seq;
        assert!(!p.should_update_ewma(&cx));
        // Exactly 195 << 7 = 24960 µs since: due.
        p.alpha_stamp = SimTime::ZERO;
        assert!(p.should_update_ewma(&cx));
    }

    #[test]
    fn loss_halves_the_fraction_freezes_growth_and_undo_restores() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 100);
        p.set_state(&mut cx, CaState::Recovery);
        cx.ca_state = CaState::Recovery;
        assert_eq!((p.frac_cwnd, p.in_loss, p.loss_cwnd), (50 << 20, true, 100));
        ack(&mut p, &mut cx, 3, 0);
        assert_eq!((cx.cwnd, p.frac_cwnd), (99, 50 << 20), "no growth in loss; one step down");
        assert_eq!(p.undo_cwnd(&mut cx), 100);
        assert_eq!(p.frac_cwnd, 100 << 20);
        p.set_state(&mut cx, CaState::Open);
        assert!(!p.in_loss);
        // An RTO halves too.
        p.cwnd_event(&mut cx, CwndEvent::Loss);
        assert_eq!(p.frac_cwnd, 50 << 20);
    }

    #[test]
    fn paces_at_the_window_per_srtt_with_quarter_millisecond_bursts() {
        let (mut p, mut cx) = prague_at(&PragueConfig::default(), 100);
        // (8e6·1500) / (20000·8) = 75000; (75000·(100 << 20) + 2^19) >> 20 = 7500000 B/s
        // = 100 packets of 1500 B per 20 ms. Bursts: 7500000/1500 = 5000 >> 12 = 1 → at least 2.
        p.update_pacing_rate(&mut cx);
        assert_eq!((cx.pacing_rate, p.max_tso_burst, p.tso_segs(&cx)), (7_500_000, 1, Some(2)));
        // cwnd < ssthresh/2: 200 %. 1000 packets: 150 MB/s → 100000 >> 12 = 24 per burst.
        cx.ssthresh = 300;
        p.frac_cwnd = 1000 << 20;
        p.update_pacing_rate(&mut cx);
        assert_eq!((cx.pacing_rate, p.max_tso_burst), (150_000_000, 24));
        let capped = Prague { cfg: PragueConfig { max_tso_segs: 8, ..PragueConfig::default() }, ..p };
        assert_eq!(capped.tso_segs(&cx), Some(8));
    }

    #[test]
    fn validates_burst_shift() {
        assert_eq!(PragueConfig::default().validate(), Ok(()));
        let e = PragueConfig { burst_shift: 64, ..PragueConfig::default() }.validate().unwrap_err();
        assert_eq!(e, "burst_shift = 64 is out of range; allowed: 0 ≤ burst_shift ≤ 63");
    }
}
