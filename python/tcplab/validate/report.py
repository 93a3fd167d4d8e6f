"""The validation's report: report.html, shaped like the study reports (`tcplab.report`), and
figures/ — the error distribution of each metric (the share of compared values whose |error|
is at most x, with the acceptance thresholds) and, per case, the simulator's and the kernel's
goodput, smoothed RTT and bottleneck queue overlaid (0.5 s bins); with bench (d), its BBR
goodput in 20 s bins beside the kernel's."""

from __future__ import annotations

import html
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .. import _core
from ..report import FIGURES_DIRECTORY, REPORT_FILE, overlay_panels, page_html, plot_divs, table_html, write_figures, write_page
from ..report.panels import Panel, Trace
from ..result import Result
from .errors import BBR_BIN_SECONDS, BBR_FACTOR, METRICS, SCALAR_METRICS, percent
from .grid import DEEP_BUFFER_CASE

INTERACTIVE_OVERLAYS = 12  # cases overlaid in the page (the worst by goodput); figures/ has all


def error_panels(errors: pl.DataFrame) -> list[tuple[Panel, list[Trace]]]:
    """Per metric, the empirical distribution of |error| (%) over the valid kernel runs."""
    panels = []
    valid = errors.filter(pl.col("kernel_valid") & pl.col("error").is_not_null())
    for metric in METRICS:
        values = np.sort(valid.filter(pl.col("metric") == metric.name)["error"].abs().to_numpy()) * 100
        panel = Panel(
            f"{metric.label}: |relative error|, simulator vs kernel",
            "",
            "",
            "",
            cases=[],
            x_label="|relative error| (%)",
            y_label="share of compared values",
        )
        # A step at each value: the share of values at most x.
        steps = np.repeat(np.arange(len(values) + 1) / max(1, len(values)), 2)[1:-1]
        traces = [Trace(f"{len(values)} values", np.repeat(values, 2), steps, [])]
        for what, limit in (("median", metric.median_limit), ("worst", metric.worst_limit)):
            if limit is not None:
                traces.append(Trace(f"{what} limit {100 * limit:g} %", np.array([100 * limit] * 2), np.array([0.0, 1.0]), []))
        panels.append((panel, traces))
    return panels


def write_report(
    directory: Path,
    errors: pl.DataFrame,
    summary: pl.DataFrame,
    overlays: dict[str, tuple[Result, Result]],
    notes: list[str],
    deep_buffer: pl.DataFrame | None = None,
) -> Path:
    """Writes DIRECTORY/figures/ (replacing it) and DIRECTORY/report.html; returns the page."""
    distributions = error_panels(errors)
    per_case = {case: overlay_panels(case, {"simulator": sim, "kernel": kernel}) for case, (sim, kernel) in overlays.items()}
    # Drawn beside, then swapped in: figures/ is never a mix of two invocations'.
    figures, staging = directory / FIGURES_DIRECTORY, directory / f".{FIGURES_DIRECTORY}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    write_figures(distributions + [panel for panels in per_case.values() for panel in panels], staging)
    shutil.rmtree(figures, ignore_errors=True)
    staging.rename(figures)
    goodput = errors.filter(pl.col("metric") == "goodput_mbps").with_columns(abs_error=pl.col("error").abs())
    worst = goodput.sort("abs_error", descending=True, nulls_last=True)["case"].to_list()[:INTERACTIVE_OVERLAYS]
    shown = [panel for case in worst if case in per_case for panel in per_case[case]]
    body = (
        f"<p>tcplab {html.escape(_core.version())}. Every case on the simulator and on this machine's kernel"
        " (the emulation backend, docs/emulation.md); errors are (simulator − kernel) / kernel, relative to the metric's"
        " floor where the kernel's value is below it; RTT statistics and the mean queue from the sampled series of both"
        " (docs/validation.md, `tcplab validate`).</p>"
        + "".join(f"<p>{html.escape(note)}</p>" for note in notes)
        + "<h2>Summary: median and worst |error| per metric (valid kernel runs)</h2>"
        + table_html(
            ["metric", "cases", "values", "median |error|", "limit", "worst |error|", "limit", "worst case", "meets limits"],
            [[*_summary_cells(row)] for row in summary.iter_rows(named=True)],
        )
        + f"<h2>Error distributions</h2>{plot_divs(distributions, prefix='error-plot')}"
        + _deep_buffer_section(deep_buffer)
        + f"<h2>Every case</h2>{_case_table(errors)}"
        + f"<h2>Overlays of the {len(worst)} cases with the largest goodput error</h2>"
        + f"<p>figures/ holds every case's.</p>{plot_divs(shown, prefix='overlay-plot')}"
    )
    return write_page(directory / REPORT_FILE, page_html("tcplab validate: simulator vs kernel", body))


def _summary_cells(row: dict[str, Any]) -> list[Any]:
    meets = {True: "yes", False: "no", None: None}[row["meets_limits"]]
    return [
        row["metric"],
        row["cases"],
        row["values"],
        percent(row["median_abs_error"]),
        percent(row["median_limit"]),
        percent(row["worst_abs_error"]),
        percent(row["worst_limit"]),
        row["worst_case"],
        meets,
    ]


def _case_table(errors: pl.DataFrame) -> str:
    """One row per case: validity, and each scalar metric's simulator, kernel and error."""
    scalar = errors.filter(pl.col("flow").is_null())
    head = ["case", "kernel valid"] + [f"{m} {what}" for m in SCALAR_METRICS for what in ("sim", "kernel", "error")]
    rows = []
    for case in scalar["case"].unique(maintain_order=True).to_list():
        of_case = {row["metric"]: row for row in scalar.filter(pl.col("case") == case).iter_rows(named=True)}
        cells: list[Any] = [case, "yes" if next(iter(of_case.values()))["kernel_valid"] else "no (left out)"]
        for metric in SCALAR_METRICS:
            row = of_case.get(metric, {})
            cells += [row.get("sim"), row.get("kernel"), percent(row.get("error"))]
        rows.append(cells)
    return table_html(head, rows)


def _deep_buffer_section(bins: pl.DataFrame | None) -> str:
    """Bench (d): BBR's goodput per 20 s bin on both, and whether within a factor 1.5."""
    if bins is None:
        return ""
    rows = [
        [
            row["flow"],
            f"{row['t_s'] - BBR_BIN_SECONDS:g}–{row['t_s']:g} s",
            row["sim_mbps"],
            row["kernel_mbps"],
            row["ratio"],
            "yes" if row["within"] else "no",
        ]
        for row in bins.iter_rows(named=True)
    ]
    return (
        f"<h2>{DEEP_BUFFER_CASE}: BBR's goodput in {BBR_BIN_SECONDS:g} s bins</h2>"
        f"<p>{bins['within'].sum()} of {bins.height} bins within a factor {BBR_FACTOR:g} of the kernel's.</p>"
        + table_html(["flow", "bin", "simulator Mbps", "kernel Mbps", "ratio", f"within ×{BBR_FACTOR:g}"], rows)
    )
