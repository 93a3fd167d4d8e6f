//! BBRv3 per-ACK model update, google/bbr v3 `bbr_main` / `bbr_update_model` (all but the PROBE_BW
//! cycle, which is in `probe_bw.rs`): rounds, ECN alpha, the latest-delivery and congestion signals
//! with the loss/ECN lower bounds, ACK aggregation, the STARTUP exits (loss, ECN, bw plateau),
//! DRAIN, min RTT and PROBE_RTT, and the gains of each mode. Draft differences (docs/models.md,
//! BBRv3) are marked where they apply.

use super::{
    AckPhase, Bbr3, Mode, Phase, BW_INF, BW_PROBE_CWND_GAIN, DRAFT_DRAIN_MAX_ROUNDS, ECN_ALPHA_GAIN, ECN_FACTOR, ECN_MAX_RTT_US,
    ECN_THRESH, FULL_ECN_CNT, INF, LOSS_EVENTS_MAX,
};
use crate::bbr::common;
use crate::bbr::{BBR_SCALE, BBR_UNIT, BW_UNIT, FULL_BW_CNT, FULL_BW_THRESH};
use crate::{CaState, CcCx, RateSample};

impl Bbr3 {
    /// Linux `bbr_update_model`.
    pub(super) fn update_model(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.update_congestion_signals(cx, rs);
        self.update_ack_aggregation(cx, rs);
        self.check_loss_too_high_in_startup(cx, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(cx);
        self.update_cycle_phase(cx, rs);
        self.update_min_rtt(cx, rs);
    }

    /// Step 1 (Linux `bbr_update_round_start`): a round ends when a packet sent after the
    /// previous round's end is delivered.
    pub(super) fn update_round_start(&mut self, cx: &CcCx, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cx.delivered;
            self.round_start = true;
            self.round_count += 1;
        }
    }

