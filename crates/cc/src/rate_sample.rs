//! Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation; Linux tcp_rate.c with the
//! BBRv3 additions `tx_in_flight` and `lost`): the sample the algorithms read and the one
//! computation of it (Linux `tcp_rate_gen`), used by tcplab-tcp's sender and by the testkit.
//! The senders keep the connection's counters, snapshot them into each packet they send
//! (Linux `tcp_rate_skb_sent`) and pick the sampled packet (Linux `tcp_rate_skb_delivered`);
//! this module turns those into the sample. Times are µs as in Linux (ns-3's TcpRateOps
//! follows the same draft in ns).

use tcplab_core::SimTime;

/// A delivery-rate sample (Linux `struct rate_sample`, tcp_rate.c).
/// Times are in µs as in Linux; `-1` marks an invalid field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// When the sampled packet's `delivered` snapshot was taken.
    pub prior_mstamp: SimTime,
    /// `delivered` at the time the sampled packet was sent.
    pub prior_delivered: u64,
    /// `delivered_ce` at the time the sampled packet was sent.
    pub prior_delivered_ce: u64,
    /// Packets delivered over `interval_us`; -1 if no valid sample.
    pub delivered: i64,
    /// CE-marked packets delivered over the interval.
    pub delivered_ce: i64,
    /// Length of the sampling interval, µs; -1 if invalid.
    pub interval_us: i64,
    /// Send-side part of the interval, µs.
    pub snd_interval_us: i64,
    /// ACK-side part of the interval, µs.
    pub rcv_interval_us: i64,
    /// RTT sample of this ACK, µs; -1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly ACKed or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// Packets in flight when the sampled packet was sent (including it).
    pub tx_in_flight: u32,
    /// Packets marked lost between sending the sampled packet and now.
    pub lost: u64,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub is_ack_delayed: bool,
    pub is_ece: bool,
}

impl RateSample {
    /// A sample with no valid rate information (as Linux produces when nothing timed was delivered).
    pub fn invalid() -> Self {
        RateSample {
            prior_mstamp: SimTime::ZERO,
            prior_delivered: 0,
            prior_delivered_ce: 0,
            delivered: -1,
            delivered_ce: 0,
            interval_us: -1,
            snd_interval_us: -1,
            rcv_interval_us: -1,
            rtt_us: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            tx_in_flight: 0,
            lost: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            is_ece: false,
        }
    }
}

/// The connection's delivery state as recorded in a packet when it is sent (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    /// Connection `delivered` when the packet was sent.
    pub delivered: u64,
    pub delivered_ce: u64,
    /// When `delivered` last grew before the packet was sent (Linux `delivered_mstamp`).
    pub delivered_time: SimTime,
    /// Send time of the first packet of the packet's flight (Linux `first_tx_mstamp`).
    pub first_tx_time: SimTime,
    pub lost: u64,
    /// Packets in flight when the packet was sent, itself included.
    pub tx_in_flight: u32,
    pub is_app_limited: bool,
}

/// A sent packet as the rate sampler sees it: its latest send time (Linux `skb_mstamp_ns`),
/// the snapshot taken then, and whether it was ever retransmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentPacket {
    pub sent: SimTime,
    pub tx: TxSnapshot,
    pub is_retrans: bool,
}

/// The connection's running totals once the ACK has been processed (Linux `tp->delivered`,
/// `tp->delivered_ce`, `tp->lost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryTotals {
    pub delivered: u64,
    pub delivered_ce: u64,
    pub lost: u64,
}

/// What [`rate_sample`] needs to know about the ACK besides its sampled packet.
#[derive(Clone, Copy, Debug)]
pub struct AckContext {
    pub now: SimTime,
    /// Packets newly (S)ACKed by this ACK.
    pub delivered: u32,
    /// Packets newly marked lost while processing this ACK.
    pub losses: u32,
    pub min_rtt_us: u64,
    pub prior_in_flight: u32,
    /// RTT sample of this ACK, µs; -1 if none.
    pub rtt_us: i64,
    pub is_ece: bool,
    pub is_ack_delayed: bool,
}

