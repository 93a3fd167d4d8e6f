//! Queue disciplines end to end: every drop is counted, whatever the discipline discards.

mod common;
use common::*;
use tcplab_net::DropSink;
use tcplab_sim::RunOutput;

const BOTTLENECK: &str = "left->right";

/// Jumbo (MSS 8948, 9000-byte packets) and standard (MSS 1448) segments sharing a 30 KB
/// head-drop bottleneck: a jumbo arrival evicts several standard packets at once.
fn mixed_mss_headdrop(queue: &str) -> RunOutput {
    run_ok(scenario(&format!(
        r#"
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "20Mbps", delay = "10ms", buffer = "30KB", queue = {queue}, mtu = 9000 }}
access = {{ rate = "1Gbps", delay = "1ms", buffer = "1000pkt", mtu = 9000 }}
[[flows]]
cc = "cubic"
tcp = {{ mss = 8948 }}
[[flows]]
cc = "cubic"
tcp = {{ mss = 1448 }}
"#
    )))
}

fn bottleneck_drops(out: &RunOutput) -> DropSink {
    out.world.net.links.iter().find(|l| l.name == BOTTLENECK).expect("bottleneck").stats.queue.clone()
}

#[test]
fn a_byte_limited_head_drop_counts_every_packet_it_evicts() {
    // `run_ok` fails on the end-of-run packet conservation check if one eviction goes uncounted.
    let out = run_ok_both(mixed_mss_headdrop(r#""headdrop""#), mixed_mss_headdrop(r#"{ kind = "headdrop" }"#));
    let sink = bottleneck_drops(&out);
    assert!(sink.head > 0, "no head drops: the scenario no longer exercises eviction");
    assert_eq!((sink.tail, sink.aqm, sink.overlimit), (0, 0, 0));
    let summary = out.summary.links.iter().find(|l| l.id == BOTTLENECK).unwrap();
    assert_eq!(summary.drops, sink.drops());
}

/// The bare name and the table without parameters are the same setting.
fn run_ok_both(bare: RunOutput, table: RunOutput) -> RunOutput {
    assert_eq!(bare.summary.links, table.summary.links);
    assert_eq!(
        bare.world.net.links.iter().map(|l| l.stats.clone()).collect::<Vec<_>>(),
        table.world.net.links.iter().map(|l| l.stats.clone()).collect::<Vec<_>>()
    );
    bare
}

#[test]
fn drop_tail_counts_its_drops_as_tail_drops() {
    let out = mixed_mss_headdrop(r#""droptail""#);
    let sink = bottleneck_drops(&out);
    assert!(sink.tail > 0);
    assert_eq!((sink.head, sink.aqm, sink.overlimit), (0, 0, 0));
}
