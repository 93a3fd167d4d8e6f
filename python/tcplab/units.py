"""Numbers from the quantities of a scenario ("10Mbps", "20ms", "6MiB"), parsed by the Rust
core's own grammar (`_core.quantity`, crates/sim/src/units.rs): exact base units, and a bad
quantity is a ScenarioError with the core's one-line message."""

from __future__ import annotations

from ._core import quantity


def rate_bps(text: str) -> float:
    return float(quantity(text, "rate"))


def duration_ns(text: str) -> int:
    return quantity(text, "duration")


def size_bytes(text: str) -> int:
    return quantity(text, "size")
