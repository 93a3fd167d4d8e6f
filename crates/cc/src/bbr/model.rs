//! BBR v1 per-ACK model update, Linux `bbr_update_model`:
//! rounds and the bandwidth filter, ACK aggregation, the PROBE_BW gain cycle, full-pipe
//! detection, DRAIN, min-RTT and PROBE_RTT, and the gains of each mode. Same structure in
//! ns-3 TcpBbr, which lacks the EDT term and the long-term model.

use super::common;
use super::{
    Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT, CWND_MIN_TARGET, CYCLE_LEN, CYCLE_RAND, EXTRA_ACKED_WIN_RTTS, FULL_BW_CNT, FULL_BW_THRESH,
    PACING_GAIN,
};
use crate::{CcCx, RateSample};

impl Bbr {
    /// Linux `bbr_update_model`.
    pub(super) fn update_model(&mut self, cx: &mut CcCx, rs: &RateSample) {
        self.update_bw(cx, rs);
        self.update_ack_aggregation(cx, rs);
        self.update_cycle_phase(cx, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(cx);
        self.update_min_rtt(cx, rs);
        self.update_gains();
    }

    /// Step 1 (Linux `bbr_update_bw`): count rounds, feed the max filter.
    fn update_bw(&mut self, cx: &CcCx, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        // A round ends when a packet sent after the previous round's end is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cx.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.p.lt_bw {
            self.lt_bw_sampling(cx, rs);
        }
        let bw = u128::from(rs.delivered as u64) * u128::from(BW_UNIT) / rs.interval_us as u128;
        let bw = bw.min(u128::from(u64::MAX)) as u64;
        // App-limited samples only count when they raise the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(self.p.bw_win_rounds, self.rtt_cnt, bw);
        }
    }

    /// Step 2 (Linux `bbr_update_ack_aggregation`): the most packets acked beyond
    /// bw × epoch length, kept in two buckets of 5 rounds.
    fn update_ack_aggregation(&mut self, cx: &CcCx, rs: &RateSample) {
        let bw = self.bw();
        self.ack_aggr.update(cx, rs, self.p.extra_acked_gain, self.round_start, EXTRA_ACKED_WIN_RTTS, bw);
    }

    /// Step 3 (Linux `bbr_update_cycle_phase`): advance the PROBE_BW gain cycle.
    fn update_cycle_phase(&mut self, cx: &CcCx, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(cx, rs) {
            self.advance_cycle_phase(cx);
        }
    }

    /// Linux `bbr_is_next_cycle_phase`: a phase lasts one min_rtt; probing persists until
    /// in-flight reaches its target (or loss), draining ends early once in-flight is down to BDP.
    fn is_next_cycle_phase(&self, cx: &CcCx, rs: &RateSample) -> bool {
        let elapsed_us = cx.delivered_time.as_micros().saturating_sub(self.cycle_mstamp);
        let is_full_length = elapsed_us > u64::from(self.min_rtt_us);
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(cx, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= u64::from(self.inflight(bw, self.pacing_gain)));
        }
        is_full_length || inflight <= u64::from(self.inflight(bw, BBR_UNIT))
    }

    /// Linux `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, cx: &CcCx) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = cx.delivered_time.as_micros();
    }

    /// Linux `bbr_reset_probe_bw_mode`: start the cycle in a random phase other than 3/4.
    pub(super) fn reset_probe_bw_mode(&mut self, cx: &CcCx) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase(cx);
    }

    /// Linux `bbr_reset_mode`: back to STARTUP unless the pipe was filled.
    fn reset_mode(&mut self, cx: &CcCx) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(cx);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Step 4 (Linux `bbr_check_full_bw_reached`): the pipe is full after 3 rounds without
    /// 25 % growth of max_bw.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = (u128::from(self.full_bw) * u128::from(FULL_BW_THRESH)) >> BBR_SCALE;
        if u128::from(self.max_bw()) >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// Step 5 (Linux `bbr_check_drain`): STARTUP → DRAIN once the pipe is full, DRAIN →
    /// PROBE_BW once in-flight is down to BDP plus budget.
    fn check_drain(&mut self, cx: &mut CcCx) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            cx.ssthresh = self.inflight(self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(cx, cx.in_flight) <= u64::from(self.inflight(self.max_bw(), BBR_UNIT)) {
            self.reset_probe_bw_mode(cx);
        }
    }

    /// Linux `bbr_check_probe_rtt_done`: after the PROBE_RTT time (and round), restore cwnd.
    pub(super) fn check_probe_rtt_done(&mut self, cx: &mut CcCx) {
        let now = cx.now.as_jiffies();
        let Some(done) = self.probe_rtt_done_stamp else { return };
        if now <= done {
            return;
        }
        self.min_rtt_stamp = now;
        cx.cwnd = cx.cwnd.max(self.prior_cwnd);
        self.reset_mode(cx);
    }

    /// Step 6 (Linux `bbr_update_min_rtt`): the min-RTT filter, and PROBE_RTT when it expires.
    fn update_min_rtt(&mut self, cx: &mut CcCx, rs: &RateSample) {
        let now = cx.now.as_jiffies();
        let expired = now > self.min_rtt_stamp + self.p.min_rtt_win_ms;
        if rs.rtt_us >= 0 && (rs.rtt_us <= i64::from(self.min_rtt_us) || (expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
            self.min_rtt_stamp = now;
        }
        if self.p.probe_rtt_ms > 0 && expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(cx);
            self.probe_rtt_done_stamp = None;
        }
        // In PROBE_RTT, hold in-flight at the minimum for max(probe_rtt_ms, one round).
        if self.mode == Mode::ProbeRtt
            && common::hold_probe_rtt(
                cx,
                &mut self.probe_rtt_done_stamp,
                &mut self.probe_rtt_round_done,
                &mut self.next_rtt_delivered,
                self.round_start,
                CWND_MIN_TARGET,
                self.p.probe_rtt_ms,
            )
        {
            self.check_probe_rtt_done(cx);
        }
        // An idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// Step 7 (Linux `bbr_update_gains`).
    pub(super) fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (self.p.drain_gain, self.p.high_gain),
            Mode::ProbeBw if self.lt.use_bw => (BBR_UNIT, self.p.cwnd_gain),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], self.p.cwnd_gain),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }
}
