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
use tcplab_emu::delay_line::{DelayLine, DelayLineConfig, Route};
use tcplab_sim::build::Cell;
use tcplab_sim::{resolve_json, RunError, World};

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
        let s = resolve_json(scenario_json).map_err(scenario_err)?;
        Ok((serde_json::to_string(&s).expect("scenario serializes"), tcplab_sim::warnings(&s)))
    })
}

/// A column as packed little-endian bytes. Given a vector, it is freed once copied: the
/// large series are converted a column at a time, never held twice in full.
fn f64_column(py: Python<'_>, values: impl AsRef<[f64]>) -> PyResult<(&'static str, Bound<'_, PyBytes>)> {
    let values = values.as_ref();
    let bytes = PyBytes::new_with(py, values.len() * 8, |out| {
        out.chunks_exact_mut(8).zip(values).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
        Ok(())
    })?;
    Ok(("f64", bytes))
}

fn u32_column(py: Python<'_>, values: impl AsRef<[u32]>) -> PyResult<(&'static str, Bound<'_, PyBytes>)> {
    let values = values.as_ref();
    let bytes = PyBytes::new_with(py, values.len() * 4, |out| {
        out.chunks_exact_mut(4).zip(values).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
        Ok(())
    })?;
    Ok(("u32", bytes))
}

/// A column of names as a list whose rows share one string object per distinct name.
fn name_column<'py>(py: Python<'py>, names: impl IntoIterator<Item = &'py str>) -> PyResult<Bound<'py, PyList>> {
    let mut shared: HashMap<&str, Bound<'py, PyString>> = HashMap::new();
    PyList::new(py, names.into_iter().map(|n| shared.entry(n).or_insert_with(|| PyString::new(py, n)).clone()))
}

/// The flows, links, (when recorded) rtt, (with an mmWave cell) radio and (with a WiFi BSS)
/// wifi column dicts of a run.
struct Frames<'py> {
    flows: Bound<'py, PyDict>,
    links: Bound<'py, PyDict>,
    rtt: Option<Bound<'py, PyDict>>,
    radio: Option<Bound<'py, PyDict>>,
    wifi: Option<Bound<'py, PyDict>>,
}

