//! BBR v1 as Linux tcp_bbr.c (draft-cardwell-iccrg-bbr-congestion-control-00
//! describes the same core). A path model — windowed-max delivery rate over 10 rounds,
//! windowed-min RTT over 10 s — sets the pacing rate and cwnd through the STARTUP → DRAIN →
//! PROBE_BW ⇄ PROBE_RTT state machine, with Linux's long-term (policer) bandwidth estimate
//! (`lt_bw.rs`) and ACK-aggregation allowance. This file holds the parameters, the hooks
//! and the control outputs; `model.rs` the per-ACK model update; `common.rs` the pieces
//! BBRv3 (`crate::bbr3`) computes alike (pacing rate, BDP, quantisation budget, in-flight at
//! EDT, saved cwnd, the ACK-aggregation model), called here with v1's parameters.
//!
//! Linux units and integer arithmetic: bandwidth in packets/µs << 24, gains in 1/256,
//! timestamps in jiffies (HZ = 1000) or µs as Linux keeps them. The send quantum is Linux's
//! GSO goal (`bbr_tso_segs_goal`: ≈ 1 ms at the pacing rate, 1 segment below 1.2 Mbit/s, else
//! at least 2; `bbr_min_tso_segs` is also the sender's `min_tso_segs`), or 1 with `tcp.gso`
//! off. Differences from Linux: bandwidth and extra_acked are u64/u32 where Linux has
//! u32/u16 (no wrap at absurd values); no `SO_MAX_PACING_RATE` cap (not modelled).
//!
//! ns-3 TcpBbr follows the same design with float gains, byte-based cwnd, no
//! long-term model and no earliest-departure-time term. Linux is followed.

pub(crate) mod common;
mod lt_bw;
mod minmax;
mod model;
#[cfg(test)]
pub(crate) mod test_helpers;
#[cfg(test)]
mod tests;

use crate::config::{check_range, AlgorithmConfig, ParamDoc};
use crate::{BbrInfo, CaState, CcCx, CongestionControl, CwndEvent, RateSample, INFINITE_SSTHRESH};
use common::{AckAggregation, TsoGoal, Version};
use lt_bw::LtBw;
use minmax::MaxFilter;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::SimRng;

/// Bandwidth is kept in packets/µs scaled by 2^BW_SCALE (Linux `BW_SCALE`).
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are kept in 1/2^BBR_SCALE (Linux `BBR_SCALE`, `BBR_UNIT`).
pub(crate) const BBR_SCALE: u32 = 8;
pub(crate) const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Jiffies per second (CONFIG_HZ_1000).
pub(crate) const HZ: u64 = 1000;
/// PROBE_BW pacing-gain cycle: probe at 5/4, drain at 3/4, cruise at 1 for six phases
/// (Linux `bbr_pacing_gain`).
const PACING_GAIN: [u32; 8] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
const CYCLE_LEN: usize = PACING_GAIN.len();
/// PROBE_BW starts in one of this many phases, never the 3/4 one (Linux `bbr_cycle_rand`).
const CYCLE_RAND: u32 = 7;
/// Least cwnd outside loss recovery, and PROBE_RTT's cwnd (Linux `bbr_cwnd_min_target`).
pub(crate) const CWND_MIN_TARGET: u32 = 4;
/// STARTUP has filled the pipe once bw grew < 25 % (Linux `bbr_full_bw_thresh` = 5/4) ...
pub(crate) const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
/// ... for this many rounds in a row (Linux `bbr_full_bw_cnt`).
pub(crate) const FULL_BW_CNT: u32 = 3;
/// Pace this many percent below the computed rate (Linux `bbr_pacing_margin_percent`).
const PACING_MARGIN_PERCENT: u64 = 1;
/// Linux `TCP_INIT_CWND`: the BDP before any RTT sample, and the slow-start floor.
const TCP_INIT_CWND: u32 = 10;
/// Each extra_acked bucket covers this many rounds (Linux `bbr_extra_acked_win_rtts`).
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;

