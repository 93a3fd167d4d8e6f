//! Queues at the egress of each link direction: FIFO with tail drop or head drop
//! (Linux `pfifo`/`bfifo`/`pfifo_head_drop`), limited in packets or in bytes.

use std::collections::VecDeque;
use tcplab_core::{Packet, SimTime};

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

/// An egress queue discipline.
pub trait Queue: Send + std::fmt::Debug {
    /// Offers `pkt`; returns the packet dropped to make room, if any (the arriving one or
    /// another, depending on the policy).
    fn enqueue(&mut self, pkt: Packet, now: SimTime) -> Option<Packet>;
    fn dequeue(&mut self, now: SimTime) -> Option<Packet>;
    fn len_packets(&self) -> u32;
    fn len_bytes(&self) -> u64;
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
}

impl FifoQueue {
    pub fn new(limit: QueueLimit, policy: DropPolicy) -> Self {
        let cap = match limit {
            QueueLimit::Packets(n) => (n as usize).min(1 << 16),
            QueueLimit::Bytes(b) => ((b / 1500) as usize).min(1 << 16),
        };
        FifoQueue { packets: VecDeque::with_capacity(cap), bytes: 0, limit, policy }
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
        if self.fits(&pkt) {
            self.bytes += pkt.size as u64;
            self.packets.push_back(pkt);
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
                self.bytes += pkt.size as u64;
                self.packets.push_back(pkt);
                dropped
            }
        }
    }

    fn dequeue(&mut self, _now: SimTime) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }

    fn len_packets(&self) -> u32 {
        self.packets.len() as u32
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{DataHeader, Ecn};

    fn pkt(seq: u32, payload: u32) -> Packet {
        Packet::data(0, 0, 1, DataHeader { seq, payload, tsval: SimTime::ZERO, cwr: false }, Ecn::NotEct)
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
}
