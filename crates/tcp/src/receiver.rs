//! The TCP receiver (algorithms.md §1.4; RFC 1122/5681 delayed ACK, RFC 2018 SACK blocks,
//! RFC 7323 timestamp echo, RFC 3168 ECN echo, Linux quickack).
//!
//! ACK policy: immediately while in quickack mode (the first `quickack_segments` segments,
//! and two segments after a CE mark appears, as Linux), for out-of-order, duplicate and
//! hole-filling segments and for segments carrying CWR; otherwise once `every` segments are
//! unacknowledged, or when the delayed-ACK timer (armed by the first unacknowledged segment)
//! expires. SACK blocks: the first holds the segment that triggered the ACK, then the most
//! recently reported others, at most three (timestamps use the rest of the option space).
//! TSecr echoes TS.Recent, taken only from segments at or below the last ACK sent (so a
//! delayed ACK echoes its earliest segment). The window advertised is the receive buffer
//! minus the out-of-order bytes held; in-order data is consumed at once.
//! ns-3's TcpSocketBase has no quickack (DelAckCount 2, 200 ms timer) and advertises the
//! free buffer space including in-order unread data.

use crate::config::{DelayedAck, TcpConfig};
use tcplab_core::{AckHeader, DataHeader, Ecn, SackBlock, SimTime, MAX_SACK_BLOCKS};

/// Segments ACKed immediately after a new CE mark (Linux `tcp_enter_quickack_mode(sk, 2)`).
const CE_QUICKACKS: u32 = 2;

