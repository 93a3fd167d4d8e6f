//! Path models end to end: a policer drops what exceeds its token bucket before the queue, a
//! shaper holds packets until they conform, and BBR v1's long-term model finds the policer.

mod common;
use common::*;
use tcplab_sim::RunOutput;

const BOTTLENECK: &str = "left->right";

/// One flow over a 10 Mbit/s, 40 ms dumbbell whose bottleneck carries `extra` keys.
fn over_bottleneck(cc: &str, extra: &str, duration: &str) -> RunOutput {
    run_ok(scenario(&format!(
        r#"
duration = "{duration}"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "20ms", buffer = "100pkt"{extra} }}
access = {{ rate = "1Gbps", delay = "0ms", buffer = "1000pkt" }}
[[flows]]
cc = "{cc}"
"#
    )))
}

fn bottleneck(out: &RunOutput) -> &tcplab_sim::summary::LinkSummary {
    out.summary.links.iter().find(|l| l.id == BOTTLENECK).expect("bottleneck")
}

/// 4 Mbit/s of 1500-byte packets carry 4 · 1448/1500 Mbit/s of payload.
const PAYLOAD_AT_4_MBPS: f64 = 4.0 * 1448.0 / 1500.0;

#[test]
fn a_shaper_sets_the_rate_and_its_queue_absorbs_the_excess() {
    let out = over_bottleneck("cubic", r#", shaper = { rate = "4Mbps", burst = "15KB" }"#, "20s");
    let goodput = out.summary.flows[0].goodput_mbps;
    assert!((0.93 * PAYLOAD_AT_4_MBPS..=PAYLOAD_AT_4_MBPS).contains(&goodput), "{goodput} Mbps");
    let link = bottleneck(&out);
    assert_eq!(link.drops_by_reason.policer, 0);
    assert!(link.drops_by_reason.tail > 0, "CUBIC fills the shaper's queue");
    // Waits are those of a 4 Mbit/s queue: 100 packets take 300 ms there (120 ms at 10 Mbit/s).
    assert!(link.sojourn_p99_ms.unwrap() > 150.0, "{:?}", link.sojourn_p99_ms);
}

#[test]
fn a_shaper_faster_than_the_link_changes_nothing() {
    let plain = over_bottleneck("cubic", "", "5s");
    let shaped = over_bottleneck("cubic", r#", shaper = { rate = "20Mbps", burst = "3KB" }"#, "5s");
    assert_eq!(plain.summary.flows, shaped.summary.flows);
}

#[test]
fn a_policer_that_never_drops_changes_nothing_so_the_empty_fifo_pass_through_is_exact() {
    // A policer turns off the link's pass-through of an empty FIFO (the packet then goes
    // through the queue and out again at once): with one too generous to drop, every access
    // link runs the queue path and the run must be the same, event for event.
    let run = |extra: &str| {
        run_ok(scenario(&format!(
            r#"
duration = "5s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = {{ rate = "10Mbps", delay = "20ms", buffer = "100pkt" }}
access = {{ rate = "1Gbps", delay = "1ms", buffer = "1000pkt"{extra} }}
[[flows]]
src = "s0"
dst = "r0"
cc = "cubic"
[[flows]]
src = "s1"
dst = "r1"
cc = "bbr"
"#
        )))
    };
    let plain = run("");
    let policed = run(r#", policer = { rate = "10Gbps", burst = "1MB" }, reverse = { policer = { rate = "10Gbps", burst = "1MB" } }"#);
    assert_eq!(plain.summary.flows, policed.summary.flows);
    assert_eq!(plain.world.events(), policed.world.events());
    assert_eq!(plain.summary.links, policed.summary.links);
}

#[test]
fn a_policer_drops_the_excess_before_the_queue() {
    let out = over_bottleneck("cubic", r#", policer = { rate = "4Mbps", burst = "30KB" }"#, "20s");
    let goodput = out.summary.flows[0].goodput_mbps;
    assert!(goodput < PAYLOAD_AT_4_MBPS && goodput > 0.5 * PAYLOAD_AT_4_MBPS, "{goodput} Mbps");
    let link = bottleneck(&out);
    assert!(link.drops_by_reason.policer > 0);
    assert_eq!(link.drops, link.drops_by_reason.policer, "a policed 4 Mbit/s never fills a 10 Mbit/s queue");
    assert!(link.backlog_max_pkts <= 30, "{} packets queued", link.backlog_max_pkts);
}

#[test]
fn bbr_finds_the_policer_and_paces_at_its_long_term_rate() {
    let out = over_bottleneck("bbr", r#", policer = { rate = "4Mbps", burst = "30KB" }"#, "30s");
    let samples = &out.world.flow_series.bbr_lt_bw_mbps;
    let lt: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
    assert!(lt.len() > samples.len() / 4, "lt_bw in use in {} of {} samples", lt.len(), samples.len());
    // Linux's long-term rate is the delivery rate over the sampled intervals: near the policed rate.
    let mean = lt.iter().sum::<f64>() / lt.len() as f64;
    assert!((3.4..=4.4).contains(&mean), "long-term bw {mean} Mbps under a 4 Mbit/s policer");
    // Without a policer it never engages.
    let plain = over_bottleneck("bbr", "", "10s");
    assert!(plain.world.flow_series.bbr_lt_bw_mbps.iter().all(|v| v.is_nan()));
}
