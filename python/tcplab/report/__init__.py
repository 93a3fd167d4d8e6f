"""The report of a reproduced study (`tcplab reproduce`, `tcplab report DIR`): one
self-contained `report.html` — it works offline, with the plotting library (plotly.js)
embedded — and `figures/*.png` for print.

The page states the study and its setup (the study file, whose comments say which value we
chose for everything the study left open), the tcplab version, seeds, runs and wall time, the
study's findings each marked reproduced or not by its explicit check (`findings`), the table
of means ± 95 % confidence intervals per case (loss and, in a radio run, the radio's utilization
under names that say so), the study's figures (`panels`: windowed goodput as the mean over seeds
with a min-max band, single-run traces naming their seed, per-variant NLOS shading, the SINR
outage line, geometry maps), each both interactive (zoom, hover, toggle) and as a PNG drawn from
the same traces, and the resolved scenario of every case's first run. A figure states the stack
and each assumed value its cases leave open (the study's first value of each such axis).
A `--quick` study says so in its title and on every figure.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import itertools
import json
import math
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .. import _core
from ..emu.settings import KERNEL_CC_NAMES
from ..emu.study import emulated_cases, skipped_cases
from ..metrics import METRICS, metrics
from ..result import Result
from ..studies import Published, assumptions_of, published_of, swept_assumptions
from ..sweep.campaign import study_campaign
from ..sweep.store import aggregate
from .findings import StudyRuns, Verdict, check
from .panels import PANELS, Panel, Trace, series

REPORT_FILE = "report.html"
FIGURES_DIRECTORY = "figures"
METADATA_FILE = "reproduce.json"
CASE_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#332288", "#882255", "#117733", "#999933")


def read_metadata(directory: Path) -> dict[str, Any]:
    """What `tcplab reproduce` recorded about a directory's sweep ({} if nothing yet)."""
    path = directory / METADATA_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def write_metadata(directory: Path, **metadata: Any) -> None:
    (directory / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")


def build_report(directory: Path, progress: Callable[[float], None] | None = None) -> Path:
    """Writes `report.html` and `figures/` of a `tcplab reproduce` directory (no figures when
    its recorded figure formats are none: `--no-plots`); returns the page. `progress` is called
    with the fraction of the figures drawn."""
    started = time.perf_counter()
    meta = read_metadata(directory)
    study, quick = meta["study"], meta["quick"]
    spec = study_campaign(directory / "campaign.toml", quick)
    index_path = directory / "index.parquet"
    index = pl.read_parquet(index_path) if index_path.is_file() else pl.DataFrame({"run_id": [], "status": []})
    table = aggregate(index, list(spec.axes))
    runs = StudyRuns(directory, index, table)
    document = tomllib.loads((directory / "campaign.toml").read_text(encoding="utf-8"))
    assumptions = assumptions_of(document, study)
    verdicts = check(study, runs, swept_assumptions(document, study)) if index.height else []

    # A figure that names no stack shows the study's own, and of each assumption the first value:
    # a trace never mixes runs of different stacks or assumed values.
    fixed = {axis: str(spec.axes[axis][0][0]) for axis in ("stack", *assumptions) if axis in spec.axes}

    def runs_for_case(case: dict[str, str]) -> list[Result]:
        found = runs.runs(**{**fixed, **case}) if index.height else []
        return sorted(found, key=lambda r: r.scenario.get("seed", 0))

    def run_for_case(case: dict[str, str]) -> Result | None:
        return next(iter(runs_for_case(case)), None)

    panels = (
        [(with_fixed_axes(panel, fixed), series(panel, runs_for_case)) for panel in PANELS.get(study, [])] if index.height else []
    )
    kernel = emulated_cases(directory)
    kernel_panels = _kernel_panels(spec, kernel, run_for_case)
    formats = tuple(meta.get("figure_formats", ["png"]))
    write_figures(panels + kernel_panels, directory / FIGURES_DIRECTORY, formats, quick, progress)
    runs_by_case = {}
    if index.height:
        for params in itertools.product(*[[str(v) for v, _ in values] for values in spec.axes.values()]):
            run = run_for_case(dict(zip(spec.axes, params, strict=True)))
            if run is not None:
                runs_by_case["-".join(params)] = run
    beside = _published_html(spec, table, published_of(document, study, METRICS), assumptions)
    page = _page(meta, spec, index, table, verdicts, panels, directory, time.perf_counter() - started, runs_by_case)
    page = page.replace("<h2>Findings", beside + "<h2>Findings", 1)
    if kernel or skipped_cases(directory):
        page = page.replace(
            "<h2>Setup</h2>",
            _kernel_section(spec, kernel, skipped_cases(directory), run_for_case, kernel_panels, quick) + "<h2>Setup</h2>",
        )
    return write_page(directory / REPORT_FILE, page)


def with_fixed_axes(panel: Panel, fixed: dict[str, str]) -> Panel:
    """The panel, its title naming the value of each of `fixed`'s axes its cases leave open."""
    named = [f"{axis} {value}" for axis, value in fixed.items() if all(axis not in case for case in panel.cases)]
    return dataclasses.replace(panel, title=f"{panel.title} ({', '.join(named)})") if named else panel


def _case_params(spec: Any, case: str) -> dict[str, str]:
    """The axis values a case name stands for (the values joined with '-', in axis order)."""
    for params in itertools.product(*[[str(v) for v, _ in values] for values in spec.axes.values()]):
        if "-".join(params) == case:
            return dict(zip(spec.axes, params, strict=True))
    raise KeyError(case)


def _published_html(spec: Any, table: pl.DataFrame, published: list[Published], assumptions: dict[str, str]) -> str:
    """What each assumption takes (swept or fixed) and why; then the study's published numbers
    beside tcplab's (mean ± 95 % CI over seeds, in the study's unit, and the difference in %),
    a row per value of the axes an entry leaves open, or a line saying it publishes none."""
    parts = []
    if assumptions:
        items = "".join(
            f"<li><b>{html.escape(key)}</b> ({_assumed_values(spec, key)}): {html.escape(text)}</li>"
            for key, text in assumptions.items()
        )
        parts.append(f"<h2>Assumptions: what the study leaves open</h2><ul>{items}</ul>")
    if published:
        head = ["published", "case", "study's value", "tcplab mean ± 95 % CI", "Δ", "unit", "source"]
        rows = []
        for entry in published:
            free = [axis for axis in spec.axes if axis not in entry.case]
            for combination in itertools.product(*[[str(v) for v, _ in spec.axes[axis]] for axis in free]):
                case = {**entry.case, **dict(zip(free, combination, strict=True))}
                found = table.filter(*[pl.col(k) == v for k, v in case.items()]) if table.height else table
                mean = found[f"{entry.metric}_mean"][0] if found.height == 1 and f"{entry.metric}_mean" in found.columns else None
                ci = found[f"{entry.metric}_ci95"][0] if mean is not None else None
                if mean is None:
                    ours = "–"
                elif ci is None or identical_across_seeds(mean, ci):
                    ours = f"{entry.from_metric(mean):.4g}" + ("" if ci is None else " (every seed)")
                else:
                    ours = f"{entry.from_metric(mean):.4g} ± {entry.from_metric(ci):.2g}"
                delta = "–" if mean is None else f"{100 * entry.difference(entry.from_metric(mean)):+.1f} %"
                # as the study gives it (up to 6 significant digits)
                value = (
                    f"{entry.value:.6g}" if not isinstance(entry.value, tuple) else f"{entry.value[0]:g} to {entry.value[1]:g}"
                )
                rows.append(
                    [entry.what, "-".join(case[a] for a in spec.axes if a in case), value, ours, delta, entry.unit, entry.source]
                )
        parts.append(
            "<h2>Published vs tcplab</h2><p>Each number the study publishes, beside tcplab's in the same case and unit, "
            "for each value of the axes the study does not fix (the stack, the assumptions); Δ is tcplab's difference "
            "from it (0 inside a published range).</p>" + table_html(head, rows)
        )
    else:
        parts.append(
            "<h2>Published vs tcplab</h2><p>The study publishes no numbers, only figures: its claims are checked as "
            "findings below.</p>"
        )
    return "".join(parts)


def _assumed_values(spec: Any, key: str) -> str:
    """What an assumption takes: an axis's values (swept) or the base scenario's value (fixed)."""
    if key in spec.axes:
        return "swept: " + html.escape(", ".join(str(v) for v, _ in spec.axes[key]))
    value: Any = spec.base
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "fixed: " + html.escape(json.dumps(value) if not isinstance(value, str) else value)


def _kernel_panels(spec: Any, kernel: dict[str, Result], run_for_case: Any) -> list[tuple[Panel, list[Trace]]]:
    """Per kernel case: goodput, smoothed RTT and bottleneck queue, simulator (seed 1) and kernel."""
    return [
        panel
        for case, result in kernel.items()
        for panel in overlay_panels(case, {"simulator": run_for_case(_case_params(spec, case)), "kernel": result})
    ]


def overlay_panels(case: str, runs: dict[str, Result | None]) -> list[tuple[Panel, list[Trace]]]:
    """Goodput, smoothed RTT and bottleneck queue of one case, every flow of each named run
    (the simulator's, the kernel's) overlaid; a run that is None is left out."""
    panels = []
    for title, frame, column, unit, where in (
        ("goodput", "flows", "goodput_mbps", "Mbps", {}),
        ("smoothed RTT", "flows", "srtt_ms", "ms", {}),
        ("bottleneck queue", "links", "backlog_pkts", "packets", {"link": "left->right"}),
    ):
        panel = Panel(f"{case}: {title}, simulator vs kernel", frame, column, unit, cases=[{}], where=where, per_flow=True)
        traces = []
        for backend, run in runs.items():
            if run is not None:
                traces += [
                    dataclasses.replace(t, name=f"{backend} {t.name.strip()}".strip())
                    for t in series(panel, lambda _c, r=run: [r])
                ]
        panels.append((panel, traces))
    return panels


def _kernel_section(
    spec: Any,
    kernel: dict[str, Result],
    skipped: dict[str, str],
    run_for_case: Any,
    panels: list[tuple[Panel, list[Trace]]],
    quick: bool,
) -> str:
    head = ["case", "backend", "goodput Mbps", "RTT mean ms", "RTT p95 ms", "retransmits", "mean queue pkts", "valid"]
    rows = []
    for case, result in kernel.items():
        for backend, run in (("simulator (seed 1)", run_for_case(_case_params(spec, case))), ("kernel", result)):
            if run is None:
                continue
            link = next(link for link in run.summary["links"] if link["id"] == "left->right")
            validity = run.summary["run"].get("validity")
            valid = "–" if validity is None else ("yes" if validity["valid"] else "no: " + "; ".join(validity["reasons"]))
            headline = metrics(run.summary)
            rows.append(
                [
                    case,
                    backend,
                    headline["goodput_mbps"],
                    headline["rtt_mean_ms"],
                    headline["rtt_p95_ms"],
                    int(headline["retransmits"]),
                    link["backlog_mean_pkts"],
                    valid,
                ]
            )
    divs = plot_divs(panels, quick, prefix="kernel-plot")
    not_run = "".join(f"<li>{html.escape(case)}: {html.escape(why)}</li>" for case, why in skipped.items())
    return (
        f"<h2>On this machine's kernel (emulation)</h2><p>Each case once on kernel TCP (`tcplab emulate`), beside the "
        f"simulator's seed-1 run. RTT statistics: the kernel's are over smoothed-RTT samples, the simulator's over every ACK.</p>"
        f"{table_html(head, rows)}{divs}"
        + (f"<p>Not emulated: this kernel lacks what these cases need.</p><ul>{not_run}</ul>" if skipped else "")
    )


def table_html(head: list[str], rows: list[list[Any]]) -> str:
    """A scrollable table: `head`'s cells as headers, each row's values (4 significant digits)."""
    header = "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<div class='scroll'><table>{header}{body}</table></div>"


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:90]


