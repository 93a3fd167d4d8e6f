//! ns-3's TcpWestwoodPlus (ns-3 3.44 `tcp-westwood-plus.cc`, unchanged from 3.40 to ns-3-dev
//! 3.48+; older releases had `tcp-westwood.cc` with ProtocolType WESTWOODPLUS), FilterType
//! Tustin, a TcpNewReno subclass. Departs from the Linux module [`crate::westwood`]:
//! - one bandwidth sample per timer of one smoothed RTT started by the first `PktsAcked` after
//!   the previous sample: segments reported to `PktsAcked` (dupACKs count one) · SMSS · 8 / RTT,
//!   in bit/s; no 50 ms floor, no byte accounting of dupACKs against later cumulative ACKs;
//! - Tustin filter bw = 0.9·bw + 0.1·(sample + previous sample)/2 with ns-3 `DataRate`'s
//!   truncation to whole bit/s after each product, starting from 0 (Linux: two cascaded ⅞
//!   filters seeded with the first sample);
//! - `GetSsThresh` = max(2 SMSS, bw·minRtt/8) on entering Recovery, CWR and Loss (Linux halves
//!   on entering Recovery and applies bw·RTT_min at COMPLETE_CWR and on RTO); minRtt is the
//!   socket's, never restarted after an RTO; growth is ns-3 NewReno's.

use super::newreno;
use super::vegas::secs;
use super::{Ns3CongestionOps, Tcb};
use tcplab_core::{SimDuration, SimTime};

/// The Tustin filter's gain (`ALPHA` in `EstimateBW`).
const ALPHA: f64 = 0.9;

/// ns-3 `DataRate::operator*(double)`: the product truncated to whole bit/s.
fn scale(bps: u64, k: f64) -> u64 {
    (bps as f64 * k) as u64
}

/// TcpWestwoodPlus.
#[derive(Clone, Debug, Default)]
pub struct WestwoodPlus {
    /// `m_currentBW`, bit/s: the filtered estimate.
    current_bw: u64,
    /// `m_lastSampleBW`, bit/s: the previous unfiltered sample.
    last_sample_bw: u64,
    /// `m_lastBW`, bit/s: the previous filtered estimate.
    last_bw: u64,
    /// `m_ackedSegments`: segments reported since the last sample.
    acked_segments: u32,
    /// The pending `EstimateBW` event (`m_bwEstimateEvent`, `m_IsCount`): when it fires and
    /// the RTT it was scheduled with. There are no timers in this interface: the event runs
    /// at the first hook at or after its time (only `PktsAcked` and `GetSsThresh` see its
    /// effects), before anything else that hook does.
    pending: Option<(SimTime, SimDuration)>,
}

impl WestwoodPlus {
    pub fn new() -> Self {
        Self::default()
    }

    /// The bandwidth estimate, bit/s.
    pub fn bandwidth_bps(&self) -> u64 {
        self.current_bw
    }

    /// Runs the pending `EstimateBW` if its time has come.
    fn run_due(&mut self, tcb: &Tcb) {
        if let Some((at, rtt)) = self.pending {
            if tcb.now >= at {
                self.pending = None;
                self.estimate_bw(rtt, tcb.segment_size);
            }
        }
    }

    /// `EstimateBW`: the sample of the window that just closed, then the Tustin filter.
    fn estimate_bw(&mut self, rtt: SimDuration, segment_size: u32) {
        // ns-3 multiplies the two uint32s first, then converts to double.
        let bits = f64::from(self.acked_segments.wrapping_mul(segment_size)) * 8.0;
        let sample = (bits / secs(rtt)) as u64;
        self.acked_segments = 0;
        self.current_bw = scale(self.last_bw, ALPHA) + scale(scale(sample + self.last_sample_bw, 0.5), 1.0 - ALPHA);
        self.last_sample_bw = sample;
        self.last_bw = self.current_bw;
    }
}

impl Ns3CongestionOps for WestwoodPlus {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// max(2 SMSS, bw·minRtt/8). Before any RTT sample bw is 0.
    fn get_ss_thresh(&mut self, tcb: &Tcb, _bytes_in_flight: u32) -> u32 {
        self.run_due(tcb);
        // The cast saturates where ns-3's double → uint32 conversion is undefined.
        let ssthresh = (self.current_bw as f64 * secs(tcb.min_rtt) / 8.0) as u32;
        ssthresh.max(2 * tcb.segment_size)
    }

    fn increase_window(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        newreno::increase_window(tcb, segments_acked);
    }

