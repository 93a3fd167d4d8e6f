//! tcplab._core: the Python face of the simulator. JSON text in (scenarios), JSON text and
//! packed little-endian column buffers out (summary and time series), so the Python side
//! builds polars frames without copying row by row. The GIL is released while the
//! simulation runs; a Rust panic in any entry point becomes a RuntimeError (naming the
//! scenario when there is one), never an abort of the interpreter.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;
use tcplab_emu::delay_line::{DelayLine, DelayLineConfig, Device, Route};
use tcplab_sim::recorder::ColumnData;
use tcplab_sim::{resolve_json, RunError, World};

mod quantities;

create_exception!(_core, ScenarioError, PyValueError, "A scenario that tcplab cannot run; the message names the key path.");

fn scenario_err(e: tcplab_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Runs `f`, turning a panic (a simulator bug) into a RuntimeError: nothing a scenario does
/// may take the interpreter down.
fn guarded<T>(what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        Err(PyRuntimeError::new_err(format!("{what}: internal simulator error (a bug; please report it): {}", panic_message(&*panic))))
    })
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pyfunction]
fn schema() -> PyResult<String> {
    guarded("schema", || Ok(serde_json::to_string_pretty(&tcplab_sim::schema()).expect("schema serializes")))
}

#[pyfunction]
fn catalog() -> PyResult<String> {
    guarded("catalog", || Ok(tcplab_sim::catalog().to_string()))
}

/// Checks a scenario (JSON text) and returns it resolved, every default filled in, with
/// one line per setting that is allowed but unusual (`tcplab_sim::warnings`).
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<(String, Vec<String>)> {
    guarded("validate", || {
        let s = tcplab_sim::validate_json(scenario_json).map_err(scenario_err)?;
        Ok((serde_json::to_string(&s).expect("scenario serializes"), tcplab_sim::warnings(&s)))
    })
}

/// The columns of every series a run can record, as JSON text (`tcplab_sim::series_schema`).
#[pyfunction]
fn series_schema() -> PyResult<String> {
    guarded("series_schema", || Ok(tcplab_sim::series_schema().to_string()))
}

/// A column as packed little-endian bytes. Given a vector, it is freed once copied: the
/// large series are converted a column at a time, never held twice in full.
fn packed_column<'py, const N: usize, T: Copy>(
    py: Python<'py>,
    dtype: &'static str,
    values: Vec<T>,
    to_le_bytes: fn(T) -> [u8; N],
) -> PyResult<(&'static str, Bound<'py, PyBytes>)> {
    let bytes = PyBytes::new_with(py, values.len() * N, |out| {
        out.chunks_exact_mut(N).zip(values).for_each(|(o, v)| o.copy_from_slice(&to_le_bytes(v)));
        Ok(())
    })?;
    Ok((dtype, bytes))
}

/// A column of names as a list whose rows share one string object per distinct name.
fn name_column<'py, 'n>(py: Python<'py>, names: impl IntoIterator<Item = &'n str>) -> PyResult<Bound<'py, PyList>> {
    let mut shared: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    PyList::new(py, names.into_iter().map(|n| shared.entry(n).or_insert_with(|| PyString::new(py, n)).clone()))
}

/// Moves a run's series into Python column dicts, one per series name, built from the columns'
/// kinds: numbers as packed buffers, labels, node and link indices as names.
fn series_frames<'py>(py: Python<'py>, w: &mut World) -> PyResult<Bound<'py, PyDict>> {
    let series = w.take_series();
    let (nodes, links) = (&w.net.nodes, &w.net.links);
    let frames = PyDict::new(py);
    for (name, columns) in series {
        let frame = PyDict::new(py);
        for (column, data) in columns {
            match data {
                ColumnData::F64(v) => frame.set_item(column.name, packed_column(py, "f64", v, f64::to_le_bytes)?)?,
                ColumnData::U32(v) => frame.set_item(column.name, packed_column(py, "u32", v, u32::to_le_bytes)?)?,
                ColumnData::Text(v) => frame.set_item(column.name, name_column(py, v)?)?,
                ColumnData::Node(v) => frame.set_item(column.name, name_column(py, v.iter().map(|&i| nodes[i as usize].name.as_str()))?)?,
                ColumnData::Link(v) => frame.set_item(column.name, name_column(py, v.iter().map(|&i| links[i as usize].name.as_str()))?)?,
            }
        }
        frames.set_item(name, frame)?;
    }
    Ok(frames)
}

