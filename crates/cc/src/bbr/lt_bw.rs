//! BBR v1 long-term ("policer") bandwidth estimate, Linux `bbr_lt_bw_sampling`.
//! Token-bucket policers let bursts through and then drop everything above their
//! rate; BBR v1 detects them as two consecutive sampling intervals (4–16 rounds, from a loss
//! to a loss) with ≥ 20 % loss and a consistent delivery rate, and then paces at their
//! average for 48 rounds. Linux-only: ns-3 TcpBbr and the BBR drafts have no such model.

use super::{rate_bytes_per_sec, Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::{CcCx, RateSample};

/// Least rounds in a sampling interval (Linux `bbr_lt_intvl_min_rtts`); the most is 4×.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// An interval is lossy at lost/delivered ≥ 50/256 ≈ 20 % (Linux `bbr_lt_loss_thresh`).
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals agree if their rates differ by ≤ 1/8 (Linux `bbr_lt_bw_ratio`) ...
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// ... or by ≤ 4 kbit/s, here in bytes/s (Linux `bbr_lt_bw_diff`).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds to use the long-term rate once policing is detected (Linux `bbr_lt_bw_max_rtts`).
const LT_BW_MAX_RTTS: u32 = 48;

/// Long-term sampling state (the `lt_*` fields of Linux `struct bbr`).
#[derive(Clone, Debug, Default)]
pub(super) struct LtBw {
    /// An interval is being sampled.
    is_sampling: bool,
    /// Rounds in the interval, or rounds spent using `bw`.
    rtt_cnt: u32,
    /// Policing detected: pace at `bw`.
    pub(super) use_bw: bool,
    /// Long-term rate, packets/µs << 24.
    pub(super) bw: u64,
    /// Interval start: connection `delivered`, delivered time (ms) and `lost`.
    last_delivered: u64,
    last_stamp_ms: u64,
    last_lost: u64,
}

impl Bbr {
    /// Linux `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, cx: &CcCx) {
        self.lt.last_stamp_ms = cx.delivered_time.as_micros() / 1000;
        self.lt.last_delivered = cx.delivered;
        self.lt.last_lost = cx.lost;
        self.lt.rtt_cnt = 0;
    }

    /// Linux `bbr_reset_lt_bw_sampling`: forget the estimate and stop using it.
    pub(super) fn reset_lt_bw_sampling(&mut self, cx: &CcCx) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_bw_sampling_interval(cx);
    }

    /// Linux `bbr_lt_bw_interval_done`: policed if `bw` matches the previous interval's.
    fn lt_bw_interval_done(&mut self, cx: &CcCx, bw: u64) {
        if self.lt.bw > 0 {
            let diff = bw.abs_diff(self.lt.bw);
            let close = u128::from(diff) * u128::from(BBR_UNIT) <= u128::from(LT_BW_RATIO) * u128::from(self.lt.bw);
            if close || rate_bytes_per_sec(cx.mss, diff, BBR_UNIT) <= LT_BW_DIFF {
                self.lt.bw = (bw + self.lt.bw) >> 1;
                self.lt.use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_bw_sampling_interval(cx);
    }

    /// Linux `bbr_lt_bw_sampling`, on every valid rate sample (and on RTO).
    pub(super) fn lt_bw_sampling(&mut self, cx: &CcCx, rs: &RateSample) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(cx);
                    self.reset_probe_bw_mode(cx);
                }
            }
            return;
        }
        // Start at a loss, once the policer's tokens are gone (earlier samples overestimate).
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(cx);
            self.lt.is_sampling = true;
        }
        // App-limited intervals would underestimate.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        // End the interval at a loss, with the tokens exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = cx.lost - self.lt.last_lost;
        let delivered = cx.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (cx.delivered_time.as_micros() / 1000) as i64 - self.lt.last_stamp_ms as i64;
        if t_ms < 1 {
            return;
        }
        // Linux keeps the interval in µs in a u32.
        if t_ms >= i64::from(u32::MAX / 1000) {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        let bw = (u128::from(delivered) * u128::from(BW_UNIT) / (t_ms as u128 * 1000)).min(u128::from(u64::MAX)) as u64;
        self.lt_bw_interval_done(cx, bw);
    }
}
