"""The figure of a campaign: each combination's goodput against its 95th-percentile RTT, the
throughput–delay scatter of Pantheon (Yan et al., "Pantheon: the training ground for Internet
congestion-control research", USENIX ATC 2018): the delay axis is logarithmic and runs from
high to low, so that better is up and to the right. A marker is the mean over the seeds; the
seeds' own runs are the faint dots around it. A campaign of flows with a set size is drawn the
same way by its flow completion times instead: the median against the 99th percentile, both
logarithmic and both running from high to low.

The first axis that sets an algorithm (a key ending in `cc`) gives the colour, the next axis
the marker, a third one panels side by side, and any others are written beside each marker.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import polars as pl
from matplotlib.axis import Axis
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


@dataclass(frozen=True)
class Scale:
    """One axis of the scatter: the metric (a column of the index; `<metric>_mean` in the
    table), its label, whether it is logarithmic and whether lower is better (drawn from high
    to low, so that better is up and to the right)."""

    metric: str
    label: str
    log: bool
    lower_is_better: bool


DELAY_THROUGHPUT = (
    Scale("rtt_p95_ms", "95th-percentile RTT (ms, log; better →)", log=True, lower_is_better=True),
    Scale("goodput_mbps", "goodput (Mbps, all flows; better ↑)", log=False, lower_is_better=False),
    "goodput against 95th-percentile RTT",
)
FCT = (
    Scale("fct_p99_ms", "99th-percentile FCT (ms, log; better →)", log=True, lower_is_better=True),
    Scale("fct_p50_ms", "median FCT (ms, log; better ↑)", log=True, lower_is_better=True),
    "median against 99th-percentile FCT",
)


def delay_throughput_figure(name: str, index: pl.DataFrame, table: pl.DataFrame, axes: Sequence[str]) -> Figure:
    """Goodput against p95 RTT per combination of `axes` (`table`: `Campaign.table()`), each
    seed's run of `index` (`Campaign.index()`) a faint dot."""
    return scatter_figure(name, index, table, axes, *DELAY_THROUGHPUT)


def fct_figure(name: str, index: pl.DataFrame, table: pl.DataFrame, axes: Sequence[str]) -> Figure:
    """Median against 99th-percentile FCT per combination of `axes`, as `delay_throughput_figure`."""
    return scatter_figure(name, index, table, axes, *FCT)


def scatter_figure(
    name: str, index: pl.DataFrame, table: pl.DataFrame, axes: Sequence[str], x: Scale, y: Scale, what: str
) -> Figure:
    """`y` against `x` per combination of `axes`: the mean over the seeds as a marker, each
    seed's run a faint dot; styled by axis as the module says."""
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
        figure.suptitle(f"{name}: {what}\n(markers: the mean of the seeds; dots: each seed)")
        for plot, panel in zip(plots, panels, strict=True):
            rows = table if panel_axis is None else table.filter(pl.col(panel_axis) == panel)
            for row in rows.iter_rows(named=True):
                style = {"color": colours.get(row.get(colour_axis), "0.3"), "marker": markers.get(row.get(marker_axis), "o")}
                seeds = runs.filter(pl.all_horizontal([pl.col(a) == row[a] for a in axes])) if axes else runs
                plot.scatter(seeds[x.metric], seeds[y.metric], s=12, alpha=0.35, linewidths=0, **style)
                at = (row[f"{x.metric}_mean"], row[f"{y.metric}_mean"])
                plot.plot(*at, markersize=8, linestyle="none", **style)
                if annotated:
                    label = ", ".join(str(row[a]) for a in annotated)
                    plot.annotate(label, at, fontsize=7, xytext=(4, 4), textcoords="offset points")
            if x.log:
                plot.set_xscale("log")
                _plain_log_ticks(plot.xaxis)
            if y.log:
                plot.set_yscale("log")
                _plain_log_ticks(plot.yaxis)
            plot.set_xlabel(x.label)
            if panel_axis is not None:
                plot.set_title(f"{_short(panel_axis)} = {panel}")
        # shared: once for every panel
        if x.lower_is_better:
            plots[0].invert_xaxis()
        if y.lower_is_better:
            plots[0].invert_yaxis()
        plots[0].set_ylabel(y.label)
        handles = [_entry(f"{_short(colour_axis)} = {v}", colour=c, marker="o") for v, c in colours.items()]
        handles += [_entry(f"{_short(marker_axis)} = {v}", colour="0.3", marker=m) for v, m in markers.items()]
        if handles:
            figure.legend(handles=handles, loc="outside right upper", frameon=False)
        return figure


def _plain_log_ticks(axis: Axis) -> None:
    """Ticks at 1, 2 and 5 of each decade, labelled as plain numbers."""
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(PLAIN)
    axis.set_minor_formatter(NullFormatter())


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
