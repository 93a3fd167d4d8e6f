"""The figure of a campaign: each combination's goodput against its 95th-percentile RTT, the
throughput–delay scatter of Pantheon (Yan et al., "Pantheon: the training ground for Internet
congestion-control research", USENIX ATC 2018): the delay axis is logarithmic and runs from
high to low, so that better is up and to the right. A marker is the mean over the seeds; the
seeds' own runs are the faint dots around it.

The first axis that sets an algorithm (a key ending in `cc`) gives the colour, the next axis
the marker, a third one panels side by side, and any others are written beside each marker.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib
import polars as pl
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .figures import PRINT_STYLE, algorithm_colour

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
PANEL_WIDTH_IN = 4.2
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
"""Tick labels of the logarithmic delay axis as plain numbers (20, 50, 100, 200)."""

Assign = Callable[[list[Any]], dict[Any, Any]]


def delay_throughput_figure(name: str, index: pl.DataFrame, table: pl.DataFrame, axes: Sequence[str]) -> Figure:
    """Goodput against p95 RTT per combination of `axes` (`table`: `Campaign.table()`), each
    seed's run of `index` (`Campaign.index()`) a faint dot."""
    colour_axis = next((a for a in axes if _is_algorithm(a)), axes[0] if axes else None)
    rest = [a for a in axes if a != colour_axis]
    marker_axis, panel_axis = [*rest, None, None][:2]
    annotated = rest[2:]
    colours = _styles(table, colour_axis, _colours_for(colour_axis))
    markers = _styles(table, marker_axis, lambda values: dict(zip(values, itertools.cycle(MARKERS))))
    panels = list(dict.fromkeys(table[panel_axis].to_list())) if panel_axis else [None]
    runs = index.filter(pl.col("status") == "ok")
    with matplotlib.rc_context(PRINT_STYLE):
        figure = Figure(figsize=(PANEL_WIDTH_IN * len(panels) + 2.2, 4.6), layout="constrained")
        plots = figure.subplots(1, len(panels), sharex=True, sharey=True, squeeze=False)[0]
        figure.suptitle(f"{name}: goodput against 95th-percentile RTT (mean of the seeds; dots: each seed)")
        for plot, panel in zip(plots, panels, strict=True):
            rows = table if panel_axis is None else table.filter(pl.col(panel_axis) == panel)
            for row in rows.iter_rows(named=True):
                style = {"color": colours.get(row.get(colour_axis), "0.3"), "marker": markers.get(row.get(marker_axis), "o")}
                seeds = runs.filter(pl.all_horizontal([pl.col(a) == row[a] for a in axes])) if axes else runs
                plot.scatter(seeds["rtt_p95_ms"], seeds["goodput_mbps"], s=12, alpha=0.35, linewidths=0, **style)
                plot.plot(row["rtt_p95_ms_mean"], row["goodput_mbps_mean"], markersize=8, linestyle="none", **style)
                if annotated:
                    label = ", ".join(str(row[a]) for a in annotated)
                    at = (row["rtt_p95_ms_mean"], row["goodput_mbps_mean"])
                    plot.annotate(label, at, fontsize=7, xytext=(4, 4), textcoords="offset points")
            plot.set_xscale("log")
            plot.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            plot.xaxis.set_major_formatter(PLAIN)
            plot.xaxis.set_minor_formatter(NullFormatter())
            plot.set_xlabel("95th-percentile RTT (ms, log; better →)")
            if panel_axis is not None:
                plot.set_title(f"{_short(panel_axis)} = {panel}")
        plots[0].invert_xaxis()  # shared: once for every panel
        plots[0].set_ylabel("goodput (Mbps, all flows; better ↑)")
        handles = [_entry(f"{_short(colour_axis)} = {v}", colour=c, marker="o") for v, c in colours.items()]
        handles += [_entry(f"{_short(marker_axis)} = {v}", colour="0.3", marker=m) for v, m in markers.items()]
        if handles:
            figure.legend(handles=handles, loc="outside right upper", frameon=False)
        return figure


def _is_algorithm(axis: str) -> bool:
    return axis == "cc" or axis.endswith(".cc")


def _short(axis: str | None) -> str:
    """An axis by its last dotted part: "queue" for "topology.bottleneck.queue"."""
    return (axis or "").rsplit(".", 1)[-1]


def _styles(table: pl.DataFrame, axis: str | None, assign: Assign) -> dict[Any, Any]:
    """A style per value of `axis`, in the order the values first appear."""
    if axis is None:
        return {}
    return assign(list(dict.fromkeys(table[axis].to_list())))


def _colours_for(axis: str | None) -> Assign:
    """Algorithms get their colour of every figure; other values the palette in order."""
    if axis is not None and _is_algorithm(axis):
        return lambda values: {v: algorithm_colour(str(v)) for v in values}
    return lambda values: dict(zip(values, itertools.cycle(PALETTE)))


def _entry(label: str, colour: str, marker: str) -> Line2D:
    return Line2D([], [], color=colour, marker=marker, linestyle="none", label=label)
