"""What each study's report plots: a panel per figure the study drew and case it drew it for
(docs/validation.md, reference studies), each one column of a run's frames (flows, links,
radio, rtt) for a few of the study's cases, or a top view of an mmWave cell's geometry.
`series()` computes a panel's traces; the report draws the same traces as PNG
and as an interactive plot.

- Goodput is the study's kind of throughput: the per-interval column averaged over windows of at
  least 100 ms (bytes over time, as siad-mmwave's ~0.1 s bins; a 300th of a longer run, as a
  run's own throughput figure has it), each window clipped at the path's capacity (a filled SACK
  hole delivers a burst far above it): a dumbbell's bottleneck rate, or the highest PHY rate the
  radio offered the flow's UE in its direction during the window (its delivered bytes lag the
  radio by the path's delay). The line is the mean over the case's seeds, the band their lowest
  to highest; the title says "mean of N seeds".
- Every other column is one run's trace (the case's first seed, "seed N" in the title), at most
  `MAX_POINTS_PER_TRACE` points (bin means, display only: metrics always come from the full data).
- A multi-flow case gets a colour per flow (its algorithm's when every flow runs another one);
  a single flow its algorithm's colour (the report's `_styles`).
- cwnd is drawn in the study's unit: packets (segments) as recorded, or bytes (times the run's MSS).
- An mmWave panel is per variant, shaded where its own run had no line of sight; SINR panels
  mark the -5 dB outage threshold the studies quote. A geometry panel shows the eNB, the buildings
  and the UE's track over the run, its stretches without line of sight highlighted.

Left out: per-packet goodput (the recorder's 10 ms intervals are the finest grain), confidence
bands on single-run traces (RTT, cwnd, queue, SINR vary with the seed in time, not only in level).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from ..result import Result
from ..units import duration_ns, rate_bps

MAX_POINTS_PER_TRACE = 1500
OUTAGE_DB = -5.0
OUTAGE_LINE = (OUTAGE_DB, "outage (-5 dB)")
# Flows of a multi-flow case whose algorithms repeat (Paul Tol's bright palette, unlike the
# algorithms' Okabe-Ito colours).
FLOW_COLOURS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
GEOMETRY_COLOURS = {"building": "#999999", "enb": "#000000", "track": "#0072B2", "nlos": "#D55E00"}


@dataclass(frozen=True)
class Panel:
    title: str
    frame: str  # "flows", "links", "radio", "rtt", or "geometry": a top view of an mmWave cell
    column: str
    unit: str  # the column's unit, or the one to convert it to (see `UNIT_SCALES`)
    cases: list[dict[str, str]]
    # Rows to keep: a flow id, a link name, ... (None: flow 0 for flows, every row otherwise).
    where: dict[str, Any] = field(default_factory=dict)
    per_flow: bool = False  # one trace per flow instead of flow 0 only
    x_label: str = "time (s)"
    y_label: str | None = None  # None: the column's name and the unit
    lines: tuple[tuple[float, str], ...] = ()  # horizontal reference lines: (y, label)


UNIT_SCALES: dict[tuple[str, str], Callable[[Result], float]] = {
    ("cwnd_pkts", "bytes"): lambda result: float(result.scenario["tcp"]["mss"]),
}
"""(column, unit) -> the factor from the recorded unit to that one, for a run: a column drawn
in a unit it is not recorded in. Any other pair is drawn as recorded."""


def _cases(**axes: list[str]) -> list[dict[str, str]]:
    keys = list(axes)
    rows: list[dict[str, str]] = [{}]
    for key in keys:
        rows = [{**row, key: value} for row in rows for value in axes[key]]
    return rows


def _geometry(title: str, case: dict[str, str]) -> Panel:
    return Panel(title, "geometry", "", "m", [case], x_label="x (m)", y_label="y (m)")


MMWAVE_5CC = ("newreno", "yeah", "hybla", "westwood", "vegas")

PANELS: dict[str, list[Panel]] = {
    "siad-mmwave": [
        Panel(f"Throughput, RLC buffer {buffer}", "flows", "goodput_mbps", "Mbps", _cases(buffer=[buffer], cc=["siad", "bbr"]))
        for buffer in ("7MB", "4MB")
    ]
    + [
        Panel(f"RTT, RLC buffer {buffer}", "flows", "srtt_ms", "ms", _cases(buffer=[buffer], cc=["siad", "bbr"]))
        for buffer in ("7MB", "4MB")
    ]
    + [
        Panel("Congestion window, RLC buffer 7 MB", "flows", "cwnd_pkts", "segments", _cases(buffer=["7MB"], cc=["siad", "bbr"])),
        Panel("SINR of the UE", "radio", "sinr_db", "dB", _cases(buffer=["7MB"], cc=["siad"]), lines=(OUTAGE_LINE,)),
        _geometry("Geometry: eNB, building and the UE's walk", {"buffer": "7MB", "cc": "siad"}),
    ],
    "wifi-cubic-bbr": [
        Panel(
            f"{what} of the tracked sender (1 flow), {access}",
            "flows",
            column,
            unit,
            _cases(flows=["1-cubic", "1-bbr"], access=[access]),
        )
        for what, column, unit in (("Congestion window", "cwnd_pkts", "bytes"), ("Goodput", "goodput_mbps", "Mbps"))
        for access in ("p2p", "wifi4", "wifi6")
    ]
    + [
        Panel(
            "Goodput per flow, 4 CUBIC flows over WiFi 4",
            "flows",
            "goodput_mbps",
            "Mbps",
            _cases(flows=["4-cubic"], access=["wifi4"]),
            per_flow=True,
        ),
        Panel(
            "Congestion window per flow, 4 CUBIC flows over WiFi 4",
            "flows",
            "cwnd_pkts",
            "bytes",
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
        panel
        for variant in ("1a", "1b", "1c")
        for panel in (
            Panel(
                f"SINR, variant {variant}",
                "radio",
                "sinr_db",
                "dB",
                _cases(variant=[variant], cc=["newreno"]),
                lines=(OUTAGE_LINE,),
            ),
            *(
                Panel(f"{what}, variant {variant}", "flows", column, unit, _cases(variant=[variant], cc=list(MMWAVE_5CC)))
                for what, column, unit in (
                    ("Uplink throughput", "goodput_mbps", "Mbps"),
                    ("Congestion window", "cwnd_pkts", "bytes"),
                    ("RTT", "srtt_ms", "ms"),
                )
            ),
            _geometry(f"Geometry, variant {variant}", {"variant": variant, "cc": "newreno"}),
        )
    ],
}


@dataclass(frozen=True)
class Trace:
    name: str
    x: np.ndarray  # time (s), or metres on a geometry panel
    y: np.ndarray
    # (start, end) spans without line of sight, for shading.
    nlos: list[tuple[float, float]]
    # Lowest and highest value over seeds at each x (None: one run).
    band: tuple[np.ndarray, np.ndarray] | None = None
    colour: str | None = None  # None: the colour of the algorithm the name names
    # "line"; "area": filled polygons, NaN between them; "marker": points.
    kind: str = "line"
    seeds: tuple[int, ...] = ()  # the runs behind it (empty: not from a study's runs)


GOODPUT_COLUMN = "goodput_mbps"


def _downsample(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most MAX_POINTS_PER_TRACE points: means of equal bins (display only)."""
    if len(t) <= MAX_POINTS_PER_TRACE:
        return t, v
    edges = np.linspace(0, len(t), MAX_POINTS_PER_TRACE + 1).astype(int)
    return (
        np.array([t[a:b].mean() for a, b in itertools.pairwise(edges)]),
        np.array([np.nanmean(v[a:b]) if np.isfinite(v[a:b]).any() else np.nan for a, b in itertools.pairwise(edges)]),
    )


