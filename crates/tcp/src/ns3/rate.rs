//! ns-3's delivery-rate estimator (ns-3 3.44 `TcpRateLinux`, a port of Linux tcp_rate.c in
//! bytes) as the ns3 stack's sender feeds it: `SkbSent` per transmission, `SkbDelivered` per
//! newly (S)ACKed segment, `CalculateAppLimited` per application write, `GenerateSample` per
//! ACK for algorithms with `CongControl` (BBR). Departs from Linux where ns-3 does:
//! - the sample is a member that persists across ACKs: an ACK that delivers nothing reuses the
//!   previous ACK's prior-delivered count and times;
//! - app-limited is judged only when the application writes, with ns-3's test (less than one
//!   segment of unsent data, pipe below cwnd, no lost segment awaiting retransmission) and
//!   without Linux's check of the host queues.

use tcplab_cc::ns3::{RateConnection, RateSample};
use tcplab_cc::rate_sample::TxSnapshot;
use tcplab_core::{SimDuration, SimTime};

/// `TcpRateLinux`: the connection state `m_rate` and the persistent sample `m_rateSample`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ns3Rate {
    pub(crate) rc: RateConnection,
    pub(crate) rs: RateSample,
}

impl Ns3Rate {
    /// `SkbSent`: the snapshot a transmission carries (delivered bytes, times, app-limited).
    pub(crate) fn on_sent(&mut self, now: SimTime, start_of_transmission: bool) -> TxSnapshot {
        if start_of_transmission {
            self.rc.first_sent_time = now;
            self.rc.delivered_time = now;
        }
        TxSnapshot {
            delivered: self.rc.delivered,
            delivered_time: self.rc.delivered_time,
            first_tx_time: self.rc.first_sent_time,
            is_app_limited: self.rc.app_limited != 0,
            ..TxSnapshot::default()
        }
    }

    /// `SkbDelivered` for a segment of `bytes` last sent at `last_sent` with snapshot `tx`
    /// (the caller calls it once per segment: when SACKed, or when cumulatively ACKed if never
    /// SACKed, as ns-3 marks a counted segment with `Time::Max`).
    pub(crate) fn on_delivered(&mut self, now: SimTime, bytes: u32, last_sent: SimTime, tx: &TxSnapshot) {
        self.rc.delivered += u64::from(bytes);
        self.rc.delivered_time = now;
        if self.rs.prior_delivered == 0 || tx.delivered > self.rs.prior_delivered {
            self.rs.ack_elapsed = now.saturating_since(tx.delivered_time);
            self.rs.prior_delivered = tx.delivered;
            self.rs.prior_time = tx.delivered_time;
            self.rs.is_app_limited = tx.is_app_limited;
            self.rs.send_elapsed = last_sent.saturating_since(tx.first_tx_time);
            self.rc.first_sent_time = last_sent;
        }
        self.rc.tx_item_delivered = tx.delivered;
    }

    /// `CalculateAppLimited` after a write: `unsent` bytes not yet sent, `in_flight` the pipe.
    pub(crate) fn calculate_app_limited(
        &mut self,
        cwnd: u32,
        in_flight: u32,
        segment_size: u32,
        unsent: u64,
        lost_out: u32,
        retrans_out: u32,
    ) {
        if unsent < u64::from(segment_size) && in_flight < cwnd && lost_out <= retrans_out {
            // `SetAppLimited`
            self.rc.app_limited = (self.rc.delivered + u64::from(in_flight)).max(1);
        }
    }

