//! Head drop: a FIFO that evicts its oldest packets until an arrival fits (Linux
//! `pfifo_head_drop`, which is limited in packets and so evicts one; limited in bytes, a
//! large arrival may evict several small packets). An arrival larger than the whole byte
//! limit is refused instead. ECN marking counts the backlog the arrival found, before the
//! evictions.

use super::{Discipline, DropReason, DropSink, Fifo, FifoQueue, ParamDoc, Queue, QueueContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Packet, SimTime};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaddropConfig {}

impl Discipline for HeaddropConfig {
    const NAME: &'static str = "headdrop";
    const SUMMARY: &'static str = "FIFO, drops the oldest packet when full (Linux pfifo_head_drop)";
    const PARAMS: &'static [ParamDoc] = &[];
    const TAKES_ECN_THRESHOLD: bool = true;

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        FifoQueue::boxed(ctx.limit, ctx.marking, evict_oldest_until_it_fits)
    }
}

fn evict_oldest_until_it_fits(fifo: &mut Fifo, pkt: Packet, now: SimTime, sink: &mut DropSink) {
    if !fifo.fits_empty(&pkt) {
        return sink.drop(pkt, DropReason::Tail);
    }
    let backlog = fifo.len_packets();
    while !fifo.fits(&pkt) {
        let oldest = fifo.pop_oldest().expect("an arrival that fits an empty queue");
        sink.drop(oldest, DropReason::Head);
    }
    fifo.push(pkt, now, backlog, sink);
}

#[cfg(test)]
mod tests {
    use super::super::fifo::tests::{pkt, seq, with_ecn};
    use super::*;
    use crate::queue::{CeThreshold, QueueLimit};
    use tcplab_core::Ecn;

    fn queue(limit: QueueLimit, marking: Option<CeThreshold>) -> Box<dyn Queue> {
        HeaddropConfig {}.build(QueueContext::for_tests(limit, marking))
    }

    fn drain(q: &mut dyn Queue, sink: &mut DropSink) -> Vec<u32> {
        std::iter::from_fn(|| q.dequeue(SimTime::ZERO, sink)).map(|p| seq(&p)).collect()
    }

    #[test]
    fn evicts_the_oldest() {
        let (mut q, mut sink) = (queue(QueueLimit::Packets(2), None), DropSink::default());
        for i in 0..3 {
            q.enqueue(pkt(i, 100), SimTime::ZERO, &mut sink);
        }
        assert_eq!(drain(q.as_mut(), &mut sink), [1, 2]);
        assert_eq!((sink.head, sink.drops(), q.len_bytes()), (1, 1, 0));
    }

    #[test]
    fn a_large_arrival_evicts_and_reports_every_packet_it_displaces() {
        // 3000 B holds three 1000-byte packets (948 B payload); a 2000-byte arrival evicts two.
        let (mut q, mut sink) = (queue(QueueLimit::Bytes(3000), None), DropSink::default());
        for i in 0..3 {
            q.enqueue(pkt(i, 948), SimTime::ZERO, &mut sink);
        }
        q.enqueue(pkt(3, 1948), SimTime::ZERO, &mut sink);
        assert_eq!((sink.head, sink.tail), (2, 0));
        // Larger than the whole limit: refused, nothing evicted.
        q.enqueue(pkt(4, 3000), SimTime::ZERO, &mut sink);
        assert_eq!((sink.head, sink.tail), (2, 1));
        assert_eq!(drain(q.as_mut(), &mut sink), [2, 3]);
    }

    #[test]
    fn marks_by_the_backlog_the_arrival_found() {
        let (mut q, mut sink) = (queue(QueueLimit::Packets(2), Some(CeThreshold::Backlog(2))), DropSink::default());
        for i in 0..3 {
            q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO, &mut sink);
        }
        assert_eq!(sink.head, 1, "the oldest is dropped");
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO, &mut sink)).map(|p| p.ecn).collect();
        assert_eq!(ecns, [Ecn::Ect0, Ecn::Ce]);
        assert_eq!(sink.ce_marks, 1);
    }
}