/// Parameters of BBR v1 (Linux tcp_bbr.c constants).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BbrConfig {
    /// STARTUP pacing and cwnd gain, unitless, rounded to a multiple of 1/256. Default
    /// 739/256 ≈ 2.887 (2/ln 2).
    pub high_gain: f64,
    /// DRAIN pacing gain, unitless, rounded to a multiple of 1/256. Default 88/256 ≈ 0.344.
    pub drain_gain: f64,
    /// PROBE_BW cwnd gain, unitless: cwnd ≈ cwnd_gain·BDP. Default 2.
    pub cwnd_gain: f64,
    /// Least time in PROBE_RTT, ms (also at least one round); 0 disables PROBE_RTT as in Linux.
    pub probe_rtt_ms: u32,
    /// Window of the min-RTT filter, s: PROBE_RTT follows when it expires.
    pub min_rtt_win_s: u32,
    /// Window of the max-bandwidth filter, packet-timed rounds.
    pub bw_win_rounds: u32,
    /// Long-term (policer) bandwidth estimate (Linux `lt_bw`).
    pub lt_bw: bool,
    /// Gain on the ACK-aggregation cwnd allowance, unitless, rounded to a multiple of 1/256;
    /// 0 disables it.
    pub extra_acked_gain: f64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: 739.0 / 256.0,
            drain_gain: 88.0 / 256.0,
            cwnd_gain: 2.0,
            probe_rtt_ms: 200,
            min_rtt_win_s: 10,
            bw_win_rounds: 10,
            lt_bw: true,
            extra_acked_gain: 1.0,
        }
    }
}

/// A gain in 1/256 (BBR_UNIT).
pub(crate) fn gain(g: f64) -> u32 {
    (g * f64::from(BBR_UNIT)).round() as u32
}

/// Gains must be representable (≥ 1/256) and keep rates far from overflow (≤ 16).
pub(crate) fn check_gain(name: &str, g: f64) -> Result<(), String> {
    check_range(name, g, (1.0 / 256.0..=16.0).contains(&g), &format!("1/256 ≤ {name} ≤ 16"))
}

impl AlgorithmConfig for BbrConfig {
    const NAME: &'static str = "bbr";
    const SUMMARY: &'static str = "BBR v1, Linux tcp_bbr.c with long-term (policer) bw and ACK aggregation";
    const PARAMS: &'static [ParamDoc] = &[
        ParamDoc { name: "high_gain", unit: "", doc: "STARTUP pacing and cwnd gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "drain_gain", unit: "", doc: "DRAIN pacing gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "cwnd_gain", unit: "", doc: "PROBE_BW cwnd gain, rounded to a multiple of 1/256" },
        ParamDoc { name: "probe_rtt_ms", unit: "ms", doc: "least PROBE_RTT duration (0 = no PROBE_RTT)" },
        ParamDoc { name: "min_rtt_win_s", unit: "s", doc: "min-RTT filter window" },
        ParamDoc { name: "bw_win_rounds", unit: "rounds", doc: "max-bandwidth filter window" },
        ParamDoc { name: "lt_bw", unit: "", doc: "long-term (policer) bandwidth estimate" },
        ParamDoc { name: "extra_acked_gain", unit: "", doc: "ACK-aggregation allowance gain, rounded to a multiple of 1/256 (0 = off)" },
    ];

    fn validate(&self) -> Result<(), String> {
        check_gain("high_gain", self.high_gain)?;
        check_gain("drain_gain", self.drain_gain)?;
        check_gain("cwnd_gain", self.cwnd_gain)?;
        let g = self.extra_acked_gain;
        check_range("extra_acked_gain", g, (0.0..=16.0).contains(&g), "0 ≤ extra_acked_gain ≤ 16")?;
        check_range("min_rtt_win_s", self.min_rtt_win_s, self.min_rtt_win_s >= 1, "min_rtt_win_s ≥ 1")?;
        check_range("bw_win_rounds", self.bw_win_rounds, self.bw_win_rounds >= 1, "bw_win_rounds ≥ 1")
    }

    fn build(&self, rng: SimRng) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(self, rng))
    }
}

/// The parameters in Linux units.
#[derive(Clone, Debug)]
struct Params {
    high_gain: u32,
    drain_gain: u32,
    cwnd_gain: u32,
    probe_rtt_ms: u64,
    min_rtt_win_ms: u64,
    bw_win_rounds: u32,
    lt_bw: bool,
    extra_acked_gain: u32,
}

