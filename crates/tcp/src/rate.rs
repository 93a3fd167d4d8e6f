//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation,
//! Linux tcp_rate.c with the BBRv3 additions `tx_in_flight` and `lost`).
//!
//! Each transmission snapshots the connection's delivery state into the segment; when an ACK
//! (S)ACKs segments, the most recently *sent* of them (later send time, tie → higher
//! sequence) supplies the sample's start: rate = Δdelivered / max(send phase, ACK phase).
//! Samples whose interval is below min_rtt are invalid (ACK compression). App-limited
//! bubbles are marked when the sender has nothing to send (Linux `tcp_rate_check_app_limited`).
//! ns-3 (TcpRateOps) follows the same draft but measures time in ns and marks app-limited
//! only on socket writes; here times are µs as in Linux.

use crate::scoreboard::Segment;
use tcplab_cc::RateSample;
use tcplab_core::{Rate, SimTime};

/// The connection's delivery state as recorded in a segment when it is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TxSnapshot {
    pub delivered: u64,
    pub delivered_ce: u64,
    pub delivered_time: SimTime,
    pub first_tx_time: SimTime,
    pub lost: u64,
    /// Packets in flight when the segment was sent, itself included.
    pub tx_in_flight: u32,
    pub is_app_limited: bool,
}

/// The segment chosen as the start of this ACK's sample.
#[derive(Clone, Copy, Debug)]
struct Picked {
    seq: u32,
    sent: SimTime,
    tx: TxSnapshot,
    is_retrans: bool,
    /// Send phase: from the first transmission of its flight to its own transmission.
    snd_interval_us: u64,
}

/// What [`RateSampler::generate`] needs to know about the ACK besides the picked segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckContext {
    pub now: SimTime,
    /// Packets newly (S)ACKed by this ACK.
    pub delivered: u32,
    /// Packets newly marked lost while processing this ACK.
    pub losses: u32,
    pub min_rtt_us: u64,
    pub prior_in_flight: u32,
    pub rtt_us: i64,
    pub is_ece: bool,
    pub is_ack_delayed: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RateSampler {
    /// Packets delivered (ACKed or SACKed) so far (Linux `delivered`).
    pub delivered: u64,
    pub delivered_ce: u64,
    /// When `delivered` last grew (Linux `delivered_mstamp`).
    pub delivered_time: SimTime,
    /// Send time of the first packet of the current flight / of the last sampled packet.
    first_tx_time: SimTime,
    /// 0, or the `delivered` value that ends the current app-limited bubble.
    pub app_limited: u64,
    /// Packets marked lost so far (Linux `lost`).
    pub lost: u64,
    picked: Option<Picked>,
    /// Linux `rate_delivered` / `rate_interval_us` / `rate_app_limited`: the last
    /// non-app-limited sample, or a higher app-limited one (what `tcp_info` reports).
    rate_delivered: u64,
    rate_interval_us: u64,
}

impl RateSampler {
    /// Linux `tcp_rate_skb_sent`: the snapshot to store in a segment sent now.
    /// `packets_out` counts the segments outstanding before this one.
    pub(crate) fn on_send(&mut self, now: SimTime, packets_out: u32, tx_in_flight: u32) -> TxSnapshot {
        if packets_out == 0 {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        TxSnapshot {
            delivered: self.delivered,
            delivered_ce: self.delivered_ce,
            delivered_time: self.delivered_time,
            first_tx_time: self.first_tx_time,
            lost: self.lost,
            tx_in_flight,
            is_app_limited: self.app_limited != 0,
        }
    }

    /// Linux `tcp_count_delivered`: `n` more packets reached the receiver.
    pub(crate) fn count_delivered(&mut self, n: u32, ece: bool) {
        self.delivered += u64::from(n);
        if ece {
            self.delivered_ce += u64::from(n);
        }
    }

    /// Starts processing an ACK.
    pub(crate) fn begin_ack(&mut self) {
        self.picked = None;
    }

    /// Linux `tcp_rate_skb_delivered`: `seg` (sequence `seq`) was newly (S)ACKed.
    pub(crate) fn on_delivered(&mut self, seq: u32, seg: &Segment) {
        let later = match &self.picked {
            None => true,
            Some(p) => seg.sent > p.sent || (seg.sent == p.sent && seq > p.seq),
        };
        if later {
            self.picked = Some(Picked {
                seq,
                sent: seg.sent,
                tx: seg.tx,
                is_retrans: seg.ever_retransmitted(),
                snd_interval_us: seg.sent.saturating_since(seg.tx.first_tx_time).as_micros(),
            });
            self.first_tx_time = seg.sent;
        }
    }

    /// Linux `tcp_rate_gen`: the rate sample of this ACK.
    pub(crate) fn generate(&mut self, ack: &AckContext) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if ack.delivered > 0 {
            self.delivered_time = ack.now;
        }
        let mut rs = RateSample::invalid();
        rs.acked_sacked = ack.delivered;
        rs.losses = ack.losses;
        rs.prior_in_flight = ack.prior_in_flight;
        rs.rtt_us = ack.rtt_us;
        rs.is_ece = ack.is_ece;
        rs.is_ack_delayed = ack.is_ack_delayed;
        let Some(p) = self.picked else {
            return rs;
        };
        rs.prior_mstamp = p.tx.delivered_time;
        rs.prior_delivered = p.tx.delivered;
        rs.prior_delivered_ce = p.tx.delivered_ce;
        rs.is_app_limited = p.tx.is_app_limited;
        rs.is_retrans = p.is_retrans;
        rs.tx_in_flight = p.tx.tx_in_flight;
        rs.lost = self.lost - p.tx.lost;
        rs.delivered = (self.delivered - p.tx.delivered) as i64;
        rs.delivered_ce = (self.delivered_ce - p.tx.delivered_ce) as i64;
        let ack_us = ack.now.saturating_since(p.tx.delivered_time).as_micros();
        rs.snd_interval_us = p.snd_interval_us as i64;
        rs.rcv_interval_us = ack_us as i64;
        let interval_us = p.snd_interval_us.max(ack_us);
        if interval_us < ack.min_rtt_us {
            rs.interval_us = -1;
            return rs;
        }
        rs.interval_us = interval_us as i64;
        let delivered = rs.delivered as u64;
        if !rs.is_app_limited
            || u128::from(delivered) * u128::from(self.rate_interval_us) >= u128::from(self.rate_delivered) * u128::from(interval_us)
        {
            self.rate_delivered = delivered;
            self.rate_interval_us = interval_us;
        }
        rs
    }