    fn pkts_acked(&mut self, tcb: &mut Tcb, segments_acked: u32, rtt: SimDuration) {
        self.run_due(tcb);
        if rtt == SimDuration::ZERO {
            return;
        }
        self.acked_segments = self.acked_segments.wrapping_add(segments_acked);
        if self.pending.is_none() {
            self.pending = Some((tcb.now + rtt, rtt));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: u32 = 1000;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn tcb() -> Tcb {
        let mut t = Tcb::new(SEG, 10, u32::MAX);
        t.min_rtt = SimDuration::from_millis(125);
        t
    }

    /// A PktsAcked of `segs` at `ms` with a 125 ms smoothed RTT.
    fn ack(w: &mut WestwoodPlus, t: &mut Tcb, ms: u64, segs: u32) {
        t.now = at(ms);
        w.pkts_acked(t, segs, SimDuration::from_millis(125));
    }

    #[test]
    fn tustin_filter_steps() {
        let (mut w, mut t) = (WestwoodPlus::new(), tcb());
        // Ten ACKs of 2 segments at 0, 10, …, 90 ms: the first schedules the estimate at
        // 125 ms. 20 segments in 125 ms: 20·1000·8/0.125 = 1 280 000 bit/s.
        for i in 0..10 {
            ack(&mut w, &mut t, 10 * i, 2);
        }
        assert_eq!((w.acked_segments, w.bandwidth_bps()), (20, 0));
        // The ACK at 125 ms runs it first: bw = 0.9·0 + ⌊⌊(1 280 000 + 0)·0.5⌋·(1 − 0.9)⌋;
        // 1 − 0.9 is 0.09999999999999998 in doubles, so 640 000 × it = 63 999.99… → 63 999.
        ack(&mut w, &mut t, 125, 2);
        assert_eq!((w.bandwidth_bps(), w.last_sample_bw), (63_999, 1_280_000));
        // That ACK opened the next window (to 250 ms); 9 more of 2 segments: 20 again.
        for i in 1..10 {
            ack(&mut w, &mut t, 125 + 10 * i, 2);
        }
        // bw = ⌊63 999·0.9⌋ + ⌊1 280 000·0.0999…⌋ = 57 599 + 127 999 = 185 598.
        ack(&mut w, &mut t, 250, 2);
        assert_eq!(w.bandwidth_bps(), 185_598);
        // Repeated samples converge on the rate from below.
        for k in 2..200 {
            for i in 1..10 {
                ack(&mut w, &mut t, 125 * k + 10 * i, 2);
            }
            ack(&mut w, &mut t, 125 * (k + 1), 2);
        }
        assert!((1_279_900..1_280_000).contains(&w.bandwidth_bps()), "{}", w.bandwidth_bps());
    }

    #[test]
    fn one_sample_per_timer_over_its_rtt_whatever_the_gap() {
        let (mut w, mut t) = (WestwoodPlus::new(), tcb());
        // 10 segments at 0 ms, then nothing until 1000 ms: one sample of 10·8000/0.125 =
        // 640 000 bit/s (over the RTT, not the 1 s gap): bw = ⌊320 000·0.0999…⌋ = 31 999.
        ack(&mut w, &mut t, 0, 10);
        ack(&mut w, &mut t, 1000, 4);
        assert_eq!((w.bandwidth_bps(), w.acked_segments, w.pending), (31_999, 4, Some((at(1125), SimDuration::from_millis(125)))));
        // The RTT at scheduling is the window: srtt 250 ms at 1000 ms would not change it.
        w.pkts_acked(&mut t, 1, SimDuration::from_millis(250));
        assert_eq!(w.pending, Some((at(1125), SimDuration::from_millis(125))));
        // A zero RTT (no sample yet) is not counted.
        w.pkts_acked(&mut t, 5, SimDuration::ZERO);
        assert_eq!(w.acked_segments, 5);
    }

    #[test]
    fn ssthresh_is_bandwidth_times_min_rtt() {
        let (mut w, t) = (WestwoodPlus::new(), tcb());
        // No estimate yet: 2 SMSS.
        assert_eq!(w.get_ss_thresh(&t, 50_000), 2_000);
        // 8 Mbit/s · 125 ms / 8 = 125 000 bytes, whatever the flight.
        w.current_bw = 8_000_000;
        assert_eq!(w.get_ss_thresh(&t, 50_000), 125_000);
        // 100 kbit/s · 125 ms / 8 = 1562.5 → 1562 < 2000 → 2 SMSS.
        w.current_bw = 100_000;
        assert_eq!(w.get_ss_thresh(&t, 50_000), 2_000);
    }

    #[test]
    fn an_overdue_estimate_runs_before_the_threshold() {
        let (mut w, mut t) = (WestwoodPlus::new(), tcb());
        // 100 segments at 0 ms; an RTO at 300 ms with no ACK since: the estimate due at
        // 125 ms runs first. Sample 100·8000/0.125 = 6 400 000; bw = ⌊3 200 000·0.0999…⌋ =
        // 319 999; ssthresh = ⌊319 999·0.125/8⌋ = ⌊4999.98⌋ = 4999.
        ack(&mut w, &mut t, 0, 100);
        t.now = at(300);
        assert_eq!(w.get_ss_thresh(&t, 10_000), 4_999);
        assert_eq!((w.bandwidth_bps(), w.pending), (319_999, None));
    }

    #[test]
    fn matches_ns3_for_one_window() {
        // 1000 segments reported at 0 ms with a 125 ms RTT, the estimate run at 125 ms:
        // sample 64 000 000 bit/s, bw = ⌊32 000 000·0.0999…⌋ = 3 199 999, ssthresh
        // ⌊3 199 999·0.125/8⌋ = 49 999. ns-3 3.44 TcpWestwoodPlus through /work/ns3venv
        // (PktsAcked, Simulator::Run to 126 ms, GetSsThresh with m_minRtt 125 ms): 49999.
        let (mut w, mut t) = (WestwoodPlus::new(), tcb());
        ack(&mut w, &mut t, 0, 1000);
        t.now = at(126);
        assert_eq!(w.get_ss_thresh(&t, 0), 49_999);
    }

    #[test]
    fn growth_is_newreno() {
        let (mut w, mut t) = (WestwoodPlus::new(), tcb());
        w.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 11_000);
        t.ssthresh = 5_000;
        w.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 11_090); // 10⁶/11000 = 90.9
    }
}
