//! A device's transmit queue after the discipline (a link's `device_queue`): the packets a
//! network device holds once its queue discipline has let them go, as ns-3 layers a root queue
//! disc over a NetDevice's TxQueue (PointToPointNetDevice `TxQueue`, a 100-packet DropTail by
//! default; TrafficControlLayer hands the disc's packets on while the device queue has room,
//! `QueueDisc::Run`, and the device's NetDeviceQueue stops it when full) and Linux a qdisc over
//! a driver's TX ring. What the discipline acts on (CoDel's and PIE's sojourn, RED's backlog)
//! is then its own backlog only: a packet's wait in the device queue comes after the
//! discipline's decision. The link's own sojourn statistics still count the whole wait, from
//! arrival to transmission.
//!
//! Left out: byte limits on the device queue (Linux BQL; ns-3 DynamicQueueLimits, off by
//! default) and requeues (a device refusing a packet the disc released).

use super::{DropSink, Queue};
use crate::sojourn::SojournStats;
use std::collections::VecDeque;
use tcplab_core::{Packet, SimTime};

/// A discipline feeding a FIFO device queue of a fixed number of packets.
#[derive(Debug)]
pub struct DeviceQueue {
    discipline: Box<dyn Queue>,
    device: VecDeque<Packet>,
    capacity: usize,
    device_bytes: u64,
}

impl DeviceQueue {
    /// `discipline` in front of a device queue of `capacity` (≥ 1) packets.
    pub fn boxed(discipline: Box<dyn Queue>, capacity: u32) -> Box<dyn Queue> {
        assert!(capacity > 0, "a device queue holds at least one packet");
        Box::new(DeviceQueue { discipline, device: VecDeque::new(), capacity: capacity as usize, device_bytes: 0 })
    }

    /// Hands the discipline's packets on while the device queue has room.
    fn refill(&mut self, now: SimTime, sink: &mut DropSink) {
        while self.device.len() < self.capacity {
            let Some(pkt) = self.discipline.dequeue(now, sink) else { return };
            self.device_bytes += u64::from(pkt.size);
            self.device.push_back(pkt);
        }
    }
}

impl Queue for DeviceQueue {
    fn enqueue(&mut self, pkt: Packet, now: SimTime, sink: &mut DropSink) {
        self.discipline.enqueue(pkt, now, sink);
        self.refill(now, sink);
    }

    fn dequeue(&mut self, now: SimTime, sink: &mut DropSink) -> Option<Packet> {
        self.refill(now, sink); // a pacing discipline may have released packets since
        let pkt = self.device.pop_front()?;
        self.device_bytes -= u64::from(pkt.size);
        self.refill(now, sink);
        Some(pkt)
    }

    fn next_ready_at(&self) -> Option<SimTime> {
        if self.device.is_empty() {
            self.discipline.next_ready_at()
        } else {
            None
        }
    }

    fn len_packets(&self) -> u32 {
        self.device.len() as u32 + self.discipline.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.device_bytes + self.discipline.len_bytes()
    }

    fn l4s_sojourn(&self) -> Option<&SojournStats> {
        self.discipline.l4s_sojourn()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::tests::{seq, with_ecn};
    use super::*;
    use crate::queue::{CeThreshold, Discipline, DroptailConfig, QueueContext, QueueLimit};
    use tcplab_core::{Ecn, SimDuration};

    fn ms(v: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(v)
    }

    /// A drop-tail FIFO that CE-marks packets that waited in it more than 5 ms (fq_codel's
    /// ce_threshold: a discipline acting on its own sojourn), over a device queue of `device`
    /// packets (0: none).
    fn queue(device: u32) -> Box<dyn Queue> {
        let marking = Some(CeThreshold::Sojourn(SimDuration::from_millis(5)));
        let fifo = DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(100), marking));
        if device == 0 {
            fifo
        } else {
            DeviceQueue::boxed(fifo, device)
        }
    }

    /// 20 ECT packets arrive at 0 and one leaves per ms: which are CE-marked, in departure order.
    fn marked(mut q: Box<dyn Queue>) -> Vec<u32> {
        let mut sink = DropSink::default();
        for i in 0..20 {
            q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO, &mut sink);
        }
        assert_eq!(q.len_packets(), 20);
        let out: Vec<Packet> = (0..20).map(|t| q.dequeue(ms(t), &mut sink).expect("20 queued")).collect();
        assert_eq!(out.iter().map(seq).collect::<Vec<_>>(), (0..20).collect::<Vec<_>>(), "one FIFO order");
        assert!(q.is_empty() && q.len_bytes() == 0);
        out.iter().filter(|p| p.ecn == Ecn::Ce).map(seq).collect()
    }

    #[test]
    fn the_discipline_sees_only_its_own_backlogs_wait() {
        // Alone, packet k leaves the FIFO at k ms: marked when k > 5.
        assert_eq!(marked(queue(0)), (6..20).collect::<Vec<_>>());
        // Over a 10-packet device queue, packets 0-9 pass to the device at once; packet k ≥ 10
        // leaves the FIFO when packet k - 10 leaves the device, at k - 10 ms: marked when
        // k - 10 > 5.
        assert_eq!(marked(queue(10)), (16..20).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_discipline_drops_while_the_device_queue_holds_its_packets() {
        // A 2-packet FIFO over a 3-packet device queue holds 5: the sixth arrival is refused.
        let fifo = DroptailConfig {}.build(QueueContext::for_tests(QueueLimit::Packets(2), None));
        let (mut q, mut sink) = (DeviceQueue::boxed(fifo, 3), DropSink::default());
        for i in 0..6 {
            q.enqueue(with_ecn(i, Ecn::NotEct), SimTime::ZERO, &mut sink);
        }
        assert_eq!((q.len_packets(), sink.tail), (5, 1));
        assert_eq!(q.len_bytes(), 5 * with_ecn(0, Ecn::NotEct).size as u64);
        assert_eq!(q.next_ready_at(), None);
    }
}
