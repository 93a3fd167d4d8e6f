//! Queues at the egress of each link direction: FIFO with tail drop or head drop
//! (Linux `pfifo`/`bfifo`/`pfifo_head_drop`), limited in packets or in bytes, with optional
//! ECN CE marking (RFC 3168; algorithms.md §1.11) of ECT packets at a threshold:
//! * in packets, on enqueue, when the backlog the arrival joins is ≥ K packets — the step
//!   marking DCTCP deployments get from Linux `red` with min = max = K and `ecn` (RFC 8257
//!   §3.1), except that RED compares an average backlog in bytes (its weight makes it close
//!   to instantaneous for DCTCP settings) where this compares the instantaneous count;
//! * in time, on dequeue, when the packet waited longer than T — Linux `fq_codel`'s
//!   `ce_threshold` (sojourn > T), without the rest of CoDel.
//!
//! Not-ECT packets are never marked; a full queue drops ECT packets like any other.
//! ns-3's RedQueueDisc with MinTh = MaxTh = K and UseEcn is the counterpart of the first.

use std::collections::VecDeque;
use tcplab_core::{Ecn, Packet, SimDuration, SimTime};

/// The capacity of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Which packet a full FIFO drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    /// The arriving packet (Linux pfifo / bfifo).
    Tail,
    /// The oldest queued packet (Linux pfifo_head_drop).
    Head,
}

/// When a queue CE-marks ECT packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeThreshold {
    /// On enqueue, when at least this many packets are already queued.
    Backlog(u32),
    /// On dequeue, when the packet waited longer than this.
    Sojourn(SimDuration),
}

/// An egress queue discipline.
pub trait Queue: Send + std::fmt::Debug {
    /// Offers `pkt`; returns the packet dropped to make room, if any (the arriving one or
    /// another, depending on the policy).
    fn enqueue(&mut self, pkt: Packet, now: SimTime) -> Option<Packet>;
    fn dequeue(&mut self, now: SimTime) -> Option<Packet>;
    fn len_packets(&self) -> u32;
    fn len_bytes(&self) -> u64;
    /// Packets CE-marked so far.
    fn ce_marks(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

#[derive(Debug)]
pub struct FifoQueue {
    packets: VecDeque<Packet>,
    bytes: u64,
    limit: QueueLimit,
    policy: DropPolicy,
    marking: Option<CeThreshold>,
    ce_marks: u64,
}

impl FifoQueue {
    /// An empty queue; it takes memory as packets queue, not for its limit (a network of
    /// thousands of mostly idle access links reserves nothing for them).
    pub fn new(limit: QueueLimit, policy: DropPolicy) -> Self {
        FifoQueue { packets: VecDeque::new(), bytes: 0, limit, policy, marking: None, ce_marks: 0 }
    }

    /// The same queue marking ECT packets at `threshold` (None: never).
    pub fn with_ce_marking(mut self, threshold: Option<CeThreshold>) -> Self {
        self.marking = threshold;
        self
    }

    /// Turns an ECT packet into CE and counts it.
    fn mark(&mut self, pkt: &mut Packet) {
        if pkt.ecn == Ecn::Ect0 {
            pkt.ecn = Ecn::Ce;
            self.ce_marks += 1;
        }
    }

    /// Accepts `pkt` at the tail, marking it first if the backlog it joins (`backlog_before`
    /// packets, counted before any head drop made room) reaches the threshold.
    fn admit(&mut self, mut pkt: Packet, backlog_before: usize) {
        if matches!(self.marking, Some(CeThreshold::Backlog(k)) if backlog_before >= k as usize) {
            self.mark(&mut pkt);
        }
        self.bytes += pkt.size as u64;
        self.packets.push_back(pkt);
    }

    fn fits(&self, extra: &Packet) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.packets.len() < n as usize,
            QueueLimit::Bytes(b) => self.bytes + extra.size as u64 <= b,
        }
    }
}

