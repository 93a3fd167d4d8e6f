//! L4S end to end: TCP Prague (ECT(1), accurate ECN) over a DualPI2 bottleneck (RFC 9332),
//! alone and sharing it with CUBIC (Not-ECT, the classic queue).

mod common;
use common::*;
use tcplab_net::SojournStats;
use tcplab_sim::recorder::ColumnData;
use tcplab_sim::RunOutput;

const BOTTLENECK: &str = "left->right";

/// A 50 Mbit/s dumbbell with a 20 ms base RTT and DualPI2 (Linux defaults) on the bottleneck,
/// one flow per algorithm, for 20 s.
fn dualpi2_dumbbell(ccs: &[&str]) -> RunOutput {
    let flows: String = ccs.iter().map(|cc| format!("[[flows]]\ncc = \"{cc}\"\n")).collect();
    run_ok(scenario(&format!(
        r#"
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "50Mbps", delay = "10ms", buffer = "500pkt", queue = "dualpi2" }}
access = {{ rate = "1Gbps", delay = "0ms", buffer = "10000pkt" }}
{flows}"#
    )))
}

/// The bottleneck's L queue sojourns.
fn l_queue(out: &RunOutput) -> SojournStats {
    let link = out.world.net.links.iter().find(|l| l.name == BOTTLENECK).expect("bottleneck");
    link.queue.l4s_sojourn().expect("dualpi2 has an L queue").clone()
}

#[test]
fn prague_alone_keeps_the_l4s_queue_short_at_high_utilisation() {
    let out = dualpi2_dumbbell(&["prague"]);
    let l = l_queue(&out);
    let link = out.summary.links.iter().find(|l| l.id == BOTTLENECK).unwrap();
    // Every data packet was ECT(1) (or CE): all of the bottleneck's packets went through L.
    assert_eq!(l.count, out.world.net.links.iter().find(|l| l.name == BOTTLENECK).unwrap().stats.sojourn.count);
    let p99 = l.quantile_ms(0.99).unwrap();
    assert!(p99 < 2.0, "L queue delay p99 {p99} ms");
    assert!(link.utilization > 0.9, "utilisation {}", link.utilization);
    assert!(link.ce_marks > 0, "Prague is controlled by marks");
    assert_eq!(link.drops, 0, "no loss under L4S marking");
}

#[test]
fn prague_and_cubic_share_a_dualpi2_bottleneck_with_low_l4s_delay() {
    let out = dualpi2_dumbbell(&["prague", "cubic"]);
    let l = l_queue(&out);
    let p99 = l.quantile_ms(0.99).unwrap();
    assert!(p99 < 2.0, "L queue delay p99 {p99} ms");
    // The summary reports the L queue's own waits beside the whole queue's.
    let summary = out.summary.links.iter().find(|l| l.id == BOTTLENECK).unwrap();
    assert_eq!((summary.l4s_sojourn_p99_ms, summary.l4s_sojourn_mean_ms), (Some(p99), l.mean_ms()));
    assert!(out.summary.links.iter().filter(|l| l.id != BOTTLENECK).all(|l| l.l4s_sojourn_p99_ms.is_none()));
    let goodputs: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    assert!(out.summary.fairness_jain >= 0.8, "Jain's index {} of goodputs {goodputs:?} Mbit/s", out.summary.fairness_jain);
    // The classic queue is held near the PI target (15 ms) rather than the 500-packet buffer (120 ms).
    let all = out.summary.links.iter().find(|l| l.id == BOTTLENECK).unwrap();
    assert!(all.sojourn_p99_ms.unwrap() < 60.0, "bottleneck sojourn p99 {:?} ms", all.sojourn_p99_ms);
    assert!(all.utilization > 0.9, "utilisation {}", all.utilization);
    per_interval_l4s_waits_are_recorded(out);
}

/// links.parquet's `l4s_sojourn_ms`: on the bottleneck, the L queue's mean wait per interval,
/// below the whole queue's (`sojourn_ms`, which the classic packets dominate); NaN on every
/// other link, whose queues have no L4S queue.
fn per_interval_l4s_waits_are_recorded(mut out: RunOutput) {
    let bottleneck = out.world.net.links.iter().position(|l| l.name == BOTTLENECK).unwrap();
    let (_, links) = out.world.take_series().into_iter().find(|(name, _)| *name == "links").unwrap();
    let column = |name: &str| &links.iter().find(|(c, _)| c.name == name).unwrap().1;
    let ColumnData::Link(link) = column("link") else { panic!("link column") };
    let at_bottleneck: Vec<bool> = link.iter().map(|&id| id as usize == bottleneck).collect();
    let waits = |name: &str, at: bool| -> Vec<f64> {
        let ColumnData::F64(v) = column(name) else { panic!("{name} column") };
        v.iter().zip(&at_bottleneck).filter(|(_, &b)| b == at).map(|(x, _)| *x).collect()
    };
    let finite = |v: Vec<f64>| -> Vec<f64> { v.into_iter().filter(|x| x.is_finite()).collect() };
    let (l4s, all) = (finite(waits("l4s_sojourn_ms", true)), finite(waits("sojourn_ms", true)));
    assert!(l4s.len() * 10 > all.len() * 9, "{} of {} intervals have L4S waits", l4s.len(), all.len());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(mean(&l4s) < 1.0 && mean(&all) > 2.0 * mean(&l4s), "L4S {} ms, all {} ms", mean(&l4s), mean(&all));
    assert!(waits("l4s_sojourn_ms", false).iter().all(|x| x.is_nan()));
}

#[test]
fn prague_is_refused_on_the_ns3_stack() {
    // ns-3 3.44 has no TcpPrague (nor a DualPI2 queue disc).
    let text = "duration = \"1s\"\n[tcp]\nstack = \"ns3\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = { rate = \"10Mbps\", delay = \"10ms\", buffer = \"100pkt\" }\n[[flows]]\ncc = \"prague\"\n";
    let value: serde_json::Value = toml::from_str(text).unwrap();
    let e = tcplab_sim::resolve(value).unwrap_err().to_string();
    assert!(e.contains("flows.0.cc") && e.contains("prague has no ns-3 variant (tcp.stack = \"ns3\")"), "{e}");
}
