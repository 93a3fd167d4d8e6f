"""One metrics function for a run's headline numbers (the campaign index, `tcplab compare`, the
report's kernel section) and quantities parsed by the core's own grammar."""

from __future__ import annotations

import pytest

from tcplab import ScenarioError
from tcplab.metrics import FLOW_METRICS, METRICS, jain_index, metrics
from tcplab.units import duration_ns, rate_bps, size_bytes

from .conftest import REPOSITORY

# Two flows, two links (the second the busiest), a WiFi BSS of an AP and one station.
SUMMARY = {
    "flows": [
        {"id": 0, "goodput_mbps": 6.0, "rtt_mean_ms": 30.0, "rtt_p95_ms": 41.0, "srtt_mean_ms": 28.0, "retransmits": 3}
        | {"segments_sent": 300},
        {"id": 1, "goodput_mbps": 2.0, "rtt_mean_ms": 50.0, "rtt_p95_ms": 77.5, "srtt_mean_ms": 44.0, "retransmits": 4}
        | {"segments_sent": 400},
    ],
    "links": [{"id": "access", "utilization": 0.2, "drops": 0}, {"id": "left->right", "utilization": 0.8, "drops": 9}],
    "fairness_jain": 0.8,
    "wifi": {"ap_drop_ratio": 0.01, "airtime_busy": 0.5, "devices": [{"collisions": 2}, {"collisions": 5}]},
    "fct": {"flows": 2, "completed": 1, "unfinished": 1, "p50_ms": 12.5, "p95_ms": 12.5, "p99_ms": 12.5, "max_ms": 12.5},
}
DUMBBELL = {"topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps"}}}


def test_the_headline_metrics_of_a_run() -> None:
    assert metrics(SUMMARY, DUMBBELL) == {
        "goodput_mbps": 8.0,
        "rtt_mean_ms": 40.0,
        "rtt_p95_ms": 77.5,
        "srtt_mean_ms": 36.0,
        "srtt_update_mean_ms": None,
        "retransmits": 7.0,
        "retransmit_pct": 1.0,
        "fairness_jain": 0.8,
        "bottleneck_utilization": 0.8,
        "bottleneck_drops": 9.0,
        "bottleneck_drop_ratio": 9 / 700,
        "goodput_pct_of_bottleneck": 80.0,
        "wifi_ap_drop_ratio": 0.01,
        "wifi_collisions": 7.0,
        "wifi_airtime_busy": 0.5,
        "fct_p50_ms": 12.5,
        "fct_p99_ms": 12.5,
        "fct_unfinished": 1.0,
        "flow0_goodput_mbps": 6.0,
        "flow0_rtt_mean_ms": 30.0,
        "flow1_goodput_mbps": 2.0,
        "flow1_rtt_mean_ms": 50.0,
    }
    declared = set(METRICS) | {f"flow{i}_{m}" for i in (0, 1) for m in FLOW_METRICS}
    assert set(metrics(SUMMARY, DUMBBELL)) == declared


def test_a_completed_transfer_adds_its_bytes_over_the_run_to_the_total_goodput() -> None:
    # A 1 MB transfer done in 0.1 s (80 Mbit/s over its own time) in a 10 s run adds 0.8 to the
    # 5 Mbit/s of a flow that ran throughout; its own metric keeps its own rate.
    flows = [
        {"id": 0, "goodput_mbps": 5.0, "rtt_mean_ms": 10.0, "retransmits": 0, "completion_s": None},
        {"id": 1, "goodput_mbps": 80.0, "rtt_mean_ms": 10.0, "retransmits": 0, "completion_s": 0.1},
    ]
    values = metrics({"flows": flows, "links": [], "fairness_jain": 1.0, "run": {"sim_seconds": 10.0}})
    assert values["goodput_mbps"] == pytest.approx(5.8) and values["flow1_goodput_mbps"] == 80.0


def test_runs_of_many_flows_keep_no_per_flow_metrics() -> None:
    flows = [{"id": i, "goodput_mbps": 1.0, "rtt_mean_ms": 10.0, "retransmits": 0} for i in range(101)]
    values = metrics({"flows": flows, "links": [], "fairness_jain": 1.0})
    assert values["goodput_mbps"] == 101.0 and not any(key.startswith("flow") for key in values)
    assert "flow99_goodput_mbps" in metrics({"flows": flows[:100], "links": [], "fairness_jain": 1.0})


def test_flows_without_rtt_samples_and_a_run_without_links() -> None:
    summary = {"flows": [{"id": 0, "goodput_mbps": 0.0, "rtt_mean_ms": None, "rtt_p95_ms": None, "retransmits": 0}]}
    values = metrics({**summary, "links": [], "fairness_jain": 1.0})
    assert values["rtt_mean_ms"] is None and values["rtt_p95_ms"] is None
    assert values["bottleneck_utilization"] is None and values["bottleneck_drops"] is None
    assert "goodput_pct_of_bottleneck" not in values and "wifi_collisions" not in values


def test_jain_index_has_the_simulators_formula(two_flow_result, wifi_result) -> None:
    assert jain_index([3.0, 1.0]) == 16 / 20
    assert jain_index([5.0, 5.0, 5.0]) == 1.0
    assert jain_index([0.0, 0.0]) == 1.0 and jain_index([]) == 1.0
    for result in (two_flow_result, wifi_result):
        summary = result.summary
        assert jain_index([f["goodput_mbps"] for f in summary["flows"]]) == summary["fairness_jain"]


@pytest.mark.parametrize(
    ("parse", "text", "expected"),
    [
        (rate_bps, "10Mbps", 10e6),
        (rate_bps, "1.5Gbps", 1.5e9),
        (rate_bps, "100kbps", 1e5),
        (rate_bps, "0bps", 0.0),
        (rate_bps, "10 Mbps", 10e6),
        (duration_ns, "20ms", 20_000_000),
        (duration_ns, "2.5us", 2500),
        (duration_ns, "1min", 60_000_000_000),
        (duration_ns, "+5ms", 5_000_000),
        (duration_ns, ".5s", 500_000_000),
        (duration_ns, "0.0000000004s", 0),  # rounded to the nearest nanosecond, as the core does
        (size_bytes, "6MiB", 6 * 2**20),
        (size_bytes, "64KB", 64_000),
        (size_bytes, "1GiB", 2**30),
        (size_bytes, "1B", 1),
    ],
)
def test_quantities_are_parsed_by_the_core(parse, text: str, expected: float) -> None:
    value = parse(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (rate_bps, "1e3bps", "unknown rate unit"),  # the core writes no exponents
        (rate_bps, "10Mbit", "unknown rate unit"),
        (duration_ns, "-5ms", "is negative"),
        (duration_ns, "10", "unknown duration unit"),
        (size_bytes, "4 mb", "unknown size unit"),
        (size_bytes, "MB", "is not a size"),
    ],
)
def test_a_bad_quantity_is_one_line_naming_it(parse, text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse(text)
    assert message in str(caught.value) and repr(text).replace("'", '"') in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_campaigns_page_explains_every_metric() -> None:
    page = (REPOSITORY / "docs" / "campaigns.md").read_text(encoding="utf-8")
    for name in [*METRICS, *(f"flowN_{m}" for m in FLOW_METRICS)]:
        assert f"`{name}`" in page, name
