//! ns-3's TcpYeah (ns-3 3.44 `tcp-yeah.cc`, unchanged from 3.40 to ns-3-dev 3.48+), a
//! TcpNewReno subclass embedding a TcpScalable (AIFactor = StcpAiFactor) for fast mode.
//! Departs from the Linux module [`crate::yeah`]:
//! - slow mode is chosen whenever minRtt > baseRtt: ns-3 tests `L > 1 / m_phy` in unsigned
//!   integers, and 1/8 = 0, so any queueing delay counts (Linux: more than baseRtt/8);
//! - the RTT is the smoothed RTT (`PktsAcked`'s argument), once per ACK; windows in segments;
//! - fast mode is TcpScalable's congestion avoidance (its counter restarts from 0 when it pays
//!   out, dropping any excess), slow mode ns-3 NewReno's SMSS²/cwnd per ACK;
//! - `GetSsThresh` takes the reduction from BytesInFlight, not cwnd (unsigned: a flight under
//!   two segments can wrap to a 4 GB threshold, as in ns-3); `m_doingRenoNow` never saturates;
//! - a round ends when the cumulative ACK reaches (≥) the mark, which starts at 0; baseRtt is
//!   never forgotten (no `CwndEvent`, no `Init`).

use super::newreno;
use super::vegas::secs;
use super::vegas::RttRound;
use super::{CongState, Ns3CongestionOps, Tcb};
use tcplab_core::SimDuration;

/// The congestion avoidance of ns-3's TcpScalable (`tcp-scalable.cc`), which TcpYeah calls
/// through `m_stcp->IncreaseWindow` in fast mode.
#[derive(Clone, Debug)]
struct Scalable {
    /// `m_ackCnt`: segments acked since the last increase.
    ack_cnt: u32,
    /// `m_aiFactor`: one segment per this many acked (at most one per cwnd segments).
    ai_factor: u32,
}

impl Scalable {
    /// `TcpNewReno::IncreaseWindow` with TcpScalable's `CongestionAvoidance`.
    fn increase_window(&mut self, tcb: &mut Tcb, mut segments_acked: u32) {
        if tcb.in_slow_start() {
            segments_acked = newreno::slow_start(tcb, segments_acked);
        }
        if !tcb.in_slow_start() {
            self.congestion_avoidance(tcb, segments_acked);
        }
    }

    /// `TcpScalable::CongestionAvoidance`.
    fn congestion_avoidance(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        let old = tcb.cwnd_segments();
        let mut seg_cwnd = old;
        // ns-3 asserts segCwnd ≥ 1 (and would divide by zero below without it).
        let w = seg_cwnd.min(self.ai_factor).max(1);
        if self.ack_cnt >= w {
            self.ack_cnt = 0;
            seg_cwnd += 1;
        }
        self.ack_cnt += segments_acked;
        if self.ack_cnt >= w {
            seg_cwnd += self.ack_cnt / w;
            self.ack_cnt = 0;
        }
        if seg_cwnd != old {
            tcb.cwnd = seg_cwnd * tcb.segment_size;
        }
    }
}

/// TcpYeah with ns-3's attribute defaults (tcplab's `YeahConfig` has no parameters).
#[derive(Clone, Debug)]
pub struct Yeah {
    /// `Alpha`: largest queue (segments) fast mode allows.
    alpha: u32,
    /// `Gamma`: decongestion removes queue/γ.
    gamma: u32,
    /// `Delta`: a loss removes at least flight/2^δ.
    delta: u32,
    /// `Epsilon`: decongestion removes at most cwnd/2^ε.
    epsilon: u32,
    /// `Phy`: the congestion level bound is `1 / phy` in integers.
    phy: u32,
    /// `Rho`: slow rounds after which a loss is blamed on Reno competitors.
    rho: u32,
    /// `Zeta`: fast rounds after which `reno_count` resets.
    zeta: u32,
    /// `m_stcp`.
    stcp: Scalable,
    /// Vegas's round bookkeeping.
    round: RttRound,
    /// `m_lastQ`: queue estimate of the last decision, segments.
    last_q: u32,
    /// `m_doingRenoNow`: consecutive slow rounds; 0 = fast mode.
    doing_reno_now: u32,
    /// `m_renoCount`.
    reno_count: u32,
    /// `m_fastCount`.
    fast_count: u32,
}

