//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation,
//! Linux tcp_rate.c with the BBRv3 additions `tx_in_flight` and `lost`): the sender's side.
//!
//! Each transmission snapshots the connection's delivery state into the segment; when an ACK
//! (S)ACKs segments, the most recently *sent* of them (later send time, tie → higher
//! sequence) supplies the sample's start, and [`tcplab_cc::rate_sample::rate_sample`]
//! computes the sample from it. App-limited bubbles are marked when the sender has nothing to
//! send (Linux `tcp_rate_check_app_limited`). ns-3 (TcpRateOps) follows the same draft but
//! measures time in ns and marks app-limited only on socket writes; here times are µs as in Linux.

use crate::scoreboard::Segment;
use tcplab_cc::rate_sample::{rate_sample, AckContext, DeliveryTotals, SentPacket, TxSnapshot};
use tcplab_cc::RateSample;
use tcplab_core::{Rate, SimTime};

/// The segment chosen as the start of this ACK's sample.
#[derive(Clone, Copy, Debug)]
struct Picked {
    seq: u32,
    packet: SentPacket,
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
    rate_app_limited: bool,
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
            Some(p) => seg.sent > p.packet.sent || (seg.sent == p.packet.sent && seq > p.seq),
        };
        if later {
            let packet = SentPacket { sent: seg.sent, tx: seg.tx, is_retrans: seg.ever_retransmitted() };
            self.picked = Some(Picked { seq, packet });
            self.first_tx_time = seg.sent;
        }
    }

    /// `delivered` when the newest segment (S)ACKed by this ACK was sent (Linux
    /// `rs->prior_delivered`); 0 if none.
    pub(crate) fn prior_delivered(&self) -> u64 {
        self.picked.as_ref().map_or(0, |p| p.packet.tx.delivered)
    }

    /// Linux `tcp_rate_gen`: ends the app-limited bubble, stamps the delivery, takes the rate
    /// sample of this ACK and keeps it for `tcp_info` if it is valid and not app-limited, or
    /// app-limited but higher.
    pub(crate) fn generate(&mut self, ack: &AckContext) -> RateSample {
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if ack.delivered > 0 {
            self.delivered_time = ack.now;
        }
        let totals = DeliveryTotals { delivered: self.delivered, delivered_ce: self.delivered_ce, lost: self.lost };
        let rs = rate_sample(totals, self.picked.as_ref().map(|p| &p.packet), ack);
        if rs.interval_us >= 0 {
            let (delivered, interval_us) = (rs.delivered as u64, rs.interval_us as u64);
            if !rs.is_app_limited
                || u128::from(delivered) * u128::from(self.rate_interval_us) >= u128::from(self.rate_delivered) * u128::from(interval_us)
            {
                self.rate_delivered = delivered;
                self.rate_interval_us = interval_us;
                self.rate_app_limited = rs.is_app_limited;
            }
        }
        rs
    }

    /// The sender found itself application-limited (Linux `tcp_rate_check_app_limited`):
    /// the bubble lasts until the packets now in flight are delivered.
    pub(crate) fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
    }

    /// The recorded sample was application-limited (Linux `tcpi_delivery_rate_app_limited`).
    pub(crate) fn delivery_rate_app_limited(&self) -> bool {
        self.rate_app_limited
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
    fn an_app_limited_sample_is_recorded_only_when_it_beats_the_recorded_rate() {
        // The two-segment sample (2 packets in 60 ms) was not app-limited.
        let (mut r, _) = two_segment_sample(40_000);
        assert!(!r.delivery_rate_app_limited());
        let sample = |r: &mut RateSampler, sent_ms: u64, acked_ms: u64| {
            r.mark_app_limited(0);
            let seg = Segment::new(1000, ms(sent_ms), r.on_send(ms(sent_ms), 0, 1));
            r.begin_ack();
            r.count_delivered(1, false);
            r.on_delivered(2, &seg);
            r.generate(&ack_at(ms(acked_ms), 1, 10_000))
        };
        // An app-limited sample of 1 packet in 100 ms is slower: the recorded one stays.
        let rs = sample(&mut r, 100, 200);
        assert!(rs.is_app_limited && !r.delivery_rate_app_limited());
        assert_eq!(r.delivery_rate(1448), Some(Rate::from_bps(2 * 1448 * 8 * 1_000_000 / 60_000)));
        // 1 packet in 20 ms is faster: recorded, and marked app-limited (tcpi_delivery_rate_app_limited).
        let rs = sample(&mut r, 300, 320);
        assert!(rs.is_app_limited && r.delivery_rate_app_limited());
        assert_eq!(r.delivery_rate(1448), Some(Rate::from_bps(1448 * 8 * 1_000_000 / 20_000)));
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
