//! RACK loss detection (RFC 8985 §6.2) as Linux does it (net/ipv4/tcp_recovery.c):
//! `tcp_rack_advance` remembers the most recently sent segment that was (S)ACKed and its RTT,
//! `tcp_rack_detect_loss` marks lost every segment sent before it that has waited longer than
//! that RTT plus the reordering window (`tcp_rack_reo_wnd`), and returns how long the others
//! still have (the REO_TIMEOUT timer, `tcp_rack_mark_lost`). The tail loss probe and the
//! timers are in sender.rs.
//!
//! Segments are kept in order of their latest transmission (Linux `tsorted_sent_queue`) in a
//! ring of (order, seq); an entry goes stale when its segment is (S)ACKed, sent again, or
//! marked lost, and stale entries leave from the front, so an in-order flow costs O(1) per
//! ACK. "Sent after" compares transmission order (`Segment::order`): Linux compares µs
//! timestamps, then sequence numbers, but simulated transmissions share instants, and a
//! retransmission can follow new data sent in the same instant. The window grows by one
//! min_rtt/4 step per round trip with a D-SACK once reordering was seen, and falls back to one
//! step after 16 recoveries without one (`tcp_rack_update_reo_wnd`).

use crate::scoreboard::{Scoreboard, Segment, DUP_THRESH};
use std::collections::VecDeque;
use tcplab_core::SimTime;

/// Linux `TCP_RACK_RECOVERY_THRESH`: recoveries a grown window is kept for.
const RECOVERY_THRESH: u32 = 16;

/// Linux `tcp_skb_sent_after`, on transmission order (wrapping).
fn sent_after(order1: u32, order2: u32) -> bool {
    (order1.wrapping_sub(order2) as i32) > 0
}

/// Linux `tp->rack`, plus the transmission-ordered queue and `reord_seen`.
#[derive(Clone, Debug)]
pub(crate) struct Rack {
    /// Transmission order of the most recently sent (S)ACKed segment (`rack.mstamp`,
    /// `rack.end_seq`).
    latest: Option<u32>,
    /// RTT of that segment, µs (`rack.rtt_us`).
    rtt_us: u64,
    /// `latest` moved since the last detection (`rack.advanced`).
    advanced: bool,
    /// A never-retransmitted segment was delivered below a SACKed one (`tp->reord_seen`).
    reord_seen: bool,
    /// Outstanding transmissions (order, seq), oldest first.
    sent: VecDeque<(u32, u32)>,
    /// The window in min_rtt/4 steps (`rack.reo_wnd_steps`).
    reo_wnd_steps: u32,
    /// Recoveries left before the window falls back to one step (`rack.reo_wnd_persist`).
    reo_wnd_persist: u32,
    /// A D-SACK arrived since the window last grew (`rack.dsack_seen`).
    dsack_seen: bool,
    /// `delivered` when the window last grew (`rack.last_delivered`).
    last_delivered: u64,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            latest: None,
            rtt_us: 0,
            advanced: false,
            reord_seen: false,
            sent: VecDeque::new(),
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
        }
    }
}

impl Rack {
    /// Frees the list once no transmission is outstanding.
    pub(crate) fn release_room(&mut self) {
        if self.sent.is_empty() {
            self.sent = VecDeque::new();
        }
    }