impl Default for Yeah {
    fn default() -> Self {
        Self::new()
    }
}

impl Yeah {
    /// ns-3's constructor: Alpha 80, Gamma 1, Delta 3, Epsilon 1, Phy 8, Rho 16, Zeta 50,
    /// StcpAiFactor 100 (the embedded TcpScalable gets 100, not its own default 50).
    pub fn new() -> Self {
        Yeah {
            alpha: 80,
            gamma: 1,
            delta: 3,
            epsilon: 1,
            phy: 8,
            rho: 16,
            zeta: 50,
            stcp: Scalable { ack_cnt: 0, ai_factor: 100 },
            round: RttRound::new(),
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
        }
    }

    /// The once-per-round decision (the `m_cntRtt > 2` branch of `IncreaseWindow`).
    fn decide(&mut self, tcb: &mut Tcb) {
        let mut seg_cwnd = tcb.cwnd_segments();
        // ns-3 asserts minRtt ≥ baseRtt.
        let rtt_queue = secs(SimDuration::from_nanos(self.round.min_rtt.as_nanos().saturating_sub(self.round.base_rtt.as_nanos())));
        let bw = f64::from(seg_cwnd) / secs(self.round.min_rtt);
        let queue = (bw * rtt_queue) as u32;
        let level = rtt_queue / secs(self.round.base_rtt);
        // `1 / m_phy` is unsigned integer division (0 for Phy ≥ 2), as in ns-3.
        if queue > self.alpha || level > f64::from(1 / self.phy) {
            if queue > self.alpha && seg_cwnd > self.reno_count {
                // Precautionary decongestion.
                let reduction = (queue / self.gamma).min(seg_cwnd >> self.epsilon);
                seg_cwnd = (seg_cwnd - reduction).max(self.reno_count);
                tcb.cwnd = seg_cwnd * tcb.segment_size;
                tcb.ssthresh = tcb.cwnd;
            }
            self.reno_count = if self.reno_count <= 2 { (seg_cwnd >> 1).max(2) } else { self.reno_count + 1 };
            self.doing_reno_now = self.doing_reno_now.wrapping_add(1);
        } else {
            self.fast_count += 1;
            if self.fast_count > self.zeta {
                self.reno_count = 2;
                self.fast_count = 0;
            }
            self.doing_reno_now = 0;
        }
        self.last_q = queue;
    }
}

