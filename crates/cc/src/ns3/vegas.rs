//! ns-3's TcpVegas (ns-3 3.44 `tcp-vegas.cc`, unchanged from 3.40 to ns-3-dev 3.48+), a
//! TcpNewReno subclass. Departs from the Linux module [`crate::vegas`]:
//! - the RTT is ns-3's `PktsAcked` argument, the smoothed RTT, once per ACK (dupACKs too);
//! - windows in whole segments: diff = segCwnd − ⌊segCwnd·baseRtt/minRtt⌋ (the backlog,
//!   rounded up), not ⌊cwnd·(minRtt − baseRtt)/baseRtt⌋; a decision rounds cwnd down to segments;
//! - on leaving slow start or shrinking, ssthresh = max(min(ssthresh, cwnd − SMSS), 2 SMSS), and
//!   `GetSsThresh` on loss returns the same, not Reno's half; after each decision ssthresh =
//!   max(ssthresh, ¾ cwnd); no floor of 2 segments on cwnd;
//! - a round ends when the cumulative ACK reaches (≥) the mark, not passes it; the mark starts
//!   at 0, so the first ACK ends a round; baseRtt is never forgotten (no `CwndEvent`);
//! - growth outside decisions, or with ≤ 2 samples, is ns-3 NewReno's (one segment per ACK).

use super::newreno;
use super::{CongState, Ns3CongestionOps, Tcb};
use crate::vegas::VegasConfig;
use tcplab_core::SimDuration;

/// ns-3 `Time::GetSeconds`: nanoseconds over 10⁹ as a double.
pub(crate) fn secs(d: SimDuration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// What the last Vegas round end did, for the cc_state column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    SlowStart,
    Increase,
    Hold,
    Decrease,
    /// Vegas off (not Open) or too few samples: NewReno's step.
    Reno,
}

/// TcpVegas.
#[derive(Clone, Debug)]
pub struct Vegas {
    /// `m_alpha`, `m_beta`, `m_gamma`: packets.
    alpha: u32,
    beta: u32,
    gamma: u32,
    round: RttRound,
    /// `m_doingVegasNow`.
    doing_vegas_now: bool,
    step: Step,
}

/// The RTT bookkeeping ns-3's TcpVegas and TcpYeah both keep (`m_baseRtt`, `m_minRtt`,
/// `m_cntRtt`, `m_begSndNxt`), fed by `PktsAcked`'s RTT argument (ns-3 passes SRTT).
#[derive(Clone, Debug)]
pub(super) struct RttRound {
    /// Minimum RTT argument over the connection (never forgotten).
    pub base_rtt: SimDuration,
    /// Minimum RTT argument of the current round.
    pub min_rtt: SimDuration,
    /// `PktsAcked` calls with a nonzero RTT this round.
    pub cnt_rtt: u32,
    /// The round ends when the cumulative ACK reaches this sequence.
    pub beg_snd_nxt: u64,
}

impl RttRound {
    pub fn new() -> Self {
        RttRound { base_rtt: SimDuration::MAX, min_rtt: SimDuration::MAX, cnt_rtt: 0, beg_snd_nxt: 0 }
    }

    /// `PktsAcked`: a zero RTT is no sample.
    pub fn sample(&mut self, rtt: SimDuration) {
        if rtt == SimDuration::ZERO {
            return;
        }
        self.min_rtt = self.min_rtt.min(rtt);
        self.base_rtt = self.base_rtt.min(rtt);
        self.cnt_rtt += 1;
    }

    /// The cumulative ACK has reached the round's mark.
    pub fn ended(&self, tcb: &Tcb) -> bool {
        tcb.last_acked_seq >= self.beg_snd_nxt
    }

    /// A new round from `m_nextTxSequence`.
    pub fn restart(&mut self, tcb: &Tcb) {
        self.beg_snd_nxt = tcb.next_tx_sequence;
        self.cnt_rtt = 0;
        self.min_rtt = SimDuration::MAX;
    }
}

impl Vegas {
    /// ns-3's constructor with the attributes of `config` (ns-3 defaults 2, 4, 1).
    pub fn new(config: &VegasConfig) -> Self {
        Vegas {
            alpha: config.alpha,
            beta: config.beta,
            gamma: config.gamma,
            round: RttRound::new(),
            doing_vegas_now: true,
            step: Step::SlowStart,
        }
    }

    /// `EnableVegas`: a fresh round from `m_nextTxSequence`; baseRtt is kept.
    fn enable(&mut self, tcb: &Tcb) {
        self.doing_vegas_now = true;
        self.round.restart(tcb);
    }

