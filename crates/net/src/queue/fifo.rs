//! The FIFO backlog the disciplines share: packets in arrival order, limited in packets or
//! bytes, with optional CE marking of ECT packets (RFC 3168) at a threshold:
//! * in packets, on enqueue, when the backlog the arrival joins is ≥ K packets — the step
//!   marking DCTCP deployments get from Linux `red` with min = max = K and `ecn` (RFC 8257
//!   §3.1), except that RED compares an average backlog in bytes (its weight makes it close
//!   to instantaneous for DCTCP settings) where this compares the instantaneous count;
//! * in time, on dequeue, when the packet waited longer than T — Linux `fq_codel`'s
//!   `ce_threshold` (sojourn > T), without the rest of CoDel.
//!
//! A full queue drops ECT packets like any other. ns-3's RedQueueDisc with MinTh = MaxTh = K
//! and UseEcn is the counterpart of the first.
//!
//! [`FifoQueue`] is a whole discipline over one backlog given what it does with an arrival.

use super::{CeThreshold, DropSink, Queue, QueueLimit};
use std::collections::VecDeque;
use tcplab_core::{Packet, SimTime};

#[derive(Debug)]
pub struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
    limit: QueueLimit,
    marking: Option<CeThreshold>,
}

impl Fifo {
    /// An empty backlog; it takes memory as packets queue, not for its limit (a network of
    /// thousands of mostly idle access links reserves nothing for them).
    pub fn new(limit: QueueLimit, marking: Option<CeThreshold>) -> Self {
        Fifo { packets: VecDeque::new(), bytes: 0, limit, marking }
    }

    /// Whether `pkt` fits behind the packets queued now.
    pub fn fits(&self, pkt: &Packet) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.packets.len() < n as usize,
            QueueLimit::Bytes(b) => self.bytes + pkt.size as u64 <= b,
        }
    }

    /// Whether `pkt` fits in the queue when empty (not if larger than a byte limit).
    pub fn fits_empty(&self, pkt: &Packet) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => n > 0,
            QueueLimit::Bytes(b) => pkt.size as u64 <= b,
        }
    }

    /// Appends `pkt` (stamped with `now`), marking it first if the backlog it joins —
    /// `backlog_before` packets, counted before any drop made room — reaches the threshold.
    pub fn push(&mut self, mut pkt: Packet, now: SimTime, backlog_before: u32, sink: &mut DropSink) {
        pkt.enqueued_at = now;
        if matches!(self.marking, Some(CeThreshold::Backlog(k)) if backlog_before >= k) {
            sink.ce_mark(&mut pkt);
        }
        self.bytes += pkt.size as u64;
        self.packets.push_back(pkt);
    }

    /// Removes the oldest packet without marking it (to drop it).
    pub fn pop_oldest(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    /// Removes the oldest packet to send it, marking it if it waited longer than the threshold.
    pub fn pop(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        let mut p = self.pop_oldest()?;
        if matches!(self.marking, Some(CeThreshold::Sojourn(t)) if now.saturating_since(p.enqueued_at) > t) {
            sink.ce_mark(&mut p);
        }
        Some(p)
    }

    pub fn len_packets(&self) -> u32 {
        self.packets.len() as u32
    }

    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

/// What a FIFO discipline does with an arrival: admit it, drop it or make room for it.
pub type Admit = fn(&mut Fifo, Packet, SimTime, &mut DropSink);

/// A discipline that differs from a plain FIFO only in [`Admit`]; it sends oldest first.
#[derive(Debug)]
pub struct FifoQueue {
    fifo: Fifo,
    admit: Admit,
}

impl FifoQueue {
    pub fn boxed(limit: QueueLimit, marking: Option<CeThreshold>, admit: Admit) -> Box<dyn Queue> {
        Box::new(FifoQueue { fifo: Fifo::new(limit, marking), admit })
    }
}

impl Queue for FifoQueue {
    fn enqueue(&mut self, pkt: Packet, now: SimTime, sink: &mut DropSink) {
        (self.admit)(&mut self.fifo, pkt, now, sink);
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.fifo.pop(now, sink)
    }

    fn len_packets(&self) -> u32 {
        self.fifo.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }

    /// A FIFO's admission and marking act only on a backlog: an arrival at an empty queue is
    /// sent unchanged if it fits the limit, unless it marks at a backlog of 0.
    fn passes_through_when_empty(&self) -> u32 {
        if matches!(self.fifo.marking, Some(CeThreshold::Backlog(0))) {
            return 0;
        }
        match self.fifo.limit {
            QueueLimit::Packets(n) => {
                if n == 0 {
                    0
                } else {
                    u32::MAX
                }
            }
            QueueLimit::Bytes(b) => u32::try_from(b).unwrap_or(u32::MAX),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use tcplab_core::{DataHeader, Ecn, SimDuration};

    pub fn pkt(seq: u32, payload: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq, payload, tsval: SimTime::ZERO, cwr: false, psh: false }, Ecn::NotEct)
    }
    pub fn with_ecn(seq: u32, ecn: Ecn) -> Packet {
        Packet { ecn, ..pkt(seq, 100) }
    }
    pub fn seq(p: &Packet) -> u32 {
        match p.kind {
            tcplab_core::PacketKind::Data(h) => h.seq,
            _ => unreachable!(),
        }
    }
    fn us(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_micros(v)
    }

    #[test]
    fn sojourn_threshold_marks_ect_packets_that_waited_longer_than_t() {
        let t = SimDuration::from_millis(1);
        let mut q = Fifo::new(QueueLimit::Packets(100), Some(CeThreshold::Sojourn(t)));
        let mut sink = DropSink::default();
        for (i, ecn, at) in
            [(0, Ecn::Ect0, 0), (1, Ecn::Ect0, 0), (2, Ecn::Ect0, 0), (3, Ecn::NotEct, 0), (4, Ecn::Ect0, 0), (5, Ecn::Ect0, 1_000)]
        {
            q.push(with_ecn(i, ecn), us(at), q.len_packets(), &mut sink);
        }
        assert_eq!(sink.ce_marks, 0, "no marking on enqueue, however long the queue");
        // Sojourns 0.5 ms, exactly 1 ms (not above T), 1.5 ms, 2 ms (Not-ECT), 2 ms (ECT),
        // and 1 ms for the packet that arrived at 1 ms.
        let got: Vec<(u32, Ecn)> = [500, 1_000, 1_500, 2_000, 2_000, 2_000]
            .into_iter()
            .map(|at| {
                let p = q.pop(us(at), &mut sink).unwrap();
                (seq(&p), p.ecn)
            })
            .collect();
        use Ecn::*;
        assert_eq!(got, [(0, Ect0), (1, Ect0), (2, Ce), (3, NotEct), (4, Ce), (5, Ect0)]);
        assert_eq!(sink.ce_marks, 2);
    }

    #[test]
    fn no_threshold_never_marks() {
        let mut q = Fifo::new(QueueLimit::Packets(100), None);
        let mut sink = DropSink::default();
        for i in 0..50 {
            q.push(with_ecn(i, Ecn::Ect0), SimTime::ZERO, i, &mut sink);
        }
        assert!(std::iter::from_fn(|| q.pop(us(10_000_000), &mut sink)).all(|p| p.ecn == Ecn::Ect0));
        assert_eq!(sink.ce_marks, 0);
    }
}
