"""Shared fixtures: small scenarios that simulate a couple of seconds (well under a second of
wall time each), results of them computed once per session, and a way to call the `tcplab`
command line in-process and see its exit code, stdout and stderr."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

import tcplab
from tcplab import cli

REPOSITORY = Path(__file__).resolve().parents[1]

TINY_SCENARIO = """
name = "tiny"
duration = "2s"
sample_interval = "50ms"

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = "50pkt" }
access = { rate = "100Mbps", delay = "1ms", buffer = "100pkt" }

[[flows]]
cc = "cubic"
"""
"""One CUBIC flow over a 10 Mbps, 22 ms RTT dumbbell for 2 simulated seconds."""

TWO_FLOW_SCENARIO = """
name = "two-flows"
duration = "2s"
sample_interval = "20ms"

[record]
rtt = true

[topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = "30pkt" }

[[flows]]
cc = "cubic"

[[flows]]
cc = "bbr"
start = "0.2s"
"""
"""CUBIC and BBR sharing a shallow-buffered 10 Mbps bottleneck, with per-ACK RTT samples."""

MMWAVE_SCENARIO = """
name = "cell"
duration = "1s"
sample_interval = "10ms"

[tcp]
mss = 1400

[topology]
kind = "mmwave"
remote = { rate = "10Gbps", delay = "5ms", buffer = "2000pkt" }
rlc = { buffer = "2MB" }

[[topology.buildings]]
x = [40.0, 45.0]
y = [-4.0, 4.0]
z = [0.0, 30.0]

[[topology.ues]]
waypoints = [{ t = "0s", position = [50.0, 10.0, 1.5] }, { t = "1s", position = [50.0, -10.0, 1.5] }]

[[flows]]
cc = "cubic"
"""
"""One CUBIC downlink to a UE walking behind a building: no line of sight for 0.25 <= t < 0.75 s."""

WIFI_SCENARIO = """
name = "bss"
duration = "1s"
sample_interval = "10ms"

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "30Mbps", delay = "5ms", buffer = "100pkt" }
wifi = { standard = "802.11n", band = "5GHz", mcs = 4 }

[[flows]]
cc = "cubic"

[[flows]]
cc = "bbr"
"""
"""Two stations of an 802.11n BSS (MCS 4 at -80 dBm) upload through a 30 Mbps bottleneck."""


SIZED_FLOWS_SCENARIO = {
    "name": "sized",
    "duration": "3s",
    "topology": {"kind": "dumbbell", "bottleneck": {"rate": "20Mbps", "delay": "10ms", "buffer": "100pkt"}},
    "flows": [
        {
            "count": 6,
            "mix": {"cubic": 0.5, "bbr": 0.5},
            "bytes": {"uniform": ["20KB", "400KB"]},
            "start": {"spread": ["0s", "1s"]},
        },
        {"cc": "cubic", "bytes": "1GB"},
        {"cc": "bbr"},
    ],
}
"""Six transfers of 20 to 400 KB from one flow group, one 1 GB transfer that cannot finish in 3 s
at 20 Mbps, and one unbounded flow."""


@pytest.fixture
def tiny_scenario(tmp_path: Path) -> Path:
    """TINY_SCENARIO as a file."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SCENARIO, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tiny_result() -> tcplab.Result:
    return tcplab.run(TINY_SCENARIO)


@pytest.fixture(scope="session")
def two_flow_result() -> tcplab.Result:
    return tcplab.run(TWO_FLOW_SCENARIO)


@pytest.fixture(scope="session")
def mmwave_result() -> tcplab.Result:
    return tcplab.run(MMWAVE_SCENARIO)


@pytest.fixture(scope="session")
def wifi_result() -> tcplab.Result:
    return tcplab.run(WIFI_SCENARIO)


@dataclass(frozen=True)
class CliOutcome:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliOutcome]:
    """Calls `tcplab ARGS...` in this process and returns what it did."""

    def invoke(*args: str | Path) -> CliOutcome:
        with pytest.raises(SystemExit) as exit_info:
            cli.main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return CliOutcome(exit_info.value.code or 0, captured.out, captured.err)

    return invoke


@pytest.fixture(scope="session")
def sized_flows_result() -> tcplab.Result:
    return tcplab.run(SIZED_FLOWS_SCENARIO)
