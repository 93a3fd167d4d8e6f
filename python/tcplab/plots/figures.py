"""The time-series figures of a run, drawn with matplotlib's object API (a `Figure` saved
through the Agg canvas: no GUI backend, no pyplot global state).

Styled for print and for comparing runs: each algorithm always has the same colour (the
Okabe-Ito palette, safe for colour-blind readers), flows of one algorithm differ by line style,
every axis names its unit, every title starts with the scenario name, and y axes start at zero
(but SINR's). In a run with an mmWave cell, every time-series figure shades the spans where a
user had no line of sight.
"""

from __future__ import annotations

import functools
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..units import size_bytes

if TYPE_CHECKING:
    from ..result import Result

ALGORITHM_COLOURS = {
    "newreno": "#0072B2",  # blue
    "cubic": "#D55E00",  # vermillion
    "bbr": "#009E73",  # bluish green
    "bbr3": "#CC79A7",  # reddish purple
    "vegas": "#E69F00",  # orange
    "dctcp": "#56B4E9",  # sky blue
}
"""Okabe & Ito, "Color Universal Design" (2008), one colour per algorithm in every figure."""

# For algorithms without a colour above, picked by a stable hash of the name (Paul Tol's palette).
_OTHER_ALGORITHM_COLOURS = ("#332288", "#882255", "#117733", "#44AA99", "#999933", "#AA4499")
# Links are told apart by position, in colours unlike the algorithms' (Paul Tol's palette).
LINK_COLOURS = ("#332288", "#882255", "#117733", "#999933", "#AA4499", "#44AA99", "#DDCC77")
# Spans without line of sight, one shade per user (grey first: one user is the common case).
NLOS_SHADES = ("0.6", "#DDCC77", "#88CCEE", "#CC6677")
NLOS_ALPHA = 0.25
# Flows of the same algorithm: solid, dashed, dotted, dash-dot.
LINE_STYLES: tuple[Any, ...] = ("-", (0, (5, 2)), (0, (1, 1.5)), "-.")

# Size bins of the FCT figure's percentile lines, per decade of flow size.
FCT_BINS_PER_DECADE = 2

# Goodput is averaged over at least this long (per-interval goodput jumps with every ACK, and
# a filled SACK hole delivers a burst far above the link rate), and over longer runs across
# about GOODPUT_WINDOWS_PER_RUN windows, so the trend shows rather than the bursts.
GOODPUT_WINDOW_SECONDS = 0.1
GOODPUT_WINDOWS_PER_RUN = 300

PRINT_STYLE = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "lines.linewidth": 1.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "0.85",
    "grid.linewidth": 0.6,
}


@dataclass(frozen=True)
class FlowStyle:
    """How one flow is drawn in every figure."""

    label: str
    colour: str
    linestyle: Any


def algorithm_colour(algorithm: str) -> str:
    """The colour of an algorithm, the same in every figure and every run."""
    if algorithm in ALGORITHM_COLOURS:
        return ALGORITHM_COLOURS[algorithm]
    return _OTHER_ALGORITHM_COLOURS[zlib.crc32(algorithm.encode()) % len(_OTHER_ALGORITHM_COLOURS)]


def flow_styles(result: Result) -> dict[int, FlowStyle]:
    """The style of each flow by id: its algorithm's colour, and a line style that tells it
    apart from earlier flows of the same algorithm."""
    flows_so_far: Counter[str] = Counter()
    styles = {}
    for flow in result.summary["flows"]:
        algorithm = flow["cc"]
        styles[flow["id"]] = FlowStyle(
            label=f"flow {flow['id']} ({algorithm})",
            colour=algorithm_colour(algorithm),
            linestyle=LINE_STYLES[flows_so_far[algorithm] % len(LINE_STYLES)],
        )
        flows_so_far[algorithm] += 1
    return styles


def _print_style(make_figure: Callable[[Result], Figure]) -> Callable[[Result], Figure]:
    @functools.wraps(make_figure)
    def styled(result: Result) -> Figure:
        with matplotlib.rc_context(PRINT_STYLE):
            return make_figure(result)

    return styled