    /// Bytes of the transmissions' allocation.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.sent.capacity() * std::mem::size_of::<(u32, u32)>()
    }

    /// A segment was put on the wire (new or retransmitted): it goes to the tail.
    pub(crate) fn on_sent(&mut self, seq: u32, seg: &Segment) {
        self.sent.push_back((seg.order, seq));
    }

    /// Segment `seq` was newly (S)ACKed at `now`; `prior_fack` is the end of the highest
    /// SACKed segment before this ACK (Linux `tcp_check_sack_reordering`: a segment never
    /// retransmitted delivered below it was reordered).
    pub(crate) fn on_delivered(&mut self, now: SimTime, seq: u32, seg: &Segment, prior_fack: u32, min_rtt_us: u64) {
        if !seg.ever_retransmitted() && seq < prior_fack {
            self.reord_seen = true;
        }
        self.advance(now, seg, min_rtt_us);
    }

    /// Linux `tcp_rack_advance`: only a segment sent after the latest one counts;
    /// `min_rtt_us` is the connection's windowed minimum. A retransmitted segment ACKed sooner
    /// than min_rtt after its retransmission may be the original's ACK and is ignored.
    fn advance(&mut self, now: SimTime, seg: &Segment, min_rtt_us: u64) {
        if self.latest.is_some_and(|o| !sent_after(seg.order, o)) {
            return;
        }
        let rtt_us = now.saturating_since(seg.sent).as_micros();
        if seg.ever_retransmitted() && rtt_us < min_rtt_us {
            return;
        }
        self.advanced = true;
        self.rtt_us = rtt_us;
        self.latest = Some(seg.order);
    }

    /// Reordering was seen another way (Linux `tcp_check_sack_reordering`: a D-SACK of a
    /// SACKed retransmission, or timestamps showing the original filled the hole).
    pub(crate) fn note_reordering(&mut self) {
        self.reord_seen = true;
    }

    /// A D-SACK that was not for a loss probe (Linux `tcp_dsack_seen`): counts toward the
    /// window's growth once reordering was seen.
    pub(crate) fn on_dsack(&mut self) {
        self.dsack_seen |= self.reord_seen;
    }

    /// Linux `tcp_rack_update_reo_wnd`, per ACK: `prior_delivered` is `delivered` when the
    /// newest segment this ACK delivered was sent (0: none). A D-SACK grows the window one
    /// step, at most once per round trip, and keeps it for 16 recoveries.
    pub(crate) fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xFF);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// A recovery ended without undo (Linux `tcp_try_undo_recovery`).
    pub(crate) fn recovery_ended(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
    }

    /// A D-SACK undid a recovery (Linux `tcp_try_undo_dsack`).
    pub(crate) fn dsack_undid(&mut self) {
        self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RECOVERY_THRESH);
    }

    /// Losses were unmarked (Linux `tcp_undo_cwnd_reduction`): the transmissions queue is
    /// rebuilt from the scoreboard and detection runs again on the next ACK.
    pub(crate) fn on_undo(&mut self, sb: &Scoreboard) {
        let mut pending: Vec<(u32, u32)> = (sb.snd_una()..sb.snd_nxt())
            .map(|seq| (sb.get(seq).order, seq))
            .filter(|&(order, seq)| Self::pending(sb, order, seq))
            .collect();
        let base = pending.iter().map(|&(order, _)| order).min_by(|&a, &b| {
            if sent_after(a, b) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            }
        });
        if let Some(base) = base {
            pending.sort_unstable_by_key(|&(order, _)| order.wrapping_sub(base));
        }
        self.sent = pending.into();
        self.advanced = true;
    }

    /// Drops the stale entries at the front (after every ACK, so that the queue stays
    /// within the window when no detection runs).
    pub(crate) fn prune(&mut self, sb: &Scoreboard) {
        while self.sent.front().is_some_and(|&(order, seq)| !Self::pending(sb, order, seq)) {
            self.sent.pop_front();
        }
    }

    /// Takes `rack.advanced` (Linux `tcp_rack_mark_lost` runs detection only when set).
    pub(crate) fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// The RTT of the latest (S)ACKed segment, µs (0 before any).
    pub(crate) fn rtt_us(&self) -> u64 {
        self.rtt_us
    }

    /// Linux `tcp_rack_reo_wnd`, µs: none before reordering was seen once in recovery or
    /// once DupThresh segments are SACKed; otherwise `reo_wnd_steps`·min_rtt/4, at most SRTT.
    pub(crate) fn reo_wnd_us(&self, in_recovery: bool, sacked_out: u32, min_rtt_us: u64, srtt_us: u64) -> u64 {
        if !self.reord_seen && (in_recovery || sacked_out >= DUP_THRESH) {
            return 0;
        }
        ((min_rtt_us >> 2) * u64::from(self.reo_wnd_steps)).min(srtt_us)
    }

    /// Linux `tcp_rack_detect_loss`: marks lost each segment sent before the latest
    /// (S)ACKed one and not (S)ACKed within `rtt_us + reo_wnd_us` of its transmission.
    /// Returns the segments newly marked lost and, if some segment sent before the latest
    /// one is still within its window, the longest time left, µs (the REO timeout).
    pub(crate) fn detect_loss(&mut self, now: SimTime, sb: &mut Scoreboard, reo_wnd_us: u64) -> (u32, Option<u64>) {
        let Some(latest) = self.latest else { return (0, None) };
        let wait_us = self.rtt_us + reo_wnd_us;
        let remaining = |sb: &Scoreboard, seq: u32| wait_us as i64 - now.saturating_since(sb.get(seq).sent).as_micros() as i64;
        self.prune(sb);
        let mut newly = 0;
        while let Some(&(order, seq)) = self.sent.front() {
            if !sent_after(latest, order) || remaining(sb, seq) > 0 {
                break;
            }
            newly += sb.mark_lost(seq);
            self.sent.pop_front();
            self.prune(sb);
        }
        // The time left grows with the transmission time: the longest belongs to the last
        // pending segment sent before the latest (S)ACKed one.
        let end = self.sent.partition_point(|&(order, _)| sent_after(latest, order));
        let timeout =
            self.sent.range(..end).rev().find(|&&(order, seq)| Self::pending(sb, order, seq)).map(|&(_, seq)| remaining(sb, seq) as u64);
        (newly, timeout)
    }

    /// The entry is the segment's latest transmission and the segment is neither (S)ACKed nor
    /// marked lost awaiting retransmission (Linux skips those).
    fn pending(sb: &Scoreboard, order: u32, seq: u32) -> bool {
        if seq < sb.snd_una() || seq >= sb.snd_nxt() {
            return false;
        }
        let seg = sb.get(seq);
        seg.order == order && !seg.sacked() && (!seg.lost() || seg.retrans_outstanding())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoreboard::Segment;
    use tcplab_cc::rate_sample::TxSnapshot;
    use tcplab_core::{SackBlock, SimDuration};

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    /// Segments 0..n sent 1 ms apart.
    fn flight(n: u32) -> (Rack, Scoreboard) {
        let mut rack = Rack::default();
        let mut sb = Scoreboard::new();
        for seq in 0..n {
            sb.push(Segment::new(1000, ms(u64::from(seq)), TxSnapshot::default()));
            rack.on_sent(seq, sb.get(seq));
        }
        (rack, sb)
    }

    fn sack(rack: &mut Rack, sb: &mut Scoreboard, now: SimTime, start: u32, end: u32) {
        let mut newly = Vec::new();
        sb.tag_sacks(&[SackBlock { start, end }], sb.snd_una(), |seq, seg| newly.push((seq, *seg)));
        for (seq, seg) in newly {
            rack.on_delivered(now, seq, &seg, 0, 50_000);
        }
    }

    // 0 and 1 lost; 2 (sent at 2 ms) SACKed at 52 ms: RACK.rtt = 50 ms. With a 12.5 ms window,
    // 0 is lost at 0 + 50 + 12.5 = 62.5 ms and 1 at 63.5 ms; the timeout is the longest wait.
    #[test]
    fn segments_sent_before_the_sacked_one_are_lost_after_rtt_plus_window() {
        let (mut rack, mut sb) = flight(5);
        sack(&mut rack, &mut sb, ms(52), 2, 3);
        assert!(rack.take_advanced());
        assert_eq!(rack.rtt_us(), 50_000);
        let reo = rack.reo_wnd_us(false, sb.sacked_out(), 50_000, 50_000);
        assert_eq!(reo, 12_500);
        assert_eq!(rack.detect_loss(ms(52), &mut sb, reo), (0, Some(11_500)));
        let t = SimTime::ZERO + SimDuration::from_micros(62_499);
        assert_eq!(rack.detect_loss(t, &mut sb, reo), (0, Some(1_001)));
        let t = SimTime::ZERO + SimDuration::from_micros(62_500);
        assert_eq!(rack.detect_loss(t, &mut sb, reo), (1, Some(1_000)));
        assert!(sb.get(0).lost() && !sb.get(1).lost());
        assert_eq!(rack.detect_loss(ms(64), &mut sb, reo), (1, None));
        assert!(sb.get(1).lost() && !sb.get(3).lost() && !sb.get(4).lost(), "sent after 2: not judged");
    }

    #[test]
    fn no_window_once_dupthresh_segments_are_sacked_or_in_recovery_unless_reordering_was_seen() {
        let mut rack = Rack::default();
        assert_eq!(rack.reo_wnd_us(false, 2, 40_000, 60_000), 10_000);
        assert_eq!(rack.reo_wnd_us(false, 3, 40_000, 60_000), 0);
        assert_eq!(rack.reo_wnd_us(true, 0, 40_000, 60_000), 0);
        assert_eq!(rack.reo_wnd_us(false, 0, 400_000, 60_000), 60_000, "at most SRTT");
        rack.reord_seen = true;
        assert_eq!(rack.reo_wnd_us(true, 5, 40_000, 60_000), 10_000);
    }

    // Linux tcp_rack_update_reo_wnd. min_rtt 40 ms: one step is 10 ms. A D-SACK before any
    // reordering leaves it; after reordering, the next ACK that delivers a segment grows it to
    // 20 ms; another D-SACK within that round trip (a segment sent before delivered reached
    // 100) does nothing; 16 recoveries later without D-SACK it is back to one step.
    #[test]
    fn the_window_grows_one_step_per_round_trip_with_a_dsack_after_reordering() {
        let mut rack = Rack::default();
        rack.on_dsack();
        rack.update_reo_wnd(50, 60);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 10_000);
        rack.note_reordering();
        rack.on_dsack();
        rack.update_reo_wnd(0, 100);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 10_000, "no segment delivered: no update");
        rack.update_reo_wnd(90, 100);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 20_000);
        rack.on_dsack();
        rack.update_reo_wnd(99, 110);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 20_000, "within the round trip");
        for _ in 0..15 {
            rack.recovery_ended();
        }
        rack.update_reo_wnd(120, 130);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 20_000);
        rack.recovery_ended();
        rack.update_reo_wnd(130, 140);
        assert_eq!(rack.reo_wnd_us(false, 0, 40_000, 100_000), 10_000);
    }

    // A retransmission is lost again: it is judged by its own transmission time.
    #[test]
    fn a_lost_retransmission_is_detected_when_a_later_transmission_is_sacked() {
        let (mut rack, mut sb) = flight(3);
        sack(&mut rack, &mut sb, ms(52), 1, 2);
        rack.take_advanced();
        assert_eq!(rack.detect_loss(ms(52), &mut sb, 0), (1, None));
        sb.record_retransmit(0, ms(52), TxSnapshot::default());
        rack.on_sent(0, sb.get(0));
        // 2 was sent before the retransmission: its SACK says nothing about it
        sack(&mut rack, &mut sb, ms(100), 2, 3);
        assert_eq!(rack.detect_loss(ms(100), &mut sb, 0), (0, None));
        assert_eq!(sb.retrans_out(), 1);
        // new segment 3, sent after the retransmission, SACKed 50 ms later
        sb.push(Segment::new(1000, ms(53), TxSnapshot::default()));
        rack.on_sent(3, sb.get(3));
        sack(&mut rack, &mut sb, ms(103), 3, 4);
        assert_eq!(rack.detect_loss(ms(103), &mut sb, 0), (1, None));
        assert_eq!((sb.lost_out(), sb.retrans_out()), (1, 0));
        assert_eq!(sb.next_retransmit(), Some(0));
    }
}
