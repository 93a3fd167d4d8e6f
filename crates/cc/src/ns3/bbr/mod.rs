//! ns-3's TcpBbr (ns-3 3.44 `src/internet/model/tcp-bbr.cc`, BBR v1 by NITK Surathkal), in
//! ns-3's units: windows and sequence counts in bytes, rates in bit/s (`DataRate`), gains as
//! doubles, times as ns-3 `Time`. The hooks are ns-3's: `CongestionStateSet(CA_OPEN)` the
//! first time initialises the model (TcpBbr has no `Init`), `CongControl` runs
//! `UpdateModelAndState` then `UpdateControlParameters` on every ACK, `GetSsThresh` only saves
//! the cwnd. [`Ns3Version::V3_35`] selects the older behaviour the reference studies ran.
//!
//! Differences from Linux tcp_bbr.c (and `crate::bbr`):
//! - no long-term (policer) model, no EDT term, no undo; the send quantum is 1 SMSS, so the
//!   in-flight budget is gain·BDP + 3 SMSS (+ 2 in the 5/4 phase), not rounded to even;
//! - min RTT follows `tcb->m_lastRtt` (latest sample), seeded from SRTT at the first CA_OPEN;
//! - the bw filter (ns-3 `WindowedFilter`) starts at cwnd·8/RTT (RTT in whole ms, 1 ms before
//!   a sample), replaced by the first sample, rebuilt at the first RTT sample;
//! - PROBE_BW starts in phase 3..7 or 0 (6 choices), Linux in 2..7 or 0 (7);
//! - PROBE_RTT's app-limited mark is TcpBbr's own, read only at TX_START: rate samples are
//!   not marked, and after the first PROBE_RTT every TX_START is an idle restart;
//! - extra-acked counts bytes, the epoch restarts at 4096 bytes and the expected count uses
//!   whole seconds: the allowance is at most 4095 bytes (Linux: up to 100 ms of bw);
//! - Recovery: cwnd = in-flight + max(ACKed bytes, SMSS) on entry, conservation for a round;
//! - `m_nextRoundDelivered` is 32-bit: past 4 GiB delivered the round test uses the
//!   truncated count (kept).

mod filter;
#[cfg(test)]
mod tests;

pub use super::Ns3Version;
use super::{linux_only, CaEvent, CongState, Ns3CongestionOps, RateConnection, RateSample, Tcb};
use crate::bbr::{BbrConfig, Mode};
use filter::MaxBwFilter;
use tcplab_core::{SimDuration, SimRng, SimTime};

