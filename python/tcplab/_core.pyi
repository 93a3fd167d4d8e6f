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
    flows: Columns
    links: Columns
    rtt: Columns | None  # only when the scenario sets record.rtt
    radio: Columns | None  # only with an mmWave cell (topology.kind = "mmwave")
    wifi: Columns | None  # only with a WiFi BSS (topology.wifi)

class ScenarioError(ValueError):
    """A bad scenario; the one-line message starts with the dotted key path."""

def version() -> str: ...
def schema() -> str:
    """The JSON Schema of scenario files, as JSON text."""

def catalog() -> str:
    """JSON: {"algorithms": [{"name", "summary", "params": [{"name", "default", "unit", "doc"}]}],
    "queues": [{"name", "summary"}], "topologies": [{"name", "summary"}]}."""

def validate(scenario_json: str) -> tuple[str, list[str]]:
    """The resolved scenario (every default filled in) as JSON text, and one line per setting
    that is allowed but unusual ("key.path: what is unusual")."""

def run(scenario_json: str, seed: int | None, progress: Callable[[float], None] | None) -> RunOutput: ...
def run_delay_line(tun: str, routes: list[tuple[str, int, int]], max_queued_bytes: int) -> str:
    """Runs the constant-delay line on TUN device `tun` until a signal handler raises; returns
    its report as JSON. `routes`: (IPv4 network, prefix length, delay ns), first match wins."""
