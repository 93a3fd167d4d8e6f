"""tcplab.emu: the plan of commands (no root needed), refusals of what cannot be emulated,
and, as root with iproute2, real runs on the kernel: the issue-6 acceptance run (10 Mbps,
40 ms RTT, 10-BDP buffer, CUBIC and BBR for 15 s), and cleanup after success, an error,
Ctrl-C and SIGTERM (no namespace or process left behind)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import tcplab
from tcplab import ScenarioError
from tcplab.emu import EmulationError, emulate, plan_for
from tcplab.emu import plan as emu_plan
from tcplab.emu import run as emu_run

from .conftest import REPOSITORY

ACCEPTANCE = {"duration": "15s"}  # rtt-lens: 10 Mbps, 40 ms base RTT, 330 packets = 10 BDP

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or not Path("/dev/net/tun").exists(),
    reason="the emulation needs root, iproute2 and /dev/net/tun",
)


def namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines()}


def emulation_processes() -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "tcplab.emu." in line]


# --- the plan ------------------------------------------------------------------------------


def test_the_plan_builds_three_namespaces_a_shaped_bottleneck_and_the_delay_routes() -> None:
    plan = plan_for(tcplab.resolve("rtt-lens"), prefix="tlabcdef")
    assert plan.namespaces == {"senders": "tlabcdefs", "router": "tlabcdefr", "receivers": "tlabcdefd"}
    text = plan.commands_text()
    assert "tc qdisc add dev ve-rd root handle 1: stab overhead -14 tbf rate 10000000bit" in text
    assert "tc qdisc add dev ve-rd parent 1:1 handle 10: pfifo limit 330" in text
    assert "gso_max_segs 1" in text and "net.ipv4.tcp_no_metrics_save=1" in text
    # 20 ms one way on the bottleneck, each direction through the delay line.
    assert [ns for _, _, ns in plan.delay_routes] == [20_000_000, 20_000_000]
    assert plan.teardown == [["ip", "netns", "delete", f"tlabcdef{x}"] for x in "srd"]
    # Nothing touches the root namespace: every command names one of the run's namespaces.
    for command in plan.setup:
        assert any(ns in command for ns in plan.namespaces.values()), command


def test_byte_buffers_become_bfifo_and_access_delays_lengthen_a_pairs_path() -> None:
    document = tcplab.resolve(
        "rtt-lens",
        {
            "topology.bottleneck.buffer": "64KB",
            "topology.pairs": 2,
            "topology.access_delays": ["1ms", "5ms"],
            "flows": [{"cc": "cubic"}, {"cc": "bbr"}],
        },
    )
    plan = plan_for(document)
    assert "bfifo limit 64000" in plan.commands_text()
    assert [p.one_way_delay_ns for p in plan.pairs] == [21_000_000, 25_000_000]
    assert [f.cc for f in plan.flows] == ["cubic", "bbr"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"topology.bottleneck.loss": 0.01}, "topology.bottleneck.loss: random loss needs netem"),
        ({"topology.bottleneck.ecn_threshold": "20pkt"}, "topology.bottleneck.ecn_threshold: CE marking"),
        ({"topology.bottleneck.rate": "2Gbps"}, "topology.bottleneck.rate: 2Gbps is more than"),
        ({"topology.wifi": {"standard": "802.11ax", "mcs": 2}}, "topology.wifi: radio access cannot be emulated"),
    ],
)
def test_what_cannot_be_emulated_is_refused_in_one_line(overrides: dict, expected: str) -> None:
    with pytest.raises(ScenarioError) as error:
        plan_for(tcplab.resolve("rtt-lens", overrides))
    assert str(error.value).startswith(expected) and "\n" not in str(error.value)


def test_other_topologies_are_refused() -> None:
    with pytest.raises(ScenarioError, match="topology.kind: 'mmwave' cannot be emulated; allowed: dumbbell"):
        plan_for(tcplab.resolve(REPOSITORY / "scenarios" / "mmwave-blockage.toml"))


def test_rates_outside_the_faithful_range_are_a_warning() -> None:
    plan = plan_for(tcplab.resolve("rtt-lens", {"topology.bottleneck.rate": "5Mbps"}))
    assert plan.warnings and "outside the 10-300Mbps" in plan.warnings[0]


def test_dry_run_prints_the_commands_and_runs_nothing(run_cli, tmp_path: Path) -> None:
    before = namespaces() if shutil.which("ip") else set()
    outcome = run_cli("emulate", "rtt-lens", "--dry-run", "-o", tmp_path / "out")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("# setup\nip netns add tl")
    assert "# teardown" in outcome.stdout and not (tmp_path / "out").exists()
    if shutil.which("ip"):
        assert namespaces() == before


def test_without_root_the_backend_refuses_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EmulationError) as error:
        emulate("rtt-lens")
    assert str(error.value).startswith("the emulation backend needs root") and "\n" not in str(error.value)


# --- on the kernel -------------------------------------------------------------------------


@needs_root
def test_cubic_and_bbr_on_the_kernel_fill_the_link_and_differ_in_delay() -> None:
    before = namespaces()
    results = {cc: emulate("rtt-lens", overrides={**ACCEPTANCE, "flows.0.cc": cc}) for cc in ("cubic", "bbr")}
    for cc, result in results.items():
        flow, bottleneck = result.summary["flows"][0], result.summary["links"][0]
        assert abs(flow["min_rtt_ms"] - 40.0) <= 1.0, f"{cc}: min RTT {flow['min_rtt_ms']} ms"
        assert bottleneck["utilization"] >= 0.9, f"{cc}: {bottleneck['utilization']:.1%} of the link"
        assert result.summary["run"]["validity"]["valid"], result.summary["run"]["validity"]
        assert result.flows["t_s"].max() > 14.0 and result.links.height > 0
    cubic, bbr = (results[cc].summary["flows"][0]["rtt_mean_ms"] for cc in ("cubic", "bbr"))
    assert cubic >= 3 * bbr, f"CUBIC mean RTT {cubic} ms vs BBR {bbr} ms"
    # BBR's own model: a bandwidth estimate near the 10 Mbps link, a min RTT near 40 ms.
    late = results["bbr"].flows.filter(pl.col("t_s") > 5)
    assert 8.0 < late["bbr_bw_mbps"].median() < 11.0 and 39.0 < late["bbr_min_rtt_ms"].median() < 42.0
    assert results["cubic"].flows["bbr_bw_mbps"].null_count() == results["cubic"].flows.height
    assert namespaces() == before and not emulation_processes()


@needs_root
def test_an_algorithm_the_kernel_lacks_is_refused_before_anything_is_built() -> None:
    before = namespaces()
    with pytest.raises(ScenarioError, match=r"flows.0.cc: 'vegas' is not in this kernel; available: .*cubic"):
        emulate("rtt-lens", overrides={"flows.0.cc": "vegas"})
    assert namespaces() == before


@needs_root
def test_a_failed_setup_removes_everything_it_built(monkeypatch: pytest.MonkeyPatch) -> None:
    before = namespaces()
    real_plan = emu_plan.plan_for

    def broken(document, prefix=None):
        plan = real_plan(document, prefix)
        plan.setup.insert(6, ["ip", "-n", plan.namespaces["router"], "link", "set", "no-such-device", "up"])
        return plan

    monkeypatch.setattr(emu_plan, "plan_for", broken)
    with pytest.raises(EmulationError, match="no-such-device"):
        emu_run.emulate("rtt-lens", overrides={"duration": "2s"})
    assert namespaces() == before and not emulation_processes()


@needs_root
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_cleans_up_and_writes_nothing(sent: signal.Signals, tmp_path: Path) -> None:
    before = namespaces()
    command = [sys.executable, "-m", "tcplab", "emulate", "rtt-lens", "--set", "duration=30s", "-o", str(tmp_path / "out")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while len(namespaces() - before) < 3 or not emulation_processes():
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.1)
    time.sleep(1.0)  # the flows are running
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130 and stderr.strip().endswith("interrupted"), stderr
    assert namespaces() == before and not emulation_processes()
    assert not (tmp_path / "out").exists()