impl Ns3CongestionOps for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    /// `TcpYeah::GetSsThresh`: remove the last queue estimate (between flight/8 and
    /// flight/2, at most 2 segments below 4 in flight), or half the flight after `Rho` slow
    /// rounds; at least 2 segments. Resets `fast_count`, halves `reno_count`.
    fn get_ss_thresh(&mut self, tcb: &Tcb, bytes_in_flight: u32) -> u32 {
        let seg_flight = bytes_in_flight / tcb.segment_size;
        let half = (seg_flight >> 1).max(2);
        let reduction = if self.doing_reno_now < self.rho { self.last_q.max(seg_flight >> self.delta).min(half) } else { half };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        // Unsigned 32-bit as in ns-3: wraps if the reduction exceeds the flight.
        bytes_in_flight.wrapping_sub(reduction.wrapping_mul(tcb.segment_size)).max(2 * tcb.segment_size)
    }

    fn pkts_acked(&mut self, _tcb: &mut Tcb, _segments_acked: u32, rtt: SimDuration) {
        self.round.sample(rtt);
    }

    /// `EnableYeah` on entering Open. ns-3's `DisableYeah` only clears `m_doingYeahNow`,
    /// which nothing reads: `IncreaseWindow` runs its rounds in any state it is called in.
    fn congestion_state_set(&mut self, tcb: &mut Tcb, new_state: CongState) {
        if new_state == CongState::Open {
            self.round.restart(tcb);
        }
    }

    fn increase_window(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        if tcb.in_slow_start() {
            newreno::slow_start(tcb, segments_acked);
        } else if self.doing_reno_now == 0 {
            self.stcp.increase_window(tcb, segments_acked);
        } else {
            newreno::congestion_avoidance(tcb, segments_acked);
        }
        if self.round.ended(tcb) {
            if self.round.cnt_rtt > 2 {
                self.decide(tcb);
            }
            self.round.restart(tcb);
        }
    }

    fn mode(&self) -> Option<&'static str> {
        Some(if self.doing_reno_now == 0 { "fast" } else { "slow" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u32 = 1000;

    /// YeAH at `cwnd_segs` in congestion avoidance (ssthresh half), baseRtt `base_ms`
    /// measured and a fresh round (Open) ending at sequence 1 000 000.
    fn setup(cwnd_segs: u32, base_ms: u64) -> (Yeah, Tcb) {
        let mut t = Tcb::new(SEG, cwnd_segs, u32::MAX);
        t.ssthresh = t.cwnd / 2;
        t.next_tx_sequence = 1_000_000;
        t.last_acked_seq = 500_000;
        let mut y = Yeah::new();
        y.pkts_acked(&mut t, 1, SimDuration::from_millis(base_ms));
        y.congestion_state_set(&mut t, CongState::Open);
        (y, t)
    }

    /// Three PktsAcked at `rtt`, then the ACK reaching the mark (acking one segment).
    fn round(y: &mut Yeah, t: &mut Tcb, rtt: SimDuration) {
        for _ in 0..3 {
            y.pkts_acked(t, 1, rtt);
        }
        t.last_acked_seq = y.round.beg_snd_nxt;
        t.next_tx_sequence = y.round.beg_snd_nxt + u64::from(t.cwnd);
        y.increase_window(t, 1);
    }

    #[test]
    fn fast_mode_is_scalable_one_segment_per_hundred_acked() {
        // cwnd 1000 seg: w = min(1000, 100); 1000 single-segment ACKs (mid-round) → +10.
        let (mut y, mut t) = setup(1000, 100);
        for _ in 0..1000 {
            y.increase_window(&mut t, 1);
        }
        assert_eq!((t.cwnd, y.stcp.ack_cnt, y.mode()), (1_010_000, 0, Some("fast")));
        // The counter restarts at 0 when it pays out: 33 ACKs of 3 make 99, the 34th 102 →
        // +1 and the 2 extra are lost (Linux keeps them), so 67 ACKs of 3 (201) add only 1.
        let (mut y, mut t) = setup(1000, 100);
        for _ in 0..67 {
            y.increase_window(&mut t, 3);
        }
        assert_eq!((t.cwnd, y.stcp.ack_cnt), (1_001_000, 99));
        // Slow mode: NewReno, max(1, SMSS²/cwnd) = 1 byte per ACK at 10⁶ bytes.
        let (mut y, mut t) = setup(1000, 100);
        y.doing_reno_now = 1;
        for _ in 0..1000 {
            y.increase_window(&mut t, 1);
        }
        assert_eq!(t.cwnd, 1_001_000);
    }

    #[test]
    fn a_queue_above_alpha_is_drained_at_once() {
        // base 70 ms, round minimum 103 ms, cwnd 400 seg. Growth first (fast: ack_cnt 1 of
        // 100, no change), then queue = ⌊400/0.103 · 0.033⌋ = ⌊128.16⌋ = 128 > 80 → cwnd =
        // max(400 − min(128, 200), 2) = 272 seg = ssthresh; reno_count = max(272/2, 2) = 136.
        let (mut y, mut t) = setup(400, 70);
        round(&mut y, &mut t, SimDuration::from_millis(103));
        assert_eq!((t.cwnd, t.ssthresh), (272_000, 272_000));
        assert_eq!((y.reno_count, y.doing_reno_now, y.last_q, y.mode()), (136, 1, 128, Some("slow")));
        // Slow mode grows by NewReno first: 10⁶/272000 = 3 bytes → 272 seg still; queue
        // ⌊272/0.103 · 0.033⌋ = ⌊87.15⌋ = 87 → 272 − 87 = 185 seg; reno_count 137.
        round(&mut y, &mut t, SimDuration::from_millis(103));
        assert_eq!((t.cwnd, y.reno_count, y.doing_reno_now), (185_000, 137, 2));
        // ns-3 3.44 TcpYeah (through /work/ns3venv) gives 272000/272000 then 185000/185000.
    }

    #[test]
    fn any_queueing_delay_means_slow_mode_and_none_means_fast() {
        // base 100 ms, 101 ms: queue ⌊400/0.101 · 0.001⌋ = 3 ≤ 80, L = 0.01 > 1/8 = 0 in
        // integers → slow mode without a cut (Linux: 1 ms ≤ 12.5 ms, fast).
        let (mut y, mut t) = setup(400, 100);
        round(&mut y, &mut t, SimDuration::from_millis(101));
        assert_eq!((t.cwnd, y.doing_reno_now, y.last_q, y.reno_count), (400_000, 1, 3, 200));
        // The next ACK grows as NewReno: 10⁶/400000 = 2 bytes (fast mode would add nothing
        // before 100 segments). ns-3 3.44's TcpYeah, driven through /work/ns3venv (cppyy) on a
        // TcpSocketState, gives the same 400000 then 400002.
        y.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 400_002);
        // minRtt = baseRtt: L = 0, queue 0 → fast again.
        round(&mut y, &mut t, SimDuration::from_millis(100));
        assert_eq!((y.doing_reno_now, y.fast_count, y.last_q), (0, 1, 0));
        // 50 more fast rounds: the 51st (> ζ = 50) resets reno_count.
        for _ in 0..49 {
            round(&mut y, &mut t, SimDuration::from_millis(100));
        }
        assert_eq!((y.fast_count, y.reno_count), (50, 200));
        round(&mut y, &mut t, SimDuration::from_millis(100));
        assert_eq!((y.fast_count, y.reno_count), (0, 2));
    }

    #[test]
    fn rounds_with_two_samples_or_fewer_decide_nothing_but_end() {
        let (mut y, mut t) = setup(400, 70);
        y.pkts_acked(&mut t, 1, SimDuration::from_millis(103));
        y.pkts_acked(&mut t, 1, SimDuration::from_millis(103));
        t.last_acked_seq = 1_000_000; // reaches the mark
        t.next_tx_sequence = 1_400_000;
        y.increase_window(&mut t, 1);
        assert_eq!((t.cwnd, y.doing_reno_now, y.round.beg_snd_nxt, y.round.cnt_rtt), (400_000, 0, 1_400_000, 0));
    }

    #[test]
    fn loss_removes_the_queue_from_the_flight() {
        // Flight 200 seg (cwnd 400: ns-3 uses the flight), lastQ 10, 15 slow rounds (< ρ):
        // reduction = min(max(10, 200 >> 3 = 25), 100) = 25 → 200000 − 25000 = 175000;
        // reno_count 140 → 70, fast_count → 0.
        let (mut y, t) = setup(400, 100);
        (y.last_q, y.reno_count, y.fast_count, y.doing_reno_now) = (10, 140, 7, 15);
        assert_eq!(y.get_ss_thresh(&t, 200_000), 175_000);
        assert_eq!((y.reno_count, y.fast_count), (70, 0));
        // lastQ 60 → 140000; lastQ 150 → capped at 100 → 100000.
        y.last_q = 60;
        assert_eq!(y.get_ss_thresh(&t, 200_000), 140_000);
        y.last_q = 150;
        assert_eq!(y.get_ss_thresh(&t, 200_000), 100_000);
        // 16 slow rounds: competing Reno flows, half the flight whatever lastQ.
        (y.last_q, y.doing_reno_now) = (10, 16);
        assert_eq!(y.get_ss_thresh(&t, 200_000), 100_000);
        // Flight 10.5 seg, lastQ 0, fast: max(0, 10 >> 3 = 1) → 10500 − 1000 = 9500.
        (y.last_q, y.doing_reno_now) = (0, 0);
        assert_eq!(y.get_ss_thresh(&t, 10_500), 9_500);
        // Flight 1.5 seg, lastQ 10: reduction min(10, max(0, 2)) = 2 segments > the flight:
        // 1500 − 2000 wraps in ns-3's uint32 to 2³² − 500.
        y.last_q = 10;
        // (ns-3 3.44 through /work/ns3venv returns 4294966796 here too.)
        assert_eq!(y.get_ss_thresh(&t, 1_500), u32::MAX - 499);
    }

    #[test]
    fn slow_start_is_newreno_and_rounds_still_decide() {
        // cwnd 400 seg < ssthresh: +1 segment, then the round: queue ⌊401/0.103 · 0.033⌋ =
        // ⌊128.47⌋ = 128 → 401 − 128 = 273 seg, ssthresh 273 seg: slow start is over.
        let (mut y, mut t) = setup(400, 70);
        t.ssthresh = u32::MAX;
        round(&mut y, &mut t, SimDuration::from_millis(103));
        assert_eq!((t.cwnd, t.ssthresh), (273_000, 273_000));
    }
}