/// A run of received out-of-order segments `start..end` holding `bytes` of payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OooRange {
    start: u32,
    end: u32,
    bytes: u64,
}

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    policy: DelayedAck,
    rcv_buf_bytes: u64,
    ecn: bool,
    /// Next in-order segment expected.
    rcv_nxt: u32,
    /// Out-of-order data above `rcv_nxt`: sorted, disjoint, non-adjacent.
    ooo: Vec<OooRange>,
    ooo_bytes: u64,
    /// SACK blocks to report, most recent first.
    sacks: [SackBlock; MAX_SACK_BLOCKS],
    sacks_len: usize,
    delivered_bytes: u64,
    /// In-order segments received since the last ACK.
    unacked: u32,
    delack_deadline: Option<SimTime>,
    /// Segments still to be ACKed immediately (quickack mode).
    quick: u32,
    ts_recent: SimTime,
    last_ack_sent: u32,
    /// RFC 3168: echo ECE until a segment with CWR arrives.
    demand_cwr: bool,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpReceiver {
            policy: cfg.delayed_ack,
            rcv_buf_bytes: cfg.rcv_buf_bytes,
            ecn: cfg.ecn,
            rcv_nxt: 0,
            ooo: Vec::with_capacity(64),
            ooo_bytes: 0,
            sacks: [SackBlock::default(); MAX_SACK_BLOCKS],
            sacks_len: 0,
            delivered_bytes: 0,
            unacked: 0,
            delack_deadline: None,
            quick: cfg.delayed_ack.quickack_segments,
            ts_recent: SimTime::ZERO,
            last_ack_sent: 0,
            demand_cwr: false,
        }
    }

    /// A data segment arrived; returns the ACK to send now, if any.
    pub fn on_data(&mut self, now: SimTime, hdr: &DataHeader, ecn: Ecn) -> Option<AckHeader> {
        let mut immediate = false;
        if self.ecn {
            if hdr.cwr {
                self.demand_cwr = false;
                immediate = true;
            }
            if ecn == Ecn::Ce {
                if !self.demand_cwr {
                    self.quick = self.quick.max(CE_QUICKACKS);
                }
                self.demand_cwr = true;
            }
        }
        if hdr.seq <= self.last_ack_sent && hdr.tsval >= self.ts_recent {
            self.ts_recent = hdr.tsval;
        }
        if hdr.seq < self.rcv_nxt || self.holds(hdr.seq) {
            immediate = true; // duplicate: ACK at once (Linux would add a D-SACK)
        } else if hdr.seq == self.rcv_nxt {
            immediate |= !self.ooo.is_empty(); // fills (part of) a hole
            self.rcv_nxt += 1;
            self.delivered_bytes += u64::from(hdr.payload);
            self.unacked += 1;
            if let Some(first) = self.ooo.first().copied().filter(|r| r.start == self.rcv_nxt) {
                self.ooo.remove(0);
                self.rcv_nxt = first.end;
                self.delivered_bytes += first.bytes;
                self.ooo_bytes -= first.bytes;
            }
            self.drop_acked_sacks();
        } else {
            immediate = true;
            self.insert_ooo(hdr.seq, hdr.payload);
        }
        if self.quick > 0 {
            self.quick -= 1;
            immediate = true;
        }
        if immediate || self.unacked >= self.policy.every {
            return Some(self.build_ack(false));
        }
        self.delack_deadline.get_or_insert(now + self.policy.timeout);
        None
    }

    /// The delayed-ACK deadline.
    pub fn next_timer(&self) -> Option<SimTime> {
        self.delack_deadline
    }

    /// The delayed-ACK timer fired: the held-back ACK, if one is still due.
    pub fn on_timer(&mut self, now: SimTime) -> Option<AckHeader> {
        match self.delack_deadline {
            Some(d) if now >= d => Some(self.build_ack(true)),
            _ => None,
        }
    }

    /// In-order payload bytes delivered to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    fn build_ack(&mut self, delayed: bool) -> AckHeader {
        self.unacked = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        AckHeader {
            ack: self.rcv_nxt,
            sack: self.sacks,
            sack_len: self.sacks_len as u8,
            tsecr: self.ts_recent,
            ece: self.demand_cwr,
            rwnd_bytes: self.rcv_buf_bytes.saturating_sub(self.ooo_bytes),
            delayed,
        }
    }

    /// Index of the out-of-order range holding `seq`, if any.
    fn range_of(&self, seq: u32) -> Option<usize> {
        let i = self.ooo.partition_point(|r| r.start <= seq);
        (i > 0 && seq < self.ooo[i - 1].end).then(|| i - 1)
    }

    fn holds(&self, seq: u32) -> bool {
        self.range_of(seq).is_some()
    }

    /// Stores an out-of-order segment (not yet held) and puts its block first in the SACK list.
    fn insert_ooo(&mut self, seq: u32, payload: u32) {
        let bytes = u64::from(payload);
        self.ooo_bytes += bytes;
        let i = self.ooo.partition_point(|r| r.start < seq);
        let joins_prev = i > 0 && self.ooo[i - 1].end == seq;
        let joins_next = i < self.ooo.len() && self.ooo[i].start == seq + 1;
        let at = match (joins_prev, joins_next) {
            (true, true) => {
                let next = self.ooo.remove(i);
                let prev = &mut self.ooo[i - 1];
                prev.end = next.end;
                prev.bytes += bytes + next.bytes;
                i - 1
            }
            (true, false) => {
                let prev = &mut self.ooo[i - 1];
                prev.end += 1;
                prev.bytes += bytes;
                i - 1
            }
            (false, true) => {
                let next = &mut self.ooo[i];
                next.start = seq;
                next.bytes += bytes;
                i
            }
            (false, false) => {
                self.ooo.insert(i, OooRange { start: seq, end: seq + 1, bytes });
                i
            }
        };
        let r = self.ooo[at];
        let first = SackBlock { start: r.start, end: r.end };
        let mut list = [first; MAX_SACK_BLOCKS];
        let mut n = 1;
        for old in &self.sacks[..self.sacks_len] {
            // ranges only grow and merge: the old block now lies in the range holding its start
            let Some(j) = self.range_of(old.start) else { continue };
            let cur = SackBlock { start: self.ooo[j].start, end: self.ooo[j].end };
            if n < MAX_SACK_BLOCKS && !list[..n].contains(&cur) {
                list[n] = cur;
                n += 1;
            }
        }
        self.sacks = list;
        self.sacks_len = n;
    }

    /// Forgets SACK blocks that the cumulative ACK now covers.
    fn drop_acked_sacks(&mut self) {
        let mut n = 0;
        for k in 0..self.sacks_len {
            if self.sacks[k].start >= self.rcv_nxt {
                self.sacks[n] = self.sacks[k];
                n += 1;
            }
        }
        self.sacks_len = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::SimDuration;

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    fn seg(seq: u32, at: SimTime) -> DataHeader {
        DataHeader { seq, payload: 1000, tsval: at, cwr: false }
    }

    fn blocks(a: &AckHeader) -> Vec<(u32, u32)> {
        a.sack_blocks().iter().map(|b| (b.start, b.end)).collect()
    }

    #[test]
    fn quickack_then_every_second_segment_then_timer() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        for s in 0..16 {
            let a = r.on_data(ms(s as u64), &seg(s, ms(s as u64)), Ecn::NotEct).expect("quickack");
            assert_eq!(a.ack, s + 1);
        }
        assert!(r.on_data(ms(20), &seg(16, ms(20)), Ecn::NotEct).is_none());
        assert_eq!(r.next_timer(), Some(ms(60)));
        let a = r.on_data(ms(21), &seg(17, ms(21)), Ecn::NotEct).expect("second full segment");
        assert_eq!((a.ack, a.delayed), (18, false));
        assert_eq!(a.tsecr, ms(20), "a delayed ACK echoes its earliest segment");
        assert_eq!(r.next_timer(), None);
        // a lone segment is ACKed by the timer 40 ms later
        assert!(r.on_data(ms(100), &seg(18, ms(100)), Ecn::NotEct).is_none());
        assert_eq!(r.next_timer(), Some(ms(140)));
        assert!(r.on_timer(ms(139)).is_none());
        let a = r.on_timer(ms(140)).expect("timer ACK");
        assert_eq!((a.ack, a.delayed, a.tsecr), (19, true, ms(100)));
        assert!(r.on_timer(ms(200)).is_none(), "stale timer call is harmless");
    }

    #[test]
    fn out_of_order_and_hole_filling_segments_are_acked_at_once_with_sack_blocks() {
        let cfg = TcpConfig { delayed_ack: DelayedAck { quickack_segments: 0, ..DelayedAck::default() }, ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        assert!(r.on_data(ms(0), &seg(0, ms(0)), Ecn::NotEct).is_none());
        let a = r.on_data(ms(1), &seg(2, ms(1)), Ecn::NotEct).expect("out of order");
        assert_eq!((a.ack, blocks(&a)), (1, vec![(2, 3)]));
        assert_eq!(a.tsecr, ms(0), "out-of-order data does not update TS.Recent");
        assert_eq!(a.rwnd_bytes, cfg.rcv_buf_bytes - 1000);
        let a = r.on_data(ms(2), &seg(5, ms(2)), Ecn::NotEct).unwrap();
        assert_eq!(blocks(&a), vec![(5, 6), (2, 3)]);
        let a = r.on_data(ms(3), &seg(7, ms(3)), Ecn::NotEct).unwrap();
        assert_eq!(blocks(&a), vec![(7, 8), (5, 6), (2, 3)]);
        let a = r.on_data(ms(4), &seg(3, ms(4)), Ecn::NotEct).unwrap();
        assert_eq!(blocks(&a), vec![(2, 4), (7, 8), (5, 6)], "the block of the newest segment first");
        let a = r.on_data(ms(5), &seg(4, ms(5)), Ecn::NotEct).unwrap();
        assert_eq!(blocks(&a), vec![(2, 6), (7, 8)], "merged blocks are reported once");
        // the retransmission of 1 fills the hole: immediate ACK up to 6
        let a = r.on_data(ms(6), &seg(1, ms(6)), Ecn::NotEct).expect("hole filled");
        assert_eq!((a.ack, blocks(&a)), (6, vec![(7, 8)]));
        assert_eq!(a.tsecr, ms(6), "the hole-filling segment sets TS.Recent");
        assert_eq!(r.delivered_bytes(), 6000);
        let a = r.on_data(ms(7), &seg(6, ms(7)), Ecn::NotEct).expect("fills the last hole");
        assert_eq!((a.ack, a.sack_len, a.rwnd_bytes), (8, 0, cfg.rcv_buf_bytes));
        assert_eq!(r.delivered_bytes(), 8000);
        let a = r.on_data(ms(8), &seg(3, ms(8)), Ecn::NotEct).expect("duplicate");
        assert_eq!(a.ack, 8);
    }

    #[test]
    fn ecn_echo_until_cwr() {
        let cfg = TcpConfig { ecn: true, delayed_ack: DelayedAck { quickack_segments: 0, ..DelayedAck::default() }, ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        assert!(r.on_data(ms(0), &seg(0, ms(0)), Ecn::Ect0).is_none());
        let a = r.on_data(ms(1), &seg(1, ms(1)), Ecn::Ce).expect("CE: quickack");
        assert!(a.ece);
        let a = r.on_data(ms(2), &seg(2, ms(2)), Ecn::Ect0).expect("second quickack");
        assert!(a.ece, "ECE repeats until CWR");
        assert!(r.on_data(ms(3), &seg(3, ms(3)), Ecn::Ect0).is_none());
        let a = r.on_data(ms(4), &seg(4, ms(4)), Ecn::Ect0).unwrap();
        assert!(a.ece);
        let a = r.on_data(ms(5), &DataHeader { cwr: true, ..seg(5, ms(5)) }, Ecn::Ect0).expect("CWR is ACKed at once");
        assert!(!a.ece);
    }
}