/// BBR's state machine (Linux `enum bbr_mode`; ns-3's `TcpBbr::BbrMode_t` has the same four).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// BBR v1 state (Linux `struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr {
    p: Params,
    /// Draws the starting PROBE_BW phase.
    rng: SimRng,
    mode: Mode,
    /// Minimum RTT of the min_rtt window, µs; u32::MAX = none yet.
    min_rtt_us: u32,
    /// When `min_rtt_us` was taken, jiffies.
    min_rtt_stamp: u64,
    /// End of PROBE_RTT, jiffies, once in-flight has fallen to the minimum.
    probe_rtt_done_stamp: Option<u64>,
    /// Max filter of delivery-rate samples (packets/µs << 24) over `bw_win_rounds` rounds.
    bw: MaxFilter,
    /// Packet-timed rounds so far.
    rtt_cnt: u32,
    /// `delivered` at which the current round ends.
    next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (a delivered time), µs.
    cycle_mstamp: u64,
    /// CA state seen on the previous ACK.
    prev_ca_state: CaState,
    /// First round of Recovery: send one packet per packet delivered.
    packet_conservation: bool,
    /// This ACK starts a new round.
    round_start: bool,
    /// Restarting after idle.
    idle_restart: bool,
    /// A round passed at PROBE_RTT's cwnd.
    probe_rtt_round_done: bool,
    lt: LtBw,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// STARTUP has filled the pipe.
    full_bw_reached: bool,
    /// Rounds without 25 % bw growth.
    full_bw_cnt: u32,
    /// Index into PACING_GAIN.
    cycle_idx: usize,
    has_seen_rtt: bool,
    /// cwnd saved on entering loss recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// Baseline bw for the full-pipe test.
    full_bw: u64,
    /// ACK-aggregation model, buckets of EXTRA_ACKED_WIN_RTTS rounds.
    ack_aggr: AckAggregation,
    /// Send quantum, following the pacing rate.
    tso_goal: TsoGoal,
}

/// Linux `bbr_rate_bytes_per_sec`: `rate` (packets/µs << 24) times `gain` (1/256) in
/// bytes per second, 1 % below.
pub(crate) fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
    let r = (u128::from(rate) * u128::from(mss) * u128::from(gain)) >> BBR_SCALE;
    let r = (r * u128::from(1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT))) >> BW_SCALE;
    r.min(u128::from(u64::MAX)) as u64
}

impl Bbr {
    pub fn new(config: &BbrConfig, rng: SimRng) -> Self {
        let p = Params {
            high_gain: gain(config.high_gain),
            drain_gain: gain(config.drain_gain),
            cwnd_gain: gain(config.cwnd_gain),
            probe_rtt_ms: u64::from(config.probe_rtt_ms),
            min_rtt_win_ms: u64::from(config.min_rtt_win_s) * HZ,
            bw_win_rounds: config.bw_win_rounds,
            lt_bw: config.lt_bw,
            extra_acked_gain: gain(config.extra_acked_gain),
        };
        Self::with(p, rng)
    }

    /// The state Linux `bbr_init` sets up, before it reads the connection.
    fn with(p: Params, rng: SimRng) -> Self {
        Bbr {
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            p,
            rng,
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: None,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt: LtBw::default(),
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_aggr: AckAggregation::default(),
            tso_goal: TsoGoal::default(),
        }
    }

    /// Windowed max delivery rate, packets/µs << 24.
    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth BBR uses: the long-term estimate while policed, else the max filter.
    fn bw(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / SRTT (1 ms before any RTT).
    fn init_pacing_rate_from_rtt(&mut self, cx: &mut CcCx) {
        common::init_pacing_rate_from_rtt(cx, &mut self.has_seen_rtt, self.p.high_gain, rate_bytes_per_sec);
        self.tso_goal.update(cx, Version::V1, self.min_rtt_us);
    }

    /// Linux `bbr_set_pacing_rate`: never slows down before the pipe is full.
    fn set_pacing_rate(&mut self, cx: &mut CcCx, bw: u64, gain: u32) {
        let (full, high_gain) = (self.full_bw_reached, self.p.high_gain);
        common::set_pacing_rate(cx, &mut self.has_seen_rtt, full, high_gain, rate_bytes_per_sec, bw, gain);
        self.tso_goal.update(cx, Version::V1, self.min_rtt_us);
    }

    /// Linux `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets (TCP_INIT_CWND before any RTT).
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        common::bdp(bw, self.min_rtt_us, gain, TCP_INIT_CWND)
    }

