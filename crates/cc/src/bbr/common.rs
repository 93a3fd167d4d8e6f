//! What BBR v1 (`crate::bbr`, Linux tcp_bbr.c) and BBRv3 (`crate::bbr3`, google/bbr v3)
//! compute alike, in Linux units (bw in packets/µs << 24, gains in 1/256): the pacing-rate
//! setters, the BDP, the quantisation budget, packets in the network at the next departure,
//! the saved cwnd, the GSO goal both budget with and the ACK-aggregation (extra_acked) model.
//! Where the two versions differ, the difference is a parameter the caller passes: the rate
//! conversion (v3 floors it at 1 B/s), the BDP before any RTT (v1 `TCP_INIT_CWND`, v3
//! `init_cwnd`), the goal and budget rules ([`Version`]), the extra_acked window and when the
//! allowance applies.

use super::{BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, CWND_MIN_TARGET};
use crate::gso::{self, GSO_MAX_BYTES, PACING_SHIFT, TCP_MIN_TSO_SEGS};
use crate::{BbrInfo, CaState, CcCx, RateSample};

/// Restart the aggregation epoch once this many packets were acked in it (Linux
/// `bbr_ack_epoch_acked_reset_thresh`; the counter is a 20-bit field).
pub(crate) const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance is at most this much time at the estimated bw, µs (Linux
/// `bbr_extra_acked_max_us`).
pub(crate) const EXTRA_ACKED_MAX_US: u64 = 100_000;

/// Turns a bw (packets/µs << 24) and a gain (1/256) into a pacing rate for an MSS, bytes/s:
/// v1 `rate_bytes_per_sec`, v3 its `bbr_bw_to_pacing_rate` (at least 1 B/s).
pub(crate) type RateFn = fn(mss: u32, bw: u64, gain: u32) -> u64;

/// Linux `bbr_init_pacing_rate_from_rtt`: `startup_gain` · cwnd / SRTT (1 ms before any
/// RTT); notes in `has_seen_rtt` that SRTT was known.
pub(crate) fn init_pacing_rate_from_rtt(cx: &mut CcCx, has_seen_rtt: &mut bool, startup_gain: u32, to_rate: RateFn) {
    let rtt_us = if cx.srtt_us > 0 {
        *has_seen_rtt = true;
        cx.srtt_us
    } else {
        1_000
    };
    let bw = u64::from(cx.cwnd) * BW_UNIT / rtt_us;
    cx.pacing_rate = to_rate(cx.mss, bw, startup_gain);
}

/// Linux `bbr_set_pacing_rate`: pace at `bw` · `gain`, but never slower before the pipe is
/// full; the first ACK with an SRTT re-initialises the rate from it.
pub(crate) fn set_pacing_rate(
    cx: &mut CcCx,
    has_seen_rtt: &mut bool,
    full_bw_reached: bool,
    startup_gain: u32,
    to_rate: RateFn,
    bw: u64,
    gain: u32,
) {
    let rate = to_rate(cx.mss, bw, gain);
    if !*has_seen_rtt && cx.srtt_us != 0 {
        init_pacing_rate_from_rtt(cx, has_seen_rtt, startup_gain, to_rate);
    }
    if full_bw_reached || rate > cx.pacing_rate {
        cx.pacing_rate = rate;
    }
}

/// Linux `bbr_get_info`: the model in `tcp_bbr_info`'s units, `bw` (packets/µs << 24)
/// turned into bytes/s for an MSS as `bw * mss_cache * USEC_PER_SEC >> BW_SCALE`.
pub(crate) fn info(cx: &CcCx, bw: u64, min_rtt_us: u32, pacing_gain: u32, cwnd_gain: u32) -> BbrInfo {
    BbrInfo { bw_bytes_per_sec: bytes_per_sec(cx, bw), min_rtt_us, pacing_gain, cwnd_gain, lt_bw_bytes_per_sec: None }
}

/// A bandwidth in packets/µs << 24 as bytes/s for an MSS (`bw * mss_cache * USEC_PER_SEC >> BW_SCALE`).
pub(crate) fn bytes_per_sec(cx: &CcCx, bw: u64) -> u64 {
    let bytes_per_sec = (u128::from(bw) * u128::from(cx.mss) * 1_000_000) >> BW_SCALE;
    bytes_per_sec.min(u128::from(u64::MAX)) as u64
}

/// Linux `bbr_bdp`: ⌈bw · min_rtt · gain⌉ packets, `no_rtt` before any RTT sample
/// (`min_rtt_us` = u32::MAX).
pub(crate) fn bdp(bw: u64, min_rtt_us: u32, gain: u32, no_rtt: u32) -> u32 {
    if min_rtt_us == u32::MAX {
        return no_rtt;
    }
    let w = u128::from(bw) * u128::from(min_rtt_us);
    let bdp = ((w * u128::from(gain)) >> BBR_SCALE).div_ceil(u128::from(BW_UNIT));
    bdp.min(u128::from(u32::MAX)) as u32
}

/// Where the two versions' GSO goal (Linux `bbr_tso_segs_goal`) and quantisation budget
/// (`bbr_quantization_budget`) differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// v1: goal ≈ 1 ms at the pacing rate, at least `bbr_min_tso_segs`, at most 127; the
    /// budget adds room for 3 goals, rounded up to even.
    V1,
    /// v3 (`bbr_tso_segs_generic`): goal as Linux `tcp_tso_autosize` with BBR's min RTT and at
    /// least 2; the budget is at least 3 goals and CWND_MIN_TARGET packets.
    V3,
}

