//! Drop tail: a FIFO that refuses arrivals when full (Linux `pfifo`/`bfifo`, ns-3
//! FifoQueueDisc).

use super::{Discipline, DropReason, DropSink, Fifo, FifoQueue, ParamDoc, Queue, QueueContext};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tcplab_core::{Packet, SimTime};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DroptailConfig {}

impl Discipline for DroptailConfig {
    const NAME: &'static str = "droptail";
    const SUMMARY: &'static str = "FIFO, drops arriving packets when full (Linux pfifo/bfifo)";
    const PARAMS: &'static [ParamDoc] = &[];
    const TAKES_ECN_THRESHOLD: bool = true;

    fn build(&self, ctx: QueueContext) -> Box<dyn Queue> {
        FifoQueue::boxed(ctx.limit, ctx.marking, refuse_when_full)
    }
}

fn refuse_when_full(fifo: &mut Fifo, pkt: Packet, now: SimTime, sink: &mut DropSink) {
    if fifo.fits(&pkt) {
        let backlog = fifo.len_packets();
        fifo.push(pkt, now, backlog, sink);
    } else {
        sink.drop(pkt, DropReason::Tail);
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::tests::{pkt, seq, with_ecn};
    use super::*;
    use crate::queue::{CeThreshold, QueueLimit};
    use tcplab_core::Ecn;

    fn queue(limit: QueueLimit, marking: Option<CeThreshold>) -> Box<dyn Queue> {
        DroptailConfig {}.build(QueueContext::for_tests(limit, marking))
    }

    #[test]
    fn refuses_the_arrival_when_full() {
        let (mut q, mut sink) = (queue(QueueLimit::Packets(2), None), DropSink::default());
        for i in 0..3 {
            q.enqueue(pkt(i, 100), SimTime::ZERO, &mut sink);
        }
        assert_eq!((sink.tail, sink.drops()), (1, 1));
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 2 * 152));
        assert_eq!(q.dequeue(SimTime::ZERO, &mut sink).map(|p| seq(&p)), Some(0));
    }

    #[test]
    fn byte_limit_counts_wire_bytes() {
        // 1000-byte limit holds six 152-byte packets (912 B) but not a seventh.
        let (mut q, mut sink) = (queue(QueueLimit::Bytes(1000), None), DropSink::default());
        for i in 0..7 {
            q.enqueue(pkt(i, 100), SimTime::ZERO, &mut sink);
        }
        assert_eq!((q.len_bytes(), sink.tail), (912, 1));
    }

    #[test]
    fn backlog_threshold_marks_ect_arrivals_joining_k_or_more_packets() {
        let (mut q, mut sink) = (queue(QueueLimit::Packets(8), Some(CeThreshold::Backlog(3))), DropSink::default());
        // Arrivals 0..5 join backlogs 0..5: the 4th, 5th and 6th (backlog 3, 4, 5) are marked.
        for i in 0..6 {
            q.enqueue(with_ecn(i, Ecn::Ect0), SimTime::ZERO, &mut sink);
        }
        assert_eq!(sink.ce_marks, 3);
        // Not-ECT is never marked; an arrival already CE is not counted again.
        q.enqueue(with_ecn(6, Ecn::NotEct), SimTime::ZERO, &mut sink);
        q.enqueue(with_ecn(7, Ecn::Ce), SimTime::ZERO, &mut sink);
        assert_eq!(sink.ce_marks, 3);
        // Full: the ECT arrival is dropped, not marked.
        q.enqueue(with_ecn(8, Ecn::Ect0), SimTime::ZERO, &mut sink);
        assert_eq!((sink.tail, sink.ce_marks), (1, 3));
        let ecns: Vec<Ecn> = std::iter::from_fn(|| q.dequeue(SimTime::ZERO, &mut sink)).map(|p| p.ecn).collect();
        use Ecn::*;
        assert_eq!(ecns, [Ect0, Ect0, Ect0, Ce, Ce, Ce, NotEct, Ce]);
        // Marking is on the backlog at arrival: an empty queue marks nothing.
        q.enqueue(with_ecn(9, Ect0), SimTime::ZERO, &mut sink);
        assert_eq!(q.dequeue(SimTime::ZERO, &mut sink).unwrap().ecn, Ect0);
        assert_eq!(sink.ce_marks, 3);
    }
}
