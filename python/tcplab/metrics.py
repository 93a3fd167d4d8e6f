"""A run's headline metrics from its summary.json: what a campaign's index keeps per run,
what `tcplab compare` puts side by side and what a study report's kernel section shows, the
same numbers for the simulator's runs and the emulation's (docs/campaigns.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .units import rate_bps

# The keys of `metrics`, besides the per-flow ones, flow<id>_<one of FLOW_METRICS>.
METRICS = (
    "goodput_mbps",
    "rtt_mean_ms",
    "rtt_p95_ms",
    "srtt_mean_ms",
    "srtt_update_mean_ms",
    "retransmits",
    "retransmit_pct",
    "fairness_jain",
    "bottleneck_utilization",
    "bottleneck_drops",
    "bottleneck_drop_ratio",
    "goodput_pct_of_bottleneck",
    "wifi_ap_drop_ratio",
    "wifi_collisions",
    "wifi_airtime_busy",
    "fct_p50_ms",
    "fct_p99_ms",
    "fct_unfinished",
)
FLOW_METRICS = ("goodput_mbps", "rtt_mean_ms")
# Runs of more flows than this keep no per-flow metrics (a campaign's index would otherwise
# grow by two columns per flow); the default `record.aggregate_above` of the simulator.
PER_FLOW_METRICS_UP_TO = 100


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n * sum x^2), 1 when every value is zero (or there
    are none), as the simulator's summary computes it (crates/sim/src/summary.rs)."""
    total, squares = sum(values), sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def rtt_statistics(samples: Sequence[float]) -> dict[str, float | None]:
    """A flow's RTT statistics from RTT samples in ms, as its summary holds them: mean and the
    50th, 95th and 99th percentiles (numpy's linear interpolation), None without samples. The
    emulation's summary takes them over its sampled smoothed RTT, and so does `tcplab
    validate` for the simulator's."""
    if not samples:
        return dict.fromkeys(("rtt_mean_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms"))
    p50, p95, p99 = (float(v) for v in np.percentile(samples, [50, 95, 99]))
    return {"rtt_mean_ms": float(np.mean(samples)), "rtt_p50_ms": p50, "rtt_p95_ms": p95, "rtt_p99_ms": p99}


def _goodput_over_the_run(flow: Mapping[str, Any], summary: Mapping[str, Any]) -> float:
    """A flow's share of the total goodput: its goodput over its active time, but a completed
    transfer's bytes over the whole run, so that many short transfers add up to the rate they
    used, not to the sum of their own rates (10 000 transfers of 0.1 ms each would otherwise
    sum to terabits per second)."""
    completion_s, run_s = flow.get("completion_s"), summary.get("run", {}).get("sim_seconds")
    if completion_s is None or not run_s:
        return flow["goodput_mbps"]
    return flow["goodput_mbps"] * completion_s / run_s


def busiest_link(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The summary's link with the highest utilization (the first of equals; None without links)."""
    return max(summary["links"], key=lambda link: link["utilization"], default=None)


def metrics(summary: Mapping[str, Any], scenario: Mapping[str, Any] | None = None) -> dict[str, float | None]:
    """The headline metrics of one run (no wall-clock values): the flows' total goodput (a
    completed transfer's counted over the whole run), the
    mean of their mean RTTs, the largest p95 RTT, the mean of their time-averaged smoothed
    RTTs and of the means of the values they take (one per change), all retransmits and their share of the segments sent (%), Jain's index, the busiest
    link's utilization (an mmWave cell's: its radio's), drops and drops per data segment sent, WiFi's AP drop ratio, collisions and busy airtime, the
    sized flows' median and 99th-percentile completion times and how many did not complete,
    and (up to `PER_FLOW_METRICS_UP_TO` flows) each flow's goodput and mean RTT as
    flow<id>_<metric>; with the scenario of a dumbbell, also the goodput as a percentage of
    the bottleneck's rate."""
    flows = summary["flows"]
    rtts = [f["rtt_mean_ms"] for f in flows if f.get("rtt_mean_ms") is not None]
    p95s = [f["rtt_p95_ms"] for f in flows if f.get("rtt_p95_ms") is not None]
    srtts, updates = ([f[key] for f in flows if f.get(key) is not None] for key in ("srtt_mean_ms", "srtt_update_mean_ms"))
    sent = sum(f.get("segments_sent") or 0 for f in flows)
    busiest = busiest_link(summary)
    values: dict[str, float | None] = {
        "goodput_mbps": sum(_goodput_over_the_run(f, summary) for f in flows),
        "rtt_mean_ms": sum(rtts) / len(rtts) if rtts else None,
        "rtt_p95_ms": max(p95s) if p95s else None,
        "srtt_mean_ms": sum(srtts) / len(srtts) if srtts else None,
        "srtt_update_mean_ms": sum(updates) / len(updates) if updates else None,
        "retransmits": float(sum(f["retransmits"] for f in flows)),
        "retransmit_pct": 100 * sum(f["retransmits"] for f in flows) / sent if sent else 0.0,
        "fairness_jain": summary["fairness_jain"],
        "bottleneck_utilization": busiest["utilization"] if busiest else None,
        "bottleneck_drops": float(busiest["drops"]) if busiest else None,
        "bottleneck_drop_ratio": busiest["drops"] / sent if busiest and sent else None,
    }
    radio = summary.get("radio")
    if radio and all("utilization" in ue for ue in radio):
        # an mmWave cell's bottleneck is its radio: the busier direction's share of the data
        # symbols, over all UEs (its wired links are far faster)
        values["bottleneck_utilization"] = max(sum(ue[key] for ue in radio) for key in ("utilization", "ul_utilization"))
    topology = (scenario or {}).get("topology", {})
    if topology.get("kind") == "dumbbell":
        values["goodput_pct_of_bottleneck"] = 100 * values["goodput_mbps"] * 1e6 / rate_bps(topology["bottleneck"]["rate"])
    wifi = summary.get("wifi")
    if wifi is not None:
        values["wifi_ap_drop_ratio"] = wifi["ap_drop_ratio"]
        values["wifi_collisions"] = float(sum(d["collisions"] for d in wifi["devices"]))
        values["wifi_airtime_busy"] = wifi["airtime_busy"]
    fct = summary.get("fct")
    if fct is not None:
        values["fct_p50_ms"], values["fct_p99_ms"] = fct["p50_ms"], fct["p99_ms"]
        values["fct_unfinished"] = float(fct["unfinished"])
    for f in flows if len(flows) <= PER_FLOW_METRICS_UP_TO else ():
        values[f"flow{f['id']}_goodput_mbps"] = f["goodput_mbps"]
        values[f"flow{f['id']}_rtt_mean_ms"] = f.get("rtt_mean_ms")
    return values