DASHES = ("solid", "dash", "dot", "dashdot")


@functools.cache
def _algorithm_names() -> dict[str, str]:
    """The algorithm a trace name may mention -> the catalog's name of it: the catalog's
    algorithms, and the kernel's names of those it calls differently (`reno`, which scenarios
    and studies also accept for `newreno`)."""
    names = {algorithm["name"]: algorithm["name"] for algorithm in json.loads(_core.catalog())["algorithms"]}
    return names | {kernel: name for name, kernel in KERNEL_CC_NAMES.items()}


def _styles(traces: list[Trace]) -> list[tuple[str, int]]:
    """(colour, dash index) per trace: its own colour if it has one, else an algorithm's colour
    where the name has one (the same as in every other figure), dashes telling apart traces of
    one colour."""
    from ..plots.figures import algorithm_colour

    names = _algorithm_names()
    styles, used = [], {}
    for position, trace in enumerate(traces):
        words = set(trace.name.replace("(", " ").replace(")", " ").split())
        algorithm = next(iter(sorted(words & names.keys())), None)
        colour = trace.colour or (algorithm_colour(names[algorithm]) if algorithm else CASE_COLOURS[position % len(CASE_COLOURS)])
        styles.append((colour, used.get(colour, 0)))
        used[colour] = used.get(colour, 0) + 1
    return styles


