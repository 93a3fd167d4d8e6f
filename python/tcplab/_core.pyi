"""Type stubs of the Rust extension `tcplab._core` (crates/py): the scenario schema, the
validator and the simulator. JSON crosses the boundary as text."""

from collections.abc import Callable
from typing import Literal, TypedDict

PackedColumn = tuple[Literal["f64", "u32"], bytes]
"""A numeric column: its type and the little-endian packed values; NaN in f64 means missing."""
Columns = dict[str, PackedColumn | list[str]]

class RunOutput(TypedDict):
    scenario: str  # the resolved scenario, JSON
    summary: str  # JSON
    # "flows", "links", "rtt" (only when the scenario sets record.rtt) and the cell's series
    # ("radio" with an mmWave cell, "wifi" with a WiFi BSS); columns as series_schema() lists them
    series: dict[str, Columns]
    warnings: list[str]  # as validate() gives them

class ScenarioError(ValueError):
    """A bad scenario; the one-line message starts with the dotted key path."""

def version() -> str: ...
def schema() -> str:
    """The JSON Schema of scenario files, as JSON text."""

def catalog() -> str:
    """JSON: {"algorithms": [{"name", "summary", "params": [{"name", "default", "unit", "doc"}]}],
    "queues": [{"name", "summary"}], "topologies": [{"name", "summary"}]}."""

def series_schema() -> str:
    """JSON: {"flows": [...], "links": [...], "rtt": [...], "radio": [...], "wifi": [...]}, each
    column {"name", "dtype": "f64" | "u32" | "str", "unit", "meaning"}, in output order."""

def validate(scenario_json: str) -> tuple[str, list[str]]:
    """The resolved scenario (every default filled in) as JSON text, and one line per setting
    that is allowed but unusual ("key.path: what is unusual"). Builds the network once to check
    what only it can tell; `run` makes the same checks itself."""

def run(scenario_json: str, seed: int | None, progress: Callable[[float], None] | None, threads: int = 1) -> RunOutput:
    """`threads`: 1, 2 (or more: two where the network splits), or 0 to let the core choose."""

def run_delay_line(tun: str, routes: list[tuple[str, int, int]], max_queued_bytes: int) -> str:
    """Runs the constant-delay line on TUN device `tun` until a signal handler raises; returns
    its report as JSON. `routes`: (IPv4 network, prefix length, delay ns), first match wins."""

def quantity(text: str, kind: Literal["rate", "duration", "size"]) -> int:
    """`text` ("10Mbps", "20ms", "6MiB") in base units: bit/s, nanoseconds or bytes; a bad
    quantity raises ScenarioError."""