/// Moves a run's series into Python column dicts.
fn columns<'py>(py: Python<'py>, w: &mut World, record_rtt: bool) -> PyResult<Frames<'py>> {
    use std::mem::take;
    let (fs, ls, rs, radio_series, wifi_series) =
        (take(&mut w.flow_series), take(&mut w.link_series), take(&mut w.rtt_series), take(&mut w.radio_series), take(&mut w.wifi_series));
    let w = &*w;
    let flows = PyDict::new(py);
    flows.set_item("t_s", f64_column(py, fs.t_s)?)?;
    flows.set_item("flow", u32_column(py, fs.flow)?)?;
    for (name, col) in [
        ("cwnd_pkts", fs.cwnd_pkts),
        ("ssthresh_pkts", fs.ssthresh_pkts),
        ("inflight_pkts", fs.inflight_pkts),
        ("srtt_ms", fs.srtt_ms),
        ("min_rtt_ms", fs.min_rtt_ms),
        ("pacing_rate_mbps", fs.pacing_rate_mbps),
        ("delivery_rate_mbps", fs.delivery_rate_mbps),
        ("goodput_mbps", fs.goodput_mbps),
        ("retransmits", fs.retransmits),
    ] {
        flows.set_item(name, f64_column(py, col)?)?;
    }
    flows.set_item("cc_state", name_column(py, fs.cc_state)?)?;

    let links = PyDict::new(py);
    links.set_item("t_s", f64_column(py, ls.t_s)?)?;
    links.set_item("link", name_column(py, ls.link.iter().map(|&i| w.net.links[i as usize].name.as_str()))?)?;
    links.set_item("backlog_pkts", f64_column(py, ls.backlog_pkts)?)?;
    links.set_item("backlog_bytes", f64_column(py, ls.backlog_bytes)?)?;
    links.set_item("drops", f64_column(py, ls.drops)?)?;
    links.set_item("ce_marks", f64_column(py, ls.ce_marks)?)?;

    let rtt = if record_rtt {
        let d = PyDict::new(py);
        d.set_item("t_s", f64_column(py, rs.t_s)?)?;
        d.set_item("flow", u32_column(py, rs.flow)?)?;
        d.set_item("rtt_ms", f64_column(py, rs.rtt_ms)?)?;
        Some(d)
    } else {
        None
    };
    let (mut radio, mut wifi) = (None, None);
    if let Some(access) = &w.net.radio {
        let node_name = |node: u32| w.net.nodes[node as usize].name.as_str();
        let d = PyDict::new(py);
        match access.cell {
            Cell::Mmwave(_) => {
                let rs = radio_series;
                d.set_item("t_s", f64_column(py, &rs.t_s)?)?;
                d.set_item("ue", name_column(py, rs.ue.iter().map(|&i| node_name(access.ue_nodes[i as usize])))?)?;
                for (name, col) in rs.f64_columns() {
                    d.set_item(name, f64_column(py, col)?)?;
                }
                radio = Some(d);
            }
            Cell::Wifi(_) => {
                let ws = wifi_series;
                d.set_item("t_s", f64_column(py, &ws.t_s)?)?;
                d.set_item("bss", name_column(py, ws.device.iter().map(|_| node_name(access.base)))?)?;
                let device = |i: u32| if i == 0 { access.base } else { access.ue_nodes[i as usize - 1] };
                d.set_item("station", name_column(py, ws.device.iter().map(|&i| node_name(device(i))))?)?;
                for (name, col) in ws.f64_columns() {
                    d.set_item(name, f64_column(py, col)?)?;
                }
                wifi = Some(d);
            }
        }
    }
    Ok(Frames { flows, links, rtt, radio, wifi })
}
/// Runs a scenario (JSON text). `seed` overrides the scenario's seed; `progress(fraction)`
/// is called from time to time, during a long setup too (an exception it raises — Ctrl-C's
/// KeyboardInterrupt among them — aborts the run).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None, progress=None))]
fn run<'py>(py: Python<'py>, scenario_json: &str, seed: Option<u64>, progress: Option<Py<PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    guarded("run", || {
        let mut scenario = resolve_json(scenario_json).map_err(scenario_err)?;
        if let Some(seed) = seed {
            scenario.seed = seed;
        }
        let name = scenario.name.clone();
        let started = Instant::now();
        let mut callback_error: Option<PyErr> = None;
        let result = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                tcplab_sim::run(scenario, |fraction| {
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
        let frames = columns(py, &mut out.world, out.scenario.record.rtt)?;
        dict.set_item("flows", frames.flows)?;
        dict.set_item("links", frames.links)?;
        dict.set_item("rtt", frames.rtt)?;
        dict.set_item("radio", frames.radio)?;
        dict.set_item("wifi", frames.wifi)?;
        Ok(dict)
    })
}

/// How often the delay line's caller looks for pending signals (Ctrl-C, SIGTERM).
const DELAY_LINE_SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs the constant-delay line on TUN device `tun` (created in this process's network
/// namespace) until a signal handler raises, then returns its report as JSON. `routes` are
/// (IPv4 network, prefix length, delay in ns), first match wins.
#[pyfunction]
fn run_delay_line(py: Python<'_>, tun: &str, routes: Vec<(String, u8, u64)>, max_queued_bytes: usize) -> PyResult<String> {
    let routes = routes
        .into_iter()
        .map(|(network, prefix_len, delay_ns)| {
            let network = network.parse().map_err(|_| PyValueError::new_err(format!("{network:?} is not an IPv4 network address")))?;
            Ok(Route { network, prefix_len, delay: std::time::Duration::from_nanos(delay_ns) })
        })
        .collect::<PyResult<Vec<Route>>>()?;
    let config = DelayLineConfig { tun: tun.to_string(), routes, max_queued_bytes };
    let line = DelayLine::start(config).map_err(|e| PyRuntimeError::new_err(format!("delay line on TUN {tun:?}: {e}")))?;
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
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_delay_line, m)?)?;
    Ok(())
}
