"""Memory limits and large topologies (docs/scenario-format.md, "Limits"): a scenario whose
recorded series or network would not fit is refused in one line before anything is
allocated, and a large dumbbell is set up in memory linear in its size, reporting progress
(so that Ctrl-C can stop it) while it does."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tcplab

CHILD_ADDRESS_SPACE = 4 << 30
"""Address space of the child processes: what a regression would allocate fails fast."""


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))


def run_child(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        preexec_fn=_limit_address_space,
    )


@pytest.mark.parametrize(
    ("settings", "needed"),
    [
        (["duration=10000000s"], "recording 10000000s at 10ms for 1 flow and 6 links would need ~693 GiB"),
        (["sample_interval=1us"], "recording 21s at 1us for 1 flow and 6 links would need ~15 GiB"),
        (["sample_interval=1ns", "duration=1s"], "recording 1s at 1ns for 1 flow and 6 links would need ~693 GiB"),
    ],
)
def test_a_run_too_long_to_record_is_refused_in_one_line(tmp_path: Path, settings: list[str], needed: str) -> None:
    sets = [arg for setting in settings for arg in ("--set", setting)]
    process = run_child(["-m", "tcplab", "run", "rtt-lens", *sets, "-o", str(tmp_path / "out")], tmp_path)
    assert process.returncode == 2, process.stderr[-2000:]
    assert process.stderr.startswith(f"error: sample_interval: {needed} of samples (record.memory_limit 512 MiB); ")
    assert process.stderr.endswith("; raise sample_interval, shorten duration or raise record.memory_limit\n")
    assert process.stderr.count("\n") == 1 and process.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_a_dumbbell_too_large_to_build_is_refused_in_one_line(tmp_path: Path) -> None:
    process = run_child(["-m", "tcplab", "run", "rtt-lens", "--set", "topology.pairs=100000000"], tmp_path)
    assert process.returncode == 2, process.stderr[-2000:]
    assert process.stderr == (
        "error: topology.pairs: 100000000 pairs would need ~381 GiB for the network alone (record.memory_limit 512 MiB);"
        " allowed: at most 131072 pairs\n"
    )


def test_validation_applies_the_limits() -> None:
    with pytest.raises(tcplab.ScenarioError, match=r"^sample_interval: recording 10000000s at 10ms"):
        tcplab.resolve("rtt-lens", duration="10000000s")
    # Per-ACK RTT samples: one per segment the 1 Gbps bottleneck can carry in a day.
    with pytest.raises(
        tcplab.ScenarioError, match=r"^record\.rtt: the per-ACK RTT samples of 1 flow over 86400s could need ~134 GiB"
    ):
        tcplab.resolve("rtt-lens", duration="86400s", sample_interval="1s", overrides={"topology.bottleneck.rate": "1Gbps"})
    tcplab.resolve(
        "rtt-lens", duration="86400s", sample_interval="1s", overrides={"record.rtt": False, "topology.bottleneck.rate": "1Gbps"}
    )


LARGE_SETUP = """
import tcplab
calls = []
tcplab.run("rtt-lens", duration="100ms", sample_interval="100ms", overrides={"topology.pairs": 4000}, progress=calls.append)
peak_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(peak_kib, sum(1 for fraction in calls if fraction == 0.0), calls[-1])
"""


def test_a_4000_pair_dumbbell_is_set_up_in_bounded_memory_with_progress(tmp_path: Path) -> None:
    process = run_child(["-c", LARGE_SETUP], tmp_path)
    assert process.returncode == 0, process.stderr[-2000:]
    peak_kib, setup_reports, last = process.stdout.split()
    # Routing tables for every pair of 8002 nodes took ~500 MB; two tables take 64 kB.
    assert int(peak_kib) < 300 << 10, f"peak RSS {int(peak_kib) >> 10} MiB"
    # 16002 link directions and the routes: reported as progress 0 every 1024 setup steps.
    assert int(setup_reports) >= 7 and float(last) == 1.0


def test_ctrl_c_during_setup_stops_the_run() -> None:
    calls: list[float] = []

    def interrupt(fraction_done: float) -> None:
        calls.append(fraction_done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tcplab.run("rtt-lens", duration="100ms", sample_interval="100ms", overrides={"topology.pairs": 4000}, progress=interrupt)
    assert calls == [0.0]


LONG_RUN = """
import sys, tcplab
print("running", flush=True)
try:
    tcplab.run("deep-buffer", duration="1000000000s", sample_interval="1000000s")
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_stops_a_run_whose_progress_steps_are_long(tmp_path: Path) -> None:
    """0.5 % of 10^9 simulated seconds takes hours: Ctrl-C must not wait for the next step."""
    process = subprocess.Popen(
        [sys.executable, "-c", LONG_RUN], stdout=subprocess.PIPE, text=True, cwd=tmp_path, preexec_fn=_limit_address_space
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "running\n"
        time.sleep(1)  # into the run (a signal before it interrupts the Python code just as well)
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert output == "interrupted\n"
