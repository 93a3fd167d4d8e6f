"""Numbers from the quantities of a resolved scenario ("10Mbps", "20ms", "6MiB"), as the Rust
core writes them (crates/sim/src/units.rs): a number followed by one unit."""

from __future__ import annotations

import re

from ._core import ScenarioError

_RATE = {"bps": 1.0, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}
_DURATION_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9}
_SIZE = {"B": 1, "KB": 1e3, "KiB": 2**10, "MB": 1e6, "MiB": 2**20, "GB": 1e9, "GiB": 2**30}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]+)\s*$")


def _parse(text: str, units: dict[str, float], what: str) -> float:
    match = _QUANTITY.match(str(text))
    if not match or match.group(2) not in units:
        raise ScenarioError(f"{text!r} is not a {what}; units: {', '.join(units)}")
    return float(match.group(1)) * units[match.group(2)]


def rate_bps(text: str) -> float:
    return _parse(text, _RATE, "rate")


def duration_ns(text: str) -> int:
    return round(_parse(text, _DURATION_NS, "duration"))


def size_bytes(text: str) -> int:
    return round(_parse(text, _SIZE, "size"))