def figure_title(panel: Panel, traces: list[Trace], quick: bool) -> str:
    """The panel's title, with the runs its traces stand for ("seed N", or "mean of N seeds"
    with the band's meaning) and a --quick mark."""
    seeds = {trace.seeds for trace in traces if trace.seeds}
    runs = ""
    if seeds and all(len(s) == 1 for s in seeds):
        runs = ", seed " + ", ".join(str(s[0]) for s in sorted(seeds))
    elif seeds:
        counts = sorted({len(s) for s in seeds})
        runs = f", mean of {' or '.join(map(str, counts))} seeds (band: lowest to highest)"
    return panel.title + runs + (" (--quick: shortened runs)" if quick else "")


def _y_label(panel: Panel) -> str:
    return panel.y_label or f"{panel.column.rsplit('_', 1)[0].replace('_', ' ')} ({panel.unit})"


def _reference_span(traces: list[Trace]) -> tuple[float, float]:
    """The x range a horizontal reference line spans: the traces'."""
    xs = [x for trace in traces for x in (np.nanmin(trace.x), np.nanmax(trace.x)) if len(trace.x)]
    return (min(xs), max(xs)) if xs else (0.0, 1.0)


def _polygons(trace: Trace) -> list[tuple[np.ndarray, np.ndarray]]:
    """An area trace's polygons: its points split at NaN."""
    breaks = np.flatnonzero(np.isnan(trace.x))
    pieces = zip(np.split(trace.x, breaks), np.split(trace.y, breaks), strict=True)
    return [(x[np.isfinite(x)], y[np.isfinite(x)]) for x, y in pieces if np.isfinite(x).sum() > 2]