@_print_style
def throughput_figure(result: Result) -> Figure:
    """Goodput of each flow over time, as a moving average (see `GOODPUT_WINDOW_SECONDS`)."""
    frame = result.flows if result.flow_groups is None else result.flow_groups
    interval = _sampling_interval(frame)
    run_seconds = float(frame["t_s"].max() or 0.0)
    window_seconds = max(GOODPUT_WINDOW_SECONDS, run_seconds / GOODPUT_WINDOWS_PER_RUN)
    window = max(1, round(window_seconds / interval))
    title = "goodput per flow" if result.flow_groups is None else "goodput per group of flows"
    figure, axes = _new_figure(result, title, f"goodput (Mbps, {_seconds_text(window * interval)} mean)")
    _plot_flows(axes, result, "goodput_mbps", lambda values: trailing_mean(values, window))
    return _finished(figure, axes)


@_print_style
def rtt_figure(result: Result) -> Figure:
    """Smoothed RTT of each flow over time, over its RTT samples when they were recorded."""
    has_samples = result.rtt is not None and not result.rtt.is_empty()
    title = "smoothed RTT (lines) and RTT samples (dots)" if has_samples else "smoothed RTT"
    figure, axes = _new_figure(result, title, "RTT (ms)")
    _plot_flows(axes, result, "srtt_ms")
    if has_samples:
        for flow_id, style in flow_styles(result).items():
            samples = result.rtt.filter(pl.col("flow") == flow_id)
            axes.scatter(
                samples["t_s"].to_numpy(),
                samples["rtt_ms"].to_numpy(),
                s=1.5,
                color=style.colour,
                alpha=0.3,
                linewidths=0,
                zorder=1,
            )
    return _finished(figure, axes)


@_print_style
def cwnd_figure(result: Result) -> Figure:
    """Congestion window of each flow over time."""
    figure, axes = _new_figure(result, "congestion window", "cwnd (packets)")
    _plot_flows(axes, result, "cwnd_pkts")
    return _finished(figure, axes)


@_print_style
def backlog_figure(result: Result) -> Figure:
    """Queue backlog over time of every link that ever queued a packet."""
    figure, axes = _new_figure(result, "queue backlog per link", "backlog (packets)")
    peaks = result.links.group_by("link", maintain_order=True).agg(pl.col("backlog_pkts").max())
    busy_links = peaks.filter(pl.col("backlog_pkts") > 0)["link"]
    for position, link in enumerate(busy_links):
        rows = result.links.filter(pl.col("link") == link)
        axes.plot(
            rows["t_s"].to_numpy(),
            rows["backlog_pkts"].to_numpy(),
            label=link,
            color=LINK_COLOURS[position % len(LINK_COLOURS)],
        )
    return _finished(figure, axes)


@_print_style
def radio_figure(result: Result) -> Figure:
    """Per user of an mmWave cell: wideband SINR (top) and the downlink PHY rate at the MCS
    the scheduler uses (bottom), over time."""
    figure = Figure(figsize=(7, 5.2), dpi=150, layout="constrained")
    sinr_axes, capacity_axes = figure.subplots(2, 1, sharex=True)
    sinr_axes.set(title=f"{result.name}: radio per user", ylabel="SINR (dB)")
    capacity_axes.set(xlabel="time (s)", ylabel="DL PHY rate at the MCS (Mbps)")
    radio = result.radio if result.radio is not None else pl.DataFrame({"ue": []})
    for position, ue in enumerate(radio["ue"].unique(maintain_order=True)):
        rows = radio.filter(pl.col("ue") == ue)
        colour = LINK_COLOURS[position % len(LINK_COLOURS)]
        for axes, column in ((sinr_axes, "sinr_db"), (capacity_axes, "capacity_mbps")):
            axes.plot(rows["t_s"].to_numpy(), rows[column].to_numpy(), label=ue, color=colour)
    for axes in (sinr_axes, capacity_axes):
        _shade_nlos(axes, result)
        axes.set_xlim(left=0)
    capacity_axes.set_ylim(bottom=0)
    if sinr_axes.lines:
        figure.legend(
            *sinr_axes.get_legend_handles_labels(),
            loc="outside lower center",
            ncols=4,
            frameon=False,
        )
    return figure


