//! ns-3's TcpHybla (ns-3 3.44 `tcp-hybla.cc`), a TcpNewReno whose slow start adds 2^ρ − 1
//! segments per ACK and congestion avoidance ρ²/cwnd segments per segment acked, ρ = minRTT/RRTT.
//! Departs from Linux tcp_hybla.c (crates/cc/src/hybla.rs):
//! - reference RTT RRTT 50 ms (Linux rtt0 25 ms); ρ = max(1, ⌊minRTT in ms⌋ / RRTT in ms) in
//!   `double` from the connection's minimum RTT (Linux: SRTT, ρ in 1/8 with a 2^(1/8) table);
//! - ρ is recomputed only on an ACK whose PktsAcked RTT (ns-3 passes SRTT) equals minRTT
//!   exactly (Linux: whenever SRTT falls below the smallest SRTT seen); before that ρ = 1;
//! - congestion avoidance adds ρ²/cwnd once per segment acked, with a `double` carry (Linux: once
//!   per ACK, 1/128 carry); the slow-start increment's fraction of a byte is dropped, not carried;
//! - no initial cwnd = ρ, no cwnd clamp of 65535, no cwnd-limited test (NewReno has none);
//!   loss response is NewReno's max(2 SMSS, flight/2) (Linux: max(cwnd/2, 2)).

use super::newreno;
use super::{Ns3CongestionOps, Tcb};
use crate::hybla::HyblaConfig;
use tcplab_core::SimDuration;

/// TcpHybla.
#[derive(Clone, Debug)]
pub struct Hybla {
    /// `m_rRtt`, whole milliseconds (ns-3 divides `GetMilliSeconds()` values).
    rrtt_ms: u64,
    /// `m_rho`.
    rho: f64,
    /// `m_cWndCnt`: fractional segments of congestion-avoidance growth.
    cwnd_cnt: f64,
}

impl Hybla {
    pub fn new(config: &HyblaConfig) -> Self {
        Hybla { rrtt_ms: u64::from(config.rtt0_ms), rho: 1.0, cwnd_cnt: 0.0 }
    }

    /// `RecalcParam`: ρ = max(minRTT / RRTT, 1), both as whole milliseconds (truncated).
    fn recalc_param(&mut self, tcb: &Tcb) {
        let min_rtt_ms = tcb.min_rtt.as_nanos() / 1_000_000;
        self.rho = (min_rtt_ms as f64 / self.rrtt_ms as f64).max(1.0);
    }

    /// `TcpHybla::SlowStart`: 2^ρ − 1 segments (fraction of a byte dropped), capped at ssthresh.
    fn slow_start(&mut self, tcb: &mut Tcb, segments_acked: u32) -> u32 {
        if segments_acked >= 1 {
            let increment = 2f64.powf(self.rho) - 1.0;
            let incr = (increment * f64::from(tcb.segment_size)) as u32;
            tcb.cwnd = tcb.cwnd.saturating_add(incr).min(tcb.ssthresh);
            return segments_acked - 1;
        }
        0
    }

    /// `TcpHybla::CongestionAvoidance`: ρ²/cwnd segments per segment acked, whole segments
    /// applied, the fraction carried.
    fn congestion_avoidance(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        let seg_cwnd = tcb.cwnd_segments();
        for _ in 0..segments_acked {
            self.cwnd_cnt += self.rho.powf(2.0) / f64::from(seg_cwnd);
        }
        if self.cwnd_cnt >= 1.0 {
            let inc = self.cwnd_cnt as u32;
            self.cwnd_cnt -= f64::from(inc);
            tcb.cwnd = tcb.cwnd.saturating_add(inc.saturating_mul(tcb.segment_size));
        }
    }
}