def _png(panel: Panel, traces: list[Trace], quick: bool) -> Any:
    import matplotlib
    from matplotlib.figure import Figure

    from ..plots.figures import LINE_STYLES, NLOS_ALPHA, PRINT_STYLE

    with matplotlib.rc_context(PRINT_STYLE):
        figure = Figure(figsize=(7, 3.6), dpi=150, layout="constrained")
        axes = figure.add_subplot()
        axes.set(title=figure_title(panel, traces, quick), xlabel=panel.x_label, ylabel=_y_label(panel))
        axes.title.set_wrap(True)
        for trace, (colour, dash) in zip(traces, _styles(traces), strict=True):
            if trace.kind == "area":
                for index, (x, y) in enumerate(_polygons(trace)):
                    axes.fill(x, y, color=colour, alpha=0.6, linewidth=0, label=trace.name if index == 0 else None)
            elif trace.kind == "marker":
                axes.plot(trace.x, trace.y, "^", color=colour, markersize=8, label=trace.name, linestyle="none")
            else:
                if trace.band is not None:
                    axes.fill_between(trace.x, *trace.band, color=colour, alpha=0.2, linewidth=0)
                style = LINE_STYLES[dash % len(LINE_STYLES)]
                axes.plot(trace.x, trace.y, label=trace.name, color=colour, linestyle=style, linewidth=1.1)
        for y, label in panel.lines:
            axes.axhline(y, color="0.25", linestyle=(0, (5, 3)), linewidth=1.0, label=label)
        if traces:
            for start, end in traces[0].nlos:
                axes.axvspan(start, end, color="0.6", alpha=NLOS_ALPHA, linewidth=0)
            labels = axes.get_legend_handles_labels()[1]
            columns = 4 if max(map(len, labels), default=0) <= 22 else 2
            figure.legend(loc="outside lower center", ncols=min(columns, len(labels)), frameon=False)
        if panel.frame == "geometry":
            axes.set_aspect("equal", adjustable="datalim")
        else:
            axes.set_xlim(left=0)
            if panel.column != "sinr_db":
                axes.set_ylim(bottom=0)
        return figure


