//! tcplab-sim: scenario schema and validation, world builder, event loop, recorder and
//! summary — everything between a scenario file and a run's outputs (design.md §1).

pub mod build;
pub mod mmwave;
pub mod recorder;
pub mod resolve;
pub mod scenario;
pub mod summary;
pub mod units;
pub mod wifi;
pub mod world;

pub use resolve::{resolve, resolve_json, ScenarioError};
pub use scenario::Scenario;
pub use summary::Summary;
pub use world::World;

use serde::Serialize;
use tcplab_core::{SimDuration, SimTime};

/// Why a run did not finish.
#[derive(Debug)]
pub enum RunError {
    /// The scenario is invalid.
    Scenario(ScenarioError),
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Aborted(String),
    /// An end-of-run invariant is broken: a simulator bug.
    Invariant(String),
}

/// Everything a run produces.
pub struct RunOutput {
    pub scenario: Scenario,
    pub summary: Summary,
    pub world: World,
}

/// Progress reports per run (the callback is called this many times at most).
const PROGRESS_STEPS: u64 = 200;

/// Runs a resolved scenario. `progress(fraction)` is called as simulated time advances;
/// an `Err` from it aborts the run.
pub fn run(scenario: Scenario, mut progress: impl FnMut(f64) -> Result<(), String>) -> Result<RunOutput, RunError> {
    let mut world = World::new(scenario.clone()).map_err(RunError::Scenario)?;
    let end = world.end();
    let step = SimDuration::from_nanos((end.as_nanos() / PROGRESS_STEPS).max(1));
    let mut until = SimTime::ZERO;
    loop {
        until += step;
        let done = world.run_until(until);
        progress(until.min(end).as_nanos() as f64 / end.as_nanos() as f64).map_err(RunError::Aborted)?;
        if done {
            break;
        }
    }
    let summary = summary::summarize(&world);
    summary::check_invariants(&world, &summary).map_err(RunError::Invariant)?;
    Ok(RunOutput { scenario, summary, world })
}

/// The JSON Schema of scenario files.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema serializes")
}

#[derive(Serialize)]
struct NamedItem {
    name: &'static str,
    summary: &'static str,
}

/// What `tcplab list` shows: algorithms with parameters, queue kinds, topologies.
pub fn catalog() -> serde_json::Value {
    serde_json::json!({
        "algorithms": tcplab_cc::CcConfig::catalog(),
        "queues": scenario::QueueKind::ALL.iter().map(|(_, name, summary)| NamedItem { name, summary }).collect::<Vec<_>>(),
        "topologies": scenario::Topology::ALL.iter().map(|(name, summary)| NamedItem { name, summary }).collect::<Vec<_>>(),
    })
}