impl Ns3CongestionOps for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    fn get_ss_thresh(&mut self, tcb: &Tcb, bytes_in_flight: u32) -> u32 {
        newreno::ss_thresh(tcb, bytes_in_flight)
    }

    /// `TcpNewReno::IncreaseWindow` with Hybla's SlowStart and CongestionAvoidance.
    fn increase_window(&mut self, tcb: &mut Tcb, mut segments_acked: u32) {
        if tcb.cwnd < tcb.ssthresh {
            segments_acked = self.slow_start(tcb, segments_acked);
        }
        if tcb.cwnd >= tcb.ssthresh {
            self.congestion_avoidance(tcb, segments_acked);
        }
    }

    fn pkts_acked(&mut self, tcb: &mut Tcb, _segments_acked: u32, rtt: SimDuration) {
        if rtt == tcb.min_rtt {
            self.recalc_param(tcb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CcConfig;
    use serde_json::json;

    fn hybla() -> Hybla {
        let CcConfig::Hybla(config) = crate::ns3::parse(json!("hybla")).unwrap() else { unreachable!() };
        assert_eq!(config.rtt0_ms, 50);
        Hybla::new(&config)
    }

    fn tcb(cwnd: u32, ssthresh: u32, min_rtt_us: u64) -> Tcb {
        let mut t = Tcb::new(1000, 10, ssthresh);
        t.cwnd = cwnd;
        t.min_rtt = SimDuration::from_micros(min_rtt_us);
        t
    }

    // Values also from ns-3 3.44 TcpHybla on the same inputs, driven through its Python bindings.
    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_segments_per_ack() {
        // (min RTT µs, ρ, cwnd after 1 ACK, after 2 ACKs), from 10 segments, ssthresh 30:
        let cases = [
            // ρ = 200/50 = 4: 2⁴ − 1 = 15 segments; the second ACK is capped at ssthresh.
            (200_000, 4.0, 25_000, 30_000),
            // ρ = 75/50 = 1.5: 2^1.5 − 1 = 1.828427 → 1828 bytes per ACK.
            (75_000, 1.5, 11_828, 13_656),
            // 74.9 ms counts as 74 ms: ρ = 1.48, 2^1.48 − 1 = 1.78954 → 1789 bytes.
            (74_900, 1.48, 11_789, 13_578),
            // ρ = 20/50 = 0.4 → 1: one segment per ACK, NewReno's slow start.
            (20_000, 1.0, 11_000, 12_000),
        ];
        for (min_rtt_us, rho, first, second) in cases {
            let mut h = hybla();
            let mut t = tcb(10_000, 30_000, min_rtt_us);
            let rtt = t.min_rtt;
            h.pkts_acked(&mut t, 1, rtt);
            assert_eq!(h.rho, rho, "{min_rtt_us} µs");
            h.increase_window(&mut t, 1);
            assert_eq!(t.cwnd, first, "{min_rtt_us} µs");
            h.increase_window(&mut t, 1);
            assert_eq!(t.cwnd, second, "{min_rtt_us} µs");
        }
    }

    #[test]
    fn rho_is_recomputed_only_when_the_rtt_argument_equals_min_rtt() {
        let mut h = hybla();
        let mut t = tcb(10_000, 30_000, 200_000);
        h.pkts_acked(&mut t, 1, SimDuration::from_millis(210));
        assert_eq!(h.rho, 1.0);
        h.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 11_000);
        h.pkts_acked(&mut t, 1, SimDuration::from_millis(200));
        assert_eq!(h.rho, 4.0);
    }

    // Values also from ns-3 3.44 TcpHybla on the same inputs, driven through its Python bindings.
    #[test]
    fn congestion_avoidance_adds_rho_squared_over_cwnd_per_segment() {
        let mut h = hybla();
        let mut t = tcb(40_000, 40_000, 200_000);
        let rtt = t.min_rtt;
        h.pkts_acked(&mut t, 1, rtt);
        // ρ²/W = 16/40 = 0.4 per segment: 2 segments → 0.8, no growth; one more → 1.2: one
        // segment, 0.2 carried.
        h.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 40_000);
        h.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 41_000);
        assert!((h.cwnd_cnt - 0.2).abs() < 1e-9);
    }

    #[test]
    fn slow_start_reaching_ssthresh_spends_the_other_segments_in_congestion_avoidance() {
        let mut h = hybla();
        let mut t = tcb(25_000, 30_000, 200_000);
        let rtt = t.min_rtt;
        h.pkts_acked(&mut t, 1, rtt);
        // 25 + 15 → capped at 30; the 2 segments left add 2·16/30 = 1.07 → one segment.
        h.increase_window(&mut t, 3);
        assert_eq!(t.cwnd, 31_000);
    }

    #[test]
    fn ssthresh_is_newreno_half_the_flight() {
        let t = tcb(40_000, 40_000, 200_000);
        assert_eq!(hybla().get_ss_thresh(&t, 30_000), 15_000);
        assert_eq!(hybla().get_ss_thresh(&t, 1_000), 2_000);
    }
}