    /// Linux `bbr_quantization_budget`: room for 3 send quanta, rounded up to even, and 2
    /// more in the probing (5/4) phase.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let probing = self.mode == Mode::ProbeBw && self.cycle_idx == 0;
        common::quantization_budget(Version::V1, self.tso_goal.segs(), cwnd, probing)
    }

    /// Linux `bbr_inflight`: the in-flight target for `bw` and `gain`.
    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux `bbr_packets_in_net_at_edt`, at the bw in use.
    fn packets_in_net_at_edt(&self, cx: &CcCx, inflight_now: u32) -> u64 {
        common::packets_in_net_at_edt(cx, self.bw(), self.pacing_gain, self.tso_goal.segs(), inflight_now)
    }

    /// Linux `bbr_ack_aggregation_cwnd`: extra cwnd for ACK aggregation, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        self.ack_aggr.cwnd(self.p.extra_acked_gain, self.bw())
    }

    /// The cwnd BBR steers to: bdp(bw, cwnd_gain) + aggregation allowance + budget.
    fn target_cwnd(&self, bw: u64) -> u32 {
        self.quantization_budget(self.bdp(bw, self.cwnd_gain).saturating_add(self.ack_aggregation_cwnd()))
    }

    /// Linux `bbr_save_cwnd`: the last good cwnd, to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, cx: &CcCx) {
        self.prior_cwnd = common::saved_cwnd(self.prior_cwnd, cx, self.prev_ca_state, self.mode == Mode::ProbeRtt);
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: deduct losses, conserve packets in the
    /// first round of Recovery, restore the saved cwnd when recovery ends. Returns the cwnd
    /// and whether packet conservation decides it alone.
    fn recover_or_restore(&mut self, cx: &CcCx, rs: &RateSample, acked: u32) -> (u32, bool) {
        let state = cx.ca_state;
        let mut cwnd = cx.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = cx.delivered;
            cwnd = cx.in_flight.saturating_add(acked);
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            (cwnd.max(cx.in_flight.saturating_add(acked)), true)
        } else {
            (cwnd, false)
        }
    }

    /// Linux `bbr_set_cwnd`: slow-start toward the target, or snap down to it once the pipe
    /// is full; at least 4 packets; PROBE_RTT caps at 4.
    fn set_cwnd(&mut self, cx: &mut CcCx, rs: &RateSample, bw: u64) {
        let acked = rs.acked_sacked;
        let mut cwnd = cx.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(cx, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.target_cwnd(bw);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || cx.delivered < u64::from(TCP_INIT_CWND) {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        cx.cwnd = cwnd.min(cx.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            cx.cwnd = cx.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        BbrConfig::NAME
    }

    fn init(&mut self, cx: &mut CcCx) {
        *self = Bbr::with(self.p.clone(), self.rng.clone());
        cx.ssthresh = INFINITE_SSTHRESH;
        cx.paced = true;
        self.min_rtt_us = cx.min_rtt_us.min(u64::from(u32::MAX)) as u32;
        self.min_rtt_stamp = cx.now.as_jiffies();
        self.init_pacing_rate_from_rtt(cx);
        self.reset_lt_bw_sampling(cx);
        self.ack_aggr.restart_epoch(cx.now.as_micros());
    }

    fn ssthresh(&mut self, cx: &mut CcCx) -> u32 {
        self.save_cwnd(cx);
        cx.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.update_model(cx, rs);
        let bw = self.bw();
        self.set_pacing_rate(cx, bw, self.pacing_gain);
        self.set_cwnd(cx, rs, bw);
    }

    fn set_state(&mut self, cx: &mut CcCx, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            // An RTO ends the round, and counts as a loss for the policer estimate.
            self.round_start = true;
            if self.p.lt_bw {
                let rs = RateSample { losses: 1, ..RateSample::invalid() };
                self.lt_bw_sampling(cx, &rs);
            }
        }
    }

    /// Linux `bbr_min_tso_segs`.
    fn min_tso_segs(&self, cx: &CcCx) -> u32 {
        common::min_tso_segs_v1(cx.pacing_rate)
    }

    fn undo_cwnd(&mut self, cx: &mut CcCx) -> u32 {
        // A spurious slow-down: redo full-pipe detection and policer sampling.
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(cx);
        cx.cwnd
    }

    fn cwnd_event(&mut self, cx: &mut CcCx, ev: CwndEvent) {
        if ev == CwndEvent::TxStart && cx.app_limited != 0 {
            self.idle_restart = true;
            self.ack_aggr.restart_epoch(cx.now.as_micros());
            // Restarting from idle and app-limited: pace at bw, no need for more.
            if self.mode == Mode::ProbeBw {
                self.set_pacing_rate(cx, self.bw(), BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(cx);
            }
        }
    }

    /// Linux `bbr_get_info`: the bw in use (`bbr_bw`), min_rtt and both gains; and the
    /// long-term bw while it is in use.
    fn get_info(&self, cx: &CcCx) -> Option<BbrInfo> {
        let lt_bw_bytes_per_sec = self.lt.use_bw.then(|| common::bytes_per_sec(cx, self.lt.bw));
        Some(BbrInfo { lt_bw_bytes_per_sec, ..common::info(cx, self.bw(), self.min_rtt_us, self.pacing_gain, self.cwnd_gain) })
    }

    fn mode(&self) -> Option<&'static str> {
        Some(match self.mode {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        })
    }
}
