//! The recorded series as the bindings receive them: every run hands out its series in the order
//! and with the columns `series_schema` declares, a cell's series and summary section under its
//! name.

mod common;
use common::{dumbbell, run_ok, scenario};
use tcplab_sim::series_schema;

/// (series name, its column names) of a run, as `World::take_series` hands them out.
fn taken(text: &str) -> (Vec<(&'static str, Vec<&'static str>)>, Vec<&'static str>) {
    let mut out = run_ok(scenario(text));
    let series = out.world.take_series().into_iter().map(|(name, columns)| (name, columns.iter().map(|(c, _)| c.name).collect())).collect();
    (series, out.summary.cells.keys().copied().collect())
}

/// The column names `series_schema` declares for `series`.
fn declared(series: &str) -> Vec<String> {
    let schema = series_schema();
    schema[series]
        .as_array()
        .unwrap_or_else(|| panic!("no series {series}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_schema_declares_every_series_with_typed_described_columns() {
    let schema = series_schema();
    let names: Vec<&String> = schema.as_object().unwrap().keys().collect();
    assert_eq!(names, ["flow_groups", "flows", "links", "radio", "rtt", "wifi"]);
    for (name, columns) in schema.as_object().unwrap() {
        for c in columns.as_array().unwrap() {
            assert!(["f64", "u32", "str"].contains(&c["dtype"].as_str().unwrap()), "{name}: {c}");
            assert!(!c["meaning"].as_str().unwrap().is_empty() && c["unit"].is_string(), "{name}: {c}");
        }
    }
    assert_eq!(declared("wifi")[..3], ["t_s", "bss", "station"]);
}

#[test]
fn a_run_hands_out_its_series_as_declared() {
    let mut text = dumbbell(&["cubic"], "10Mbps", "10ms", "100pkt", "1s");
    let (series, cells) = taken(&text);
    assert_eq!(series.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["flows", "links"]);
    assert!(cells.is_empty());
    text = text.replacen("[topology]", "[record]\nrtt = true\n[topology]", 1);
    let (series, _) = taken(&text);
    for (name, columns) in &series {
        assert_eq!(*columns, declared(name), "{name}");
    }
    assert_eq!(series.last().map(|(name, _)| *name), Some("rtt"));
    text = text.replacen("[record]\n", "[record]\nflows = \"groups\"\n", 1);
    let (series, _) = taken(&text);
    assert_eq!(series.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["flow_groups", "links", "rtt"]);
    for (name, columns) in &series {
        assert_eq!(*columns, declared(name), "{name}");
    }
}

#[test]
fn a_cell_hands_out_its_series_and_summary_under_its_name() {
    let text = r#"
duration = "0.5s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "30Mbps", delay = "10ms", buffer = "100pkt" }
wifi = { standard = "802.11n", band = "5GHz", mcs = 4 }
[[flows]]
cc = "cubic"
[[flows]]
cc = "bbr"
"#;
    let (series, cells) = taken(text);
    assert_eq!(series.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["flows", "links", "wifi"]);
    assert_eq!(series[2].1, declared("wifi"));
    assert_eq!(cells, ["wifi"]);
}

#[test]
fn flow_groups_aggregate_what_each_flow_records() {
    // Three CUBIC flows (one sized, finishing early, one starting at 0.5 s) and one BBR flow,
    // recorded once per flow and once in groups: the same run, so each group row is the sums
    // and ranks of its flows' rows at that sample.
    let base = dumbbell(&["cubic", "bbr", "cubic", "cubic"], "20Mbps", "10ms", "100pkt", "2s")
        .replacen("[[flows]]\ncc = \"cubic\"\n", "[[flows]]\ncc = \"cubic\"\nbytes = \"200KB\"\n", 1)
        .replace(
            "[[flows]]\ncc = \"cubic\"\n[[flows]]\ncc = \"cubic\"\n",
            "[[flows]]\ncc = \"cubic\"\n[[flows]]\ncc = \"cubic\"\nstart = \"0.5s\"\n",
        );
    let each = run_ok(scenario(&base.replacen("[topology]", "[record]\nflows = \"each\"\n[topology]", 1)));
    let grouped = run_ok(scenario(&base.replacen("[topology]", "[record]\nflows = \"groups\"\n[topology]", 1)));
    let (fs, gs) = (&each.world.flow_series, &grouped.world.flow_group_series);
    assert!(each.summary.flows[0].completion_s.is_some_and(|s| s < 1.0), "the sized flow finishes early");
    assert_eq!(grouped.world.flow_series.t_s.len(), 0);
    let samples = fs.t_s.len() / 4;
    assert_eq!((gs.t_s.len(), samples), (2 * samples, 200));
    for k in 0..samples {
        let rows = |flows: &[usize]| flows.iter().map(|f| 4 * k + f).collect::<Vec<_>>();
        for (g, flows, cc) in [(2 * k, rows(&[0, 2, 3]), "cubic"), (2 * k + 1, rows(&[1]), "bbr")] {
            assert_eq!((gs.cc[g], gs.stack[g], gs.t_s[g]), (cc, "linux", fs.t_s[flows[0]]));
            let sum = |col: &[f64]| flows.iter().map(|&r| col[r]).sum::<f64>();
            assert!((gs.goodput_mbps[g] - sum(&fs.goodput_mbps)).abs() < 1e-9, "sample {k} {cc}");
            assert_eq!((gs.inflight_pkts[g], gs.retransmits[g]), (sum(&fs.inflight_pkts), sum(&fs.retransmits)));
            let t = fs.t_s[flows[0]];
            let active: Vec<usize> = flows
                .iter()
                .copied()
                .filter(|&r| {
                    let f = &each.summary.flows[r % 4];
                    let start = if r % 4 == 3 { 0.5 } else { 0.0 };
                    start <= t + 1e-9 && f.completion_s.is_none_or(|c| t < start + c)
                })
                .collect();
            assert_eq!(gs.flows_active[g] as usize, active.len(), "sample {k} {cc} at {t}");
            let mut cwnds: Vec<f64> = active.iter().map(|&r| fs.cwnd_pkts[r]).collect();
            cwnds.sort_by(f64::total_cmp);
            let median = cwnds.get(cwnds.len().div_ceil(2).max(1) - 1).copied().unwrap_or(f64::NAN);
            assert!(gs.cwnd_p50_pkts[g] == median || (median.is_nan() && gs.cwnd_p50_pkts[g].is_nan()), "sample {k} {cc}");
        }
    }
    // The summary does not depend on how the series were recorded.
    assert_eq!(each.summary.flows, grouped.summary.flows);
    assert_eq!(each.summary.links, grouped.summary.links);
}