/// Runs a scenario (JSON text) on `threads` threads, 0 to choose (`tcplab_sim::run`). `seed`
/// overrides the scenario's seed; `progress(fraction)` is called from time to time, during a
/// long setup too (an exception it raises — Ctrl-C's KeyboardInterrupt among them — aborts the
/// run).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, progress=None, threads=1))]
fn run<'py>(
    py: Python<'py>,
    scenario_json: &str,
    seed: Option<u64>,
    progress: Option<Py<PyAny>>,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    guarded("run", || {
        // Building the world makes the checks that need the network (`tcplab_sim::validate`).
        let mut scenario = resolve_json(scenario_json).map_err(scenario_err)?;
        if let Some(seed) = seed {
            scenario.seed = seed;
        }
        let warnings = tcplab_sim::warnings(&scenario);
        let name = scenario.name.clone();
        let started = Instant::now();
        let mut callback_error: Option<PyErr> = None;
        let result = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                tcplab_sim::run(scenario, threads, |fraction| {
                    Python::attach(|py| {
                        // Ctrl-C arrives as a pending signal: let Python raise it here.
                        let r = py.check_signals().and_then(|_| match &progress {
                            Some(cb) => cb.call1(py, (fraction,)).map(|_| ()),
                            None => Ok(()),
                        });
                        r.map_err(|e| {
                            let msg = e.to_string();
                            callback_error = Some(e);
                            msg
                        })
                    })
                })
            }))
        });
        let mut out = match result {
            Err(panic) => {
                return Err(PyRuntimeError::new_err(format!(
                    "scenario {name:?}: internal simulator error (a bug; please report it): {}",
                    panic_message(&*panic)
                )))
            }
            Ok(Err(RunError::Scenario(e))) => return Err(scenario_err(e)),
            Ok(Err(RunError::Aborted(msg))) => return Err(callback_error.unwrap_or_else(|| PyRuntimeError::new_err(msg))),
            Ok(Err(RunError::Invariant(msg))) => {
                return Err(PyRuntimeError::new_err(format!("scenario {name:?}: end-of-run invariant broken (a simulator bug): {msg}")))
            }
            Ok(Ok(out)) => out,
        };
        let mut summary = out.summary.clone();
        summary.run.wall_seconds = started.elapsed().as_secs_f64();
        let dict = PyDict::new(py);
        dict.set_item("scenario", serde_json::to_string(&out.scenario).expect("scenario serializes"))?;
        dict.set_item("summary", serde_json::to_string(&summary).expect("summary serializes"))?;
        dict.set_item("series", series_frames(py, &mut out.world)?)?;
        dict.set_item("warnings", warnings)?;
        Ok(dict)
    })
}

/// How often the delay line's caller looks for pending signals (Ctrl-C, SIGTERM).
const DELAY_LINE_SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs the constant-delay line on TUN devices `tuns` (name, transmitter rate in bit/s or 0;
/// created in this process's network namespace) until a signal handler raises, then returns its
/// report as JSON. `routes` are (IPv4 network, prefix length, delay in ns), first match wins.
#[pyfunction]
fn run_delay_line(py: Python<'_>, tuns: Vec<(String, u64)>, routes: Vec<(String, u8, u64)>, max_queued_bytes: usize) -> PyResult<String> {
    let routes = routes
        .into_iter()
        .map(|(network, prefix_len, delay_ns)| {
            let network = network.parse().map_err(|_| PyValueError::new_err(format!("{network:?} is not an IPv4 network address")))?;
            Ok(Route { network, prefix_len, delay: std::time::Duration::from_nanos(delay_ns) })
        })
        .collect::<PyResult<Vec<Route>>>()?;
    let names: Vec<String> = tuns.iter().map(|(tun, _)| tun.clone()).collect();
    let devices = tuns.into_iter().map(|(tun, rate_bps)| Device { tun, rate_bps }).collect();
    let config = DelayLineConfig { devices, routes, max_queued_bytes };
    let line = DelayLine::start(config).map_err(|e| PyRuntimeError::new_err(format!("delay line on TUN {names:?}: {e}")))?;
    while py.check_signals().is_ok() {
        py.detach(|| std::thread::sleep(DELAY_LINE_SIGNAL_CHECK));
    }
    Ok(serde_json::to_string(&line.stop()).expect("report serializes"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(series_schema, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_delay_line, m)?)?;
    m.add_function(wrap_pyfunction!(quantities::quantity, m)?)?;
    Ok(())
}
