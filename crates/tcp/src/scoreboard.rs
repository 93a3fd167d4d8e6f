//! The retransmit queue and SACK scoreboard (RFC 6675, RFC 2018, Linux
//! `tcp_sacktag_write_queue` / `tcp_mark_head_lost` / `tcp_clean_rtx_queue`).
//!
//! One entry per outstanding segment in a ring indexed by `seq − snd_una`; the counters
//! `sacked_out`, `lost_out` and `retrans_out` are kept incrementally so that
//! in_flight = packets_out − (sacked_out + lost_out) + retrans_out costs nothing. Nothing
//! scans the window per ACK:
//! * SACK blocks are processed only where they differ from the previous ACK's blocks
//!   (Linux's SACK cache), so a growing block costs its growth;
//! * loss marking keeps a frontier: every hole below `mark_seq` is lost (RFC 6675 IsLost:
//!   at least DupThresh SACKed segments above it), and the frontier only moves forward;
//! * retransmit selection keeps a hint below which no segment awaits retransmission.
//!
//! Without SACK (RFC 6582) `sacked_out` counts duplicate ACKs ("Reno emulation", as Linux).
//! ns-3's TcpTxBuffer walks its item list per ACK and defines IsLost with DupThresh·MSS
//! SACKed bytes; the outcome is the same for full-sized segments.
//!
//! A SACK ends a segment's outstanding retransmission in Linux (`tcp_sacktag_one` clears
//! TCPCB_SACKED_RETRANS). ns-3 3.44's `TcpTxBuffer::Update` clears only the lost flag and keeps
//! `m_retrans`: a SACKed retransmission stays in BytesInFlight (sent − SACKed − lost +
//! retransmitted) until the cumulative ACK removes it or a timeout (`SetSentListLost`) resets
//! every retransmitted flag. [`Scoreboard::ns3`] keeps that accounting.

use std::collections::VecDeque;
use tcplab_cc::rate_sample::TxSnapshot;
use tcplab_core::{SackBlock, SimTime, MAX_SACK_BLOCKS};

/// RFC 6675 DupThresh (Linux `tcp_reordering` default).
pub(crate) const DUP_THRESH: u32 = 3;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission is outstanding (Linux TCPCB_SACKED_RETRANS).
const RETRANS: u8 = 4;
const EVER_RETRANS: u8 = 8;

/// One outstanding segment: one cache line (64 bytes, aligned), as an ACK reads the
/// segments it acknowledges long after they were sent, when they are out of cache.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Segment {
    /// Payload bytes: at most an MSS, which is below 64 KiB (an IPv4 packet's limit).
    pub payload: u16,
    /// Time of the latest transmission.
    pub sent: SimTime,
    /// Place of the latest transmission among the connection's (wrapping): orders
    /// transmissions within one simulated instant.
    pub order: u32,
    pub tx: TxSnapshot,
    flags: u8,
}

