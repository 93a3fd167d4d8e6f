//! The TCP receiver (Linux __tcp_ack_snd_check(); RFC 1122 §4.2.3.2/RFC 5681 delayed ACK, RFC 2018
//! SACK blocks, RFC 7323 timestamp echo, RFC 3168 ECN echo, Linux quickack and adaptive ATO, Linux
//! DCTCP's accurate CE echo from tcp_dctcp.h `dctcp_ece_ack_update`, RFC 8257 §3.2).
//!
//! ACK policy: immediately while in quickack mode, and, with classic ECN, for two segments after a
//! CE mark appears, as Linux), for out-of-order, duplicate and hole-filling segments and for
//! segments carrying CWR; otherwise once `every` segments are unacknowledged, or when the
//! delayed-ACK timer (armed by the first unacknowledged segment) expires. Linux stack: a pending
//! ACK also goes out once the application has read a segment with PSH (the end of a write) and
//! nothing is held out of order (`tcp_measure_rcv_mss` sets `ICSK_ACK_PUSHED` on a PSH segment
//! since Linux 6.6, on a segment shorter than `rcv_mss` before; `tcp_cleanup_rbuf` ACKs when
//! the read empties the receive memory of a socket not in ping-pong mode), so a transfer's last
//! odd segment is not held for the delayed-ACK timer. Left out: `rcv_mss` learning a smaller
//! size from two equal short segments in a row (the second then is not "pushed" before 6.6).
//! Delayed-ACK timer, adaptive (Linux): `tcp_event_data_recv` moves the ATO on each in-order
//! segment from the gap since the previous one (gap ≤ ATO_MIN/2: ato/2 + ATO_MIN/2; gap < ato:
//! ato/2 + gap, at most the RTO) and re-enters quickack mode after a gap longer than the RTO;
//! old data (below rcv_nxt) re-enters it too (`tcp_enter_quickack_mode`); leaving it resets the ATO to
//! ATO_MIN (`tcp_dec_quickack_mode`). A quickack entry grants min(window / 2 MSS, max) ACKs
//! (`tcp_incr_quickack`). `tcp_send_delayed_ack` arms min(ato, max(SRTT, ATO_MIN), 200 ms) when
//! the ato is above ATO_MIN, and ACKs at once when a pending timer is due within ato/4; an
//! expiring timer doubles the ATO (at most the RTO). The pingpong (interactive) rules do not
//! apply: the receiver sends no data. The receiver's SRTT and RTO are those of its handshake,
//! which is not simulated: one RTT sample of twice the first segment's one-way delay (its
//! arrival minus its TSval) through the flow's RTT estimator (Linux: 3·R, at least R + rto_min).
//! Times are exact, not 1 ms jiffies. Fixed: `timeout` always, quickack only at start.
//! ECN echo: classic (RFC 3168) sets ECE from a CE mark until a segment with CWR arrives.
//! Accurate (Linux with a `TCP_CONG_NEEDS_ECN` algorithm) sets ECE to the CE state of the
//! latest ECT segment; when that state flips, an ACK held back by the delayed-ACK logic is
//! first sent for the previous run (cumulative ACK = rcv_nxt after the run, old ECE), then
//! the segment is ACKed at once with the new ECE, so every ACK with ECE covers exactly
//! CE-marked segments. As in Linux, the state moves only on ECT segments that are new or
//! above rcv_nxt, and it replaces the classic CE quickacks. SACK blocks: the first holds the segment that triggered the ACK, then the most
//! recently reported others, at most three (timestamps use the rest of the option space).
//! A duplicate segment (below rcv_nxt, or already held out of order) is reported once, in the
//! first block of the ACK it triggers (D-SACK, RFC 2883 §4; Linux `tcp_dsack_set` and the
//! `add_sack` path of `tcp_data_queue_ofo`, which also moves the block holding it to the front);
//! off with `TcpConfig::undo` (Linux `net.ipv4.tcp_dsack = 0`).
//! TSecr echoes TS.Recent, taken only from segments at or below the last ACK sent (so a
//! delayed ACK echoes its earliest segment). The window advertised is the receive buffer
//! minus the out-of-order bytes held; in-order data is consumed at once.
//! Left out: SACK compression of out-of-order ACKs (`tcp_sack_compress_send_ack`), the byte
//! rule of "two full segments" for small segments (segments are counted), D-SACK.
//! ns-3's TcpSocketBase has no quickack (DelAckCount 2, 200 ms timer) and advertises the
//! free buffer space including in-order unread data.

use crate::config::{DelayedAck, EcnMode, Stack, TcpConfig, DELACK_MAX};
use crate::rtt::RttEstimator;
use tcplab_core::{AckHeader, DataHeader, Ecn, SackBlock, SimDuration, SimTime, MAX_SACK_BLOCKS};