/// Pacing rate below which BBR v1 sends single segments, bytes/s (Linux `bbr_min_tso_rate`,
/// 1.2 Mbit/s).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// Most segments in BBR v1's goal (Linux caps `bbr_tso_segs_goal` at 0x7F).
const MAX_TSO_GOAL_V1: u32 = 0x7F;

/// Linux `bbr_min_tso_segs` (v1): 1 segment per burst below 1.2 Mbit/s, else 2.
pub(crate) fn min_tso_segs_v1(pacing_rate: u64) -> u32 {
    if pacing_rate < MIN_TSO_RATE {
        1
    } else {
        TCP_MIN_TSO_SEGS
    }
}

/// BBR's send quantum, Linux `bbr_tso_segs_goal`: the GSO burst it budgets for (1 segment
/// without GSO). Linux derives it from `sk_pacing_rate` at each use; it is recomputed here
/// only when the pacing rate (or, for v3, BBR's min RTT) has changed since.
#[derive(Clone, Debug)]
pub(crate) struct TsoGoal {
    /// (pacing rate, min RTT) the goal was computed for.
    key: Option<(u64, u32)>,
    segs: u32,
}

impl Default for TsoGoal {
    fn default() -> Self {
        TsoGoal { key: None, segs: 1 }
    }
}

impl TsoGoal {
    /// Segments per burst.
    pub(crate) fn segs(&self) -> u32 {
        self.segs
    }

    /// Follows `cx.pacing_rate` and, for v3, BBR's `min_rtt_us`; call after setting the rate.
    pub(crate) fn update(&mut self, cx: &CcCx, version: Version, min_rtt_us: u32) {
        if !cx.gso {
            self.segs = 1;
            return;
        }
        let key = Some((cx.pacing_rate, if version == Version::V3 { min_rtt_us } else { 0 }));
        if key == self.key {
            return;
        }
        self.key = key;
        self.segs = match version {
            Version::V1 => {
                let bytes = (cx.pacing_rate >> PACING_SHIFT).min(GSO_MAX_BYTES);
                let segs = (bytes / u64::from(cx.mss.max(1))).min(u64::from(MAX_TSO_GOAL_V1)) as u32;
                segs.max(min_tso_segs_v1(cx.pacing_rate))
            }
            Version::V3 => gso::tso_autosize(cx.pacing_rate, cx.mss, u64::from(min_rtt_us), TCP_MIN_TSO_SEGS),
        };
    }
}

/// Linux `bbr_quantization_budget`: the version's padding for a send quantum of `goal`
/// segments, and 2 more packets while `probing` (v1's 5/4 phase, v3's PROBE_UP) so that
/// probing raises in-flight even for tiny BDPs.
pub(crate) fn quantization_budget(version: Version, goal: u32, cwnd: u32, probing: bool) -> u32 {
    let cwnd = match version {
        Version::V1 => cwnd.saturating_add(3 * goal).saturating_add(1) & !1,
        Version::V3 => cwnd.max(3 * goal).max(CWND_MIN_TARGET),
    };
    if probing {
        cwnd.saturating_add(2)
    } else {
        cwnd
    }
}

/// Linux `bbr_packets_in_net_at_edt`: `inflight_now` minus what the path delivers at `bw`
/// until the next departure time, plus that departure's `goal` segments when `pacing_gain`
/// probes (> 1).
pub(crate) fn packets_in_net_at_edt(cx: &CcCx, bw: u64, pacing_gain: u32, goal: u32, inflight_now: u32) -> u64 {
    let wait_us = cx.next_send_time.saturating_since(cx.now).as_micros();
    let delivered_meanwhile = (u128::from(bw) * u128::from(wait_us)) >> BW_SCALE;
    let mut at_edt = u64::from(inflight_now);
    if pacing_gain > BBR_UNIT {
        at_edt += u64::from(goal);
    }
    (u128::from(at_edt).saturating_sub(delivered_meanwhile)) as u64
}