@_print_style
def wifi_figure(result: Result) -> Figure:
    """A WiFi BSS over time: how busy the medium was (top) and each device's MPDU
    retransmissions per second (bottom), both as moving averages."""
    figure = Figure(figsize=(7, 5.2), dpi=150, layout="constrained")
    busy_axes, retry_axes = figure.subplots(2, 1, sharex=True)
    busy_axes.set(title=f"{result.name}: WiFi medium and retransmissions", ylabel="medium busy (%)")
    retry_axes.set(xlabel="time (s)", ylabel="retransmissions (MPDUs/s)")
    wifi = result.wifi if result.wifi is not None else pl.DataFrame({"station": [], "t_s": []})
    interval = _sampling_interval(wifi) if wifi.height else GOODPUT_WINDOW_SECONDS
    window = max(1, round(GOODPUT_WINDOW_SECONDS / interval))
    for position, station in enumerate(wifi["station"].unique(maintain_order=True)):
        rows = wifi.filter(pl.col("station") == station)
        times = rows["t_s"].to_numpy()
        if position == 0:
            busy = trailing_mean(rows["airtime_busy"].to_numpy() * 100, window)
            busy_axes.plot(times, busy, color=LINK_COLOURS[0], label="medium busy")
        retries = trailing_mean(rows["retries"].to_numpy() / interval, window)
        label = f"{station} (AP)" if position == 0 else station
        retry_axes.plot(times, retries, color=LINK_COLOURS[position % len(LINK_COLOURS)], label=label)
    for axes in (busy_axes, retry_axes):
        axes.set_xlim(left=0)
        axes.set_ylim(bottom=0)
    busy_axes.set_ylim(top=100)
    if retry_axes.lines:
        handles, labels = retry_axes.get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels)), frameon=False)
    return figure


@_print_style
def fct_figure(result: Result) -> Figure:
    """Flow completion time against flow size, log-log: one dot per completed flow coloured by
    algorithm, and per algorithm the median (solid) and 99th percentile (dashed) of each
    size bin (`FCT_BINS_PER_DECADE` bins per decade). Unfinished flows are counted in the
    title."""
    figure = Figure(figsize=(7, 4.2), dpi=150, layout="constrained")
    axes = figure.add_subplot()
    points = fct_points(result)
    unfinished = sum(1 for _, _, fct_ms in points if fct_ms is None)
    title = f"{result.name}: flow completion time by size"
    axes.set(title=title + (f" ({unfinished} unfinished, not shown)" if unfinished else ""))
    axes.set(xlabel="flow size (bytes)", ylabel="flow completion time (ms)", xscale="log", yscale="log")
    for algorithm in dict.fromkeys(cc for cc, _, _ in points):
        done = np.array([(size, fct_ms) for cc, size, fct_ms in points if cc == algorithm and fct_ms is not None])
        if not len(done):
            continue
        colour = algorithm_colour(algorithm)
        axes.scatter(done[:, 0], done[:, 1], s=6, color=colour, alpha=0.5, linewidths=0, label=algorithm)
        edges = np.floor(np.log10(done[:, 0]) * FCT_BINS_PER_DECADE)
        bins = np.unique(edges)
        centres = 10 ** ((bins + 0.5) / FCT_BINS_PER_DECADE)
        for q, linestyle in ((50, "-"), (99, (0, (5, 2)))):
            values = [np.percentile(done[edges == b, 1], q, method="inverted_cdf") for b in bins]
            axes.plot(centres, values, color=colour, linestyle=linestyle, label=f"{algorithm} p{q}")
    return _with_legend(figure, axes, bool(axes.collections), "no flow completed")


def fct_points(result: Result) -> list[tuple[str, int, float | None]]:
    """(algorithm, size in bytes, completion time in ms or None if unfinished) of each flow
    with `bytes` set in the resolved scenario."""
    specs = result.scenario.get("flows") or []
    points = []
    for spec, flow in zip(specs, result.summary["flows"] if specs else [], strict=True):
        if spec.get("bytes") is None:
            continue
        completion_s = flow.get("completion_s")
        points.append((flow["cc"], size_bytes(spec["bytes"]), None if completion_s is None else completion_s * 1e3))
    return points


def nlos_spans(result: Result) -> dict[str, list[tuple[float, float]]]:
    """Per user of an mmWave cell, the (start, end) times in seconds of the sampled spans
    without line of sight; empty without a cell."""
    if result.radio is None:
        return {}
    spans: dict[str, list[tuple[float, float]]] = {}
    for ue in result.radio["ue"].unique(maintain_order=True):
        rows = result.radio.filter(pl.col("ue") == ue)
        times, los = rows["t_s"].to_numpy(), rows["los"].to_numpy()
        edges = np.flatnonzero(np.diff(np.concatenate(([1.0], los, [1.0]))))
        starts, ends = edges[::2], edges[1::2]
        end_times = [times[min(end, len(times) - 1)] for end in ends]
        spans[ue] = [(float(times[a]), float(b)) for a, b in zip(starts, end_times, strict=True)]
    return spans