def _json_list(values: Any) -> list[float | None]:
    return [None if not math.isfinite(float(v)) else round(float(v), 6) for v in values]


def _rgba(colour: str, alpha: float) -> str:
    """A "#rrggbb" colour with transparency, as plotly fills take it (a trace's opacity leaves
    its fill opaque)."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def _plotly_traces(trace: Trace, colour: str, dash: int) -> list[dict[str, Any]]:
    """A trace as plotly traces: a band (lowest, then highest filled to it) under a line, or
    filled polygons, or markers."""
    common = {"x": _json_list(trace.x), "name": trace.name, "type": "scatter", "legendgroup": trace.name}
    if trace.kind == "area":
        return [
            {
                **common,
                "y": _json_list(trace.y),
                "mode": "lines",
                "fill": "toself",
                "fillcolor": _rgba(colour, 0.6),
                "line": {"width": 0},
            }
        ]
    if trace.kind == "marker":
        return [
            {
                **common,
                "y": _json_list(trace.y),
                "mode": "markers",
                "marker": {"color": colour, "size": 11, "symbol": "triangle-up"},
            }
        ]
    band = []
    if trace.band is not None:
        edge = {**common, "mode": "lines", "line": {"width": 0, "color": colour}, "showlegend": False, "hoverinfo": "skip"}
        band = [
            {**edge, "y": _json_list(trace.band[0])},
            {**edge, "y": _json_list(trace.band[1]), "fill": "tonexty", "fillcolor": _rgba(colour, 0.2)},
        ]
    line = {
        **common,
        "y": _json_list(trace.y),
        "mode": "lines",
        "line": {"color": colour, "width": 1.2, "dash": DASHES[dash % len(DASHES)]},
    }
    return [*band, line]


def _plotly_spec(panel: Panel, traces: list[Trace], quick: bool) -> dict[str, Any]:
    data = [part for t, (colour, dash) in zip(traces, _styles(traces), strict=True) for part in _plotly_traces(t, colour, dash)]
    start, end = _reference_span(traces)
    data += [
        {
            "x": [start, end],
            "y": [y, y],
            "name": label,
            "type": "scatter",
            "mode": "lines",
            "line": {"color": "#404040", "width": 1, "dash": "dash"},
        }
        for y, label in panel.lines
    ]
    shapes = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": a,
            "x1": b,
            "y0": 0,
            "y1": 1,
            "fillcolor": "#999999",
            "opacity": 0.2,
            "line": {"width": 0},
        }
        for a, b in (traces[0].nlos if traces else [])
    ]
    # as the PNG: a map to scale, else axes from zero (SINR's y axis aside)
    x_axis: dict[str, Any] = {"title": {"text": panel.x_label}}
    y_axis: dict[str, Any] = {"title": {"text": _y_label(panel)}}
    if panel.frame == "geometry":
        y_axis |= {"scaleanchor": "x", "scaleratio": 1}
    else:
        x_axis["rangemode"] = "tozero"
        if panel.column != "sinr_db":
            y_axis["rangemode"] = "tozero"
    layout = {
        "title": {"text": figure_title(panel, traces, quick), "font": {"size": 14}},
        "xaxis": x_axis,
        "yaxis": y_axis,
        "shapes": shapes,
        "legend": {"orientation": "h"},
        "margin": {"l": 60, "r": 20, "t": 50, "b": 40},
        "height": 380,
    }
    return {"data": data, "layout": layout}


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


def identical_across_seeds(mean: float, ci95: float) -> bool:
    """Whether a confidence half-width says every seed gave the same value (up to the rounding
    of the mean): shown as such, since `± 0` reads like a bug."""
    return ci95 <= 1e-12 * max(abs(mean), 1.0)


IDENTICAL_NOTE = "* identical across seeds: every seed gave this value."


def metric_headers(radio: bool) -> dict[str, str]:
    """The results table's header of the metrics a bare name would leave unclear: loss, and
    the bottleneck's utilization, which in a radio run is the radio's (`metrics.metrics`)."""
    utilization = "radio utilization (share of data symbols)" if radio else "bottleneck utilization"
    return {
        "retransmit_pct": "loss % (retransmitted / sent segments)",
        "bottleneck_utilization": f"{utilization} (bottleneck_utilization)",
    }


def _table_html(table: pl.DataFrame, keys: list[str], headers: dict[str, str]) -> str:
    metrics = [c.removesuffix("_mean") for c in table.columns if c.endswith("_mean")]
    head = "".join(f"<th>{html.escape(headers.get(k, k))}</th>" for k in [*keys, "runs", *metrics])
    rows, marked = [], False
    for row in table.iter_rows(named=True):
        cells = [_cell(row[k]) for k in keys] + [str(row["runs"])]
        for m in metrics:
            mean, ci = row[f"{m}_mean"], row.get(f"{m}_ci95")
            if mean is not None and ci is not None and identical_across_seeds(mean, ci):
                cells.append(f"{_cell(mean)} <abbr title='identical across seeds'>*</abbr>")
                marked = True
            else:
                cells.append(_cell(mean) + ("" if ci is None else f" ± {_cell(ci)}"))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    note = f"<p>{IDENTICAL_NOTE}</p>" if marked else ""
    return f"<div class='scroll'><table><tr>{head}</tr>{''.join(rows)}</table></div>{note}"


def page_html(title: str, body: str) -> str:
    """A self-contained page: inline style and the plotting library, then `body`."""
    import plotly

    plotly_js = (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.85em; }} td, th {{ border: 1px solid #ccc; padding: 3px 6px; text-align: right; }}
th {{ background: #f3f3f3; }} .scroll {{ overflow-x: auto; }} .plot {{ min-height: 380px; margin: 1em 0; }}
li.yes b {{ color: #11773a; }} li.no b {{ color: #b00020; }} .evidence {{ color: #555; font-size: 0.9em; }}
.quick {{ background: #fff3cd; padding: 0.5em; border: 1px solid #e0c060; }} pre {{ background: #f7f7f7; padding: 1em; overflow-x: auto; }}
</style>
<script>{plotly_js}</script>
</head><body>
<h1>{html.escape(title)}</h1>
{body}
</body></html>
"""