/// Linux `bbr_save_cwnd`: the cwnd to restore after recovery or PROBE_RTT — the current one,
/// or the larger of it and `prior_cwnd` when already in recovery or PROBE_RTT.
pub(crate) fn saved_cwnd(prior_cwnd: u32, cx: &CcCx, prev_ca_state: CaState, in_probe_rtt: bool) -> u32 {
    if prev_ca_state < CaState::Recovery && !in_probe_rtt {
        cx.cwnd
    } else {
        prior_cwnd.max(cx.cwnd)
    }
}

/// The ACK-aggregation model (Linux `ack_epoch_*`, `extra_acked*` of `struct bbr`): the most
/// packets acked beyond bw × epoch length, kept in two buckets of some rounds each.
#[derive(Clone, Debug, Default)]
pub(crate) struct AckAggregation {
    /// Start of the aggregation epoch, µs.
    epoch_mstamp: u64,
    /// Packets acked in the epoch.
    epoch_acked: u32,
    /// Most packets acked beyond the expected, per bucket.
    extra_acked: [u32; 2],
    /// Rounds in the current bucket.
    win_rtts: u32,
    win_idx: usize,
}

impl AckAggregation {
    /// Starts a new epoch at `now_us` (connection start, restart from idle).
    pub(crate) fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp = now_us;
        self.epoch_acked = 0;
    }

    /// Most packets acked beyond the expected in the last one or two buckets.
    pub(crate) fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// Linux `bbr_update_ack_aggregation`, off when `gain` is 0: a bucket lasts `win_rtts`
    /// rounds, and `bw` gives the expected ACK count.
    pub(crate) fn update(&mut self, cx: &CcCx, rs: &RateSample, gain: u32, round_start: bool, win_rtts: u32, bw: u64) {
        if gain == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1f);
            if self.win_rtts >= win_rtts {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let delivered_us = cx.delivered_time.as_micros();
        let epoch_us = delivered_us.saturating_sub(self.epoch_mstamp);
        let expected = u128::from(bw) * u128::from(epoch_us) / u128::from(BW_UNIT);
        let mut expected = expected.min(u128::from(u32::MAX)) as u32;
        // Restart the epoch when ACKs fall behind the rate, or after very many of them.
        if self.epoch_acked <= expected || self.epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.epoch_acked = 0;
            self.epoch_mstamp = delivered_us;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked).min(ACK_EPOCH_ACKED_RESET_THRESH - 1);
        let extra = (self.epoch_acked - expected).min(cx.cwnd);
        let bucket = &mut self.extra_acked[self.win_idx];
        *bucket = (*bucket).max(extra);
    }

    /// Linux `bbr_ack_aggregation_cwnd`: `gain` · extra_acked, at most EXTRA_ACKED_MAX_US at
    /// `bw`; 0 when `gain` is 0.
    pub(crate) fn cwnd(&self, gain: u32, bw: u64) -> u32 {
        if gain == 0 {
            return 0;
        }
        let max_aggr_cwnd = u128::from(bw) * u128::from(EXTRA_ACKED_MAX_US) / u128::from(BW_UNIT);
        let aggr_cwnd = (u64::from(gain) * u64::from(self.extra_acked())) >> BBR_SCALE;
        u128::from(aggr_cwnd).min(max_aggr_cwnd) as u32
    }
}

/// Linux `bbr_update_min_rtt`'s work while in PROBE_RTT: marks the samples app-limited (so
/// that PROBE_RTT's low rate does not lower the bw estimate), and holds in-flight at `cap`
/// for max(`probe_rtt_ms`, one round): once in-flight is down to `cap` it sets `done_stamp`
/// and starts a round. Returns true when both have passed, i.e. when the caller is to run
/// its `bbr_check_probe_rtt_done`.
pub(crate) fn hold_probe_rtt(
    cx: &mut CcCx,
    done_stamp: &mut Option<u64>,
    round_done: &mut bool,
    next_rtt_delivered: &mut u64,
    round_start: bool,
    cap: u32,
    probe_rtt_ms: u64,
) -> bool {
    cx.app_limited = (cx.delivered + u64::from(cx.in_flight)).max(1);
    match *done_stamp {
        None if cx.in_flight <= cap => {
            *done_stamp = Some(cx.now.as_jiffies() + probe_rtt_ms);
            *round_done = false;
            *next_rtt_delivered = cx.delivered;
            false
        }
        None => false,
        Some(_) => {
            if round_start {
                *round_done = true;
            }
            *round_done
        }
    }
}
