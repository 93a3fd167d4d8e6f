//! tcplab-sim: scenario schema and validation, world builder, event loop, recorder and
//! summary — everything between a scenario file and a run's outputs (docs/architecture.md).

pub mod budget;
pub mod build;
pub mod cell;
pub mod error;
pub mod flow_group;
pub mod link_spec;
pub mod mmwave;
pub mod mmwave_record;
pub mod recorder;
pub mod regions;
pub mod resolve;
pub mod sampling;
pub mod scenario;
pub mod summary;
pub mod threads;
pub mod tsq;
pub mod units;
pub mod wifi;
pub mod wifi_record;
pub mod world;

pub use error::ScenarioError;
pub use resolve::{resolve, resolve_json, warnings};
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

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Scenario(e)
    }
}

/// Everything a run produces.
pub struct RunOutput {
    pub scenario: Scenario,
    pub summary: Summary,
    pub world: World,
}

/// Progress is reported as simulated time passes each of this many steps of the run...
const PROGRESS_STEPS: u64 = 200;

/// ... and at least every this many events (a fraction of a second), so that a long run
/// reacts to Ctrl-C at once.
const EVENTS_PER_PROGRESS: u64 = 1 << 20;

/// During setup, progress (at 0) is reported after this many links, routing tables and flows.
const SETUP_STEPS_PER_REPORT: u64 = 1024;

/// Checks a scenario completely: `resolve` (every key, every default filled in), then what only
/// the built network can tell — a flow between hosts that are not connected, the memory its
/// recorded series would need. The network is built once, here; `run` does not call this, as
/// building its world makes the same checks.
pub fn validate(value: serde_json::Value) -> Result<Scenario, ScenarioError> {
    let scenario = resolve(value)?;
    let net = build::build(&scenario)?;
    budget::check(&scenario, &net, &sampling::SamplePlan::new(&scenario, &net))?;
    Ok(scenario)
}

/// `validate` of a scenario given as JSON text.
pub fn validate_json(text: &str) -> Result<Scenario, ScenarioError> {
    validate(resolve::parse_json(text)?)
}

/// Runs a resolved scenario on one thread or two, with the same results (`threads`):
/// `threads` 1 is one, 2 or more two whenever the network allows (`threads::possible`), 0 two
/// when they would be faster (`threads::worthwhile`).
/// `progress(fraction)` is called as the run advances (with 0 now and then during a long
/// setup); an `Err` from it aborts the run.
pub fn run(scenario: Scenario, threads: usize, mut progress: impl FnMut(f64) -> Result<(), String>) -> Result<RunOutput, RunError> {
    let mut setup_steps = 0u64;
    let mut tick = || -> Result<(), RunError> {
        setup_steps += 1;
        if setup_steps.is_multiple_of(SETUP_STEPS_PER_REPORT) {
            progress(0.0).map_err(RunError::Aborted)?;
        }
        Ok(())
    };
    let mut world = World::new(scenario.clone(), &mut tick)?;
    let two = match threads {
        0 => threads::worthwhile(&world),
        1 => false,
        _ => threads::possible(&world),
    };
    let mut partner = match two {
        true => {
            let mut partner = World::new(scenario.clone(), &mut tick)?;
            world.restrict_to(0);
            partner.restrict_to(1);
            Some(partner)
        }
        false => None,
    };
    let end = world.end();
    let step = SimDuration::from_nanos((end.as_nanos() / PROGRESS_STEPS).max(1));
    let mut until = (SimTime::ZERO + step).min(end);
    loop {
        let reached = match partner.as_mut() {
            Some(partner) => threads::run_until(&mut world, partner, until, EVENTS_PER_PROGRESS),
            None => world.run_until(until, EVENTS_PER_PROGRESS),
        };
        if let Some(e) = world.rtt_overflow() {
            return Err(RunError::Scenario(e));
        }
        let at = if reached { until } else { world.now() };
        progress(at.as_nanos() as f64 / end.as_nanos() as f64).map_err(RunError::Aborted)?;
        if reached {
            if until >= end {
                break;
            }
            until = (until + step).min(end);
        }
    }
    if let Some(partner) = partner {
        world.absorb(partner);
    }
    let summary = summary::summarize(&world);
    summary::check_invariants(&world, &summary).map_err(RunError::Invariant)?;
    Ok(RunOutput { scenario, summary, world })
}

/// The columns of every series a run can record: {"flows": [...], "links": [...], "rtt": [...],
/// and one entry per kind of cell}, each column {"name", "dtype", "unit", "meaning"}.
pub fn series_schema() -> serde_json::Value {
    use recorder::{FlowSeries, LinkSeries, RttSeries};
    let all =
        [&FlowSeries::SCHEMA, &sampling::FlowGroupSeries::SCHEMA, &LinkSeries::SCHEMA, &RttSeries::SCHEMA].into_iter().chain(CELL_SERIES);
    serde_json::Value::Object(all.map(|s| (s.name.to_string(), s.to_json())).collect())
}

/// The series of every kind of radio cell (one line per kind, `cell::RecordedCell`).
pub const CELL_SERIES: [&recorder::SeriesSchema; 2] = [&mmwave_record::RadioSeries::SCHEMA, &wifi_record::WifiSeries::SCHEMA];

/// The JSON Schema of scenario files.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Scenario)).expect("schema serializes")
}

#[derive(Serialize)]
struct NamedItem {
    name: &'static str,
    summary: &'static str,
}

/// What `tcplab list` shows: algorithms and queue disciplines with parameters, topologies.
pub fn catalog() -> serde_json::Value {
    serde_json::json!({
        "algorithms": tcplab_cc::CcConfig::catalog(),
        "queues": tcplab_net::QueueConfig::catalog(),
        "topologies": scenario::Topology::ALL.iter().map(|(name, summary)| NamedItem { name, summary }).collect::<Vec<_>>(),
    })
}