    /// The once-per-round decision (the `m_cntRtt > 2` branch of `IncreaseWindow`).
    fn decide(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        let mut seg_cwnd = tcb.cwnd_segments();
        let ratio = secs(self.round.base_rtt) / secs(self.round.min_rtt);
        let target = (f64::from(seg_cwnd) * ratio) as u32;
        // ns-3 asserts target ≤ segCwnd (baseRtt ≤ minRtt).
        let diff = seg_cwnd.saturating_sub(target);
        if diff > self.gamma && tcb.in_slow_start() {
            // Too fast: drop to the rate measured (+1 for the truncation), leave slow start.
            seg_cwnd = seg_cwnd.min(target + 1);
            tcb.cwnd = seg_cwnd * tcb.segment_size;
            tcb.ssthresh = ss_thresh(tcb);
            self.step = Step::SlowStart;
        } else if tcb.in_slow_start() {
            newreno::slow_start(tcb, segments_acked);
            self.step = Step::SlowStart;
        } else if diff > self.beta {
            seg_cwnd -= 1; // diff > 0 means segCwnd ≥ 1
            tcb.cwnd = seg_cwnd * tcb.segment_size;
            tcb.ssthresh = ss_thresh(tcb);
            self.step = Step::Decrease;
        } else if diff < self.alpha {
            tcb.cwnd = (seg_cwnd + 1) * tcb.segment_size;
            self.step = Step::Increase;
        } else {
            self.step = Step::Hold;
        }
        // ns-3 computes 3·cwnd/4 in 32 bits; 64 here (equal below 1.4 GB windows).
        tcb.ssthresh = tcb.ssthresh.max((3 * u64::from(tcb.cwnd) / 4) as u32);
    }
}

/// `TcpVegas::GetSsThresh`: max(min(ssthresh, cwnd − SMSS), 2 SMSS). As in ns-3 the
/// subtraction is unsigned 32-bit: a cwnd below one segment wraps and leaves ssthresh.
fn ss_thresh(tcb: &Tcb) -> u32 {
    tcb.ssthresh.min(tcb.cwnd.wrapping_sub(tcb.segment_size)).max(2 * tcb.segment_size)
}