    /// The sender found itself application-limited (Linux `tcp_rate_check_app_limited`):
    /// the bubble lasts until the packets now in flight are delivered.
    pub(crate) fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
    }

    /// The delivery rate of the recorded sample (Linux `tcpi_delivery_rate`).
    pub(crate) fn delivery_rate(&self, mss: u32) -> Option<Rate> {
        if self.rate_interval_us == 0 {
            return None;
        }
        let bits = u128::from(self.rate_delivered) * u128::from(mss) * 8 * 1_000_000;
        Some(Rate::from_bps((bits / u128::from(self.rate_interval_us)) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::SimDuration;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    fn ack_at(now: SimTime, delivered: u32, min_rtt_us: u64) -> AckContext {
        AckContext { now, delivered, losses: 0, min_rtt_us, prior_in_flight: 2, rtt_us: 50_000, is_ece: false, is_ack_delayed: false }
    }

    /// Two segments sent 10 ms apart into an idle connection, both ACKed by one ACK at 60 ms.
    fn two_segment_sample(min_rtt_us: u64) -> (RateSampler, RateSample) {
        let mut r = RateSampler::default();
        let s0 = Segment::new(1000, ms(0), r.on_send(ms(0), 0, 1));
        let s1 = Segment::new(1000, ms(10), r.on_send(ms(10), 1, 2));
        r.begin_ack();
        r.count_delivered(2, false);
        r.on_delivered(1, &s1);
        r.on_delivered(0, &s0);
        let rs = r.generate(&ack_at(ms(60), 2, min_rtt_us));
        (r, rs)
    }

    #[test]
    fn sample_uses_the_most_recently_sent_segment_and_the_longer_phase() {
        let (r, rs) = two_segment_sample(40_000);
        // Picked: segment 1 (sent at 10 ms; its flight started at 0 ms; delivered_time 0).
        assert_eq!(rs.delivered, 2);
        assert_eq!(rs.snd_interval_us, 10_000);
        assert_eq!(rs.rcv_interval_us, 60_000);
        assert_eq!(rs.interval_us, 60_000);
        assert_eq!(rs.tx_in_flight, 2);
        // 2 packets · 1448 B · 8 / 60 ms
        assert_eq!(r.delivery_rate(1448), Some(Rate::from_bps(2 * 1448 * 8 * 1_000_000 / 60_000)));
    }

    #[test]
    fn interval_below_min_rtt_is_invalid() {
        let (r, rs) = two_segment_sample(70_000);
        assert_eq!(rs.interval_us, -1);
        assert_eq!(rs.delivered, 2);
        assert_eq!(r.delivery_rate(1448), None);
    }

    #[test]
    fn ack_without_timing_information_is_invalid() {
        let mut r = RateSampler::default();
        r.begin_ack();
        let rs = r.generate(&ack_at(ms(5), 0, 0));
        assert_eq!((rs.delivered, rs.interval_us), (-1, -1));
    }

    #[test]
    fn app_limited_bubble_ends_once_delivered_passes_it() {
        let mut r = RateSampler::default();
        r.count_delivered(10, false);
        r.mark_app_limited(3);
        assert_eq!(r.app_limited, 13);
        let snap = r.on_send(ms(0), 3, 4);
        assert!(snap.is_app_limited);
        r.count_delivered(3, false);
        r.generate(&ack_at(ms(1), 3, 0));
        assert_eq!(r.app_limited, 13, "delivered == bubble end: still app-limited");
        r.count_delivered(1, false);
        r.generate(&ack_at(ms(2), 1, 0));
        assert_eq!(r.app_limited, 0);
    }
}
