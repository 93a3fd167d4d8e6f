//! Pacing in the earliest-departure-time model (Linux sch_fq;
//! `tcp_update_pacing_rate` and `tcp_update_skb_after_send`): a segment may leave at
//! `next_send_time`; sending it pushes that time by payload / pacing_rate. For algorithms
//! without `cong_control` the rate is Linux's fq rule: 200 % of cwnd·MSS/SRTT while
//! cwnd < ssthresh/2, 120 % otherwise (using max(cwnd, packets_out)). Not reproduced: fq's
//! unpaced first 10 segments and the "credit" Linux grants after idle periods.
//! ns-3 (`TcpSocketState::m_pacing`) uses the same ratios, computed from cwnd bytes and
//! the last RTT sample rather than SRTT.

use tcplab_cc::CcCx;
use tcplab_core::{SimDuration, SimTime};

/// Linux `sysctl_tcp_pacing_ss_ratio`, percent.
const PACING_SS_RATIO: u64 = 200;
/// Linux `sysctl_tcp_pacing_ca_ratio`, percent.
const PACING_CA_RATIO: u64 = 120;

/// Linux `tcp_update_pacing_rate`, bytes per second; 0 (unpaced) before the first RTT sample.
pub(crate) fn fq_pacing_rate(cx: &CcCx) -> u64 {
    if cx.srtt_us == 0 {
        return 0;
    }
    let ratio = if cx.cwnd < cx.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    let window = u64::from(cx.cwnd.max(cx.packets_out));
    // mss · window / srtt · ratio/100, with srtt in µs
    let rate = u128::from(cx.mss) * 10_000 * u128::from(ratio) * u128::from(window) / u128::from(cx.srtt_us);
    rate.min(u128::from(u64::MAX)) as u64
}

/// A paced segment of `payload` bytes leaves at max(now, next_send_time): move the
/// departure time of the next one.
pub(crate) fn schedule_next_departure(cx: &mut CcCx, now: SimTime, payload: u32) {
    if cx.pacing_rate == 0 {
        return;
    }
    // payload < 2^32, so payload · 10^9 < 4.3·10^18 fits u64 (a u128 division is far slower).
    let len_ns = u64::from(payload) * 1_000_000_000 / cx.pacing_rate;
    cx.next_send_time = cx.next_send_time.max(now) + SimDuration::from_nanos(len_ns);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx(cwnd: u32, ssthresh: u32, srtt_ms: u64) -> CcCx {
        let mut cx = CcCx::new(1448);
        cx.cwnd = cwnd;
        cx.ssthresh = ssthresh;
        cx.srtt_us = srtt_ms * 1_000;
        cx
    }

    #[test]
    fn fq_rule_by_hand() {
        // slow start: 2 · 1448 · 10 / 0.1 s = 289 600 B/s
        assert_eq!(fq_pacing_rate(&cx(10, tcplab_cc::INFINITE_SSTHRESH, 100)), 289_600);
        // cwnd 30 ≥ ssthresh/2 = 20: 1.2 · 1448 · 30 / 0.1 s = 521 280 B/s
        assert_eq!(fq_pacing_rate(&cx(30, 40, 100)), 521_280);
        // packets_out above cwnd counts
        let mut c = cx(30, 40, 100);
        c.packets_out = 60;
        assert_eq!(fq_pacing_rate(&c), 1_042_560);
        assert_eq!(fq_pacing_rate(&cx(10, 40, 0)), 0, "no SRTT yet: unpaced");
    }

    #[test]
    fn departures_are_spaced_by_payload_over_rate() {
        let mut c = cx(10, 40, 100);
        c.pacing_rate = 1_000_000; // 1 MB/s: 1000 B take 1 ms
        schedule_next_departure(&mut c, SimTime(5_000_000), 1000);
        assert_eq!(c.next_send_time, SimTime(6_000_000));
        // sent late (at 10 ms): the next departure counts from now, no credit
        schedule_next_departure(&mut c, SimTime(10_000_000), 1000);
        assert_eq!(c.next_send_time, SimTime(11_000_000));
    }
}
