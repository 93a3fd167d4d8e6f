//! Trace-driven links, jitter and ACK aggregation end to end (docs/path-models.md).

mod common;
use common::*;
use tcplab_core::SimTime;
use tcplab_sim::{RunOutput, World};

/// A shipped trace, by absolute path (tests run in the crate's directory).
fn trace(name: &str) -> String {
    format!("{}/../../traces/{name}.trace", env!("CARGO_MANIFEST_DIR"))
}

/// One flow over a 20 ms (one way) dumbbell whose bottleneck carries `extra` keys, at
/// 10 Mbit/s unless `extra` starts with a rate.
fn scenario_text(cc: &str, extra: &str, duration: &str, tcp: &str) -> String {
    let extra = if extra.starts_with("rate") { extra.to_string() } else { format!(r#"rate = "10Mbps"{extra}"#) };
    format!(
        r#"
duration = "{duration}"
tcp = {{ {tcp} }}
[topology]
kind = "dumbbell"
bottleneck = {{ {extra}, delay = "20ms", buffer = "100pkt" }}
access = {{ rate = "1Gbps", delay = "0ms", buffer = "1000pkt" }}
[[flows]]
cc = "{cc}"
"#
    )
}

fn over_bottleneck(cc: &str, extra: &str, duration: &str, tcp: &str) -> RunOutput {
    run_ok(scenario(&scenario_text(cc, extra, duration, tcp)))
}

#[test]
fn cubic_over_the_cellular_trace_gets_most_of_its_mean_capacity() {
    // The trace's mean: 5483 opportunities of 1500 B in 5 s = 13.16 Mbit/s, of which
    // 1448/1500 is payload. The rate varies 2–40 Mbit/s, so CUBIC cannot keep it all.
    let extra = format!(r#"rate = "40Mbps", trace = "{}""#, trace("cellular"));
    let out = over_bottleneck("cubic", &extra, "30s", "");
    let capacity = 5483.0 * 1500.0 * 8.0 / 5.0 / 1e6 * 1448.0 / 1500.0;
    let goodput = out.summary.flows[0].goodput_mbps;
    assert!((0.5 * capacity..capacity).contains(&goodput), "{goodput} Mbit/s of {capacity}");
}

#[test]
fn a_constant_trace_carries_what_a_constant_rate_link_does() {
    // One opportunity per ms = 12 Mbit/s of 1500 B packets: the same goodput as a 12 Mbit/s
    // link within the difference of their packet timing (whole ms against 1 ms exactly).
    let traced = over_bottleneck("cubic", &format!(r#"rate = "12Mbps", trace = "{}""#, trace("constant-12mbps")), "20s", "");
    let wired = over_bottleneck("cubic", r#"rate = "12Mbps""#, "20s", "");
    let (t, w) = (traced.summary.flows[0].goodput_mbps, wired.summary.flows[0].goodput_mbps);
    assert!((t / w - 1.0).abs() < 0.02, "trace {t} vs wired {w} Mbit/s");
}

/// Retransmissions of a flow whose window (rcv_buf 100KB ≈ 69 packets) never fills the
/// 100-packet queue: none is needed, so every one is spurious.
fn retransmits_with_jitter(jitter: &str, recovery: &str) -> u64 {
    let extra = if jitter.is_empty() { String::new() } else { format!(", jitter = {jitter}") };
    let out = over_bottleneck("cubic", &extra, "20s", &format!(r#"rcv_buf = "100KB", recovery = "{recovery}""#));
    let link = out.summary.links.iter().find(|l| l.id == "left->right").unwrap();
    assert_eq!((link.drops, link.losses), (0, 0));
    assert!(out.summary.flows[0].goodput_mbps > 8.0, "{}", out.summary.flows[0].goodput_mbps);
    out.summary.flows[0].retransmits
}

#[test]
fn reordering_jitter_costs_rack_few_spurious_retransmissions() {
    // 5 ms of uniform jitter at 1.2 ms per packet lets packets overtake up to 4 others.
    let reordering = r#"{ amount = "5ms", reorder = true }"#;
    let in_order = r#"{ amount = "5ms" }"#;
    assert_eq!(retransmits_with_jitter("", "rack-tlp"), 0);
    assert_eq!(retransmits_with_jitter(in_order, "rack-tlp"), 0, "order kept: nothing looks lost");
    let rack = retransmits_with_jitter(reordering, "rack-tlp");
    let dupthresh = retransmits_with_jitter(reordering, "rfc6675");
    // RACK widens its reordering window to min_rtt / 4 = 10 ms once it sees reordering.
    assert!(rack < 20, "RACK: {rack} spurious retransmissions");
    assert!(dupthresh > 5 * rack.max(1), "three duplicate ACKs: {dupthresh} against RACK's {rack}");
}

#[test]
fn aggregated_acks_reach_the_sender_in_bursts_on_the_interval_grid() {
    // ACKs cross the bottleneck's reverse direction, which hands them on every 5 ms; the
    // access link to s0 adds only 1 Gbit/s serialization (0.4 us an ACK).
    let ack_times = |extra: &str| -> Vec<SimTime> {
        let mut world = World::new(scenario(&scenario_text("bbr", extra, "3s", "")), &mut || Ok::<(), tcplab_sim::RunError>(())).unwrap();
        let mut acked = 0;
        let mut times = Vec::new();
        while !world.run_until(world.end(), 1) {
            let now = world.now();
            let bytes = world.net.flows[0].sender.stats().bytes_acked;
            if bytes != acked {
                acked = bytes;
                times.push(now);
            }
        }
        times
    };
    const INTERVAL_NS: u64 = 5_000_000;
    let on_grid = |times: &[SimTime]| times.iter().filter(|t| t.as_nanos() % INTERVAL_NS < 50_000).count() as f64 / times.len() as f64;
    let aggregated = ack_times(r#", reverse = { aggregation = { interval = "5ms" } }"#);
    assert_eq!(on_grid(&aggregated), 1.0);
    let batches = aggregated.iter().map(|t| t.as_nanos() / INTERVAL_NS).collect::<std::collections::BTreeSet<_>>().len();
    assert!(aggregated.len() as f64 > 2.0 * batches as f64, "{} ACKs in {batches} batches", aggregated.len());
    assert!(on_grid(&ack_times("")) < 0.1);
}