def _shade_nlos(axes: Axes, result: Result) -> None:
    for position, (ue, spans) in enumerate(nlos_spans(result).items()):
        shade = NLOS_SHADES[position % len(NLOS_SHADES)]
        for index, (start, end) in enumerate(spans):
            label = f"{ue}: no line of sight" if index == 0 else None
            axes.axvspan(start, end, color=shade, alpha=NLOS_ALPHA, linewidth=0, label=label)


def _new_figure(result: Result, title: str, ylabel: str) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(7, 3.6), dpi=150, layout="constrained")
    axes = figure.add_subplot()
    axes.set(title=f"{result.name}: {title}", xlabel="time (s)", ylabel=ylabel)
    _shade_nlos(axes, result)
    return figure, axes


# What a figure of flows.parquet's column shows of a run that recorded its flows in groups:
# the flow_groups.parquet column, and what it is over the group's flows.
GROUP_COLUMNS = {
    "goodput_mbps": ("goodput_mbps", "sum"),
    "srtt_ms": ("srtt_p50_ms", "median"),
    "cwnd_pkts": ("cwnd_p50_pkts", "median"),
}


def _plot_flows(
    axes: Axes,
    result: Result,
    column: str,
    transform: Callable[[np.ndarray], np.ndarray] = lambda values: values,
) -> None:
    if result.flow_groups is not None:
        _plot_groups(axes, result.flow_groups, column, transform)
        return
    for flow_id, style in flow_styles(result).items():
        rows = result.flows.filter(pl.col("flow") == flow_id)
        if rows.is_empty():
            continue
        axes.plot(
            rows["t_s"].to_numpy(),
            transform(rows[column].to_numpy()),
            label=style.label,
            color=style.colour,
            linestyle=style.linestyle,
            zorder=2,
        )


def _plot_groups(
    axes: Axes,
    groups: pl.DataFrame,
    column: str,
    transform: Callable[[np.ndarray], np.ndarray],
) -> None:
    """One line per group of flows (algorithm and stack): `GROUP_COLUMNS[column]`."""
    group_column, over = GROUP_COLUMNS[column]
    keys = groups.select("cc", "stack").unique(maintain_order=True).iter_rows()
    stacks = groups["stack"].n_unique()
    for number, (cc, stack) in enumerate(keys):
        rows = groups.filter((pl.col("cc") == cc) & (pl.col("stack") == stack))
        name = f"{cc} ({stack})" if stacks > 1 else cc
        axes.plot(
            rows["t_s"].to_numpy(),
            transform(rows[group_column].to_numpy()),
            label=f"{name}, {over} over up to {int(rows['flows_active'].max() or 0)} active flows",
            color=algorithm_colour(cc),
            linestyle=LINE_STYLES[number % len(LINE_STYLES)] if stacks > 1 else "-",
            zorder=2,
        )


def _finished(figure: Figure, axes: Axes) -> Figure:
    """Starts both axes at zero and adds the legend below the plot, or says there is no data."""
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    return _with_legend(figure, axes, bool(axes.lines), "no samples")


def _with_legend(figure: Figure, axes: Axes, drawn: bool, empty_text: str) -> Figure:
    """The legend below the plot when something was `drawn`, else `empty_text` in its middle."""
    if drawn:
        entries = len(axes.get_legend_handles_labels()[1])
        figure.legend(loc="outside lower center", ncols=min(4, entries), frameon=False)
    else:
        axes.text(0.5, 0.5, empty_text, transform=axes.transAxes, ha="center", color="0.4")
    return figure


def _sampling_interval(frame: pl.DataFrame) -> float:
    """The spacing of the sample times in seconds (`GOODPUT_WINDOW_SECONDS` if unknown)."""
    times = np.unique(frame["t_s"].drop_nulls().to_numpy())
    return float(np.median(np.diff(times))) if len(times) > 1 else GOODPUT_WINDOW_SECONDS


def _seconds_text(seconds: float) -> str:
    return f"{seconds:.3g} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def trailing_mean(values: np.ndarray, window: int) -> np.ndarray:
    """Mean of each value and the `window - 1` before it (fewer at the start)."""
    sums = np.concatenate(([0.0], np.cumsum(values, dtype=float)))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    return (sums[ends] - sums[starts]) / (ends - starts)