impl Queue for FifoQueue {
    fn enqueue(&mut self, mut pkt: Packet, now: SimTime) -> Option<Packet> {
        pkt.enqueued_at = now;
        let backlog = self.packets.len();
        if self.fits(&pkt) {
            self.admit(pkt, backlog);
            return None;
        }
        match self.policy {
            DropPolicy::Tail => Some(pkt),
            DropPolicy::Head => {
                // Drop from the head until the arrival fits (one packet for packet limits).
                let dropped = self.packets.pop_front();
                if let Some(d) = &dropped {
                    self.bytes -= d.size as u64;
                }
                while !self.fits(&pkt) && !self.packets.is_empty() {
                    let extra = self.packets.pop_front().expect("non-empty");
                    self.bytes -= extra.size as u64;
                }
                if !self.fits(&pkt) {
                    return Some(pkt);
                }
                self.admit(pkt, backlog);
                dropped
            }
        }
    }

    fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        let mut p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        if matches!(self.marking, Some(CeThreshold::Sojourn(t)) if now.saturating_since(p.enqueued_at) > t) {
            self.mark(&mut p);
        }
        Some(p)
    }

    fn len_packets(&self) -> u32 {
        self.packets.len() as u32
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn ce_marks(&self) -> u64 {
        self.ce_marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::DataHeader;

    fn pkt(seq: u32, payload: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq, payload, tsval: SimTime::ZERO, cwr: false }, Ecn::NotEct)
    }
    fn with_ecn(seq: u32, ecn: Ecn) -> Packet {
        Packet { ecn, ..pkt(seq, 100) }
    }
    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }
    fn seq(p: &Packet) -> u32 {
        match p.kind {
            tcplab_core::PacketKind::Data(h) => h.seq,
            _ => unreachable!(),
        }
    }

    #[test]
    fn tail_drop_refuses_the_arrival_when_full() {
        let mut q = FifoQueue::new(QueueLimit::Packets(2), DropPolicy::Tail);
        assert!(q.enqueue(pkt(0, 100), SimTime::ZERO).is_none());
        assert!(q.enqueue(pkt(1, 100), SimTime::ZERO).is_none());
        assert_eq!(q.enqueue(pkt(2, 100), SimTime::ZERO).map(|p| seq(&p)), Some(2));
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.len_bytes(), 2 * 152);
        assert_eq!(q.dequeue(SimTime::ZERO).map(|p| seq(&p)), Some(0));
    }

    #[test]
    fn head_drop_evicts_the_oldest() {
        let mut q = FifoQueue::new(QueueLimit::Packets(2), DropPolicy::Head);
        q.enqueue(pkt(0, 100), SimTime::ZERO);
        q.enqueue(pkt(1, 100), SimTime::ZERO);
        assert_eq!(q.enqueue(pkt(2, 100), SimTime::ZERO).map(|p| seq(&p)), Some(0));
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO)).map(|p| seq(&p)).collect();
        assert_eq!(order, [1, 2]);
        assert_eq!(q.len_bytes(), 0);
    }

    #[test]
    fn byte_limit_counts_wire_bytes() {
        // 1000-byte limit holds six 152-byte packets (912 B) but not a seventh.
        let mut q = FifoQueue::new(QueueLimit::Bytes(1000), DropPolicy::Tail);
        for i in 0..6 {
            assert!(q.enqueue(pkt(i, 100), SimTime::ZERO).is_none());
        }
        assert!(q.enqueue(pkt(6, 100), SimTime::ZERO).is_some());
        assert_eq!(q.len_bytes(), 912);
    }

    #[test]
    fn backlog_threshold_marks_ect_arrivals_joining_k_or_more_packets() {
        let mut q = FifoQueue::new(QueueLimit::Packets(8), DropPolicy::Tail).with_ce_marking(Some(CeThreshold::Backlog(3)));
        // Arrivals 0..5 join backlogs 0..5: the 4th, 5th and 6th (backlog 3, 4, 5) are marked.
        for i in 0..6 {
            assert!(q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO).is_none());
        }
        assert_eq!(q.ce_marks(), 3);
        // Not-ECT is never marked; an arrival already CE is not counted again.
        q.enqueue(with_ecn(6, Ecn::NotEct), SimTime::ZERO);
        q.enqueue(with_ecn(7, Ecn::Ce), SimTime::ZERO);
        assert_eq!(q.ce_marks(), 3);
        // Full: the ECT arrival is dropped, not marked.
        let dropped = q.enqueue(with_ecn(8, Ecn::Ect0), SimTime::ZERO).expect("full");
        assert_eq!((dropped.ecn, q.ce_marks()), (Ecn::Ect0, 3));
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO)).map(|p| p.ecn).collect();
        use Ecn::*;
        assert_eq!(ecns, [Ect0, Ect0, Ect0, Ce, Ce, Ce, NotEct, Ce]);
        // Marking is on the backlog at arrival: an empty queue marks nothing.
        q.enqueue(with_ecn(9, Ect0), SimTime::ZERO);
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().ecn, Ect0);
        assert_eq!(q.ce_marks(), 3);
    }

    #[test]
    fn head_drop_marks_by_the_backlog_the_arrival_found() {
        let mut q = FifoQueue::new(QueueLimit::Packets(2), DropPolicy::Head).with_ce_marking(Some(CeThreshold::Backlog(2)));
        q.enqueue(with_ecn(0, Ecn::Ect0), SimTime::ZERO);
        q.enqueue(with_ecn(1, Ecn::Ect0), SimTime::ZERO);
        assert!(q.enqueue(with_ecn(2, Ecn::Ect0), SimTime::ZERO).is_some(), "the oldest is dropped");
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO)).map(|p| p.ecn).collect();
        assert_eq!(ecns, [Ecn::Ect0, Ecn::Ce]);
        assert_eq!(q.ce_marks(), 1);
    }

    #[test]
    fn sojourn_threshold_marks_ect_packets_that_waited_longer_than_t() {
        let t = SimDuration::from_millis(1);
        let mut q = FifoQueue::new(QueueLimit::Packets(100), DropPolicy::Tail).with_ce_marking(Some(CeThreshold::Sojourn(t)));
        for i in 0..3 {
            q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO);
        }
        q.enqueue(with_ecn(3, Ecn::NotEct), SimTime::ZERO);
        q.enqueue(with_ecn(4, Ecn::Ect0), SimTime::ZERO);
        q.enqueue(with_ecn(5, Ecn::Ect0), us(1_000));
        assert_eq!(q.ce_marks(), 0, "no marking on enqueue, however long the queue");
        // Sojourns 0.5 ms, exactly 1 ms (not above T), 1.5 ms, 2 ms (Not-ECT), 2 ms (ECT),
        // and 1 ms for the packet that arrived at 1 ms.
        let got: Vec<(u32, Ecn)> = [500, 1_000, 1_500, 2_000, 2_000, 2_000]
            .into_iter()
            .map(|at| {
                let p = q.dequeue(us(at)).unwrap();
                let tcplab_core::PacketKind::Data(h) = p.kind else { unreachable!() };
                (h.seq, p.ecn)
            })
            .collect();
        use Ecn::*;
        assert_eq!(got, [(0, Ect0), (1, Ect0), (2, Ce), (3, NotEct), (4, Ce), (5, Ect0)]);
        assert_eq!(q.ce_marks(), 2);
    }

    #[test]
    fn no_threshold_never_marks() {
        let mut q = FifoQueue::new(QueueLimit::Packets(100), DropPolicy::Tail);
        for i in 0..50 {
            q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO);
        }
        assert!(std::iter::from_fn(|| q.dequeue(us(10_000_000))).all(|p| p.ecn == Ecn::Ect0));
        assert_eq!(q.ce_marks(), 0);
    }
}