fn half(d: SimDuration) -> SimDuration {
    SimDuration::from_nanos(d.as_nanos() / 2)
}

/// The most an adaptive ATO may grow to before the SRTT bound (Linux `HZ / 2`).
const MAX_ATO: SimDuration = SimDuration::from_millis(500);

/// Segments ACKed immediately after a new CE mark (Linux `tcp_enter_quickack_mode(sk, 2)`).
const CE_QUICKACKS: u32 = 2;

/// A run of received out-of-order segments `start..end` holding `bytes` of payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OooRange {
    start: u32,
    end: u32,
    bytes: u64,
}

/// The ACKs one arriving segment makes the receiver send, in sending order: none, one, or
/// (accurate ECN, at a change of CE state) the held-back ACK of the previous run and then
/// the ACK of this segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acks([Option<AckHeader>; 2]);

impl Acks {
    fn push(&mut self, ack: AckHeader) {
        let slot = self.0.iter_mut().find(|a| a.is_none()).expect("at most two ACKs per segment");
        *slot = Some(ack);
    }

    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    pub fn len(&self) -> usize {
        self.0.iter().flatten().count()
    }

    /// The last ACK: it acknowledges everything received so far.
    pub fn last(&self) -> Option<AckHeader> {
        self.0[1].or(self.0[0])
    }
}

impl IntoIterator for Acks {
    type Item = AckHeader;
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<AckHeader>, 2>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter().flatten()
    }
}