    /// Step 1 (Linux `bbr_update_ecn_alpha`), once per round: EWMA of the CE-marked fraction
    /// of the packets delivered since the last update.
    pub(super) fn update_ecn_alpha(&mut self, cx: &CcCx) {
        if !self.ecn_eligible && self.can_use_ecn(cx) && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        if !self.ecn_eligible {
            return;
        }
        let delivered = cx.delivered - self.alpha_last_delivered;
        if delivered == 0 {
            return;
        }
        let delivered_ce = cx.delivered_ce - self.alpha_last_delivered_ce;
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let alpha = ((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE;
        self.ecn_alpha = (alpha + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE)).min(BBR_UNIT);
        self.alpha_last_delivered = cx.delivered;
        self.alpha_last_delivered_ce = cx.delivered_ce;
        self.check_ecn_too_high_in_startup(ce_ratio);
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`: 2 rounds in a row with ≥ 50 % CE end STARTUP.
    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: u32) {
        if self.full_bw_reached {
            return;
        }
        self.startup_ecn_rounds = if ce_ratio >= ECN_THRESH { self.startup_ecn_rounds + 1 } else { 0 };
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// Step 2 (Linux `bbr_calculate_bw_sample`): ⌈delivered / interval⌉, 0 if invalid.
    pub(super) fn calculate_bw_sample(&mut self, rs: &RateSample) {
        self.sample_bw = if rs.interval_us > 0 && rs.delivered >= 0 {
            let bw = (u128::from(rs.delivered as u64) * u128::from(BW_UNIT)).div_ceil(rs.interval_us as u128);
            bw.min(u128::from(u64::MAX)) as u64
        } else {
            0
        };
    }

    /// Step 3 (Linux `bbr_update_latest_delivery_signals`): max rate and volume delivered in
    /// this loss round; a loss round ends like a round, from `loss_round_delivered`.
    pub(super) fn update_latest_delivery_signals(&mut self, cx: &CcCx, rs: &RateSample) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(self.sample_bw);
        self.inflight_latest = self.inflight_latest.max(sample_delivered(rs));
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = cx.delivered;
            self.loss_round_start = true;
        }
    }

    /// Step 9 (Linux `bbr_advance_latest_delivery_signals`): a new loss round starts from
    /// this ACK's sample (no TLP, so never the TLP exception).
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = self.sample_bw;
            self.inflight_latest = sample_delivered(rs);
        }
    }

    /// Linux `bbr_note_loss`: the first loss of a round restarts the loss round, so that it
    /// covers a full round trip of loss.
    pub(super) fn note_loss(&mut self, cx: &CcCx) {
        if !self.loss_in_round {
            self.loss_round_delivered = cx.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Step 5a (Linux `bbr_update_congestion_signals`): feed the max filter; once per loss
    /// round, adapt the lower bounds to the round's loss/ECN.
    fn update_congestion_signals(&mut self, cx: &CcCx, rs: &RateSample) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || self.sample_bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(self.sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(cx);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Linux `bbr_adapt_lower_bounds`: outside bandwidth probing, a round with ECN cuts
    /// inflight_lo to (1 − alpha/3), a round with loss cuts bw_lo and inflight_lo to β of
    /// themselves but not below what the round delivered.
    fn adapt_lower_bounds(&mut self, cx: &CcCx) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = INF;
        if self.ecn_in_round {
            self.init_lower_bounds(cx, false);
            let ecn_cut = BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE);
            ecn_inflight_lo = ((u64::from(self.inflight_lo) * u64::from(ecn_cut)) >> BBR_SCALE) as u32;
        }
        if self.loss_in_round {
            self.init_lower_bounds(cx, true);
            let loss_cut = u64::from(BBR_UNIT - self.p.beta);
            let bw_lo = (u128::from(self.bw_lo) * u128::from(loss_cut)) >> BBR_SCALE;
            self.bw_lo = self.bw_latest.max(bw_lo as u64);
            let inflight_lo = ((u64::from(self.inflight_lo) * loss_cut) >> BBR_SCALE) as u32;
            self.inflight_lo = self.inflight_latest.max(inflight_lo);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// Linux `bbr_init_lower_bounds`: start unset bounds from max_bw and cwnd.
    fn init_lower_bounds(&mut self, cx: &CcCx, init_bw: bool) {
        if init_bw && self.bw_lo == BW_INF {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == INF {
            self.inflight_lo = cx.cwnd;
        }
    }

    /// Step 5b (Linux `bbr_update_ack_aggregation`): the most packets acked beyond bw × epoch
    /// length, kept in two buckets of 5 rounds (10 for the draft; 1 before the pipe is full).
    fn update_ack_aggregation(&mut self, cx: &CcCx, rs: &RateSample) {
        let win = if self.full_bw_reached { self.p.extra_acked_win_rtts } else { 1 };
        let bw = self.bw();
        self.ack_aggr.update(cx, rs, self.p.extra_acked_gain, self.round_start, win, bw);
    }

    /// Step 5c (Linux `bbr_check_loss_too_high_in_startup`): at the end of a Recovery round
    /// in STARTUP with ≥ full_loss_cnt lossy ACKs and a loss rate above loss_thresh, the pipe
    /// is full.
    fn check_loss_too_high_in_startup(&mut self, cx: &CcCx, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < LOSS_EVENTS_MAX {
            self.loss_events_in_round += 1;
        }
        if self.p.full_loss_cnt > 0
            && self.loss_round_start
            && cx.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.p.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux `bbr_handle_queue_too_high_in_startup`: end STARTUP with inflight_hi at the BDP
    /// (plus budget) or what the last round delivered, whichever is more.
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Step 5d (Linux `bbr_check_full_bw_reached`, v3): a bw plateau — no sample 25 % above
    /// full_bw for 3 rounds. The code tests the sample on every ACK, the draft only at round
    /// starts.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || rs.is_app_limited || (self.p.draft && !self.round_start) {
            return;
        }
        let bw_thresh = (u128::from(self.full_bw) * u128::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u128::from(self.sample_bw) >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = self.sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Step 5e (Linux `bbr_check_drain`): STARTUP → DRAIN once the pipe is full; DRAIN →
    /// PROBE_BW (DOWN) once in-flight is down to BDP plus budget (draft: or after 3 rounds).
    fn check_drain(&mut self, cx: &mut CcCx) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            // Informational only: marks the end of STARTUP, as Linux does.
            cx.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
            self.drain_start_round = self.round_count;
        }
        if self.mode == Mode::Drain {
            let drained = self.packets_in_net_at_edt(cx, cx.in_flight) <= u64::from(self.inflight(self.max_bw(), BBR_UNIT));
            let timed_out = self.p.draft && self.round_count > self.drain_start_round + DRAFT_DRAIN_MAX_ROUNDS;
            if drained || timed_out {
                self.start_down(cx);
            }
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: after the PROBE_RTT time (and round), restore cwnd.
    pub(super) fn check_probe_rtt_done(&mut self, cx: &mut CcCx) {
        let Some(done) = self.probe_rtt_done_stamp else { return };
        let now = cx.now.as_jiffies();
        if now <= done {
            return;
        }
        // The next PROBE_RTT is due probe_rtt_win_ms from now.
        self.probe_rtt_min_stamp = now;
        cx.cwnd = cx.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(cx);
    }

    /// Linux `bbr_exit_probe_rtt`: back to STARTUP, or to PROBE_BW with a fresh probe wait
    /// (DOWN) and at once CRUISE, since in-flight is already below the BDP.
    fn exit_probe_rtt(&mut self, cx: &CcCx) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.start_down(cx);
            self.start_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Step 5g (Linux `bbr_update_min_rtt`, v3): a 5 s min-RTT filter schedules PROBE_RTT;
    /// the 10 s min_rtt takes its value when it is lower or min_rtt has expired.
    fn update_min_rtt(&mut self, cx: &mut CcCx, rs: &RateSample) {
        let now = cx.now.as_jiffies();
        let probe_rtt_expired = now > self.probe_rtt_min_stamp + self.p.probe_rtt_win_ms;
        if rs.rtt_us >= 0 && (rs.rtt_us < i64::from(self.probe_rtt_min_us) || (probe_rtt_expired && !rs.is_ack_delayed)) {
            self.probe_rtt_min_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.p.min_rtt_win_ms;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.p.probe_rtt_ms > 0 && probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(cx);
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = cx.delivered;
        }
        // In PROBE_RTT, hold in-flight at PROBE_RTT's cwnd for max(probe_rtt_ms, one round).
        if self.mode == Mode::ProbeRtt {
            let cap = self.probe_rtt_cwnd();
            let done = common::hold_probe_rtt(
                cx,
                &mut self.probe_rtt_done_stamp,
                &mut self.probe_rtt_round_done,
                &mut self.next_rtt_delivered,
                self.round_start,
                cap,
                self.p.probe_rtt_ms,
            );
            if done {
                self.check_probe_rtt_done(cx);
            }
        }
        // An idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Step 6 (Linux `bbr_update_gains`, v3).
    pub(super) fn update_gains(&mut self) {
        let p = &self.p;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (p.startup_pacing_gain, p.startup_cwnd_gain),
            Mode::Drain => (p.drain_gain, p.startup_cwnd_gain),
            Mode::ProbeBw(Phase::Up) => (p.up_gain, p.cwnd_gain + BW_PROBE_CWND_GAIN),
            Mode::ProbeBw(Phase::Down) => (p.down_gain, p.cwnd_gain),
            Mode::ProbeBw(Phase::Cruise | Phase::Refill) => (BBR_UNIT, p.cwnd_gain),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }
}

/// `rs.delivered` as a packet count (0 if the sample is invalid).
fn sample_delivered(rs: &RateSample) -> u32 {
    rs.delivered.clamp(0, i64::from(u32::MAX)) as u32
}
