"""The differential suite against ns-3 (benches/ns3_diff.py): its cached ns-3 results cover
exactly the grid it defines, every case is a valid tcplab scenario, and the tcplab side
measures what the ns-3 side does."""

import importlib.util
import json
from pathlib import Path

import pytest

from tcplab.scenario import prepare, validate

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("ns3_diff", ROOT / "benches" / "ns3_diff.py")
ns3_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ns3_diff)

CACHED = json.loads(ns3_diff.CACHE.read_text(encoding="utf-8"))


def test_the_cached_cases_are_cases_of_the_grid_as_defined_now() -> None:
    """A changed grid without regenerated ns-3 results fails here."""
    grid = ns3_diff.cases()
    assert len(grid) == 2 * 2 * 2 * 7 * 2
    assert CACHED["cases"] and set(CACHED["cases"]) <= set(grid)
    for name in CACHED["cases"]:
        case = grid[name]
        assert CACHED["cases"][name]["case"] == case, name
        flows = CACHED["cases"][name]["ns3"]["flows"]
        assert len(flows) == len(case["flows"]), name
        assert all(flow["goodput_mbps"] > 0 and len(flow["cwnd_bins"]) == case["duration_s"] for flow in flows), name
    assert CACHED["ns3_version"].startswith("3.44")


@pytest.mark.parametrize("name", ["1xvegas-10M-1bdp-bulk", "4xbbr-100M-10bdp-fixed"])
def test_each_case_is_a_tcplab_scenario_of_the_same_path(name: str) -> None:
    case = ns3_diff.cases()[name]
    document = validate(prepare(ns3_diff.scenario(case)))
    bottleneck = document["topology"]["bottleneck"]
    assert (bottleneck["rate"], bottleneck["delay"], bottleneck["buffer"]) == (
        f"{case['rate_mbps']}Mbps",
        f"{case['rtt_ms'] / 2:g}ms",
        f"{case['buffer_pkts']}pkt",
    )
    assert [flow["cc"]["kind"] for flow in document["flows"]] == [flow["cc"] for flow in case["flows"]]
    assert ("app" in document["flows"][0]) == name.endswith("fixed")


def test_the_tcplab_side_reports_the_metrics_of_the_ns3_side() -> None:
    case = ns3_diff.cases()["1xnewreno-10M-1bdp-bulk"]
    ours = ns3_diff.run_tcplab(case)["flows"][0]
    theirs = CACHED["cases"]["1xnewreno-10M-1bdp-bulk"]["ns3"]["flows"][0]
    assert set(theirs) - {"writes_dropped"} == set(ours)
    assert [b["t_s"] for b in ours["cwnd_bins"]] == list(range(case["duration_s"]))
    assert all(b["p10"] <= b["mean"] <= b["p90"] for b in ours["cwnd_bins"])
    # One NewReno flow fills 10 Mbit/s on both (payload ceiling 9.65 Mbit/s).
    assert 9.0 < ours["goodput_mbps"] < 9.7 and 9.0 < theirs["goodput_mbps"] < 9.7


@pytest.mark.parametrize("name", sorted(CACHED["cases"]))
def test_the_ns3_stack_follows_ns3_within_the_acceptance_bounds(name: str) -> None:
    """Goodput within 3 %, mean RTT within 10 %, mean cwnd within 15 % of ns-3 3.44 on every
    case, or a documented divergence (ns3_diff.DIVERGENT)."""
    cached = CACHED["cases"][name]
    ours = ns3_diff.run_tcplab(cached["case"], "ns3")["flows"]
    failing = ns3_diff.out_of_bounds(cached["ns3"]["flows"], ours)
    if ns3_diff.diverges(name) is None:
        assert not failing, f"{name}: {failing} outside {ns3_diff.TOLERANCES}"


def test_every_documented_divergence_names_cases_of_the_grid() -> None:
    grid = ns3_diff.cases()
    for pattern in ns3_diff.DIVERGENT:
        assert any(ns3_diff.fnmatch.fnmatch(name, pattern) for name in grid), pattern


@pytest.mark.parametrize("sack", [True, False])
@pytest.mark.parametrize("pacing", ["off", "fq"])
@pytest.mark.parametrize("cc", ["newreno", "cubic", "bbr", "vegas", "yeah", "hybla", "westwood", "siad"])
def test_the_ns3_stack_runs_lossy_small_buffer_paths_without_sack_or_with_pacing(sack: bool, pacing: str, cc: str) -> None:
    """Off the differential grid: random loss, a 5-packet buffer, a 16 KiB receive window, a
    short transfer and a fixed-rate writer beside a bulk flow: every flow delivers data, and
    the 3000-byte transfer sends its 6 segments (5 of 536 B and one of 320 B) and no more new
    ones (in 4 s it may still be waiting for a backed-off timeout)."""
    import tcplab

    scenario = f"""duration = "4s"
[topology]
kind = "dumbbell"
bottleneck = {{ rate = "20Mbps", delay = "15ms", buffer = "5pkt", loss = 0.02 }}
[tcp]
stack = "ns3"
sack = {str(sack).lower()}
pacing = "{pacing}"
rcv_buf = "16KiB"
[[flows]]
cc = "{cc}"
[[flows]]
cc = "{cc}"
bytes = "3000B"
[[flows]]
cc = "{cc}"
app = {{ rate = "5Mbps", packet_size = "700B" }}
"""
    flows = tcplab.run(scenario, plots=False).summary["flows"]
    assert all(flow["stack"] == "ns3" and flow["bytes_acked"] > 0 for flow in flows), flows
    assert flows[1]["segments_sent"] - flows[1]["retransmits"] == 6, flows[1]