#[derive(Clone, Debug)]
pub struct TcpReceiver {
    stack: Stack,
    policy: DelayedAck,
    rcv_buf_bytes: u64,
    ecn: EcnMode,
    /// Next in-order segment expected.
    rcv_nxt: u32,
    /// Out-of-order data above `rcv_nxt`: sorted, disjoint, non-adjacent.
    ooo: Vec<OooRange>,
    ooo_bytes: u64,
    /// SACK blocks to report, most recent first.
    sacks: [SackBlock; MAX_SACK_BLOCKS],
    sacks_len: usize,
    /// Report duplicates (Linux `net.ipv4.tcp_dsack`).
    dsack_on: bool,
    /// The duplicate the next ACK reports first (Linux `duplicate_sack`).
    dsack: Option<SackBlock>,
    delivered_bytes: u64,
    /// In-order segments received since the last ACK.
    unacked: u32,
    delack_deadline: Option<SimTime>,
    /// Segments still to be ACKed immediately (quickack mode).
    quick: u32,
    ts_recent: SimTime,
    last_ack_sent: u32,
    /// Linux `TCP_ECN_DEMAND_CWR`: set ECE on ACKs. Classic: from a CE mark until CWR;
    /// accurate: the CE state of the latest ECT segment.
    demand_cwr: bool,
    /// Accurate ECN (Linux DCTCP `ce_state`): the latest ECT segment carried CE.
    ce_state: bool,
    /// Accurate ECN (Linux DCTCP `prior_rcv_nxt`): rcv_nxt after the latest ECT segment.
    prior_rcv_nxt: u32,
    /// Adaptive: Linux `icsk_ack.ato` (zero before the first in-order segment) and
    /// `icsk_ack.lrcvtime`, the arrival of the latest in-order segment.
    ato: SimDuration,
    last_arrival: SimTime,
    /// Adaptive: the receiving socket's estimator, fed once from the first segment.
    rtt: Option<RttEstimator>,
    /// Largest payload seen (Linux `rcv_mss`).
    rcv_mss: u32,
    /// Linux stack: an in-order segment with PSH arrived since the last ACK (`ICSK_ACK_PUSHED`).
    pushed: bool,
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpReceiver {
            stack: cfg.stack,
            policy: cfg.delayed_ack,
            rcv_buf_bytes: cfg.rcv_buf_bytes,
            ecn: cfg.ecn,
            rcv_nxt: 0,
            ooo: Vec::new(),
            ooo_bytes: 0,
            sacks: [SackBlock::default(); MAX_SACK_BLOCKS],
            sacks_len: 0,
            dsack_on: cfg.undo,
            dsack: None,
            delivered_bytes: 0,
            unacked: 0,
            delack_deadline: None,
            quick: if cfg.delayed_ack.adaptive { 0 } else { cfg.delayed_ack.quickack_segments },
            ts_recent: SimTime::ZERO,
            last_ack_sent: 0,
            demand_cwr: false,
            ce_state: false,
            prior_rcv_nxt: 0,
            ato: SimDuration::ZERO,
            last_arrival: SimTime::ZERO,
            rtt: cfg.delayed_ack.adaptive.then(|| RttEstimator::new(cfg)),
            rcv_mss: 0,
            pushed: false,
        }
    }

    /// A data segment arrived; returns the ACKs to send now.
    pub fn on_data(&mut self, now: SimTime, hdr: &DataHeader, ecn: Ecn) -> Acks {
        let mut acks = Acks::default();
        if hdr.is_syn() {
            // the ns3 stack's handshake: the SYN-ACK echoes the SYN's timestamp at once, and
            // the first data segment is ACKed at once (ns-3 sets m_delAckCount to
            // m_delAckMaxCount on establishing)
            self.ts_recent = hdr.tsval;
            acks.push(self.build_ack(false));
            self.unacked = self.policy.every.saturating_sub(1);
            return acks;
        }
        let mut immediate = false;
        if self.ecn.enabled() && hdr.cwr {
            self.demand_cwr = false;
            immediate = true;
        }
        if self.ecn == EcnMode::Classic && ecn == Ecn::Ce {
            if !self.demand_cwr {
                self.quick = self.quick.max(CE_QUICKACKS);
            }
            self.demand_cwr = true;
        }
        if hdr.seq <= self.last_ack_sent && hdr.tsval >= self.ts_recent {
            self.ts_recent = hdr.tsval;
        }
        self.rcv_mss = self.rcv_mss.max(hdr.payload);
        if let Some(rtt) = self.rtt.as_mut().filter(|r| r.srtt_us() == 0) {
            rtt.on_sample(2 * (now - hdr.tsval).as_micros(), 0, 0);
        }
        let below_window = hdr.seq < self.rcv_nxt;
        let held = self.range_of(hdr.seq);
        if below_window || held.is_some() {
            immediate = true; // duplicate: ACK at once
                              // Linux tcp_data_queue: old data re-enters quickack mode; a segment already held
                              // out of order is only dropped (tcp_data_queue_ofo).
            if self.policy.adaptive && below_window {
                self.incr_quickack();
                self.ato = self.policy.timeout;
            }
            if self.dsack_on {
                self.dsack = Some(SackBlock { start: hdr.seq, end: hdr.seq + 1 });
                if let Some(i) = held {
                    self.put_first(i);
                }
            }
        } else if hdr.seq == self.rcv_nxt {
            if self.policy.adaptive {
                self.data_recv(now);
            }
            immediate |= !self.ooo.is_empty(); // fills (part of) a hole
            self.pushed |= hdr.psh && self.stack == Stack::Linux;
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
        if self.ecn.accurate_feedback() && !below_window && ecn != Ecn::NotEct {
            immediate |= self.update_ce_state(ecn == Ecn::Ce, &mut acks);
        }
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 && self.policy.adaptive {
                self.ato = self.policy.timeout;
            }
            immediate = true;
        }
        // Linux tcp_cleanup_rbuf: once the application has read everything (in-order data is
        // read at once; nothing may be held out of order), a pending ACK goes out if a pushed
        // segment was among the data (the receiver sends no data: never ping-pong).
        let read_pushed = self.pushed && self.ooo.is_empty() && self.unacked > 0;
        if immediate || read_pushed || self.unacked >= self.policy.every {
            acks.push(self.build_ack(false));
        } else if !self.policy.adaptive {
            self.delack_deadline.get_or_insert(now + self.policy.timeout);
        } else {
            let ato = self.delack_ato();
            match self.delack_deadline {
                Some(d) if d <= now + half(half(ato)) => acks.push(self.build_ack(false)),
                Some(d) => self.delack_deadline = Some(d.min(now + ato)),
                None => self.delack_deadline = Some(now + ato),
            }
        }
        acks
    }

    /// Linux `tcp_event_data_recv`: moves the ATO from the gap since the previous in-order
    /// segment; quickack mode at the first segment and after a gap longer than the RTO.
    fn data_recv(&mut self, now: SimTime) {
        let ato_min = self.policy.timeout;
        if self.ato == SimDuration::ZERO {
            self.incr_quickack();
            self.ato = ato_min;
        } else {
            let gap = now - self.last_arrival;
            let rto = self.rto();
            if gap <= half(ato_min) {
                self.ato = half(self.ato) + half(ato_min);
            } else if gap < self.ato {
                self.ato = (half(self.ato) + gap).min(rto);
            } else if gap > rto {
                self.incr_quickack();
            }
        }
        self.last_arrival = now;
    }

    /// Linux `tcp_incr_quickack`: window / (2 · rcv_mss) immediate ACKs (at least 2), at most
    /// `quickack_segments`, unless more are already due.
    fn incr_quickack(&mut self) {
        let window = self.rcv_buf_bytes.saturating_sub(self.ooo_bytes);
        let grant = (window / (2 * u64::from(self.rcv_mss.max(1)))).max(2);
        let grant = grant.min(u64::from(self.policy.quickack_segments)) as u32;
        self.quick = self.quick.max(grant);
    }

    /// The receiving socket's RTO (its initial RTO until the first segment arrives).
    fn rto(&self) -> SimDuration {
        self.rtt.as_ref().expect("adaptive receivers keep an estimator").rto()
    }

    /// Linux `tcp_send_delayed_ack`: the timeout an ACK is held back for now.
    fn delack_ato(&self) -> SimDuration {
        let ato_min = self.policy.timeout;
        let mut ato = self.ato;
        if ato > ato_min {
            let srtt_us = self.rtt.as_ref().map_or(0, |r| r.srtt_us());
            let bound = if srtt_us == 0 { MAX_ATO } else { MAX_ATO.min(SimDuration::from_micros(srtt_us).max(ato_min)) };
            ato = ato.min(bound);
        }
        ato.min(DELACK_MAX)
    }

    /// Linux `dctcp_ece_ack_update`: on a change of CE state, sends the held-back ACK of
    /// the previous run with its ECE (if one is held back) and asks for an immediate ACK.
    fn update_ce_state(&mut self, ce: bool, acks: &mut Acks) -> bool {
        let changed = ce != self.ce_state;
        if changed && self.delack_deadline.is_some() {
            acks.push(self.ack_header(self.prior_rcv_nxt, self.ce_state, true));
        }
        self.prior_rcv_nxt = self.rcv_nxt;
        self.ce_state = ce;
        self.demand_cwr = ce;
        changed
    }

    /// The delayed-ACK deadline.
    pub fn next_timer(&self) -> Option<SimTime> {
        self.delack_deadline
    }

    /// The delayed-ACK timer fired: the held-back ACK, if one is still due.
    pub fn on_timer(&mut self, now: SimTime) -> Option<AckHeader> {
        match self.delack_deadline {
            Some(d) if now >= d => {
                if self.policy.adaptive {
                    // Linux tcp_delack_timer_handler: a missed delayed ACK inflates the ATO.
                    self.ato = self.ato.saturating_mul(2).min(self.rto());
                }
                Some(self.build_ack(true))
            }
            _ => None,
        }
    }

    /// Frees the out-of-order list once it is empty (as when the flow is complete): a
    /// finished flow keeps no buffer sized by its past window.
    pub fn release_buffers(&mut self) {
        if self.ooo.is_empty() {
            self.ooo = Vec::new();
        }
    }

    /// Bytes of the receiver's own allocations (the out-of-order list).
    pub fn heap_bytes(&self) -> usize {
        self.ooo.capacity() * std::mem::size_of::<OooRange>()
    }

    /// In-order payload bytes delivered to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    /// The ACK of everything received, with the pending D-SACK block first; resets the
    /// delayed-ACK state.
    fn build_ack(&mut self, delayed: bool) -> AckHeader {
        self.unacked = 0;
        self.pushed = false;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        let mut ack = self.ack_header(self.rcv_nxt, self.demand_cwr, delayed);
        if let Some(dup) = self.dsack.take() {
            let n = usize::from(ack.sack_len).min(MAX_SACK_BLOCKS - 1);
            ack.sack.copy_within(..n, 1);
            ack.sack[0] = dup;
            ack.sack_len = n as u8 + 1;
        }
        ack
    }

    fn ack_header(&self, ack: u32, ece: bool, delayed: bool) -> AckHeader {
        AckHeader {
            ack,
            sack: self.sacks,
            sack_len: self.sacks_len as u8,
            tsecr: self.ts_recent,
            ece,
            rwnd_bytes: match self.stack {
                Stack::Linux => self.rcv_buf_bytes.saturating_sub(self.ooo_bytes),
                Stack::Ns3 => self.rcv_buf_bytes,
            },
            delayed,
        }
    }

    /// Index of the out-of-order range holding `seq`, if any.
    fn range_of(&self, seq: u32) -> Option<usize> {
        let i = self.ooo.partition_point(|r| r.start <= seq);
        (i > 0 && seq < self.ooo[i - 1].end).then(|| i - 1)
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
        self.put_first(at);
    }

    /// Reports out-of-order range `at` first, then the most recently reported others.
    fn put_first(&mut self, at: usize) {
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
        DataHeader { seq, payload: 1000, tsval: at, cwr: false, psh: false }
    }

    fn blocks(a: &AckHeader) -> Vec<(u32, u32)> {
        a.sack_blocks().iter().map(|b| (b.start, b.end)).collect()
    }

    #[test]
    fn quickack_then_every_second_segment_then_timer() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        for s in 0..16 {
            let a = r.on_data(ms(s as u64), &seg(s, ms(s as u64)), Ecn::NotEct).last().expect("quickack");
            assert_eq!(a.ack, s + 1);
        }
        assert!(r.on_data(ms(20), &seg(16, ms(20)), Ecn::NotEct).is_empty());
        assert_eq!(r.next_timer(), Some(ms(60)));
        let a = r.on_data(ms(21), &seg(17, ms(21)), Ecn::NotEct).last().expect("second full segment");
        assert_eq!((a.ack, a.delayed), (18, false));
        assert_eq!(a.tsecr, ms(20), "a delayed ACK echoes its earliest segment");
        assert_eq!(r.next_timer(), None);
        // a lone segment is ACKed by the timer 40 ms later
        assert!(r.on_data(ms(100), &seg(18, ms(100)), Ecn::NotEct).is_empty());
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
        assert!(r.on_data(ms(0), &seg(0, ms(0)), Ecn::NotEct).is_empty());
        let a = r.on_data(ms(1), &seg(2, ms(1)), Ecn::NotEct).last().expect("out of order");
        assert_eq!((a.ack, blocks(&a)), (1, vec![(2, 3)]));
        assert_eq!(a.tsecr, ms(0), "out-of-order data does not update TS.Recent");
        assert_eq!(a.rwnd_bytes, cfg.rcv_buf_bytes - 1000);
        let a = r.on_data(ms(2), &seg(5, ms(2)), Ecn::NotEct).last().unwrap();
        assert_eq!(blocks(&a), vec![(5, 6), (2, 3)]);
        let a = r.on_data(ms(3), &seg(7, ms(3)), Ecn::NotEct).last().unwrap();
        assert_eq!(blocks(&a), vec![(7, 8), (5, 6), (2, 3)]);
        let a = r.on_data(ms(4), &seg(3, ms(4)), Ecn::NotEct).last().unwrap();
        assert_eq!(blocks(&a), vec![(2, 4), (7, 8), (5, 6)], "the block of the newest segment first");
        let a = r.on_data(ms(5), &seg(4, ms(5)), Ecn::NotEct).last().unwrap();
        assert_eq!(blocks(&a), vec![(2, 6), (7, 8)], "merged blocks are reported once");
        // the retransmission of 1 fills the hole: immediate ACK up to 6
        let a = r.on_data(ms(6), &seg(1, ms(6)), Ecn::NotEct).last().expect("hole filled");
        assert_eq!((a.ack, blocks(&a)), (6, vec![(7, 8)]));
        assert_eq!(a.tsecr, ms(6), "the hole-filling segment sets TS.Recent");
        assert_eq!(r.delivered_bytes(), 6000);
        let a = r.on_data(ms(7), &seg(6, ms(7)), Ecn::NotEct).last().expect("fills the last hole");
        assert_eq!((a.ack, a.sack_len, a.rwnd_bytes), (8, 0, cfg.rcv_buf_bytes));
        assert_eq!(r.delivered_bytes(), 8000);
        let a = r.on_data(ms(8), &seg(3, ms(8)), Ecn::NotEct).last().expect("duplicate");
        assert_eq!(a.ack, 8);
    }

    // RFC 2883 §4.1.1 / §4.1.2: a duplicate below rcv_nxt is reported alone in the first
    // block; a duplicate of a held out-of-order segment first, then the block holding it.
    #[test]
    fn a_duplicate_is_reported_once_in_the_first_sack_block() {
        let mut r = TcpReceiver::new(&TcpConfig::default());
        for s in 0..3 {
            r.on_data(ms(0), &seg(s, ms(0)), Ecn::NotEct);
        }
        let a = r.on_data(ms(5), &seg(1, ms(5)), Ecn::NotEct).last().unwrap();
        assert_eq!((a.ack, blocks(&a)), (3, vec![(1, 2)]));
        // 4 and 6 held out of order; 4 again: D-SACK 4..5, then 4..5's range, then 6..7
        r.on_data(ms(6), &seg(4, ms(6)), Ecn::NotEct);
        r.on_data(ms(7), &seg(6, ms(7)), Ecn::NotEct);
        let a = r.on_data(ms(8), &seg(4, ms(8)), Ecn::NotEct).last().unwrap();
        assert_eq!((a.ack, blocks(&a)), (3, vec![(4, 5), (4, 5), (6, 7)]));
        // reported once: the next ACK has plain SACK blocks
        let a = r.on_data(ms(9), &seg(7, ms(9)), Ecn::NotEct).last().unwrap();
        assert_eq!(blocks(&a), vec![(6, 8), (4, 5)]);
        // without undo (net.ipv4.tcp_dsack = 0) no D-SACK
        let mut r = TcpReceiver::new(&TcpConfig { undo: false, ..TcpConfig::default() });
        r.on_data(ms(0), &seg(0, ms(0)), Ecn::NotEct);
        let a = r.on_data(ms(1), &seg(0, ms(1)), Ecn::NotEct).last().unwrap();
        assert_eq!(a.sack_len, 0);
    }

    #[test]
    fn ecn_echo_until_cwr() {
        let cfg = TcpConfig {
            ecn: EcnMode::Classic,
            delayed_ack: DelayedAck { quickack_segments: 0, ..DelayedAck::default() },
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(&cfg);
        assert!(r.on_data(ms(0), &seg(0, ms(0)), Ecn::Ect0).is_empty());
        let a = r.on_data(ms(1), &seg(1, ms(1)), Ecn::Ce).last().expect("CE: quickack");
        assert!(a.ece);
        let a = r.on_data(ms(2), &seg(2, ms(2)), Ecn::Ect0).last().expect("second quickack");
        assert!(a.ece, "ECE repeats until CWR");
        assert!(r.on_data(ms(3), &seg(3, ms(3)), Ecn::Ect0).is_empty());
        let a = r.on_data(ms(4), &seg(4, ms(4)), Ecn::Ect0).last().unwrap();
        assert!(a.ece);
        let a = r.on_data(ms(5), &DataHeader { cwr: true, ..seg(5, ms(5)) }, Ecn::Ect0).last().expect("CWR is ACKed at once");
        assert!(!a.ece);
    }

    fn echoes(acks: Acks) -> Vec<(u32, bool)> {
        acks.into_iter().map(|a| (a.ack, a.ece)).collect()
    }

    fn accurate() -> TcpReceiver {
        let delayed_ack = DelayedAck { quickack_segments: 0, ..DelayedAck::default() };
        TcpReceiver::new(&TcpConfig { ecn: EcnMode::Accurate, delayed_ack, ..TcpConfig::default() })
    }

    /// Segment `s` arrives at s ms with codepoint `e`; returns (cumulative ACK, ECE) of the
    /// ACKs sent.
    fn arrive(r: &mut TcpReceiver, s: u32, e: Ecn) -> Vec<(u32, bool)> {
        echoes(r.on_data(ms(u64::from(s)), &seg(s, ms(u64::from(s))), e))
    }

    #[test]
    fn accurate_ecn_acks_the_previous_run_at_every_change_of_ce_state() {
        use Ecn::{Ce, Ect0};
        let mut r = accurate();
        assert_eq!(arrive(&mut r, 0, Ect0), [], "held back by the delayed-ACK rule");
        // CE after a held-back segment: first the ACK of 0 with the old ECE, then 1 at once.
        let two = r.on_data(ms(1), &seg(1, ms(1)), Ce);
        assert_eq!(echoes(two), [(1, false), (2, true)]);
        assert_eq!(two.into_iter().map(|a| a.delayed).collect::<Vec<_>>(), [true, false]);
        // The CE run goes on: ACK every second segment, with ECE.
        assert_eq!(arrive(&mut r, 2, Ce), []);
        assert_eq!(arrive(&mut r, 3, Ce), [(4, true)]);
        // Back to ECT with nothing held back: one immediate ACK without ECE.
        assert_eq!(arrive(&mut r, 4, Ect0), [(5, false)]);
        assert_eq!(arrive(&mut r, 5, Ect0), []);
        assert_eq!(arrive(&mut r, 6, Ce), [(6, false), (7, true)]);
        assert_eq!(arrive(&mut r, 7, Ce), []);
        assert_eq!(arrive(&mut r, 8, Ect0), [(8, true), (9, false)]);
        assert_eq!(arrive(&mut r, 9, Ect0), []);
        let a = r.on_timer(ms(49)).expect("delayed-ACK timer");
        assert_eq!((a.ack, a.ece), (10, false));
    }

    #[test]
    fn accurate_ecn_has_no_ce_quickacks_and_cwr_does_not_hide_a_mark() {
        use Ecn::{Ce, Ect0};
        let mut r = accurate();
        assert_eq!(arrive(&mut r, 0, Ce), [(1, true)]);
        assert_eq!(arrive(&mut r, 1, Ce), [], "classic ECN would quickack here");
        let a = r.on_data(ms(2), &DataHeader { cwr: true, ..seg(2, ms(2)) }, Ce).last().expect("CWR is ACKed at once");
        assert_eq!((a.ack, a.ece), (3, true), "ECE follows the CE state, not CWR");
        let a = r.on_data(ms(3), &DataHeader { cwr: true, ..seg(3, ms(3)) }, Ect0);
        assert_eq!(echoes(a), [(4, false)]);
    }

    #[test]
    fn accurate_ecn_state_moves_on_new_ect_segments_only() {
        use Ecn::{Ce, Ect0, NotEct};
        let mut r = accurate();
        assert_eq!(arrive(&mut r, 0, Ce), [(1, true)]);
        // Not-ECT leaves the state alone: the run of ECE goes on.
        assert_eq!(arrive(&mut r, 1, NotEct), []);
        assert_eq!(arrive(&mut r, 2, NotEct), [(3, true)]);
        // An out-of-order ECT segment changes it (ACKed at once anyway, as out of order).
        assert_eq!(arrive(&mut r, 4, Ect0), [(3, false)]);
        // A duplicate below rcv_nxt does not: its ACK echoes the current state.
        assert_eq!(arrive(&mut r, 0, Ce), [(3, false)]);
        assert_eq!(arrive(&mut r, 3, Ect0), [(5, false)], "fills the hole");
    }

    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }

    fn receiver(quickack_segments: u32, adaptive: bool) -> TcpReceiver {
        let delayed_ack = DelayedAck { quickack_segments, adaptive, ..DelayedAck::default() };
        TcpReceiver::new(&TcpConfig { delayed_ack, ..TcpConfig::default() })
    }

    /// Segment `s` sent at 0 arrives at `at`; returns whether it was ACKed at once.
    fn lands(r: &mut TcpReceiver, s: u32, at: SimTime) -> bool {
        !r.on_data(at, &seg(s, SimTime::ZERO), Ecn::NotEct).is_empty()
    }

    #[test]
    fn the_ato_follows_the_arrival_gaps_within_the_srtt_and_200ms_bounds() {
        let mut r = receiver(0, true);
        // The first segment's one-way delay is 100 ms: handshake RTT 200 ms, so SRTT 200 ms
        // and RTO max(3 · 200, 200 + 200) = 600 ms. ato starts at ATO_MIN = 40 ms.
        assert!(!lands(&mut r, 0, ms(100)));
        assert_eq!(r.next_timer(), Some(ms(140)));
        assert_eq!(r.on_timer(ms(140)).map(|a| (a.ack, a.delayed)), Some((1, true)));
        // The timer fired: ato doubles to 80. Gap 70 (above 20, below 80): 80/2 + 70 = 110,
        // above ATO_MIN so bounded by max(SRTT, 40) = 200: the timer is 110 ms.
        assert!(!lands(&mut r, 1, ms(170)));
        assert_eq!(r.next_timer(), Some(ms(280)));
        r.on_timer(ms(280)).expect("timer ACK");
        // ato 220; gap 120: 110 + 120 = 230, held back at most min(SRTT, 200 ms) = 200 ms.
        assert!(!lands(&mut r, 2, ms(290)));
        assert_eq!(r.next_timer(), Some(ms(490)));
        r.on_timer(ms(490)).expect("timer ACK");
        // ato 460; the gap counts from the last arrival, not the timer: 210 ms, so
        // 230 + 210 = 440, timer 200 ms. Gap 5 (≤ 20): 220 + 20 = 240, and the second full
        // segment is ACKed at once.
        assert!(!lands(&mut r, 3, ms(500)));
        assert_eq!(r.next_timer(), Some(ms(700)));
        assert!(lands(&mut r, 4, ms(505)));
        // gap 5 again: 120 + 20 = 140 ms.
        assert!(!lands(&mut r, 5, ms(510)));
        assert_eq!(r.next_timer(), Some(ms(650)));
        assert_eq!(r.on_timer(ms(650)).map(|a| a.ack), Some(6));
        // The timer doubled ato to 280; gap 140 < 280: 140 + 140 = 280, bounded by 200.
        assert!(!lands(&mut r, 6, ms(650)));
        assert_eq!(r.next_timer(), Some(ms(850)));
        r.on_timer(ms(850)).expect("timer ACK");
        // ato 560; gap 1 s > RTO 600 ms: quickack mode (none granted here), ato unchanged.
        assert!(!lands(&mut r, 7, ms(1650)));
        assert_eq!(r.next_timer(), Some(ms(1850)));
        // gap 12.5 ms: 280 + 20 = 300, the second segment is ACKed; gap 0.1 ms: 150 + 20 = 170.
        assert!(lands(&mut r, 8, us(1_662_500)));
        assert!(!lands(&mut r, 9, us(1_662_600)));
        assert_eq!(r.next_timer(), Some(us(1_832_600)));
    }

    #[test]
    fn the_end_of_a_write_is_acked_once_read_not_at_the_timer() {
        // Segments 0 and 1 are ACKed together; 2 ends the write (PSH): ACKed at once, where
        // without PSH it waits for the 40 ms timer. Held out of order, PSH data waits for the
        // hole as any out-of-order data does (ACKed at once as out of order, not as pushed).
        let pushed = |s: u32| DataHeader { psh: true, ..seg(s, SimTime::ZERO) };
        for linux in [true, false] {
            let stack = if linux { Stack::Linux } else { Stack::Ns3 };
            let cfg =
                TcpConfig { stack, delayed_ack: DelayedAck { quickack_segments: 0, ..DelayedAck::default() }, ..TcpConfig::default() };
            let mut r = TcpReceiver::new(&cfg);
            assert!(!lands(&mut r, 0, ms(10)) && lands(&mut r, 1, ms(11)));
            let acks = r.on_data(ms(12), &pushed(2), Ecn::NotEct);
            assert_eq!(acks.into_iter().map(|a| a.ack).collect::<Vec<_>>(), if linux { vec![3] } else { vec![] }, "linux {linux}");
            assert_eq!(r.next_timer(), if linux { None } else { Some(ms(52)) });
        }
        let mut r = receiver(0, true);
        assert!(!lands(&mut r, 0, ms(10)));
        assert_eq!(r.next_timer(), Some(ms(50)), "no PSH: the timer");
        assert_eq!(r.on_data(ms(11), &pushed(2), Ecn::NotEct).last().map(|a| (a.ack, a.sack_len)), Some((1, 1)));
        assert_eq!(r.on_data(ms(12), &pushed(1), Ecn::NotEct).last().map(|a| a.ack), Some(3));
    }

    #[test]
    fn a_pending_timer_due_within_a_quarter_ato_acks_at_once() {
        let cfg = TcpConfig { delayed_ack: DelayedAck { every: 3, quickack_segments: 0, ..DelayedAck::default() }, ..TcpConfig::default() };
        let mut r = TcpReceiver::new(&cfg);
        assert!(!lands(&mut r, 0, ms(100)));
        assert_eq!(r.next_timer(), Some(ms(140)));
        // gap 25: ato 40/2 + 25 = 45, timer min(45, 200) = 45; the pending one (140) is
        // earlier and kept; 140 > 125 + 45/4, so no ACK yet.
        assert!(!lands(&mut r, 1, ms(125)));
        assert_eq!(r.next_timer(), Some(ms(140)));
        // Third segment would be ACKed anyway (every 3); instead a lone late one: reset.
        let mut r = TcpReceiver::new(&cfg);
        assert!(!lands(&mut r, 0, ms(100)));
        // gap 35: 20 + 35 = 55 ms; 140 ≤ 135 + 55/4 = 148.75: ACK now.
        assert!(lands(&mut r, 1, ms(135)));
        assert_eq!(r.next_timer(), None);
    }

    /// Segments s0.. arrive 1 ms apart from `from`; returns which were ACKed at once.
    fn train(r: &mut TcpReceiver, s0: u32, n: u32, from: SimTime) -> Vec<bool> {
        (0..n).map(|k| lands(r, s0 + k, from + SimDuration::from_millis(u64::from(k)))).collect()
    }

    #[test]
    fn quickack_mode_returns_after_an_idle_gap_longer_than_the_rto() {
        for (gap, again) in [(600, false), (601, true)] {
            let mut r = receiver(16, true);
            // First segment at 100 ms (RTO 600 ms): 16 quickacks, then every second segment.
            assert_eq!(train(&mut r, 0, 18, ms(100)), [vec![true; 16], vec![false, true]].concat());
            let after = ms(117) + SimDuration::from_millis(gap);
            let acks = train(&mut r, 18, 18, after);
            if again {
                assert_eq!(acks, [vec![true; 16], vec![false, true]].concat(), "gap {gap} ms > RTO");
            } else {
                assert_eq!(acks, [false, true].repeat(9), "gap {gap} ms = RTO");
            }
        }
    }

    #[test]
    fn a_duplicate_segment_starts_quickack_mode_again() {
        let mut r = receiver(16, true);
        train(&mut r, 0, 18, ms(100));
        // 16 quickacks again, the first spent on the duplicate's own ACK.
        assert!(lands(&mut r, 3, ms(120)), "duplicate");
        assert_eq!(train(&mut r, 18, 18, ms(121)), [vec![true; 15], vec![false, true, false]].concat());
        // A segment held out of order arriving again is ACKed at once, without quickack mode.
        assert!(lands(&mut r, 40, ms(140)), "out of order");
        assert!(lands(&mut r, 40, ms(141)), "held already");
        // The segments filling the hole are ACKed at once; after it, no quickack mode.
        assert_eq!(train(&mut r, 36, 4, ms(142)), [true; 4]);
        assert!(!lands(&mut r, 41, ms(146)));
    }

    #[test]
    fn fixed_ato_acks_after_delack_timeout_and_quickacks_only_at_start() {
        let mut r = receiver(16, false);
        assert_eq!(train(&mut r, 0, 18, ms(100)), [vec![true; 16], vec![false, true]].concat());
        // the adaptive receiver would quickack after this idle second, and time 110 ms here
        for (s, at) in [(18, 1117), (19, 1187), (20, 1307)] {
            assert!(!lands(&mut r, s, ms(at)));
            assert_eq!(r.next_timer(), Some(ms(at + 40)));
            assert!(r.on_timer(ms(at + 40)).is_some());
        }
        assert!(lands(&mut r, 3, ms(1400)), "duplicate");
        assert!(!lands(&mut r, 21, ms(1401)), "no quickack mode after a duplicate");
    }
}