/// `TcpBbr::PACING_GAIN_CYCLE`.
const PACING_GAIN_CYCLE: [f64; 8] = [5.0 / 4.0, 3.0 / 4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `GAIN_CYCLE_LENGTH`.
const GAIN_CYCLE_LENGTH: usize = PACING_GAIN_CYCLE.len();
/// `m_pacingMargin` (3.44; 3.35 had none).
const PACING_MARGIN: f64 = 0.01;
/// `ExtraAckedRttWindowLength` default, rounds.
const EXTRA_ACKED_WIN_RTT_LENGTH: u32 = 5;
/// `AckEpochAckedResetThresh` attribute default, bytes (the header's 1 << 17 is overridden).
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 12;
/// `m_extraAckedGain` (a fixed member, no attribute).
const EXTRA_ACKED_GAIN: u32 = 1;
/// ns-3's PROBE_BW cwnd gain (`EnterProbeBW`).
const PROBE_BW_CWND_GAIN: f64 = 2.0;

/// ns-3's attribute defaults as a [`BbrConfig`]: `HighGain` 2.89 (drain at 1/2.89),
/// `BwWindowLength` 10 rounds, `RttWindowLength` 10 s, `ProbeRttDuration` 200 ms, PROBE_BW
/// cwnd gain 2, extra-acked gain 1, no long-term model.
pub fn ns3_defaults() -> BbrConfig {
    BbrConfig {
        high_gain: 2.89,
        drain_gain: 1.0 / 2.89,
        cwnd_gain: PROBE_BW_CWND_GAIN,
        probe_rtt_ms: 200,
        min_rtt_win_s: 10,
        bw_win_rounds: 10,
        lt_bw: false,
        extra_acked_gain: f64::from(EXTRA_ACKED_GAIN),
    }
}

/// Refuses what ns-3's TcpBbr cannot express: it has attributes for the high gain, both filter
/// windows and the PROBE_RTT duration only.
pub fn check(c: &BbrConfig) -> Result<(), (String, String)> {
    if c.lt_bw {
        return Err(linux_only("lt_bw", c.lt_bw, "ns-3 TcpBbr has no long-term (policer) bandwidth model"));
    }
    if c.cwnd_gain != PROBE_BW_CWND_GAIN {
        return Err(linux_only("cwnd_gain", c.cwnd_gain, "ns-3 TcpBbr fixes the PROBE_BW cwnd gain at 2"));
    }
    // ns-3 drains at 1/HighGain. The ns-3 default (1/2.89) stands for "derived from high_gain".
    let derived = (c.drain_gain * c.high_gain - 1.0).abs() < 1e-9;
    if !derived && c.drain_gain != ns3_defaults().drain_gain {
        return Err(linux_only("drain_gain", c.drain_gain, "ns-3 TcpBbr drains at 1/high_gain"));
    }
    if c.extra_acked_gain != f64::from(EXTRA_ACKED_GAIN) {
        return Err(linux_only("extra_acked_gain", c.extra_acked_gain, "ns-3 TcpBbr's extra-acked gain is a fixed 1"));
    }
    if c.probe_rtt_ms == 0 {
        return Err(linux_only("probe_rtt_ms", c.probe_rtt_ms, "0 disables PROBE_RTT in Linux; ns-3's ProbeRttDuration 0 still enters it"));
    }
    Ok(())
}

/// `DataRate(x)` from a double: C++ truncates toward zero (saturating here).
fn rate(x: f64) -> u64 {
    x as u64
}

/// ns-3 TcpBbr's state (the members of `tcp-bbr.h`, same names without `m_`).
#[derive(Clone, Debug)]
pub struct Ns3Bbr {
    version: Ns3Version,
    /// `m_uv`: draws the starting PROBE_BW phase.
    rng: SimRng,
    high_gain: f64,
    bandwidth_window_length: u32,
    min_rtt_filter_len: SimDuration,
    probe_rtt_duration: SimDuration,
    state: Mode,
    max_bw_filter: MaxBwFilter,
    pacing_gain: f64,
    cwnd_gain: f64,
    is_pipe_filled: bool,
    min_pipe_cwnd: u32,
    round_count: u32,
    round_start: bool,
    /// `uint32_t` in ns-3 although it holds a 64-bit delivered count.
    next_round_delivered: u32,
    /// Zero = not set (ns-3 `Seconds(0)`).
    probe_rtt_done_stamp: SimTime,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prior_cwnd: u32,
    idle_restart: bool,
    target_cwnd: u32,
    full_bandwidth: u64,
    full_bandwidth_count: u32,
    /// `m_minRtt`; `SimDuration::MAX` = `Time::Max()`.
    min_rtt: SimDuration,
    send_quantum: u32,
    cycle_stamp: SimTime,
    cycle_index: usize,
    min_rtt_expired: bool,
    min_rtt_stamp: SimTime,
    is_initialized: bool,
    /// `rc.m_delivered` of the current ACK.
    delivered: u64,
    /// Set in PROBE_RTT, never cleared; only TX_START reads it.
    app_limited: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtt: u32,
    extra_acked_idx: usize,
    ack_epoch_time: SimTime,
    ack_epoch_acked: u32,
    has_seen_rtt: bool,
}

impl Ns3Bbr {
    /// TcpBbr with `config`'s attributes (which [`check`] accepted) and `rng` as `m_uv`.
    pub fn new(config: &BbrConfig, rng: SimRng, version: Ns3Version) -> Self {
        Ns3Bbr {
            version,
            rng,
            high_gain: config.high_gain,
            bandwidth_window_length: config.bw_win_rounds,
            min_rtt_filter_len: SimDuration::from_secs(u64::from(config.min_rtt_win_s)),
            probe_rtt_duration: SimDuration::from_millis(u64::from(config.probe_rtt_ms)),
            state: Mode::Startup,
            max_bw_filter: MaxBwFilter::default(),
            pacing_gain: 0.0,
            cwnd_gain: 0.0,
            is_pipe_filled: false,
            min_pipe_cwnd: 0,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            probe_rtt_done_stamp: SimTime::ZERO,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            target_cwnd: 0,
            full_bandwidth: 0,
            full_bandwidth_count: 0,
            min_rtt: SimDuration::MAX,
            send_quantum: 0,
            cycle_stamp: SimTime::ZERO,
            cycle_index: 0,
            min_rtt_expired: false,
            min_rtt_stamp: SimTime::ZERO,
            is_initialized: false,
            delivered: 0,
            app_limited: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtt: 0,
            extra_acked_idx: 0,
            ack_epoch_time: SimTime::ZERO,
            ack_epoch_acked: 0,
            has_seen_rtt: false,
        }
    }

    /// `InitPacingRate`: pacing on; rate = pacing gain × cwnd·8/RTT, RTT the socket's min RTT
    /// in whole ms (at least 1; 1 ms before any sample); the bw filter restarts from that
    /// nominal rate.
    fn init_pacing_rate(&mut self, tcb: &mut Tcb) {
        tcb.pacing = true;
        let rtt_ms = if tcb.min_rtt != SimDuration::MAX {
            self.has_seen_rtt = true;
            (tcb.min_rtt.as_nanos() / 1_000_000).max(1)
        } else {
            1
        };
        let rtt_s = rtt_ms as f64 / 1000.0;
        // `tcb->m_cWnd * 8` is 32-bit arithmetic.
        let nominal = rate(f64::from(tcb.cwnd.wrapping_mul(8)) / rtt_s);
        tcb.pacing_rate = rate(self.pacing_gain * nominal as f64);
        self.max_bw_filter = MaxBwFilter::new(self.bandwidth_window_length, nominal, 0);
    }

    /// `EnterStartup`.
    fn enter_startup(&mut self) {
        self.state = Mode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
    }

    /// `SetPacingRate`: gain × max bw (less 1 % in 3.44), at most MaxPacingRate; only upward
    /// until the pipe is full.
    fn set_pacing_rate(&mut self, tcb: &mut Tcb, gain: f64) {
        let mut r = rate(gain * self.max_bw_filter.best() as f64);
        if self.version == Ns3Version::V3_44 {
            r = rate(r as f64 * (1.0 - PACING_MARGIN));
        }
        r = r.min(tcb.max_pacing_rate);
        if !self.has_seen_rtt && tcb.min_rtt != SimDuration::MAX {
            self.init_pacing_rate(tcb);
        }
        if self.is_pipe_filled || r > tcb.pacing_rate {
            tcb.pacing_rate = r;
        }
    }

    /// `InFlight`: gain × BDP + 3 send quanta (+ 2 SMSS in the 5/4 phase), bytes; the initial
    /// window before any min RTT.
    fn in_flight(&self, tcb: &Tcb, gain: f64) -> u32 {
        if self.min_rtt == SimDuration::MAX {
            return tcb.initial_cwnd * tcb.segment_size;
        }
        let quanta = 3.0 * f64::from(self.send_quantum);
        let bdp = self.max_bw_filter.best() as f64 * self.min_rtt.as_secs_f64() / 8.0;
        if self.state == Mode::ProbeBw && self.cycle_index == 0 {
            return (gain * bdp + quanta + 2.0 * f64::from(tcb.segment_size)) as u32;
        }
        (gain * bdp + quanta) as u32
    }

    /// `AdvanceCyclePhase`.
    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % GAIN_CYCLE_LENGTH;
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    /// `IsNextCyclePhase`: a phase lasts more than min RTT; the 5/4 phase also until a loss
    /// or in-flight reached its target; the 3/4 phase ends early once in-flight ≤ BDP.
    fn is_next_cycle_phase(&self, tcb: &Tcb, rs: &RateSample) -> bool {
        let is_full_length = tcb.now.saturating_since(self.cycle_stamp) > self.min_rtt;
        if self.pacing_gain == 1.0 {
            is_full_length
        } else if self.pacing_gain > 1.0 {
            is_full_length && (rs.bytes_loss > 0 || rs.prior_in_flight >= self.in_flight(tcb, self.pacing_gain))
        } else {
            is_full_length || rs.prior_in_flight <= self.in_flight(tcb, 1.0)
        }
    }

    /// `CheckCyclePhase`.
    fn check_cycle_phase(&mut self, tcb: &Tcb, rs: &RateSample) {
        if self.state == Mode::ProbeBw && self.is_next_cycle_phase(tcb, rs) {
            self.advance_cycle_phase(tcb.now);
        }
    }

    /// `CheckFullPipe`: full after 3 round starts in a row without 25 % bw growth
    /// (app-limited samples do not count).
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.is_pipe_filled || !self.round_start || rs.is_app_limited {
            return;
        }
        let best = self.max_bw_filter.best();
        if best as f64 >= self.full_bandwidth as f64 * 1.25 {
            self.full_bandwidth = best;
            self.full_bandwidth_count = 0;
            return;
        }
        self.full_bandwidth_count += 1;
        if self.full_bandwidth_count >= 3 {
            self.is_pipe_filled = true;
        }
    }

    /// `EnterDrain`.
    fn enter_drain(&mut self) {
        self.state = Mode::Drain;
        self.pacing_gain = 1.0 / self.high_gain;
        self.cwnd_gain = self.high_gain;
    }

    /// `EnterProbeBW`: cycle index 7 − ⌊U[0, 6)⌋, then advanced: the first phase is 3..7 or 0.
    fn enter_probe_bw(&mut self, now: SimTime) {
        self.state = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
        self.cycle_index = GAIN_CYCLE_LENGTH - 1 - self.rng.below(6) as usize;
        self.advance_cycle_phase(now);
    }

    /// `CheckDrain`: STARTUP → DRAIN once the pipe is full (ssthresh set to the BDP budget),
    /// DRAIN → PROBE_BW once in-flight fits it.
    fn check_drain(&mut self, tcb: &mut Tcb) {
        if self.state == Mode::Startup && self.is_pipe_filled {
            self.enter_drain();
            tcb.ssthresh = self.in_flight(tcb, 1.0);
        }
        if self.state == Mode::Drain && tcb.bytes_in_flight <= self.in_flight(tcb, 1.0) {
            self.enter_probe_bw(tcb.now);
        }
    }

    /// `UpdateRTprop`: the latest RTT sample (`m_lastRtt`, not this ACK's) replaces a larger
    /// min RTT, or any min RTT older than the window.
    fn update_rt_prop(&mut self, tcb: &Tcb) {
        self.min_rtt_expired = tcb.now > self.min_rtt_stamp + self.min_rtt_filter_len;
        // ns-3 also requires m_lastRtt >= 0, which always holds.
        if tcb.last_rtt <= self.min_rtt || self.min_rtt_expired {
            self.min_rtt = tcb.last_rtt;
            self.min_rtt_stamp = tcb.now;
        }
    }

    /// `EnterProbeRTT`.
    fn enter_probe_rtt(&mut self) {
        self.state = Mode::ProbeRtt;
        self.pacing_gain = 1.0;
        self.cwnd_gain = 1.0;
    }

    /// `SaveCwnd`: the current cwnd, or the larger of it and the saved one in Recovery or
    /// PROBE_RTT.
    fn save_cwnd(&mut self, tcb: &Tcb) {
        if tcb.cong_state != CongState::Recovery && self.state != Mode::ProbeRtt {
            self.prior_cwnd = tcb.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tcb.cwnd);
        }
    }

    /// `RestoreCwnd`.
    fn restore_cwnd(&self, tcb: &mut Tcb) {
        tcb.cwnd = self.prior_cwnd.max(tcb.cwnd);
    }

    /// `ExitProbeRTT`.
    fn exit_probe_rtt(&mut self, now: SimTime) {
        if self.is_pipe_filled {
            self.enter_probe_bw(now);
        } else {
            self.enter_startup();
        }
    }

    /// `HandleProbeRTT`: once in-flight is down to 4 SMSS, hold it for ProbeRttDuration and a
    /// round, then restore the cwnd and leave.
    fn handle_probe_rtt(&mut self, tcb: &mut Tcb) {
        // 32-bit in ns-3.
        let total = (self.delivered as u32).wrapping_add(tcb.bytes_in_flight);
        self.app_limited = if total > 0 { total } else { 1 };
        if self.probe_rtt_done_stamp == SimTime::ZERO && tcb.bytes_in_flight <= self.min_pipe_cwnd {
            self.probe_rtt_done_stamp = tcb.now + self.probe_rtt_duration;
            self.probe_rtt_round_done = false;
            self.next_round_delivered = self.delivered as u32;
        } else if self.probe_rtt_done_stamp != SimTime::ZERO {
            if self.round_start {
                self.probe_rtt_round_done = true;
            }
            if self.probe_rtt_round_done && tcb.now > self.probe_rtt_done_stamp {
                self.min_rtt_stamp = tcb.now;
                self.restore_cwnd(tcb);
                self.exit_probe_rtt(tcb.now);
            }
        }
    }

    /// `CheckProbeRTT`.
    fn check_probe_rtt(&mut self, tcb: &mut Tcb, rs: &RateSample) {
        if self.state != Mode::ProbeRtt && self.min_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd(tcb);
            self.probe_rtt_done_stamp = SimTime::ZERO;
        }
        if self.state == Mode::ProbeRtt {
            self.handle_probe_rtt(tcb);
        }
        if rs.delivered != 0 {
            self.idle_restart = false;
        }
    }

    /// `AckAggregationCwnd`: gain × extra acked, at most 100 ms of max bw, once the pipe is
    /// full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.is_pipe_filled {
            return 0;
        }
        // `maxAggrBytes` is 32-bit.
        let max_aggr_bytes = (self.max_bw_filter.best() / (10 * 8)) as u32;
        let aggr = EXTRA_ACKED_GAIN.wrapping_mul(self.extra_acked[0].max(self.extra_acked[1]));
        aggr.min(max_aggr_bytes)
    }

    /// `UpdateAckAggregation`: bytes acked in the epoch beyond max bw × epoch length (the
    /// length truncated to whole seconds), the epoch restarting at 4096 bytes.
    fn update_ack_aggregation(&mut self, tcb: &Tcb, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtt = (self.extra_acked_win_rtt + 1).min(31);
            if self.extra_acked_win_rtt >= EXTRA_ACKED_WIN_RTT_LENGTH {
                self.extra_acked_win_rtt = 0;
                self.extra_acked_idx ^= 1;
                self.extra_acked[self.extra_acked_idx] = 0;
            }
        }
        let epoch_prop = (tcb.now.as_secs_f64() - self.ack_epoch_time.as_secs_f64()) as u32;
        let mut expected_acked = (self.max_bw_filter.best().wrapping_mul(u64::from(epoch_prop)) / 8) as u32;
        if self.ack_epoch_acked <= expected_acked || self.ack_epoch_acked.wrapping_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_time = tcb.now;
            expected_acked = 0;
        }
        self.ack_epoch_acked = self.ack_epoch_acked.wrapping_add(rs.acked_sacked);
        let extra = self.ack_epoch_acked.wrapping_sub(expected_acked).min(tcb.cwnd);
        let bucket = &mut self.extra_acked[self.extra_acked_idx];
        *bucket = (*bucket).max(extra);
    }

    /// `SetCwnd`: in Recovery, deduct losses and conserve packets for a round; else grow by
    /// the bytes acked toward the target (capped at it once the pipe is full); at least
    /// 4 SMSS; PROBE_RTT caps at 4 SMSS.
    fn set_cwnd(&mut self, tcb: &mut Tcb, rs: &RateSample) {
        if rs.acked_sacked != 0 {
            let conserving = tcb.cong_state == CongState::Recovery && self.modulate_cwnd_for_recovery(tcb, rs);
            if !conserving {
                self.target_cwnd = self.in_flight(tcb, self.cwnd_gain).wrapping_add(self.ack_aggregation_cwnd());
                if self.is_pipe_filled {
                    tcb.cwnd = tcb.cwnd.wrapping_add(rs.acked_sacked).min(self.target_cwnd);
                } else if tcb.cwnd < self.target_cwnd || self.delivered < u64::from(tcb.initial_cwnd * tcb.segment_size) {
                    tcb.cwnd = tcb.cwnd.wrapping_add(rs.acked_sacked);
                }
                tcb.cwnd = tcb.cwnd.max(self.min_pipe_cwnd);
            }
        }
        // `ModulateCwndForProbeRTT`.
        if self.state == Mode::ProbeRtt {
            tcb.cwnd = tcb.cwnd.min(self.min_pipe_cwnd);
        }
    }

    /// `ModulateCwndForRecovery`; true while conserving packets.
    fn modulate_cwnd_for_recovery(&self, tcb: &mut Tcb, rs: &RateSample) -> bool {
        if rs.bytes_loss > 0 {
            let c = i64::from(tcb.cwnd as i32) - i64::from(rs.bytes_loss as i32);
            tcb.cwnd = c.max(i64::from(tcb.segment_size)) as u32;
        }
        if self.packet_conservation {
            tcb.cwnd = tcb.cwnd.max(tcb.bytes_in_flight.wrapping_add(rs.acked_sacked));
            return true;
        }
        false
    }

    /// `UpdateRound`: a round ends when a packet sent after the last round end is delivered.
    fn update_round(&mut self, rs: &RateSample) {
        if rs.prior_delivered >= u64::from(self.next_round_delivered) {
            self.next_round_delivered = self.delivered as u32;
            self.round_count = self.round_count.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        } else {
            self.round_start = false;
        }
    }

    /// `UpdateBottleneckBandwidth` (3.35 `UpdateBtlBw`): an app-limited sample enters the
    /// filter only when it is at least the max.
    fn update_bottleneck_bandwidth(&mut self, rs: &RateSample) {
        let skip = match self.version {
            Ns3Version::V3_44 => rs.delivered < 0 || rs.interval == SimDuration::ZERO,
            Ns3Version::V3_35 => rs.delivery_rate_bps == 0,
        };
        if skip {
            return;
        }
        self.update_round(rs);
        if rs.delivery_rate_bps >= self.max_bw_filter.best() || !rs.is_app_limited {
            self.max_bw_filter.update(rs.delivery_rate_bps, self.round_count);
        }
    }
}