impl Ns3CongestionOps for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn get_ss_thresh(&mut self, tcb: &Tcb, _bytes_in_flight: u32) -> u32 {
        ss_thresh(tcb)
    }

    fn pkts_acked(&mut self, _tcb: &mut Tcb, _segments_acked: u32, rtt: SimDuration) {
        self.round.sample(rtt);
    }

    fn congestion_state_set(&mut self, tcb: &mut Tcb, new_state: CongState) {
        if new_state == CongState::Open {
            self.enable(tcb);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn increase_window(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        if !self.doing_vegas_now {
            self.step = Step::Reno;
            newreno::increase_window(tcb, segments_acked);
            return;
        }
        if self.round.ended(tcb) {
            self.round.beg_snd_nxt = tcb.next_tx_sequence;
            if self.round.cnt_rtt <= 2 {
                // Perhaps only delayed-ACK samples: NewReno this time.
                self.step = Step::Reno;
                newreno::increase_window(tcb, segments_acked);
            } else {
                self.decide(tcb, segments_acked);
            }
            self.round.restart(tcb);
        } else if tcb.in_slow_start() {
            newreno::slow_start(tcb, segments_acked);
        }
    }

    fn mode(&self) -> Option<&'static str> {
        Some(match self.step {
            Step::SlowStart => "slow_start",
            Step::Increase => "increase",
            Step::Hold => "hold",
            Step::Decrease => "decrease",
            Step::Reno => "reno",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u32 = 1000;

    fn ms(x: f64) -> SimDuration {
        SimDuration::from_nanos((x * 1e6) as u64)
    }

    /// Vegas at `cwnd_segs`, `ssthresh` bytes, baseRtt 100 ms already measured and a fresh
    /// round (Open) that began at sequence 100 000.
    fn setup(cwnd_segs: u32, ssthresh: u32) -> (Vegas, Tcb) {
        let mut t = Tcb::new(SEG, cwnd_segs, u32::MAX);
        t.ssthresh = ssthresh;
        t.next_tx_sequence = 100_000;
        t.last_acked_seq = 50_000;
        let mut v = Vegas::new(&VegasConfig::default());
        v.pkts_acked(&mut t, 1, SimDuration::from_millis(100));
        v.congestion_state_set(&mut t, CongState::Open);
        (v, t)
    }

    /// One round: a PktsAcked per RTT in `rtts`, then the ACK that reaches the mark, with a
    /// window more sent since.
    fn round(v: &mut Vegas, t: &mut Tcb, rtts: &[SimDuration], segs: u32) {
        for &r in rtts {
            v.pkts_acked(t, 1, r);
        }
        t.last_acked_seq = v.round.beg_snd_nxt;
        t.next_tx_sequence = v.round.beg_snd_nxt + u64::from(t.cwnd);
        v.increase_window(t, segs);
    }

    #[test]
    fn congestion_avoidance_moves_one_segment_per_round() {
        // cwnd 50 seg, 110 ms: target ⌊50·100/110⌋ = ⌊45.45⌋ = 45, diff 5 > β 4 → 49 seg;
        // ssthresh max(min(40000, 49000 − 1000), 2000) = 40000, then max(·, 36750) = 40000.
        let (mut v, mut t) = setup(50, 40_000);
        round(&mut v, &mut t, &[SimDuration::from_millis(110); 3], 1);
        assert_eq!((t.cwnd, t.ssthresh, v.mode()), (49_000, 40_000, Some("decrease")));
        // 108 ms: ⌊49/1.08⌋ = ⌊45.37⌋ = 45, diff 4 = β → hold.
        round(&mut v, &mut t, &[SimDuration::from_millis(108); 3], 1);
        assert_eq!((t.cwnd, v.mode()), (49_000, Some("hold")));
        // 102 ms: ⌊49/1.02⌋ = ⌊48.04⌋ = 48, diff 1 < α 2 → 50 seg; ssthresh max(40000, 37500).
        round(&mut v, &mut t, &[SimDuration::from_millis(102); 3], 1);
        assert_eq!((t.cwnd, t.ssthresh, v.mode()), (50_000, 40_000, Some("increase")));
        // Mid-round ACKs in congestion avoidance change nothing.
        for _ in 0..100 {
            v.pkts_acked(&mut t, 2, SimDuration::from_millis(100));
            v.increase_window(&mut t, 2);
        }
        assert_eq!(t.cwnd, 50_000);
    }

    #[test]
    fn diff_is_the_backlog_rounded_up_not_linux_scaled_diff() {
        // cwnd 100 seg, 101.5 ms: ⌊100/1.015⌋ = ⌊98.52⌋ = 98, diff 2 = α → hold. Linux's
        // ⌊100·1.5/100⌋ = 1 < α would have grown.
        let (mut v, mut t) = setup(100, 50_000);
        round(&mut v, &mut t, &[ms(101.5); 3], 1);
        assert_eq!((t.cwnd, v.mode()), (100_000, Some("hold")));
        // A partial segment is dropped by a decision: 100.5 seg, 100 ms → diff 0 → 101 seg.
        t.cwnd = 100_500;
        round(&mut v, &mut t, &[SimDuration::from_millis(100); 3], 1);
        assert_eq!(t.cwnd, 101_000);
    }

    #[test]
    fn slow_start_ends_at_the_measured_rate_once_diff_exceeds_gamma() {
        // cwnd 40 seg in slow start, 102 ms: ⌊40/1.02⌋ = ⌊39.22⌋ = 39, diff 1 = γ → NewReno
        // slow start: +1 segment whatever the ACK covers.
        let (mut v, mut t) = setup(40, u32::MAX);
        round(&mut v, &mut t, &[SimDuration::from_millis(102); 3], 2);
        assert_eq!((t.cwnd, t.ssthresh, v.mode()), (41_000, u32::MAX, Some("slow_start")));
        // Mid-round ACKs slow-start too: one segment each (not every other RTT).
        v.increase_window(&mut t, 2);
        v.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 43_000);
        // 110 ms: ⌊43/1.1⌋ = ⌊39.09⌋ = 39, diff 4 > γ → cwnd min(43, 40) = 40 seg; ssthresh
        // max(min(∞, 39000), 2000) = 39000, then max(39000, 30000): congestion avoidance.
        round(&mut v, &mut t, &[SimDuration::from_millis(110); 3], 2);
        assert_eq!((t.cwnd, t.ssthresh), (40_000, 39_000));
        assert!(!t.in_slow_start());
        // ns-3 3.44 TcpVegas driven through /work/ns3venv (cppyy) on a TcpSocketState with
        // the same calls gives 41000, 43000, then 40000/39000.
    }

    #[test]
    fn two_samples_or_fewer_give_a_newreno_step() {
        // Slow start, two 200 ms samples (diff would be 20): NewReno slow start, +1 segment.
        let (mut v, mut t) = setup(40, u32::MAX);
        round(&mut v, &mut t, &[SimDuration::from_millis(200); 2], 2);
        assert_eq!((t.cwnd, v.mode()), (41_000, Some("reno")));
        // Zero RTTs (no sample yet: srtt 0) are not samples.
        round(&mut v, &mut t, &[SimDuration::ZERO, SimDuration::from_millis(200), SimDuration::from_millis(200)], 2);
        assert_eq!(t.cwnd, 42_000);
        // Three: ⌊42·100/200⌋ + 1 = 22 segments.
        round(&mut v, &mut t, &[SimDuration::from_millis(200); 3], 2);
        assert_eq!((t.cwnd, v.mode()), (22_000, Some("slow_start")));
        // CA, 2 samples: NewReno adds SMSS²/cwnd = 10⁶/22000 = 45 bytes.
        round(&mut v, &mut t, &[SimDuration::from_millis(100); 2], 1);
        assert_eq!(t.cwnd, 22_045);
    }

    #[test]
    fn rounds_end_when_the_ack_reaches_the_mark() {
        let (mut v, mut t) = setup(50, 40_000);
        for _ in 0..3 {
            v.pkts_acked(&mut t, 1, SimDuration::from_millis(110));
        }
        // One byte short of the mark (100 000): mid-round, nothing in CA.
        t.last_acked_seq = 99_999;
        v.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 50_000);
        // Exactly the mark ends it (Linux waits for an ACK beyond): diff 5 → 49 seg.
        t.last_acked_seq = 100_000;
        t.next_tx_sequence = 150_000;
        v.increase_window(&mut t, 1);
        assert_eq!((t.cwnd, v.round.beg_snd_nxt), (49_000, 150_000));
        // A fresh Vegas ends a round at its first ACK (mark 0), with no samples: NewReno.
        let mut v = Vegas::new(&VegasConfig::default());
        let mut t = Tcb::new(SEG, 10, u32::MAX);
        t.next_tx_sequence = 10_000;
        v.increase_window(&mut t, 1);
        assert_eq!((t.cwnd, v.round.beg_snd_nxt, v.mode()), (11_000, 10_000, Some("reno")));
    }

    #[test]
    fn loss_threshold_is_one_segment_below_cwnd_not_half() {
        let (mut v, t) = setup(50, 40_000);
        // max(min(40000, 49000), 2000) = 40000, whatever is in flight.
        assert_eq!(v.get_ss_thresh(&t, 50_000), 40_000);
        let mut t2 = t.clone();
        t2.cwnd = 30_000;
        assert_eq!(v.get_ss_thresh(&t2, 30_000), 29_000);
        t2.cwnd = 2_500;
        assert_eq!(v.get_ss_thresh(&t2, 2_500), 2_000);
        // cwnd below one segment: 500 − 1000 wraps in ns-3's uint32, ssthresh stays.
        t2.cwnd = 500;
        assert_eq!(v.get_ss_thresh(&t2, 500), 40_000);
    }

    #[test]
    fn the_ns3_stack_parses_and_builds_vegas_yeah_and_westwood() {
        use crate::CcConfig;
        use serde_json::json;
        let c = crate::ns3::parse(json!({"kind": "vegas", "alpha": 1})).unwrap();
        assert_eq!(c, CcConfig::Vegas(VegasConfig { alpha: 1, beta: 4, gamma: 1 }));
        for kind in ["vegas", "yeah", "westwood"] {
            let c = crate::ns3::parse(json!(kind)).unwrap();
            assert_eq!(crate::ns3::build(&c, tcplab_core::SimRng::stream(1, "cc"), crate::ns3::Ns3Version::V3_44).name(), kind);
        }
    }

    #[test]
    fn outside_open_newreno_steps_and_base_rtt_is_never_forgotten() {
        let (mut v, mut t) = setup(50, 40_000);
        v.congestion_state_set(&mut t, CongState::Recovery);
        // Vegas off: NewReno CA adds 10⁶/50000 = 20 bytes, whatever the RTTs.
        round(&mut v, &mut t, &[SimDuration::from_millis(200); 3], 1);
        assert_eq!(t.cwnd, 50_020);
        // Open again: a round from next_tx_sequence; baseRtt 100 ms kept, so 200 ms cuts:
        // ⌊50·0.5⌋ = 25, diff 25 > β → 49 seg (the 20 bytes are dropped).
        v.congestion_state_set(&mut t, CongState::Open);
        round(&mut v, &mut t, &[SimDuration::from_millis(200); 3], 1);
        assert_eq!(t.cwnd, 49_000);
        // Restart after idle does not reset baseRtt (ns-3 has no CwndEvent here).
        v.cwnd_event(&mut t, crate::ns3::CaEvent::TxStart);
        round(&mut v, &mut t, &[SimDuration::from_millis(200); 3], 1);
        assert_eq!(t.cwnd, 48_000);
    }
}