impl Segment {
    pub(crate) fn new(payload: u32, sent: SimTime, tx: TxSnapshot) -> Self {
        let payload = u16::try_from(payload).expect("a segment's payload is at most an MSS, below 64 KiB");
        Segment { payload, sent, order: 0, tx, flags: 0 }
    }
    pub(crate) fn sacked(&self) -> bool {
        self.flags & SACKED != 0
    }
    pub(crate) fn lost(&self) -> bool {
        self.flags & LOST != 0
    }
    pub(crate) fn retrans_outstanding(&self) -> bool {
        self.flags & RETRANS != 0
    }
    pub(crate) fn ever_retransmitted(&self) -> bool {
        self.flags & EVER_RETRANS != 0
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Scoreboard {
    segs: VecDeque<Segment>,
    snd_una: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    bytes_out: u64,
    /// Payload bytes of the SACKed, lost and outstanding retransmitted segments (the byte
    /// counterparts of the three counters above, for ns-3's byte-counted pipe).
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// End (exclusive) of the highest SACKed segment.
    highest_sack_end: u32,
    /// Loss frontier: every un-SACKed segment below it is marked lost.
    mark_seq: u32,
    /// SACKed segments in `[snd_una, mark_seq)`.
    sacked_below_mark: u32,
    /// No segment below it awaits retransmission.
    retx_hint: u32,
    /// The previous ACK's SACK blocks (already tagged).
    sack_cache: [SackBlock; MAX_SACK_BLOCKS],
    sack_cache_len: usize,
    /// Transmissions so far (wrapping), for `Segment::order`.
    transmissions: u32,
    /// ns-3's accounting: a SACKed segment keeps its outstanding retransmission.
    sack_keeps_retrans: bool,
    /// SACKed segments whose retransmission is still counted (ns-3 only; in `retrans_out`).
    sacked_retrans_out: u32,
}

impl Scoreboard {
    pub(crate) fn new() -> Self {
        Scoreboard {
            segs: VecDeque::new(),
            snd_una: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            bytes_out: 0,
            sacked_bytes: 0,
            lost_bytes: 0,
            retrans_bytes: 0,
            highest_sack_end: 0,
            mark_seq: 0,
            sacked_below_mark: 0,
            retx_hint: 0,
            sack_cache: [SackBlock::default(); MAX_SACK_BLOCKS],
            sack_cache_len: 0,
            transmissions: 0,
            sack_keeps_retrans: false,
            sacked_retrans_out: 0,
        }
    }

    /// A scoreboard with ns-3 3.44's retransmission accounting (the module header).
    pub(crate) fn ns3() -> Self {
        Scoreboard { sack_keeps_retrans: true, ..Scoreboard::new() }
    }

    pub(crate) fn snd_una(&self) -> u32 {
        self.snd_una
    }
    pub(crate) fn snd_nxt(&self) -> u32 {
        self.snd_una + self.segs.len() as u32
    }
    pub(crate) fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }
    /// Frees the ring once everything is acked (dropped, not shrunk: no code beside the hot
    /// path's own for the ring's type).
    pub(crate) fn release_room(&mut self) {
        if self.segs.is_empty() {
            self.segs = VecDeque::new();
        }
    }
    /// Bytes of the ring's allocation.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.segs.capacity() * std::mem::size_of::<Segment>()
    }
    pub(crate) fn sacked_out(&self) -> u32 {
        self.sacked_out
    }
    pub(crate) fn lost_out(&self) -> u32 {
        self.lost_out
    }
    pub(crate) fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// Payload bytes of the outstanding segments.
    pub(crate) fn bytes_out(&self) -> u64 {
        self.bytes_out
    }
    /// Linux `tcp_packets_in_flight` (RFC 6675 pipe).
    pub(crate) fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }
    /// The pipe in payload bytes (ns-3 `TcpTxBuffer::BytesInFlight`: sent − SACKed − lost +
    /// retransmitted). With SACK only: Reno emulation counts duplicate ACKs, not segments.
    pub(crate) fn in_flight_bytes(&self) -> u64 {
        (self.bytes_out + self.retrans_bytes).saturating_sub(self.sacked_bytes + self.lost_bytes)
    }
    pub(crate) fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    pub(crate) fn retrans_bytes(&self) -> u64 {
        self.retrans_bytes
    }
    /// Linux `tcp_highest_sack_seq`.
    pub(crate) fn highest_sack_end(&self) -> u32 {
        if self.sacked_out == 0 {
            self.snd_una
        } else {
            self.highest_sack_end.max(self.snd_una)
        }
    }
    pub(crate) fn head(&self) -> Option<&Segment> {
        self.segs.front()
    }
    pub(crate) fn get(&self, seq: u32) -> &Segment {
        &self.segs[(seq - self.snd_una) as usize]
    }

    /// Appends a new segment at `snd_nxt`.
    pub(crate) fn push(&mut self, mut seg: Segment) {
        seg.order = self.next_order();
        self.bytes_out += u64::from(seg.payload);
        self.segs.push_back(seg);
    }

    fn next_order(&mut self) -> u32 {
        self.transmissions = self.transmissions.wrapping_add(1);
        self.transmissions
    }

    /// Records the retransmission of `seq` at `now` with a fresh rate snapshot. A segment
    /// not marked lost (a loss probe) then counts twice in flight, as in Linux.
    pub(crate) fn record_retransmit(&mut self, seq: u32, now: SimTime, tx: TxSnapshot) {
        let order = self.next_order();
        let seg = &mut self.segs[(seq - self.snd_una) as usize];
        seg.order = order;
        // ns-3 resends a segment whose retransmission is outstanding (the fast retransmission
        // of a lost head) without counting it twice (`GetTransmittedSegment`)
        debug_assert!(!seg.sacked() && (self.sack_keeps_retrans || !seg.retrans_outstanding()));
        let counted = seg.retrans_outstanding();
        seg.flags |= RETRANS | EVER_RETRANS;
        seg.sent = now;
        seg.tx = tx;
        if !counted {
            self.retrans_out += 1;
            self.retrans_bytes += u64::from(seg.payload);
        }
    }

    /// Tags the segments of `blocks` at or above `ack` as SACKed, calling `on_sacked` for each
    /// newly SACKed one (with its state before tagging). Returns how many were newly SACKed.
    pub(crate) fn tag_sacks(&mut self, blocks: &[SackBlock], ack: u32, mut on_sacked: impl FnMut(u32, &Segment)) -> u32 {
        let snd_nxt = self.snd_nxt();
        let mut sorted = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        for b in blocks.iter().take(MAX_SACK_BLOCKS) {
            let start = b.start.max(ack);
            let end = b.end.min(snd_nxt);
            if start < end {
                sorted[n] = SackBlock { start, end };
                n += 1;
            }
        }
        let sorted = &mut sorted[..n];
        sorted.sort_unstable_by_key(|b| b.start);
        let mut newly = 0;
        for b in sorted.iter() {
            let mut cur = b.start;
            while cur < b.end {
                let cached = &self.sack_cache[..self.sack_cache_len];
                if let Some(c) = cached.iter().find(|c| c.start <= cur && cur < c.end) {
                    cur = c.end;
                    continue;
                }
                let stop = cached.iter().filter(|c| c.start > cur).map(|c| c.start).min().unwrap_or(b.end).min(b.end);
                for seq in cur..stop {
                    newly += self.tag_one(seq, &mut on_sacked);
                }
                cur = stop;
            }
        }
        self.sack_cache[..n].copy_from_slice(sorted);
        self.sack_cache_len = n;
        newly
    }

    fn tag_one(&mut self, seq: u32, on_sacked: &mut impl FnMut(u32, &Segment)) -> u32 {
        let seg = &mut self.segs[(seq - self.snd_una) as usize];
        if seg.sacked() {
            return 0;
        }
        on_sacked(seq, seg);
        let payload = u64::from(seg.payload);
        if seg.lost() {
            self.lost_out -= 1;
            self.lost_bytes -= payload;
        }
        let mut cleared = LOST;
        if seg.retrans_outstanding() {
            if self.sack_keeps_retrans {
                self.sacked_retrans_out += 1;
            } else {
                self.retrans_out -= 1;
                self.retrans_bytes -= payload;
                cleared |= RETRANS;
            }
        }
        seg.flags = (seg.flags & !cleared) | SACKED;
        self.sacked_out += 1;
        self.sacked_bytes += payload;
        self.highest_sack_end = self.highest_sack_end.max(seq + 1);
        if seq < self.mark_seq {
            self.sacked_below_mark += 1;
        }
        1
    }

    /// Removes the segments below `ack` (cumulatively acknowledged), calling `on_acked` for
    /// each with its flags as they were. Returns the number removed.
    pub(crate) fn ack_to(&mut self, ack: u32, mut on_acked: impl FnMut(u32, &Segment)) -> u32 {
        let mut removed = 0;
        let mut sacked_removed = 0;
        while self.snd_una < ack {
            let Some(seg) = self.segs.pop_front() else { break };
            on_acked(self.snd_una, &seg);
            let payload = u64::from(seg.payload);
            if seg.sacked() {
                self.sacked_out -= 1;
                self.sacked_bytes -= payload;
                sacked_removed += 1;
            }
            if seg.lost() {
                self.lost_out -= 1;
                self.lost_bytes -= payload;
            }
            if seg.retrans_outstanding() {
                self.retrans_out -= 1;
                self.retrans_bytes -= payload;
                self.sacked_retrans_out -= u32::from(seg.sacked());
            }
            self.bytes_out -= u64::from(seg.payload);
            self.snd_una += 1;
            removed += 1;
        }
        if self.snd_una >= self.mark_seq {
            self.mark_seq = self.snd_una;
            self.sacked_below_mark = 0;
        } else {
            self.sacked_below_mark -= sacked_removed;
        }
        self.retx_hint = self.retx_hint.max(self.snd_una);
        if self.segs.is_empty() {
            self.sack_cache_len = 0;
        }
        removed
    }

    /// Marks `seq` lost; a lost retransmission is marked again. Returns 1 if newly lost.
    pub(crate) fn mark_lost(&mut self, seq: u32) -> u32 {
        let seg = &mut self.segs[(seq - self.snd_una) as usize];
        if seg.sacked() {
            return 0;
        }
        if seg.lost() {
            if !seg.retrans_outstanding() {
                return 0;
            }
            seg.flags &= !RETRANS;
            self.retrans_out -= 1;
            self.retrans_bytes -= u64::from(seg.payload);
        } else {
            seg.flags |= LOST;
            self.lost_out += 1;
            self.lost_bytes += u64::from(seg.payload);
        }
        self.retx_hint = self.retx_hint.min(seq);
        1
    }

    /// RFC 6675 loss marking below `high_seq` (Linux `tcp_mark_head_lost(sacked_out −
    /// reordering)`): a hole is lost once DupThresh SACKed segments lie above it.
    /// Returns the number of newly lost segments.
    pub(crate) fn mark_lost_from_sacks(&mut self, high_seq: u32) -> u32 {
        let limit = high_seq.min(self.snd_nxt());
        let mut newly = 0;
        while self.mark_seq < limit {
            let seq = self.mark_seq;
            if self.get(seq).sacked() {
                self.sacked_below_mark += 1;
            } else if self.sacked_out - self.sacked_below_mark >= DUP_THRESH {
                if !self.get(seq).lost() {
                    newly += self.mark_lost(seq);
                }
            } else {
                break;
            }
            self.mark_seq += 1;
        }
        newly
    }

    /// Marks the first outstanding segment lost unless it already is (Linux
    /// `tcp_mark_head_lost(1, 1)` / `tcp_newreno_mark_lost`). Returns 1 if newly lost.
    pub(crate) fn mark_head_lost(&mut self) -> u32 {
        match self.segs.front() {
            Some(h) if !h.lost() && !h.sacked() => self.mark_lost(self.snd_una),
            _ => 0,
        }
    }

    /// ns-3 `TcpTxBuffer::MarkHeadAsLost`: the first outstanding segment is lost and an
    /// outstanding retransmission of it no longer counts in flight.
    pub(crate) fn ns3_mark_head_lost(&mut self) {
        let Some(head) = self.segs.front() else { return };
        let (lost, retrans) = (head.lost(), head.retrans_outstanding());
        if !lost {
            self.mark_lost(self.snd_una);
        }
        if retrans {
            // mark_lost on a lost segment ends its outstanding retransmission
            self.mark_lost(self.snd_una);
        }
    }

    /// Undo (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): no segment is lost any
    /// more; outstanding retransmissions stay. O(window), once per undo.
    pub(crate) fn unmark_lost(&mut self) {
        for seg in self.segs.iter_mut() {
            seg.flags &= !LOST;
        }
        self.lost_out = 0;
        self.lost_bytes = 0;
        self.mark_seq = self.snd_una;
        self.sacked_below_mark = 0;
        self.retx_hint = self.snd_nxt();
    }

    /// RTO (Linux `tcp_timeout_mark_lost`): every un-SACKed segment is lost, outstanding
    /// retransmissions included, except segments after the first sent later than `spare`
    /// (RACK: not yet due). Returns the number of newly lost segments. O(window), once per
    /// timeout.
    /// With ns-3's accounting the SACKed segments' retransmissions end too (`SetSentListLost`).
    pub(crate) fn mark_all_lost(&mut self, spare: Option<SimTime>) -> u32 {
        let mut newly = 0;
        for seq in self.snd_una..self.snd_nxt() {
            if seq == self.snd_una || spare.is_none_or(|t| self.get(seq).sent <= t) {
                newly += self.mark_lost(seq);
            }
        }
        if self.sacked_retrans_out > 0 {
            for seg in self.segs.iter_mut().filter(|s| s.sacked() && s.retrans_outstanding()) {
                seg.flags &= !RETRANS;
                self.retrans_out -= 1;
                self.retrans_bytes -= u64::from(seg.payload);
            }
            self.sacked_retrans_out = 0;
        }
        self.mark_seq = self.snd_nxt();
        self.sacked_below_mark = self.sacked_out;
        self.retx_hint = self.snd_una;
        newly
    }

    /// The next segment to retransmit (lost, not SACKed, no retransmission outstanding),
    /// lowest first (RFC 6675 NextSeg rule 1; Linux `tcp_xmit_retransmit_queue`).
    pub(crate) fn next_retransmit(&mut self) -> Option<u32> {
        if self.retrans_out - self.sacked_retrans_out >= self.lost_out {
            return None;
        }
        let snd_nxt = self.snd_nxt();
        let mut seq = self.retx_hint.max(self.snd_una);
        while seq < snd_nxt {
            let s = self.get(seq);
            if s.lost() && !s.retrans_outstanding() {
                self.retx_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        self.retx_hint = seq;
        None
    }

    /// Reno emulation (Linux `tcp_add_reno_sack`): `n` duplicate ACKs each count as one
    /// SACKed segment, keeping at least one hole. Returns how many were counted.
    pub(crate) fn add_reno_sacks(&mut self, n: u32) -> u32 {
        let prior = self.sacked_out;
        self.sacked_out += n;
        let holes = self.lost_out.max(1).min(self.packets_out());
        if self.sacked_out + holes > self.packets_out() {
            self.sacked_out = self.packets_out() - holes;
        }
        self.sacked_out.saturating_sub(prior)
    }

    /// Reno emulation (Linux `tcp_remove_reno_sacks`): a cumulative ACK of `acked` segments
    /// fills one hole and consumes the duplicate ACKs counted for the rest. Returns the
    /// number of packets it newly delivered.
    pub(crate) fn remove_reno_sacks(&mut self, acked: u32) -> u32 {
        if acked == 0 {
            return 0;
        }
        let delivered = acked.saturating_sub(self.sacked_out).max(1);
        self.sacked_out = self.sacked_out.saturating_sub(acked - 1);
        delivered
    }

    /// Reno emulation: forget the duplicate-ACK count (Linux `tcp_reset_reno_sack`).
    pub(crate) fn reset_reno_sacks(&mut self) {
        self.sacked_out = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32) -> Scoreboard {
        let mut sb = Scoreboard::new();
        for _ in 0..n {
            sb.push(Segment::new(1000, SimTime::ZERO, TxSnapshot::default()));
        }
        sb
    }

    fn sack(sb: &mut Scoreboard, blocks: &[(u32, u32)]) -> u32 {
        let b: Vec<SackBlock> = blocks.iter().map(|&(start, end)| SackBlock { start, end }).collect();
        sb.tag_sacks(&b, sb.snd_una(), |_, _| {})
    }

    #[test]
    fn a_segment_is_one_cache_line() {
        assert_eq!((std::mem::size_of::<Segment>(), std::mem::align_of::<Segment>()), (64, 64));
    }

    #[test]
    fn hole_is_lost_with_three_sacked_segments_above() {
        let mut sb = board(10);
        sack(&mut sb, &[(1, 3)]);
        assert_eq!(sb.mark_lost_from_sacks(10), 0);
        sack(&mut sb, &[(1, 4)]);
        assert_eq!(sb.mark_lost_from_sacks(10), 1);
        assert_eq!((sb.sacked_out(), sb.lost_out(), sb.in_flight()), (3, 1, 6));
        assert_eq!(sb.next_retransmit(), Some(0));
    }

    #[test]
    fn several_holes_marked_in_order_and_frontier_respects_high_seq() {
        let mut sb = board(20);
        // holes at 0, 4, 8; SACKed 1-3, 5-7, 9-11
        sack(&mut sb, &[(9, 12), (5, 8), (1, 4)]);
        assert_eq!(sb.mark_lost_from_sacks(20), 3);
        sack(&mut sb, &[(9, 14)]);
        // the block grew over 12 and 13: no new hole below DupThresh SACKed segments
        assert_eq!(sb.mark_lost_from_sacks(20), 0);
        assert_eq!(sb.lost_out(), 3);
        let mut sb2 = board(20);
        sack(&mut sb2, &[(9, 12), (5, 8), (1, 4)]);
        assert_eq!(sb2.mark_lost_from_sacks(5), 2, "holes at or above high_seq stay unmarked");
    }

    #[test]
    fn counters_follow_retransmission_sack_and_cumulative_ack() {
        let mut sb = board(10);
        sack(&mut sb, &[(2, 6)]);
        sb.mark_lost_from_sacks(10); // 0 and 1 lost
        assert_eq!(sb.lost_out(), 2);
        let s0 = sb.next_retransmit().unwrap();
        sb.record_retransmit(s0, SimTime(5), TxSnapshot::default());
        let s1 = sb.next_retransmit().unwrap();
        sb.record_retransmit(s1, SimTime(5), TxSnapshot::default());
        assert_eq!((s0, s1, sb.next_retransmit()), (0, 1, None));
        assert_eq!(sb.in_flight(), 10 - 4 - 2 + 2);
        // retransmission of 1 SACKed, then cumulative ACK to 6
        sack(&mut sb, &[(1, 6)]);
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.sacked_out()), (1, 1, 5));
        let mut acked = 0;
        assert_eq!(sb.ack_to(6, |_, _| acked += 1), 6);
        assert_eq!(acked, 6);
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.sacked_out(), sb.packets_out()), (0, 0, 0, 4));
        assert_eq!(sb.bytes_out(), 4000);
    }

    /// Segments 0 and 1 lost (2–5 SACKed) and both resent; then the retransmission of 1 is
    /// SACKed. Linux: it leaves the pipe. ns-3 3.44: it stays in BytesInFlight (the SACK clears
    /// only its lost flag) until the cumulative ACK or a timeout.
    #[test]
    fn ns3_keeps_a_sacked_retransmission_in_flight_until_acked_or_timeout() {
        let resent = |mut sb: Scoreboard| {
            for _ in 0..10 {
                sb.push(Segment::new(1000, SimTime::ZERO, TxSnapshot::default()));
            }
            sack(&mut sb, &[(2, 6)]);
            sb.mark_lost_from_sacks(10);
            for seq in [0, 1] {
                sb.record_retransmit(seq, SimTime(5), TxSnapshot::default());
            }
            // 10 out − 4 SACKed − 2 lost + 2 resent
            assert_eq!((sb.in_flight(), sb.in_flight_bytes()), (6, 6000));
            sack(&mut sb, &[(1, 6)]);
            sb
        };
        let linux = resent(Scoreboard::new());
        assert_eq!((linux.sacked_out(), linux.lost_out(), linux.retrans_out(), linux.in_flight()), (5, 1, 1, 5));

        let mut ns3 = resent(Scoreboard::ns3());
        // 10 − (5 SACKed + 1 lost) + 2 resent: still 6, and 6000 bytes
        assert_eq!((ns3.sacked_out(), ns3.lost_out(), ns3.retrans_out(), ns3.in_flight()), (5, 1, 2, 6));
        assert_eq!((ns3.in_flight_bytes(), ns3.retrans_bytes()), (6000, 2000));
        // segment 0 is lost and resent, 1 SACKed: nothing to retransmit
        assert_eq!(ns3.next_retransmit(), None);
        // a timeout resets every retransmitted flag: 0 and 6–9 lost, 1–5 SACKed, none in flight
        let mut timed_out = ns3.clone();
        timed_out.mark_all_lost(None);
        assert_eq!((timed_out.lost_out(), timed_out.retrans_out(), timed_out.in_flight(), timed_out.retrans_bytes()), (5, 0, 0, 0));
        assert_eq!(timed_out.next_retransmit(), Some(0));
        // the cumulative ACK of 0–5 removes both retransmissions: 6–9 left in flight
        ns3.ack_to(6, |_, _| {});
        assert_eq!((ns3.retrans_out(), ns3.retrans_bytes(), ns3.in_flight(), ns3.sacked_retrans_out), (0, 0, 4, 0));
    }

    #[test]
    fn the_byte_pipe_follows_each_segments_payload() {
        // 4 segments of 1000, 400, 1000, 400 bytes: 2800 out
        let mut sb = Scoreboard::new();
        for payload in [1000, 400, 1000, 400] {
            sb.push(Segment::new(payload, SimTime::ZERO, TxSnapshot::default()));
        }
        assert_eq!(sb.in_flight_bytes(), 2800);
        sack(&mut sb, &[(1, 2)]); // 400 SACKed
        sb.mark_lost(0); // 1000 lost
        assert_eq!((sb.in_flight_bytes(), sb.lost_bytes()), (1400, 1000));
        sb.record_retransmit(0, SimTime::ZERO, TxSnapshot::default()); // back in flight
        assert_eq!((sb.in_flight_bytes(), sb.retrans_bytes()), (2400, 1000));
        sb.ack_to(2, |_, _| {}); // 0 and 1 leave: 1000 + 400 out
        assert_eq!((sb.in_flight_bytes(), sb.lost_bytes(), sb.retrans_bytes()), (1400, 0, 0));
    }

    #[test]
    fn repeated_sack_blocks_are_not_reprocessed() {
        let mut sb = board(100);
        assert_eq!(sack(&mut sb, &[(1, 50)]), 49);
        let mut seen = 0;
        let b = [SackBlock { start: 1, end: 52 }];
        assert_eq!(sb.tag_sacks(&b, 0, |_, _| seen += 1), 2);
        assert_eq!(seen, 2);
    }

    #[test]
    fn timeout_marks_everything_unsacked_including_retransmissions() {
        let mut sb = board(6);
        sack(&mut sb, &[(1, 4)]);
        sb.mark_lost_from_sacks(6);
        let s = sb.next_retransmit().unwrap();
        sb.record_retransmit(s, SimTime(1), TxSnapshot::default());
        // lost again: segment 0 (retransmission), newly: 4, 5
        assert_eq!(sb.mark_all_lost(None), 3);
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.in_flight()), (3, 0, 0));
        assert_eq!(sb.next_retransmit(), Some(0));
    }

    // Linux tcp_timeout_mark_lost with RACK: segments sent after the cutoff (now − RACK.rtt)
    // are not due yet and stay in flight, except the head.
    #[test]
    fn timeout_spares_recent_segments_but_not_the_head() {
        let mut sb = Scoreboard::new();
        for sent in [10, 20, 30, 40] {
            sb.push(Segment::new(1000, SimTime(sent), TxSnapshot::default()));
        }
        sb.segs[0].sent = SimTime(35);
        assert_eq!(sb.mark_all_lost(Some(SimTime(30))), 3);
        assert_eq!((sb.lost_out(), sb.in_flight()), (3, 1));
        assert!(sb.get(0).lost() && sb.get(1).lost() && sb.get(2).lost() && !sb.get(3).lost());
    }

    #[test]
    fn reno_emulation_counts_dupacks_and_keeps_a_hole() {
        let mut sb = board(5);
        assert_eq!(sb.add_reno_sacks(1), 1);
        assert_eq!(sb.add_reno_sacks(10), 3, "at most packets_out − 1");
        assert_eq!(sb.in_flight(), 1);
        assert_eq!(sb.mark_head_lost(), 1);
        assert_eq!(sb.in_flight(), 0);
        sb.ack_to(2, |_, _| {});
        // 2 acked: one hole filled + one dupack consumed
        assert_eq!(sb.remove_reno_sacks(2), 1);
        assert_eq!(sb.sacked_out(), 3);
    }
}