def goodput_window_seconds(result: Result) -> float:
    """The goodput window of a run, as a run's own throughput figure has it (`plots.figures`):
    `GOODPUT_WINDOW_SECONDS`, or the run's length over `GOODPUT_WINDOWS_PER_RUN` if longer."""
    from ..plots.figures import GOODPUT_WINDOW_SECONDS, GOODPUT_WINDOWS_PER_RUN

    return max(GOODPUT_WINDOW_SECONDS, float(result.flows["t_s"].max() or 0.0) / GOODPUT_WINDOWS_PER_RUN)


def windowed(t: np.ndarray, values: np.ndarray, window_s: float, reduce: str = "mean") -> np.ndarray:
    """Per window [k w, (k + 1) w): the mean (or "max") of the samples whose interval (ending at
    its time t) has its middle in it; NaN for a window without samples."""
    interval = float(np.median(np.diff(t))) if len(t) > 1 else window_s
    index = np.floor((t - interval / 2) / window_s).astype(int)
    keep = (index >= 0) & np.isfinite(values)
    index, values = index[keep], values[keep]
    length = int(index.max()) + 1 if len(index) else 0
    if reduce == "max":
        out = np.full(length, -np.inf)
        np.maximum.at(out, index, values)
        return np.where(np.isfinite(out), out, np.nan)
    counts = np.bincount(index, minlength=length)
    sums = np.bincount(index, weights=values, minlength=length)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def capacity_mbps(result: Result, flow: int, window_s: float) -> float | np.ndarray | None:
    """What a flow's goodput cannot exceed: a dumbbell's bottleneck rate (Mbit/s), or per goodput
    window the highest PHY rate the radio offered the flow's UE in the flow's direction; None
    when not known."""
    topology = result.scenario.get("topology", {})
    if topology.get("kind") == "dumbbell":
        return rate_bps(topology["bottleneck"]["rate"]) / 1e6
    if result.radio is None:
        return None
    spec = result.scenario["flows"][flow]
    ues = set(result.radio["ue"].unique().to_list())
    ue, column = (spec.get("src"), "ul_capacity_mbps") if spec.get("src") in ues else (spec.get("dst"), "capacity_mbps")
    rows = result.radio.filter(pl.col("ue") == ue).sort("t_s")
    if rows.is_empty():
        return None
    return windowed(rows["t_s"].to_numpy(), rows[column].cast(pl.Float64).fill_null(np.nan).to_numpy(), window_s, "max")


