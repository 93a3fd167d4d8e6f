//! The summary's flow-completion-time block against the flows' own completion times.
mod common;
use common::{run_ok, scenario};

#[test]
fn fct_percentiles_are_the_completed_flows_and_unfinished_flows_are_counted() {
    let out = run_ok(scenario(
        r#"
duration = "3s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "20Mbps", delay = "10ms", buffer = "100pkt" }
[[flows]]
cc = "cubic"
bytes = "50KB"
[[flows]]
cc = "bbr"
bytes = "2MB"
start = "100ms"
[[flows]]
cc = "cubic"
bytes = "1GB"
[[flows]]
cc = "bbr"
"#,
    ));
    let s = &out.summary;
    let fct_ms = |i: usize| s.flows[i].completion_s.expect("completes") * 1e3;
    let (small, large) = (fct_ms(0), fct_ms(1));
    assert!(small < large, "{small} {large}");
    assert!(s.flows[2].completion_s.is_none(), "1 GB cannot finish in 3 s at 20 Mbit/s");
    let fct = s.fct.as_ref().expect("sized flows give an fct block");
    // The unbounded flow is not a sized flow; the unfinished one is counted, not dropped.
    assert_eq!((fct.all.flows, fct.all.completed, fct.all.unfinished), (3, 2, 1));
    // Nearest rank over the two completed flows: p50 the smaller, p95 and above the larger.
    assert_eq!(fct.all.p50_ms, Some(small));
    assert_eq!(fct.all.p95_ms, Some(large));
    assert_eq!(fct.all.p99_ms, Some(large));
    assert_eq!(fct.all.max_ms, Some(large));
    let cubic = &fct.by_cc["cubic"];
    assert_eq!((cubic.flows, cubic.completed, cubic.unfinished, cubic.max_ms), (2, 1, 1, Some(small)));
    assert_eq!(fct.by_cc["bbr"].p50_ms, Some(large));
    let bins: Vec<(&str, u64, u64, Option<f64>)> =
        fct.by_size.iter().map(|b| (b.bin, b.stats.flows, b.stats.unfinished, b.stats.p50_ms)).collect();
    assert_eq!(bins, [("<100KB", 1, 0, Some(small)), ("100KB-10MB", 1, 0, Some(large)), (">=10MB", 1, 1, None)]);
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["fct"]["completed"], 2);
    assert_eq!(json["fct"]["by_size"][2]["max_bytes"], serde_json::Value::Null);
}

#[test]
fn a_run_without_sized_flows_has_no_fct_block() {
    let out = run_ok(scenario(&common::dumbbell(&["cubic"], "10Mbps", "10ms", "100pkt", "1s")));
    assert!(out.summary.fct.is_none());
    assert!(serde_json::to_value(&out.summary).unwrap().get("fct").is_none());
}

#[test]
fn an_expanded_entry_runs_its_flows() {
    let out = run_ok(scenario(
        r#"
duration = "2s"
[topology]
kind = "dumbbell"
bottleneck = { rate = "50Mbps", delay = "5ms", buffer = "200pkt" }
[[flows]]
count = 6
mix = { cubic = 0.5, bbr = 0.5 }
start = { spread = ["0s", "300ms"] }
bytes = { cdf = [["10KB", 0.5], ["200KB", 1.0]] }
"#,
    ));
    let fct = out.summary.fct.as_ref().unwrap();
    assert_eq!((fct.all.flows, fct.all.completed), (6, 6));
    assert_eq!(fct.by_cc["cubic"].flows, 3);
    let srcs: Vec<&str> = out.summary.flows.iter().map(|f| f.src.as_str()).collect();
    assert_eq!(srcs, ["s0", "s1", "s2", "s3", "s4", "s5"]);
}
