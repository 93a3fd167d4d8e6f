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
    assert_eq!(names, ["flows", "links", "radio", "rtt", "wifi"]);
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
