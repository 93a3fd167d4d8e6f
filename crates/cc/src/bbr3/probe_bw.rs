//! BBRv3 PROBE_BW, google/bbr v3 `bbr_update_cycle_phase` and `bbr_adapt_upper_bounds`
//! (google/bbr v3 `bbr_update_cycle_phase`, `bbr_skb_marked_lost`): DOWN drains to the BDP less
//! headroom, CRUISE holds it until a probe is due (2–3 s, or at most 63 rounds for Reno
//! coexistence), REFILL sends at bw for a round, UP paces at 1.25 and raises inflight_hi by
//! 1, 2, 4, … packets per round until a bw plateau or a loss rate above 2 %, which sets
//! inflight_hi to the in-flight level where the loss rate crossed the threshold. The draft
//! has the same machine (draft-ietf-ccwg-bbr "ProbeBW").

use super::{AckPhase, Bbr3, Mode, Phase, BW_PROBE_RAND_ROUNDS, BW_PROBE_UP_ROUNDS_MAX, ECN_REPROBE_GAIN, ECN_THRESH, INF};
use crate::bbr::{BBR_SCALE, BBR_UNIT};
use crate::{CaState, CcCx, RateSample};

impl Bbr3 {
    /// Step 5f (Linux `bbr_update_cycle_phase`): adapt the upper bounds, then run the phase
    /// machine on `inflight` = packets in the network at the next departure.
    pub(super) fn update_cycle_phase(&mut self, cx: &CcCx, rs: &RateSample) {
        if !self.full_bw_reached || self.adapt_upper_bounds(cx, rs) {
            return;
        }
        let Mode::ProbeBw(phase) = self.mode else { return };
        let inflight = self.packets_in_net_at_edt(cx, rs.prior_in_flight);
        match phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(cx);
            }
            Phase::Refill => {
                // After a round at bw, the samples start to reflect the refilled pipe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_up(cx);
                }
            }
            Phase::Up => {
                let done = if self.prev_probe_too_high && inflight >= u64::from(self.inflight_hi) {
                    // The last probe went too high at this level: stop before it does again.
                    self.stopped_risky_probe = true;
                    true
                } else if cx.is_cwnd_limited && cx.cwnd >= self.inflight_hi {
                    // inflight_hi limits growth, so no plateau can be judged.
                    self.reset_full_bw();
                    self.full_bw = self.sample_bw;
                    false
                } else {
                    self.full_bw_now
                };
                if done {
                    self.prev_probe_too_high = false;
                    self.start_down(cx);
                }
            }
            Phase::Down => {
                if !self.check_time_to_probe_bw(cx) && self.is_time_to_cruise(inflight) {
                    self.start_cruise();
                }
            }
        }
    }

    /// Linux `bbr_adapt_upper_bounds`: track the probe's feedback round trips; on a loss or
    /// ECN rate that is too high while the samples reflect probing, cut inflight_hi; else
    /// raise it to any in-flight level found safe, and in UP probe it upward. Returns true if
    /// it started REFILL.
    fn adapt_upper_bounds(&mut self, cx: &CcCx, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: forget the previous cycle's bw.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            let in_probe_bw = matches!(self.mode, Mode::ProbeBw(_));
            if in_probe_bw && !rs.is_app_limited && self.bw_hi[1] != 0 {
                self.bw_hi = [self.bw_hi[1], 0];
            }
            // A probe stopped at inflight_hi without loss: probe again, holding there a round.
            if in_probe_bw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_refill(cx, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(cx, rs);
            }
        } else if self.inflight_hi != INF {
            // Robust to random loss: any level seen safe raises inflight_hi.
            self.inflight_hi = self.inflight_hi.max(rs.tx_in_flight);
            if self.mode == Mode::ProbeBw(Phase::Up) {
                self.probe_inflight_hi_upward(cx, rs);
            }
        }
        false
    }

    /// Linux `bbr_is_inflight_too_high`: the loss rate since the sampled packet was sent is
    /// above loss_thresh of what was in flight then, or (ECN) the CE ratio is above 1/2.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (u64::from(rs.tx_in_flight) * u64::from(self.p.loss_thresh)) >> BBR_SCALE;
            if rs.lost > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (rs.delivered * i64::from(ECN_THRESH)) >> BBR_SCALE;
            if rs.delivered_ce > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// Linux `bbr_handle_inflight_too_high`: once per probe, set inflight_hi to the level
    /// that was too high (but ≥ β·target) and, in UP, stop probing.
    fn handle_inflight_too_high(&mut self, cx: &CcCx, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        // An app-limited flight did not robustly probe the in-flight volume.
        if !rs.is_app_limited {
            let floor = (u64::from(self.target_inflight(cx)) * u64::from(BBR_UNIT - self.p.beta)) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(floor as u32);
        }
        if self.mode == Mode::ProbeBw(Phase::Up) {
            self.start_down(cx);
        }
    }

    /// Linux `bbr_skb_marked_lost`, run once per ACK that marks packets lost (the trait has
    /// no per-packet hook): note the loss round, and while the samples reflect probing test
    /// the lost flight with the ACK's own sample standing in for the lost packet's
    /// send-time snapshot (tx_in_flight, lost since, app-limited).
    pub(super) fn on_packets_lost(&mut self, cx: &CcCx, rs: &RateSample) {
        self.note_loss(cx);
        if !self.bw_probe_samples {
            return;
        }
        let lost = RateSample { tx_in_flight: rs.tx_in_flight, lost: rs.lost, is_app_limited: rs.is_app_limited, ..RateSample::invalid() };
        if self.is_inflight_too_high(&lost) {
            let tx_in_flight = self.inflight_hi_from_lost_packet(&lost);
            self.handle_inflight_too_high(cx, &RateSample { tx_in_flight, ..lost });
        }
    }

    /// Linux `bbr_inflight_hi_from_lost_skb` for a one-packet skb: the in-flight level at
    /// which the loss rate crossed loss_thresh, solving (lost_prev + x)/(inflight_prev + x)
    /// = loss_thresh for x and rounding up.
    pub(super) fn inflight_hi_from_lost_packet(&self, rs: &RateSample) -> u32 {
        let (Some(inflight_prev), Some(lost_prev)) = (rs.tx_in_flight.checked_sub(1), rs.lost.checked_sub(1)) else {
            return INF;
        };
        let loss_thresh = u64::from(self.p.loss_thresh);
        let loss_budget = (u64::from(inflight_prev) * loss_thresh + u64::from(BBR_UNIT) - 1) >> BBR_SCALE;
        let lost_prefix =
            if lost_prev >= loss_budget { 0 } else { ((loss_budget - lost_prev) << BBR_SCALE) / (u64::from(BBR_UNIT) - loss_thresh) };
        (u64::from(inflight_prev) + lost_prefix).min(u64::from(INF)) as u32
    }

    /// Linux `bbr_raise_inflight_hi_slope`: double the PROBE_UP growth each round, as
    /// packets acked per +1 of inflight_hi.
    fn raise_inflight_hi_slope(&mut self, cx: &CcCx) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(BW_PROBE_UP_ROUNDS_MAX);
        self.bw_probe_up_cnt = (cx.cwnd / growth_this_round).max(1);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: while cwnd-limited at inflight_hi, +1 per
    /// bw_probe_up_cnt packets acked; the slope doubles at each round start.
    fn probe_inflight_hi_upward(&mut self, cx: &CcCx, rs: &RateSample) {
        if !cx.is_cwnd_limited || cx.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cx);
        }
    }

    /// Linux `bbr_check_time_to_probe_bw`: REFILL when ECN marks stopped without loss (with
    /// a quick first round), when the probe wait has passed, or after the Reno-coexistence
    /// number of rounds. Returns true if it started REFILL.
    fn check_time_to_probe_bw(&mut self, cx: &CcCx) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && cx.ca_state == CaState::Open {
            // Start at 2^n ≈ inflight_hi·ecn_reprobe_gain packets in the first PROBE_UP round.
            let target = (u64::from(self.inflight_hi) * u64::from(ECN_REPROBE_GAIN)) >> BBR_SCALE;
            self.start_refill(cx, target.checked_ilog2().unwrap_or(0));
            return true;
        }
        let waited = cx.now.as_micros() > self.cycle_mstamp + self.probe_wait_us;
        let rounds = self.p.bw_probe_max_rounds.min(self.target_inflight(cx));
        if waited || self.rounds_since_probe >= rounds {
            self.start_refill(cx, 0);
            return true;
        }
        false
    }

    /// Linux `bbr_check_time_to_cruise`: in-flight is below inflight_hi's headroom and the BDP.
    fn is_time_to_cruise(&self, inflight: u64) -> bool {
        inflight <= u64::from(self.inflight_with_headroom()) && inflight <= u64::from(self.inflight(self.max_bw(), BBR_UNIT))
    }

    /// Linux `bbr_start_bw_probe_down`: a new cycle; draw the wait until the next probe.
    pub(super) fn start_down(&mut self, cx: &CcCx) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = INF;
        self.rounds_since_probe = self.rng.below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = self.p.bw_probe_base_us + u64::from(self.rng.below(self.p.bw_probe_rand_us));
        self.cycle_mstamp = cx.now.as_micros();
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = cx.delivered;
        self.mode = Mode::ProbeBw(Phase::Down);
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    pub(super) fn start_cruise(&mut self) {
        if self.inflight_lo != INF {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.mode = Mode::ProbeBw(Phase::Cruise);
    }

    /// Linux `bbr_start_bw_probe_refill`: drop the lower bounds and send at bw for a round.
    fn start_refill(&mut self, cx: &CcCx, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds.min(BW_PROBE_UP_ROUNDS_MAX);
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = cx.delivered;
        self.mode = Mode::ProbeBw(Phase::Refill);
    }

    /// Linux `bbr_start_bw_probe_up`.
    pub(super) fn start_up(&mut self, cx: &CcCx) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = cx.delivered;
        self.cycle_mstamp = cx.now.as_micros();
        self.reset_full_bw();
        self.full_bw = self.sample_bw;
        self.mode = Mode::ProbeBw(Phase::Up);
        self.raise_inflight_hi_slope(cx);
    }
}