impl Ns3CongestionOps for Ns3Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `GetSsThresh`: saves the cwnd, leaves ssthresh as it is.
    fn get_ss_thresh(&mut self, tcb: &Tcb, _bytes_in_flight: u32) -> u32 {
        self.save_cwnd(tcb);
        tcb.ssthresh
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `CongControl`: `UpdateModelAndState`, then `UpdateControlParameters`.
    fn cong_control(&mut self, tcb: &mut Tcb, rc: &RateConnection, rs: &RateSample) {
        self.delivered = rc.delivered;
        self.update_bottleneck_bandwidth(rs);
        self.update_ack_aggregation(tcb, rs);
        self.check_cycle_phase(tcb, rs);
        self.check_full_pipe(rs);
        self.check_drain(tcb);
        self.update_rt_prop(tcb);
        self.check_probe_rtt(tcb, rs);
        self.set_pacing_rate(tcb, self.pacing_gain);
        self.send_quantum = tcb.segment_size;
        self.set_cwnd(tcb, rs);
    }

    /// `CongestionStateSet`: the first CA_OPEN initialises the model; Loss ends the round;
    /// Recovery starts packet conservation from in-flight + this ACK's bytes.
    fn congestion_state_set(&mut self, tcb: &mut Tcb, new_state: CongState) {
        match new_state {
            CongState::Open if !self.is_initialized => {
                self.min_rtt = match self.version {
                    // `m_srtt != Time::Max() ? m_srtt : Time::Max()`: SRTT, zero before a sample.
                    Ns3Version::V3_44 => tcb.srtt,
                    Ns3Version::V3_35 => tcb.last_rtt,
                };
                self.min_rtt_stamp = tcb.now;
                self.prior_cwnd = tcb.cwnd;
                tcb.ssthresh = tcb.initial_ssthresh;
                self.target_cwnd = tcb.cwnd;
                self.min_pipe_cwnd = 4 * tcb.segment_size;
                self.send_quantum = tcb.segment_size;
                self.next_round_delivered = 0;
                self.round_start = false;
                self.round_count = 0;
                self.is_pipe_filled = false;
                self.full_bandwidth = 0;
                self.full_bandwidth_count = 0;
                self.enter_startup();
                self.init_pacing_rate(tcb);
                self.ack_epoch_time = tcb.now;
                self.extra_acked_win_rtt = 0;
                self.extra_acked_idx = 0;
                self.ack_epoch_acked = 0;
                self.extra_acked = [0; 2];
                self.is_initialized = true;
            }
            CongState::Loss => {
                self.save_cwnd(tcb);
                self.round_start = true;
            }
            CongState::Recovery => {
                self.save_cwnd(tcb);
                tcb.cwnd = tcb.bytes_in_flight.wrapping_add(tcb.last_acked_sacked_bytes.max(tcb.segment_size));
                self.packet_conservation = true;
            }
            _ => {}
        }
    }

    /// `CwndEvent`: COMPLETE_CWR restores the cwnd; TX_START after PROBE_RTT has marked
    /// `m_appLimited` is a restart from idle.
    fn cwnd_event(&mut self, tcb: &mut Tcb, event: CaEvent) {
        match event {
            CaEvent::CompleteCwr => {
                self.packet_conservation = false;
                self.restore_cwnd(tcb);
            }
            CaEvent::TxStart if self.app_limited != 0 => {
                self.idle_restart = true;
                self.ack_epoch_time = tcb.now;
                self.ack_epoch_acked = 0;
                if self.state == Mode::ProbeBw {
                    self.set_pacing_rate(tcb, 1.0);
                } else if self.state == Mode::ProbeRtt && self.probe_rtt_round_done && tcb.now > self.probe_rtt_done_stamp {
                    self.min_rtt_stamp = tcb.now;
                    self.restore_cwnd(tcb);
                    self.exit_probe_rtt(tcb.now);
                }
            }
            _ => {}
        }
    }

    fn mode(&self) -> Option<&'static str> {
        Some(match self.state {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        })
    }
}