def windowed_goodput(result: Result, flow: int) -> tuple[np.ndarray, np.ndarray]:
    """A flow's goodput (Mbit/s) per window (window centres in s), clipped at `capacity_mbps`."""
    window_s = goodput_window_seconds(result)
    rows = result.flows.filter(pl.col("flow") == flow).sort("t_s")
    goodput = windowed(rows["t_s"].to_numpy(), rows[GOODPUT_COLUMN].cast(pl.Float64).to_numpy(), window_s)
    capacity = capacity_mbps(result, flow, window_s)
    if isinstance(capacity, np.ndarray):
        length = min(len(goodput), len(capacity))
        goodput, capacity = goodput[:length], capacity[:length]
    if capacity is not None:
        goodput = np.minimum(goodput, capacity)
    return (np.arange(len(goodput)) + 0.5) * window_s, goodput


def flow_colours(result: Result) -> dict[int, str | None]:
    """Per flow: None (its algorithm's colour) when every flow runs a different algorithm, else
    a colour of its own."""
    algorithms = [flow["cc"] for flow in result.summary["flows"]]
    if len(set(algorithms)) == len(algorithms):
        return dict.fromkeys(range(len(algorithms)))
    return {i: FLOW_COLOURS[i % len(FLOW_COLOURS)] for i in range(len(algorithms))}


def _seed(result: Result) -> int:
    return int(result.scenario.get("seed", 0))


def series(panel: Panel, runs_for_case: Callable[[dict[str, str]], list[Result]]) -> list[Trace]:
    """The panel's traces; `runs_for_case(case)` returns the case's runs, one per seed."""
    traces = []
    varying = [
        axis for axis in dict.fromkeys(a for case in panel.cases for a in case) if len({c.get(axis) for c in panel.cases}) > 1
    ]
    for case in panel.cases:
        runs = sorted(runs_for_case(case), key=_seed)
        if not runs:
            continue
        # the values that tell the panel's cases apart (all of a lone case's but for its flows)
        label = " ".join(case[axis] for axis in varying) if varying else ("" if panel.per_flow else " ".join(case.values()))
        if panel.frame == "geometry":
            traces += geometry_traces(runs[0])
        elif panel.frame == "flows" and panel.column == GOODPUT_COLUMN:
            traces += _goodput_traces(panel, runs, label)
        else:
            traces += _run_traces(panel, runs[0], label)
    return traces


def _flows(panel: Panel, result: Result) -> list[int]:
    return [flow["id"] for flow in result.summary["flows"]] if panel.per_flow else [0]


def _flow_name(panel: Panel, result: Result, label: str, flow: int) -> str:
    return f"{label} flow {flow} ({result.summary['flows'][flow]['cc']})".strip() if panel.per_flow else label


def _nlos(result: Result) -> list[tuple[float, float]]:
    from ..plots.figures import nlos_spans

    return [span for ue_spans in nlos_spans(result).values() for span in ue_spans]


def _goodput_traces(panel: Panel, runs: list[Result], label: str) -> list[Trace]:
    """Per flow: the windowed goodput's mean over the runs, and its min-max band."""
    traces = []
    colours = flow_colours(runs[0])
    for flow in _flows(panel, runs[0]):
        per_run = [windowed_goodput(run, flow) for run in runs]
        length = min(len(values) for _, values in per_run)
        t = per_run[0][0][:length]
        stacked = np.array([values[:length] for _, values in per_run])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a window no run has: NaN
            mean, low, high = np.nanmean(stacked, axis=0), np.nanmin(stacked, axis=0), np.nanmax(stacked, axis=0)
        band = (low, high) if len(runs) > 1 else None
        name = _flow_name(panel, runs[0], label, flow)
        traces.append(Trace(name, t, mean, _nlos(runs[0]), band, colours[flow], seeds=tuple(map(_seed, runs))))
    return traces


