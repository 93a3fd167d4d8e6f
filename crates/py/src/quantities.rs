//! `_core.quantity`: a quantity as scenarios write it ("10Mbps", "20ms", "6MiB") in base
//! units, parsed by the simulator's own grammar (`tcplab_sim::units`), so Python never
//! keeps a second copy of the units or their rounding.

use crate::ScenarioError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::str::FromStr;
use tcplab_sim::units::{DurationValue, RateValue, SizeValue};

const KINDS: &str = "rate, duration, size";

/// `text` in base units, exactly: a "rate" in bit/s, a "duration" in nanoseconds, a "size"
/// in bytes. Bad text raises ScenarioError with the simulator's one-line message.
#[pyfunction]
pub fn quantity(text: &str, kind: &str) -> PyResult<u64> {
    let parsed = match kind {
        "rate" => RateValue::from_str(text).map(|v| v.0.bps()),
        "duration" => DurationValue::from_str(text).map(|v| v.0.as_nanos()),
        "size" => SizeValue::from_str(text).map(|v| v.0),
        _ => return Err(PyValueError::new_err(format!("quantity kind {kind:?} is unknown; allowed: {KINDS}"))),
    };
    parsed.map_err(ScenarioError::new_err)
}
