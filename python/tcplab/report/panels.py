"""What each study's report plots: panels of time series, each one column of one of a run's
frames (flows, links, radio, rtt) for a few of the study's cases (seed 1), as the study's own
figures showed them (docs/validation.md, reference studies). `series()` extracts a panel's traces, downsampled for display
only (metrics always come from the full data)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..result import Result

MAX_POINTS_PER_TRACE = 1500


@dataclass(frozen=True)
class Panel:
    title: str
    frame: str  # "flows", "links", "radio" or "rtt"
    column: str
    unit: str
    cases: list[dict[str, str]]
    # Rows to keep: a flow id, a link name, ... (None: flow 0 for flows, every row otherwise).
    where: dict[str, Any] = field(default_factory=dict)
    per_flow: bool = False  # one trace per flow instead of flow 0 only
    x_label: str = "time (s)"
    y_label: str | None = None  # None: the column's name and the unit


def _cases(**axes: list[str]) -> list[dict[str, str]]:
    keys = list(axes)
    rows: list[dict[str, str]] = [{}]
    for key in keys:
        rows = [{**row, key: value} for row in rows for value in axes[key]]
    return rows


PANELS: dict[str, list[Panel]] = {
    "siad-mmwave": [
        Panel(
            "Throughput, RLC buffer 7 MB and 4 MB",
            "flows",
            "goodput_mbps",
            "Mbps",
            _cases(buffer=["7MB", "4MB"], cc=["siad", "bbr"]),
        ),
        Panel("RTT, RLC buffer 7 MB and 4 MB", "flows", "srtt_ms", "ms", _cases(buffer=["7MB", "4MB"], cc=["siad", "bbr"])),
        Panel("SINR of the UE", "radio", "sinr_db", "dB", _cases(buffer=["7MB"], cc=["siad"])),
    ],
    "wifi-cubic-bbr": [
        Panel(
            "Congestion window of the tracked sender (1 flow)",
            "flows",
            "cwnd_pkts",
            "packets",
            _cases(flows=["1-cubic", "1-bbr"], access=["p2p", "wifi4", "wifi6"]),
        ),
        Panel(
            "Goodput of the tracked sender (1 flow)",
            "flows",
            "goodput_mbps",
            "Mbps",
            _cases(flows=["1-cubic", "1-bbr"], access=["p2p", "wifi4", "wifi6"]),
        ),
        Panel(
            "Goodput per flow, 4 CUBIC flows over WiFi 4",
            "flows",
            "goodput_mbps",
            "Mbps",
            _cases(flows=["4-cubic"], access=["wifi4"]),
            per_flow=True,
        ),
    ],
    "deep-buffer": [
        Panel("Throughput per flow, 16 384 packets", "flows", "goodput_mbps", "Mbps", _cases(buffer=["16384pkt"]), per_flow=True),
        Panel("Throughput per flow, 65 536 packets", "flows", "goodput_mbps", "Mbps", _cases(buffer=["65536pkt"]), per_flow=True),
        Panel(
            "Bottleneck queue",
            "links",
            "backlog_pkts",
            "packets",
            _cases(buffer=["16384pkt", "65536pkt"]),
            where={"link": "left->right"},
        ),
    ],
    "rtt-lens": [
        Panel("RTT per ACK", "rtt", "rtt_ms", "ms", _cases(cc=["cubic", "bbr"])),
        Panel("Throughput", "flows", "goodput_mbps", "Mbps", _cases(cc=["cubic", "bbr"])),
    ],
    "mmwave-5cc": [
        Panel(
            f"{what}, variant {variant}",
            frame,
            column,
            unit,
            _cases(variant=[variant], cc=["newreno", "yeah", "hybla", "westwood", "vegas"]),
        )
        for variant in ("1a", "1b", "1c")
        for what, frame, column, unit in (
            ("Uplink throughput", "flows", "goodput_mbps", "Mbps"),
            ("Congestion window", "flows", "cwnd_pkts", "packets"),
            ("RTT", "flows", "srtt_ms", "ms"),
        )
    ]
    + [Panel("SINR", "radio", "sinr_db", "dB", _cases(variant=["1a", "1b", "1c"], cc=["newreno"]))],
}


@dataclass(frozen=True)
class Trace:
    name: str
    t_s: np.ndarray
    values: np.ndarray
    # (start, end) spans without line of sight, for shading.
    nlos: list[tuple[float, float]]


# Per-interval goodput jumps with every ACK burst: shown as a 100 ms trailing mean, as in a
# run's own throughput figure.
SMOOTHED_COLUMNS = {"goodput_mbps"}
SMOOTHING_SECONDS = 0.1


def _step(t: np.ndarray) -> float:
    return float(np.median(np.diff(t))) if len(t) > 1 else SMOOTHING_SECONDS


def _downsample(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most MAX_POINTS_PER_TRACE points: means of equal bins (display only)."""
    if len(t) <= MAX_POINTS_PER_TRACE:
        return t, v
    edges = np.linspace(0, len(t), MAX_POINTS_PER_TRACE + 1).astype(int)
    return (
        np.array([t[a:b].mean() for a, b in itertools.pairwise(edges)]),
        np.array([np.nanmean(v[a:b]) if np.isfinite(v[a:b]).any() else np.nan for a, b in itertools.pairwise(edges)]),
    )


def series(panel: Panel, run_for_case: Any) -> list[Trace]:
    """The panel's traces; `run_for_case(case)` returns the case's seed-1 Result (or None)."""
    from ..plots.figures import nlos_spans, trailing_mean

    traces = []
    for case in panel.cases:
        result: Result | None = run_for_case(case)
        if result is None:
            continue
        frame: pl.DataFrame | None = getattr(result, panel.frame)
        if frame is None or panel.column not in frame.columns:
            continue
        for key, value in panel.where.items():
            frame = frame.filter(pl.col(key) == value)
        groups = [(None, frame)]
        if "flow" in frame.columns:
            flows = sorted(frame["flow"].unique().to_list()) if panel.per_flow else [0]
            groups = [(f, frame.filter(pl.col("flow") == f)) for f in flows]
        spans = [span for ue_spans in nlos_spans(result).values() for span in ue_spans]
        label = " ".join(case.values())
        for flow, rows in groups:
            rows = rows.sort("t_s")
            t, v = rows["t_s"].to_numpy(), rows[panel.column].cast(pl.Float64).fill_null(np.nan).to_numpy()
            if panel.column in SMOOTHED_COLUMNS:
                v = trailing_mean(v, max(1, round(SMOOTHING_SECONDS / _step(t))))
            t, v = _downsample(t, v)
            name = label if flow is None or not panel.per_flow else f"{label} flow {flow} ({result.summary['flows'][flow]['cc']})"
            traces.append(Trace(name, t, v, spans))
    return traces
