"""The differential suite against ns-3 (benches/ns3_diff.py): its cached ns-3 results cover
exactly the grid it defines, every case is a valid tcplab scenario, and the tcplab side
measures what the ns-3 side does."""

import importlib.util
import json
import tomllib
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


def test_every_documented_divergence_names_cases_of_the_grids() -> None:
    grid = {**ns3_diff.cases(), **ns3_diff.aqm_cases()}
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


# --- the queue-discipline grid (ns3_diff.aqm_cases, cached in tests/data/ns3/aqm.json) -----

AQM_CACHED = json.loads(ns3_diff.AQM_CACHE.read_text(encoding="utf-8"))


def test_the_cached_aqm_cases_are_the_aqm_grid_as_defined_now() -> None:
    """Every case of the aqm grid has its ns-3 result, run as the grid and the ns-3 mapping of
    its discipline define them now."""
    grid = ns3_diff.aqm_cases()
    assert len(grid) == 4 * 2 * 2 * 2
    assert set(AQM_CACHED["cases"]) == set(grid)
    assert AQM_CACHED["ns3_version"].startswith("3.44")
    for name, case in grid.items():
        cached = AQM_CACHED["cases"][name]
        assert cached["case"] == case, name
        kind, attributes = ns3_diff.ns3_queue_disc(case)
        assert cached["ns3"]["queue_disc"] == {"type": kind, "attributes": attributes}, name
        assert len(cached["ns3"]["flows"]) == len(case["flows"]), name
        assert all(flow["goodput_mbps"] > 0 for flow in cached["ns3"]["flows"]), name
        bottleneck = cached["ns3"]["bottleneck"]
        assert bottleneck["queue_delay_mean_ms"] > 0 and len(bottleneck["queue_delay_bins"]) == case["duration_s"], name
        # the 1-packet device queue never overflows: the queue disc holds the backlog
        assert bottleneck["device_drops"] == 0 and bottleneck["requeued"] == 0, name


def test_the_aqm_grid_names_its_discipline_and_sets_every_parameter() -> None:
    for name, case in ns3_diff.aqm_cases().items():
        queue = case["queue"]
        assert name.endswith(f"-{queue['kind']}") and queue["ecn"] is False, name
        assert set(queue) >= set(ns3_diff.AQM_QUEUES[queue["kind"]]), name
        assert case["buffer_pkts"] == 1000 and ns3_diff.ns3_queue_disc(case)[1]["MaxSize"] == "1000p", name


@pytest.mark.parametrize("rate", sorted(ns3_diff.RED_BY_RATE))
def test_red_has_the_same_ewma_weight_and_drop_probability_on_both_sides(rate: int) -> None:
    """tc derives RED's weight from burst and min_th (tc_red_eval_ewma); ns-3 takes it as QW."""
    case = ns3_diff.aqm_cases()[f"1xcubic-{rate}M-red"]
    red = case["queue"]
    attributes = ns3_diff.ns3_queue_disc(case)[1]
    assert ns3_diff.tc_red_wlog(red["min_th"], red["burst"]) == 9
    assert float(attributes["QW"]) == 2.0**-9
    assert float(attributes["LInterm"]) * red["probability"] == pytest.approx(1.0)
    assert (float(attributes["MinTh"]), float(attributes["MaxTh"])) == (red["min_th"], red["max_th"])
    # tc refuses a burst that fits below min_th
    assert ns3_diff.tc_red_wlog(red["min_th"], red["min_th"] - 1) is None


@pytest.mark.parametrize("name", ["1xnewreno-10M-red", "4xcubic-100M-codel", "1xcubic-100M-fq_codel", "4xnewreno-10M-pie"])
def test_each_aqm_case_is_a_scenario_of_the_same_path_with_its_discipline(name: str) -> None:
    """The scenario text carries the path and the discipline's parameters; once tcplab has the
    discipline, it is also a valid scenario that resolves to them."""
    case = ns3_diff.aqm_cases()[name]
    topology = tomllib.loads(ns3_diff.scenario(case))["topology"]
    assert topology["bottleneck"] == {
        "rate": f"{case['rate_mbps']}Mbps",
        "delay": "20ms",
        "buffer": "1000pkt",
        "framing": 2,
        "queue": ns3_diff.tcplab_queue(case),
    }
    assert "queue" not in topology["access"]
    document = validate(prepare(ns3_diff.scenario(case)))
    assert document["topology"]["bottleneck"]["queue"]["kind"] == case["queue"]["kind"]


def test_tcplabs_discipline_acts_where_ns3s_does_behind_its_device_queue() -> None:
    """ns-3's 1-packet device queue holds one transmission time (1502 B) behind its queue disc."""
    cases = ns3_diff.aqm_cases()
    assert ns3_diff.tcplab_queue(cases["1xcubic-10M-codel"])["target_ms"] == 5 + 1502 * 8 / 10e3
    assert ns3_diff.tcplab_queue(cases["1xcubic-100M-fq_codel"])["target_ms"] == 5 + 1502 * 8 / 100e3
    assert ns3_diff.tcplab_queue(cases["1xcubic-10M-pie"])["target_ms"] == 15 + 1502 * 8 / 10e3
    red = ns3_diff.tcplab_queue(cases["1xcubic-100M-red"])
    assert (red["min_th"], red["max_th"]) == (51, 151)
    assert cases["1xcubic-100M-red"]["queue"]["min_th"] == 50, "the case keeps ns-3's values"


@pytest.mark.parametrize("name", sorted(AQM_CACHED["cases"]))
def test_the_ns3_stack_follows_ns3_through_each_discipline(name: str) -> None:
    """Goodput within 3 % and the bottleneck's mean queueing delay within 20 % of ns-3 3.44
    (ns3_diff.AQM_TOLERANCES)."""
    cached = AQM_CACHED["cases"][name]
    ours = ns3_diff.run_tcplab(cached["case"], "ns3")
    failing = ns3_diff.out_of_bounds(cached["ns3"], ours, ns3_diff.AQM_TOLERANCES)
    assert not failing or ns3_diff.diverges(name), (
        f"{name}: {failing} outside {ns3_diff.AQM_TOLERANCES}: ns-3 {cached['ns3']['bottleneck']}, ours {ours['bottleneck']}"
    )


def test_the_aqm_bounds_compare_the_bottlenecks_queueing_delay_and_the_flows_goodput() -> None:
    theirs = AQM_CACHED["cases"]["4xcubic-10M-pie"]["ns3"]
    delay = theirs["bottleneck"]["queue_delay_mean_ms"]

    def ours(delay_ms: float | None, goodput_scale: float = 1.0) -> dict:
        flows = [dict(flow, goodput_mbps=flow["goodput_mbps"] * goodput_scale) for flow in theirs["flows"]]
        return {"flows": flows, "bottleneck": {"queue_delay_mean_ms": delay_ms, "queue_delay_p95_ms": None, "drops": 0}}

    assert ns3_diff.out_of_bounds(theirs, ours(1.19 * delay), ns3_diff.AQM_TOLERANCES) == []
    assert ns3_diff.out_of_bounds(theirs, ours(0.79 * delay, 1.04), ns3_diff.AQM_TOLERANCES) == [
        "goodput_mbps",
        "queue_delay_mean_ms",
    ]
    # a tcplab without the sojourn metric fails rather than passes
    assert ns3_diff.out_of_bounds(theirs, ours(None), ns3_diff.AQM_TOLERANCES) == ["queue_delay_mean_ms"]