    /// `GenerateSample(delivered, lost, false, priorInFlight, minRtt)`.
    pub(crate) fn generate_sample(&mut self, delivered: u32, lost: u32, prior_in_flight: u32, min_rtt: SimDuration) -> RateSample {
        if self.rc.app_limited != 0 && self.rc.delivered > self.rc.app_limited {
            self.rc.app_limited = 0;
        }
        self.rs.acked_sacked = delivered;
        self.rs.bytes_loss = lost;
        self.rs.prior_in_flight = prior_in_flight;
        if self.rs.prior_time == SimTime::ZERO {
            self.rs.delivered = -1;
            self.rs.interval = SimDuration::ZERO;
            return self.rs;
        }
        self.rs.interval = self.rs.send_elapsed.max(self.rs.ack_elapsed);
        self.rs.delivered = self.rc.delivered as i64 - self.rs.prior_delivered as i64;
        if self.rs.interval < min_rtt {
            self.rs.interval = SimDuration::ZERO;
            self.rs.prior_time = SimTime::ZERO; // invalid
            return self.rs;
        }
        // the last non-app-limited sample, or the highest app-limited one
        let interval_ns = self.rs.interval.as_nanos() as i128;
        if !self.rs.is_app_limited
            || i128::from(self.rs.delivered) * self.rc.rate_interval.as_nanos() as i128 >= i128::from(self.rc.rate_delivered) * interval_ns
        {
            self.rc.rate_delivered = self.rs.delivered;
            self.rc.rate_interval = self.rs.interval;
            self.rc.rate_app_limited = self.rs.is_app_limited;
            self.rs.delivery_rate_bps = (self.rs.delivered as f64 * 8.0 / self.rs.interval.as_secs_f64()) as u64;
        }
        self.rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    #[test]
    fn a_flight_delivered_over_one_rtt_gives_its_rate() {
        let mut r = Ns3Rate::default();
        let tx0 = r.on_sent(ms(1), true);
        let tx1 = r.on_sent(ms(2), false);
        // both ACKed at 41 ms: interval max(send 2−1 = 1 ms, ack 41−1 = 40 ms) = 40 ms
        r.on_delivered(ms(41), 1000, ms(1), &tx0);
        r.on_delivered(ms(41), 1000, ms(2), &tx1);
        let rs = r.generate_sample(2000, 0, 2000, SimDuration::from_millis(30));
        assert_eq!((rs.delivered, rs.interval), (2000, SimDuration::from_millis(40)));
        assert_eq!(rs.delivery_rate_bps, 400_000); // 2000 B · 8 / 40 ms
                                                   // shorter than min RTT: invalid
        let mut r2 = r.clone();
        assert!(!r2.generate_sample(0, 0, 0, SimDuration::from_millis(50)).is_valid());
    }

    #[test]
    fn the_sample_persists_across_an_ack_that_delivers_nothing() {
        let mut r = Ns3Rate::default();
        let tx0 = r.on_sent(ms(1), true);
        r.on_delivered(ms(41), 1000, ms(1), &tx0);
        r.generate_sample(1000, 0, 1000, SimDuration::ZERO);
        // A duplicate ACK at 51 ms: the same prior, so the same 1000 B over 40 ms.
        let rs = r.generate_sample(0, 0, 0, SimDuration::ZERO);
        assert_eq!((rs.delivered, rs.interval), (1000, SimDuration::from_millis(40)));
    }

    #[test]
    fn app_limited_marks_sends_until_the_bubble_is_delivered() {
        let mut r = Ns3Rate::default();
        r.calculate_app_limited(10_000, 2_000, 1000, 500, 0, 0);
        assert_eq!(r.rc.app_limited, 2_000);
        let tx = r.on_sent(ms(0), true);
        assert!(tx.is_app_limited);
        r.on_delivered(ms(40), 3000, ms(0), &tx);
        r.generate_sample(3000, 0, 3000, SimDuration::ZERO);
        assert_eq!(r.rc.app_limited, 0); // 3000 delivered > 2000
                                         // a full segment unsent, or a window-limited pipe, is not app-limited
        r.calculate_app_limited(10_000, 2_000, 1000, 1000, 0, 0);
        r.calculate_app_limited(2_000, 2_000, 1000, 0, 0, 0);
        assert_eq!(r.rc.app_limited, 0);
    }
}
