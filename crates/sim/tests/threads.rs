//! Two threads give the results of one (`tcplab_sim::threads`): the same summary and the same
//! series, value for value, on every kind of network whose regions two threads can share.

use tcplab_sim::recorder::ColumnData;
use tcplab_sim::{resolve, run, RunOutput};

/// A scenario of the repository, `duration` long, with `set` (dotted key, value) applied.
fn repo_scenario(path: &str, duration: &str, set: &[(&str, serde_json::Value)]) -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).expect("scenario file");
    let mut value: serde_json::Value = toml::from_str(&text).expect("valid TOML");
    value["duration"] = duration.into();
    for (key, v) in set {
        let mut at = &mut value;
        for part in key.split('.') {
            at = match part.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[part],
            };
        }
        *at = v.clone();
    }
    value
}

fn run_on(value: &serde_json::Value, threads: usize) -> RunOutput {
    let scenario = resolve(value.clone()).unwrap_or_else(|e| panic!("scenario rejected: {e}"));
    run(scenario, threads, |_| Ok(())).unwrap_or_else(|e| panic!("run failed: {e:?}"))
}

/// A series' values in a form that compares NaN with NaN (its bits).
#[derive(Debug, PartialEq)]
enum Values {
    Bits(Vec<u64>),
    Other(String),
}

fn series(out: &mut RunOutput) -> Vec<(&'static str, Vec<(&'static str, Values)>)> {
    out.world
        .take_series()
        .into_iter()
        .map(|(name, columns)| {
            let columns = columns
                .into_iter()
                .map(|(column, data)| {
                    let values = match data {
                        ColumnData::F64(v) => Values::Bits(v.iter().map(|x| x.to_bits()).collect()),
                        other => Values::Other(format!("{other:?}")),
                    };
                    (column.name, values)
                })
                .collect();
            (name, columns)
        })
        .collect()
}

/// Runs `value` on one thread and on two, and checks that the second did use two threads and
/// gave the same summary and series.
fn same_on_two_threads(value: serde_json::Value) {
    let (mut one, mut two) = (run_on(&value, 1), run_on(&value, 2));
    assert_eq!((one.summary.run.threads, two.summary.run.threads), (1, 2), "the network splits between two threads");
    two.summary.run.threads = 1;
    let json = |out: &RunOutput| serde_json::to_string(&out.summary).expect("summary serializes");
    assert_eq!(json(&one), json(&two));
    assert_eq!(series(&mut one), series(&mut two));
    assert_eq!(one.world.packets_in_network(), two.world.packets_in_network());
}

#[test]
fn a_dumbbell_of_mixed_algorithms_and_an_aqm_runs_the_same_on_two_threads() {
    same_on_two_threads(repo_scenario("benches/scenarios/f-4flows-fq_codel.toml", "4s", &[]));
    same_on_two_threads(repo_scenario("scenarios/mixed-rtt-dumbbell.toml", "6s", &[]));
}

#[test]
fn many_flows_in_groups_with_completion_times_run_the_same_on_two_threads() {
    // 150 flows recorded in groups, 50 of them sized transfers that complete and free their
    // buffers on the way.
    same_on_two_threads(repo_scenario("scenarios/many-flows.toml", "2s", &[]));
}

#[test]
fn a_parking_lot_of_several_cut_hops_runs_the_same_on_two_threads() {
    same_on_two_threads(repo_scenario("scenarios/parking-lot.toml", "4s", &[("topology.hops", 4.into())]));
}

#[test]
fn radio_cells_run_the_same_on_two_threads() {
    same_on_two_threads(repo_scenario("scenarios/mmwave-blockage.toml", "3s", &[]));
    same_on_two_threads(repo_scenario("scenarios/wifi-dumbbell.toml", "3s", &[]));
}

#[test]
fn left_to_choose_a_run_takes_two_threads_where_its_cut_wires_carry_enough() {
    // 2 x 100 Mbit/s x 10 ms is 166 full-size packets a crossing; 2 x 1 Gbit/s, 1666.
    let slow = repo_scenario("benches/scenarios/c-cubic.toml", "1s", &[("topology.bottleneck.rate", "100Mbps".into())]);
    assert_eq!(run_on(&slow, 0).summary.run.threads, 1);
    assert_eq!(run_on(&slow, 2).summary.run.threads, 2, "asked for, two threads run it all the same");
    assert_eq!(run_on(&repo_scenario("benches/scenarios/c-cubic.toml", "1s", &[]), 0).summary.run.threads, 2);
}

#[test]
fn a_network_of_one_region_with_per_ack_rtts_or_too_big_to_copy_runs_on_one_thread() {
    let leaf_spine = run_on(&repo_scenario("scenarios/leaf-spine.toml", "200ms", &[]), 2);
    assert_eq!(leaf_spine.summary.run.threads, 1);
    let per_ack = run_on(&repo_scenario("benches/scenarios/c-cubic.toml", "1s", &[("record.rtt", true.into())]), 2);
    assert_eq!(per_ack.summary.run.threads, 1);
    // A copy of 150 flows at 8 KB each and 602 link directions at 1 KB each is 1.8 MB.
    let many = repo_scenario("scenarios/many-flows.toml", "1s", &[("record.memory_limit", "1.5MB".into())]);
    assert_eq!(run_on(&many, 2).summary.run.threads, 1);
    let many = repo_scenario("scenarios/many-flows.toml", "1s", &[("record.memory_limit", "1.9MB".into())]);
    assert_eq!(run_on(&many, 2).summary.run.threads, 2);
}

#[test]
fn a_run_on_two_threads_reports_progress_between_steps_and_stops_when_asked() {
    // 0.5 % of 10^6 s is one progress step: far more than a test may wait for. Two threads stop
    // at a pause once they have run 2^20 events together, report, and abort when told.
    let value = repo_scenario("benches/scenarios/c-cubic.toml", "1000000s", &[("sample_interval", "1000s".into())]);
    let scenario = resolve(value).expect("valid");
    let mut reports = Vec::new();
    let outcome = run(scenario, 2, |fraction| {
        reports.push(fraction);
        if fraction > 0.0 {
            Err("stop".into())
        } else {
            Ok(())
        }
    });
    assert!(matches!(outcome, Err(tcplab_sim::RunError::Aborted(_))));
    let last = *reports.last().expect("a report");
    assert!(last > 0.0 && last < 1e-4, "{last}");
}
