//! ns-3's TcpNewReno (ns-3 3.44 `tcp-congestion-ops.cc`), the base of ns-3's Hybla, Vegas,
//! YeAH and Westwood+. Departs from Linux `tcp_reno_cong_avoid`:
//! - slow start adds one segment per ACK whatever the ACK covers (RFC 5681 cwnd += min(N,
//!   SMSS)): with delayed ACKs the window grows 1.5x per RTT, not 2x;
//! - congestion avoidance adds max(1, SMSS²/cwnd) bytes once per ACK, not per segment: with
//!   delayed ACKs, about half a segment per RTT;
//! - ssthresh is max(2 SMSS, BytesInFlight/2), of the flight, not of cwnd.

use super::{Ns3CongestionOps, Tcb};

/// TcpNewReno.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

/// `TcpNewReno::SlowStart`: one segment per ACK; returns the segments left for congestion
/// avoidance.
pub fn slow_start(tcb: &mut Tcb, segments_acked: u32) -> u32 {
    if segments_acked >= 1 {
        tcb.cwnd += tcb.segment_size;
        return segments_acked - 1;
    }
    0
}

/// `TcpNewReno::CongestionAvoidance`: max(1, SMSS²/cwnd) bytes per ACK (truncated).
pub fn congestion_avoidance(tcb: &mut Tcb, segments_acked: u32) {
    if segments_acked > 0 {
        let adder = (f64::from(tcb.segment_size) * f64::from(tcb.segment_size) / f64::from(tcb.cwnd)).max(1.0);
        tcb.cwnd += adder as u32;
    }
}

/// `TcpNewReno::IncreaseWindow`.
pub fn increase_window(tcb: &mut Tcb, mut segments_acked: u32) {
    if tcb.cwnd < tcb.ssthresh {
        segments_acked = slow_start(tcb, segments_acked);
    }
    if tcb.cwnd >= tcb.ssthresh {
        congestion_avoidance(tcb, segments_acked);
    }
}

/// `TcpNewReno::GetSsThresh`: max(2 SMSS, BytesInFlight / 2).
pub fn ss_thresh(tcb: &Tcb, bytes_in_flight: u32) -> u32 {
    (2 * tcb.segment_size).max(bytes_in_flight / 2)
}

impl Ns3CongestionOps for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn get_ss_thresh(&mut self, tcb: &Tcb, bytes_in_flight: u32) -> u32 {
        ss_thresh(tcb, bytes_in_flight)
    }

    fn increase_window(&mut self, tcb: &mut Tcb, segments_acked: u32) {
        increase_window(tcb, segments_acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcb(cwnd_segs: u32, ssthresh: u32) -> Tcb {
        let mut t = Tcb::new(1000, cwnd_segs, ssthresh);
        t.cwnd = cwnd_segs * 1000;
        t
    }

    #[test]
    fn slow_start_adds_one_segment_per_ack_whatever_it_covers() {
        let mut t = tcb(10, u32::MAX);
        NewReno.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 11_000);
        NewReno.increase_window(&mut t, 5);
        assert_eq!(t.cwnd, 12_000);
    }

    #[test]
    fn slow_start_crossing_ssthresh_spends_the_rest_in_congestion_avoidance() {
        // cwnd 9500 < ssthresh 10000: +1000 → 10500 ≥ ssthresh, then CA with the 1 segment
        // left adds 1000²/10500 = 95.2 → 95 bytes.
        let mut t = tcb(10, 10_000);
        t.cwnd = 9_500;
        NewReno.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 10_595);
    }

    #[test]
    fn congestion_avoidance_adds_smss_squared_over_cwnd_once_per_ack() {
        let mut t = tcb(20, 1);
        NewReno.increase_window(&mut t, 2);
        assert_eq!(t.cwnd, 20_050); // 1000² / 20000 = 50, once for 2 segments
        t.cwnd = 2_000_000; // adder 0.5 → at least one byte
        NewReno.increase_window(&mut t, 1);
        assert_eq!(t.cwnd, 2_000_001);
    }

    #[test]
    fn ssthresh_is_half_the_flight_at_least_two_segments() {
        let t = tcb(10, u32::MAX);
        assert_eq!(NewReno.get_ss_thresh(&t, 30_000), 15_000);
        assert_eq!(NewReno.get_ss_thresh(&t, 3_000), 2_000);
    }
}
