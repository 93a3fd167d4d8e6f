//! The fq discipline end to end: `maxrate_mbps` on a sender's egress holds packets back,
//! and the link is woken when the next one is due (`Queue::next_ready_at`).

mod common;
use common::*;
use tcplab_sim::RunOutput;

const EGRESS: &str = "s0->left";

/// One CUBIC flow for 10 s through a 50 Mbit/s bottleneck; the access links run `queue`
/// (the sender's egress s0->left among them; their reverse directions, which carry the
/// ACKs, stay drop-tail).
fn cubic_through(queue: &str, tsq: bool) -> RunOutput {
    run_ok(scenario(&format!(
        r#"
duration = "10s"
tcp = {{ tsq = {tsq} }}
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "50Mbps", delay = "10ms", buffer = "200pkt" }}
access = {{ rate = "1Gbps", delay = "1ms", buffer = "1000pkt", queue = {queue}, reverse = {{ queue = "droptail" }} }}
[[flows]]
cc = "cubic"
"#
    )))
}

fn goodput(out: &RunOutput) -> f64 {
    out.summary.flows[0].goodput_mbps
}

// 10 Mbit/s of 1500-byte packets carrying 1448 bytes of payload: at most 9.653 Mbit/s of
// goodput; the flow gets close to it (slow start's first RTTs and any loss cost a little),
// where without maxrate it fills most of the 50 Mbit/s bottleneck.
#[test]
fn maxrate_on_the_senders_egress_caps_a_cubic_flow_at_its_payload_share() {
    let cap = 10.0 * 1448.0 / 1500.0;
    for tsq in [true, false] {
        let paced = cubic_through(r#"{ kind = "fq", maxrate_mbps = 10 }"#, tsq);
        let g = goodput(&paced);
        assert!(g <= cap && g > 0.95 * cap, "tsq {tsq}: goodput {g} Mbit/s against a cap of {cap}");
        let egress = paced.world.net.links.iter().find(|l| l.name == EGRESS).unwrap();
        // The egress, not the 50 Mbit/s bottleneck, is where the flow queues: TSQ keeps about
        // two segments there; without TSQ, CUBIC fills the flow's 100 packets and loses the
        // arrivals beyond (Tail) — each released from TSQ's count when dropped.
        let bottleneck = paced.world.net.links.iter().find(|l| l.name == "left->right").unwrap();
        assert_eq!(bottleneck.stats.queue.drops(), 0);
        if tsq {
            assert_eq!(egress.stats.queue.drops(), 0, "{:?}", egress.stats.queue);
            assert!(paced.world.net.flows[0].tsq.is_some());
        } else {
            assert!(egress.stats.queue.tail > 0, "{:?}", egress.stats.queue);
        }
    }
    let unpaced = goodput(&cubic_through(r#""fq""#, true));
    assert!(unpaced > 40.0, "fq without maxrate: {unpaced} Mbit/s");
}