def _run_traces(panel: Panel, result: Result, label: str) -> list[Trace]:
    """One run's column, per flow where the frame has flows."""
    frame: pl.DataFrame | None = getattr(result, panel.frame)
    if frame is None or panel.column not in frame.columns:
        return []
    for key, value in panel.where.items():
        frame = frame.filter(pl.col(key) == value)
    scale = UNIT_SCALES.get((panel.column, panel.unit), lambda _result: 1.0)(result)
    colours = flow_colours(result)
    groups: list[tuple[int | None, pl.DataFrame]] = [(None, frame)]
    if "flow" in frame.columns:
        groups = [(flow, frame.filter(pl.col("flow") == flow)) for flow in _flows(panel, result)]
    traces = []
    for flow, rows in groups:
        rows = rows.sort("t_s")
        t, v = rows["t_s"].to_numpy(), rows[panel.column].cast(pl.Float64).fill_null(np.nan).to_numpy() * scale
        t, v = _downsample(t, v)
        name = label if flow is None else _flow_name(panel, result, label, flow)
        colour = None if flow is None else colours[flow]
        traces.append(Trace(name, t, v, _nlos(result), colour=colour, seeds=(_seed(result),)))
    return traces


def ue_track(ue: dict[str, Any], times_s: np.ndarray) -> np.ndarray:
    """A UE's (x, y, z) at each time (rows), as the simulator moves it (crates/net/src/mmwave/
    mobility.rs, `Mobility::position_at`): along its waypoints, held before the first and after
    the last, or from its position at its velocity from `move_at`."""
    if ue.get("waypoints"):
        at = np.array([duration_ns(point["t"]) / 1e9 for point in ue["waypoints"]])
        points = np.array([point["position"] for point in ue["waypoints"]], dtype=float)
        return np.column_stack([np.interp(times_s, at, points[:, axis]) for axis in range(3)])
    start = duration_ns(ue.get("move_at", "0s")) / 1e9
    velocity = np.array(ue.get("velocity", [0.0, 0.0, 0.0]), dtype=float)
    return np.array(ue["position"], dtype=float) + np.outer(np.maximum(times_s - start, 0.0), velocity)


def geometry_traces(result: Result) -> list[Trace]:
    """Top view (x, y) of an mmWave run: the buildings, the eNB, each UE's track over the run
    (at the radio's sample times) and the stretches of it without line of sight."""
    topology = result.scenario["topology"]
    outlines = [
        (
            [b["x"][0], b["x"][1], b["x"][1], b["x"][0], b["x"][0], np.nan],
            [b["y"][0], b["y"][0], b["y"][1], b["y"][1], b["y"][0], np.nan],
        )
        for b in topology.get("buildings", [])
    ]
    traces = [
        Trace(
            "buildings",
            np.array([x for xs, _ in outlines for x in xs], dtype=float),
            np.array([y for _, ys in outlines for y in ys], dtype=float),
            [],
            colour=GEOMETRY_COLOURS["building"],
            kind="area",
        ),
        Trace(
            "eNB",
            np.array(topology["enb"]["position"][:1], dtype=float),
            np.array(topology["enb"]["position"][1:2], dtype=float),
            [],
            colour=GEOMETRY_COLOURS["enb"],
            kind="marker",
        ),
    ]
    radio = result.radio if result.radio is not None else pl.DataFrame({"ue": [], "t_s": [], "los": []})
    for position, spec in enumerate(topology["ues"]):
        ue = spec.get("name") or f"ue{position}"
        rows = radio.filter(pl.col("ue") == ue).sort("t_s")
        times = rows["t_s"].to_numpy()
        track = ue_track(spec, times)
        blocked = rows["los"].to_numpy() == 0
        span = f"{times[0]:.3g} to {times[-1]:.3g} s" if len(times) else "no samples"
        traces.append(Trace(f"{ue} track ({span})", track[:, 0], track[:, 1], [], colour=GEOMETRY_COLOURS["track"]))
        traces.append(
            Trace(
                f"{ue} without line of sight",
                np.where(blocked, track[:, 0], np.nan),
                np.where(blocked, track[:, 1], np.nan),
                [],
                colour=GEOMETRY_COLOURS["nlos"],
            )
        )
    return traces
