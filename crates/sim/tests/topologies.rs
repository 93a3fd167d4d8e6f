//! Parking lot and leaf-spine end to end: who shares which bottleneck, and ECMP keeping each
//! flow on one spine while different flows spread over both.

mod common;
use common::*;
use tcplab_core::FlowId;
use tcplab_sim::RunOutput;

/// Bytes the direction called `name` put on the wire.
fn transmitted_bytes(out: &RunOutput, name: &str) -> u64 {
    out.world.net.links.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("no link {name}")).stats.transmitted_bytes
}

/// A 3-hop parking lot of equal 10 Mbit/s, 10 ms hops with `flows` (TOML [[flows]] tables).
fn parking_lot(flows: &str, duration: &str) -> RunOutput {
    run_ok(scenario(&format!(
        r#"
duration = "{duration}"
[topology]
kind = "parking_lot"
hops = 3
bottleneck = {{ rate = "10Mbps", delay = "10ms", buffer = "100pkt" }}
{flows}"#
    )))
}

fn cross_flow(hop: u32) -> String {
    format!("[[flows]]\ncc = \"cubic\"\nsrc = \"c{hop}s0\"\ndst = \"c{hop}d0\"\n")
}

#[test]
fn the_through_flow_of_a_parking_lot_gets_less_than_each_cross_flow() {
    let flows = format!("[[flows]]\ncc = \"cubic\"\n{}{}{}", cross_flow(0), cross_flow(1), cross_flow(2));
    let out = parking_lot(&flows, "30s");
    let goodput: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    assert_eq!((out.summary.flows[0].src.as_str(), out.summary.flows[0].dst.as_str()), ("s0", "d0"));
    for cross in &goodput[1..] {
        assert!(goodput[0] < *cross, "through {} Mbps vs cross {cross} Mbps: {goodput:?}", goodput[0]);
    }
    // Each hop is shared by two flows and kept busy: together they use most of it.
    for hop in 0..3 {
        let total = goodput[0] + goodput[1 + hop];
        assert!(total > 8.0, "hop {hop}: {total} Mbps of 10");
    }
}

#[test]
fn a_cross_flow_crosses_only_its_own_hop() {
    let out = parking_lot(&cross_flow(1), "2s");
    assert!(out.summary.flows[0].bytes_acked > 0);
    assert!(transmitted_bytes(&out, "r1->r2") > 0 && transmitted_bytes(&out, "r2->r1") > 0, "data and ACKs on hop 1");
    for other in ["r0->r1", "r1->r0", "r2->r3", "r3->r2", "c0s0->r0", "r3->c2d0"] {
        assert_eq!(transmitted_bytes(&out, other), 0, "{other}");
    }
}

/// 2 leaves × 2 spines, 8 hosts each, fast enough a fabric that nothing queues there; one
/// 2 MB transfer from h0_i to h1_i per host.
fn leaf_spine(seed: u64) -> RunOutput {
    let flows: String =
        (0..8).map(|i| format!("[[flows]]\ncc = \"cubic\"\nsrc = \"h0_{i}\"\ndst = \"h1_{i}\"\nbytes = \"2MB\"\n")).collect();
    run_ok(scenario(&format!(
        r#"
duration = "3s"
seed = {seed}
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 8
host_link = {{ rate = "100Mbps", delay = "50us", buffer = "1000pkt" }}
fabric_link = {{ rate = "1Gbps", delay = "100us", buffer = "1000pkt" }}
{flows}"#
    )))
}

#[test]
fn ecmp_spreads_flows_over_the_spines_and_keeps_each_on_one() {
    let out = leaf_spine(1);
    let net = &out.world.net;
    // The spine each flow's data takes, by its route from leaf0.
    let leaf0 = net.nodes.iter().position(|n| n.name == "leaf0").unwrap() as u32;
    let spine_of: Vec<String> = net
        .flows
        .iter()
        .enumerate()
        .map(|(id, f)| {
            let up = net.routes.next_hop(leaf0, f.dst, id as FlowId).expect("leaf1 is reachable");
            net.links[up as usize].name.clone()
        })
        .collect();
    assert!(spine_of.iter().any(|l| l == "leaf0->spine0") && spine_of.iter().any(|l| l == "leaf0->spine1"), "{spine_of:?}");
    // Every byte of every flow crossed the one spine its route names: each uplink carried
    // exactly its flows' data segments (payload + 52 B of headers), nothing was lost or sent
    // twice, so nothing was reordered into a spurious retransmission either.
    let mut expected = [0u64; 2];
    for (f, spine) in out.summary.flows.iter().zip(&spine_of) {
        assert_eq!(f.bytes_acked, 2_000_000, "flow {} completes", f.id);
        assert_eq!(f.retransmits, 0, "flow {}", f.id);
        expected[usize::from(spine.ends_with('1'))] += f.bytes_sent + 52 * f.segments_sent;
    }
    assert_eq!([transmitted_bytes(&out, "leaf0->spine0"), transmitted_bytes(&out, "leaf0->spine1")], expected);
    // Determinism: the same seed gives the same run.
    assert_eq!(leaf_spine(1).summary.flows, out.summary.flows);
}

/// A shipped example scenario, resolved; it raises no warning.
fn shipped(name: &str) -> tcplab_sim::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name);
    let s = scenario(&std::fs::read_to_string(path).expect("readable"));
    assert_eq!(tcplab_sim::warnings(&s), Vec::<String>::new(), "{name}");
    s
}

#[test]
fn the_shipped_examples_show_what_their_comments_say() {
    let out = run_ok(shipped("parking-lot.toml"));
    let goodput: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    assert!(goodput[1..].iter().all(|&cross| goodput[0] < cross), "through first: {goodput:?}");
    let out = run_ok(shipped("leaf-spine.toml"));
    let up_to = |spine: u32| (0..4).map(|leaf| transmitted_bytes(&out, &format!("leaf{leaf}->spine{spine}"))).sum::<u64>();
    assert!(up_to(0) > 0 && up_to(1) > 0, "the flows between leaves spread over both spines");
    assert!(out.summary.flows.iter().all(|f| f.retransmits == 0 || f.dst == "h3_0"), "only the flows meeting at h3_0 lose packets");
}
