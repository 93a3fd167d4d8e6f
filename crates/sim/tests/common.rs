//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

use std::collections::HashMap;
use tcplab_sim::recorder::ColumnData;
use tcplab_sim::{resolve, run, RunOutput, Scenario};

/// Parses a TOML scenario and resolves it, panicking with the error on bad input.
pub fn scenario(toml_text: &str) -> Scenario {
    let value: serde_json::Value = toml::from_str(toml_text).expect("test scenario is valid TOML");
    resolve(value).unwrap_or_else(|e| panic!("test scenario rejected: {e}"))
}

pub fn run_ok(s: Scenario) -> RunOutput {
    match run(s, 1, |_| Ok(())) {
        Ok(out) => out,
        Err(e) => panic!("run failed: {e:?}"),
    }
}

/// A one-bottleneck dumbbell with one flow per entry of `ccs`.
pub fn dumbbell(ccs: &[&str], rate: &str, one_way_delay: &str, buffer: &str, duration: &str) -> String {
    let flows: String = ccs.iter().map(|cc| format!("[[flows]]\ncc = \"{cc}\"\n")).collect();
    format!(
        "duration = \"{duration}\"\n[topology]\nkind = \"dumbbell\"\nbottleneck = {{ rate = \"{rate}\", delay = \"{one_way_delay}\", buffer = \"{buffer}\" }}\naccess = {{ rate = \"1Gbps\", delay = \"0ms\", buffer = \"10000pkt\" }}\n{flows}"
    )
}

/// Mean backlog (packets) of one link over the run's samples.
pub fn mean_backlog(out: &RunOutput, link: &str) -> f64 {
    out.summary.links.iter().find(|l| l.id == link).expect("link exists").backlog_mean_pkts
}

/// The f64 columns of the run's cell series, by name (taking them out of the world).
pub fn cell_series(out: &mut RunOutput) -> HashMap<&'static str, Vec<f64>> {
    let cell = &mut out.world.net.radio.as_mut().expect("a cell").cell;
    cell.take_columns()
        .into_iter()
        .filter_map(|(column, data)| match data {
            ColumnData::F64(v) => Some((column.name, v)),
            _ => None,
        })
        .collect()
}