def plot_divs(panels: list[tuple[Panel, list[Trace]]], quick: bool = False, prefix: str = "plot") -> str:
    """One interactive plot per panel, in elements `<prefix>1`, `<prefix>2`, ..."""
    divs = []
    for number, (panel, traces) in enumerate(panels, start=1):
        spec_json = json.dumps(_plotly_spec(panel, traces, quick)).replace("</", "<\\/")
        element = f"{prefix}{number}"
        divs.append(
            f"<div class='plot' id='{element}'></div><script>(function(){{var s={spec_json};Plotly.newPlot('{element}',s.data,s.layout,{{responsive:true,displaylogo:false}});}})();</script>"
        )
    return "".join(divs)


def write_figures(
    panels: list[tuple[Panel, list[Trace]]],
    directory: Path,
    formats: tuple[str, ...] = ("png",),
    quick: bool = False,
    progress: Callable[[float], None] | None = None,
) -> list[Path]:
    """Each panel as a figure file per format (png, svg, pdf) in `directory`, replacing the
    numbered figures of an earlier build; none without formats. `progress` is called with the
    fraction drawn after each panel."""
    paths: list[Path] = []
    if not formats:
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    for earlier in directory.glob("[0-9][0-9]-*"):
        if earlier.suffix in {".png", ".svg", ".pdf"}:
            earlier.unlink()
    for number, (panel, traces) in enumerate(panels, start=1):
        figure = _png(panel, traces, quick)
        for fmt in formats:
            path = directory / f"{number:02d}-{_slug(panel.title)}.{fmt}"
            figure.savefig(path)
            paths.append(path)
        if progress is not None:
            progress(number / len(panels))
    return paths