/// Linux `tcp_rate_gen` minus its updates of the connection (ending the app-limited bubble,
/// `delivered_mstamp`, the `tcp_info` rate), which stay with the sender: the sample of an ACK
/// whose most recently sent delivered packet is `newest` (`None`: nothing timed was delivered,
/// the sample is invalid). Rate = Δdelivered / max(send phase, ACK phase); an interval below
/// min_rtt is invalid (ACK compression).
pub fn rate_sample(totals: DeliveryTotals, newest: Option<&SentPacket>, ack: &AckContext) -> RateSample {
    let mut rs = RateSample::invalid();
    rs.acked_sacked = ack.delivered;
    rs.losses = ack.losses;
    rs.prior_in_flight = ack.prior_in_flight;
    rs.rtt_us = ack.rtt_us;
    rs.is_ece = ack.is_ece;
    rs.is_ack_delayed = ack.is_ack_delayed;
    let Some(p) = newest else {
        return rs;
    };
    rs.prior_mstamp = p.tx.delivered_time;
    rs.prior_delivered = p.tx.delivered;
    rs.prior_delivered_ce = p.tx.delivered_ce;
    rs.is_app_limited = p.tx.is_app_limited;
    rs.is_retrans = p.is_retrans;
    rs.tx_in_flight = p.tx.tx_in_flight;
    rs.lost = totals.lost - p.tx.lost;
    rs.delivered = (totals.delivered - p.tx.delivered) as i64;
    rs.delivered_ce = (totals.delivered_ce - p.tx.delivered_ce) as i64;
    let snd_us = p.sent.saturating_since(p.tx.first_tx_time).as_micros();
    let ack_us = ack.now.saturating_since(p.tx.delivered_time).as_micros();
    rs.snd_interval_us = snd_us as i64;
    rs.rcv_interval_us = ack_us as i64;
    let interval_us = snd_us.max(ack_us);
    rs.interval_us = if interval_us < ack.min_rtt_us { -1 } else { interval_us as i64 };
    rs
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::SimDuration;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    /// At 100 ms, 12 packets delivered (3 CE) and 2 lost in all; this ACK (S)ACKed 3 and marked 1 lost.
    const TOTALS: DeliveryTotals = DeliveryTotals { delivered: 12, delivered_ce: 3, lost: 2 };

    fn ack(min_rtt_us: u64) -> AckContext {
        AckContext {
            now: ms(100),
            delivered: 3,
            losses: 1,
            min_rtt_us,
            prior_in_flight: 9,
            rtt_us: 70_000,
            is_ece: true,
            is_ack_delayed: true,
        }
    }

    /// A packet sent at 30 ms in a flight that started at 0 ms, when 4 packets (1 CE) had
    /// been delivered, the last at 10 ms, and 1 lost.
    fn newest() -> SentPacket {
        let tx = TxSnapshot {
            delivered: 4,
            delivered_ce: 1,
            delivered_time: ms(10),
            first_tx_time: ms(0),
            lost: 1,
            tx_in_flight: 7,
            is_app_limited: true,
        };
        SentPacket { sent: ms(30), tx, is_retrans: true }
    }

    #[test]
    fn sample_spans_the_longer_of_the_send_and_ack_phases() {
        let rs = rate_sample(TOTALS, Some(&newest()), &ack(40_000));
        assert_eq!((rs.delivered, rs.delivered_ce, rs.lost), (8, 2, 1));
        // Send phase 30 - 0 ms, ACK phase 100 - 10 ms.
        assert_eq!((rs.snd_interval_us, rs.rcv_interval_us, rs.interval_us), (30_000, 90_000, 90_000));
        assert_eq!((rs.prior_delivered, rs.prior_delivered_ce, rs.prior_mstamp), (4, 1, ms(10)));
        assert_eq!((rs.acked_sacked, rs.losses, rs.prior_in_flight, rs.tx_in_flight, rs.rtt_us), (3, 1, 9, 7, 70_000));
        assert!(rs.is_app_limited && rs.is_retrans && rs.is_ece && rs.is_ack_delayed);
    }

    #[test]
    fn interval_below_min_rtt_or_no_sampled_packet_is_invalid() {
        let rs = rate_sample(TOTALS, Some(&newest()), &ack(90_001));
        assert_eq!((rs.delivered, rs.interval_us), (8, -1));
        let rs = rate_sample(TOTALS, None, &ack(0));
        let expected = RateSample {
            acked_sacked: 3,
            losses: 1,
            prior_in_flight: 9,
            rtt_us: 70_000,
            is_ece: true,
            is_ack_delayed: true,
            ..RateSample::invalid()
        };
        assert_eq!(rs, expected);
    }
}