def write_page(target: Path, page: str) -> Path:
    """Writes `page` atomically."""
    staging = target.with_name(f".{target.name}.partial")
    staging.write_text(page, encoding="utf-8")
    staging.replace(target)
    return target


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [row for key, item in value.items() for row in _flatten(item, f"{prefix}.{key}" if prefix else key)]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [row for i, item in enumerate(value) for row in _flatten(item, f"{prefix}.{i}")]
    return [(prefix, value)]


def _setup_table(base: dict[str, Any]) -> str:
    from ..scenario import validate

    rows = "".join(
        f"<tr><td style='text-align:left'>{html.escape(k)}</td><td style='text-align:left'>{html.escape(json.dumps(v) if not isinstance(v, str) else v)}</td></tr>"
        for k, v in _flatten(validate(base))
    )
    return f"<details open><summary>parameters</summary><div class='scroll'><table><tr><th>key</th><th>value</th></tr>{rows}</table></div></details>"


def _resolved_scenarios(runs_by_case: dict[str, Any]) -> str:
    from ..scenario import to_toml

    return "".join(
        f"<details><summary>resolved scenario of {html.escape(case)} (seed {run.scenario.get('seed')})</summary><pre>{html.escape(to_toml(run.scenario))}</pre></details>"
        for case, run in runs_by_case.items()
    )


def _mechanism(verdict: Verdict) -> str:
    return "" if verdict.mechanism is None else f"<br><span class='evidence'>Why: {html.escape(verdict.mechanism)}</span>"


def _page(
    meta: dict[str, Any],
    spec: Any,
    index: pl.DataFrame,
    table: pl.DataFrame,
    verdicts: list[Verdict],
    panels: list[tuple[Panel, list[Trace]]],
    directory: Path,
    report_seconds: float,
    runs_by_case: dict[str, Any],
) -> str:
    study, quick = meta["study"], meta["quick"]
    ok = index.filter(pl.col("status") == "ok").height
    reproduced = sum(v.reproduced for v in verdicts)
    findings = "".join(
        f"<li class='{'yes' if v.reproduced else 'no'}'><b>{'reproduced' if v.reproduced else 'not reproduced'}</b>: {html.escape(v.finding)}<br><span class='evidence'>{html.escape(v.evidence)}</span>{_mechanism(v)}</li>"
        for v in verdicts
    )
    study_file = (directory / "campaign.toml").read_text(encoding="utf-8")
    banner = (
        "<p class='quick'>--quick: every run was shortened for a first look; the numbers are not the study's.</p>"
        if quick
        else ""
    )
    body = f"""{banner}
<p>tcplab {html.escape(_core.version())}; {ok} runs ({len(spec.seeds)} seed{"s" if len(spec.seeds) != 1 else ""} per case: {", ".join(map(str, spec.seeds))});
sweep wall time {meta.get("wall_seconds", 0):.1f} s on {html.escape(str(meta.get("engine", "local")))} with {meta.get("jobs")} workers; report built in {report_seconds:.1f} s.</p>
<h2>Findings ({reproduced} of {len(verdicts)} reproduced)</h2><ul>{findings}</ul>
<h2>Results: mean ± 95 % confidence interval over seeds</h2>{_table_html(table, list(spec.axes), metric_headers(spec.base.get("topology", {}).get("kind") == "mmwave"))}
<h2>Figures</h2><p>As the study drew them: goodput averaged over windows of at least 100 ms and clipped at the path's
capacity, its mean over the case's seeds as a line and their lowest to highest as a band; every other series one run (its
seed in the title), downsampled for display; spans without line of sight shaded grey.</p>{plot_divs(panels, quick)}
<h2>Setup</h2><p>Every parameter of the base scenario, resolved (defaults included); the cases change the keys listed under
<code>[study.axes]</code>. The study file's comments say which value was chosen for everything the study left open.</p>
{_setup_table(spec.base)}
<details><summary>{html.escape(study)}.toml (the study file)</summary><pre>{html.escape(study_file)}</pre></details>
{_resolved_scenarios(runs_by_case)}"""
    return page_html(f"tcplab: {study}{' (--quick)' if quick else ''}", body)
