"""`tcplab compare DIR1 DIR2 ...`: runs side by side — a table of each run's headline metrics
(`tables.format_comparison`), and the goodput, RTT and congestion window of every run's flows
overlaid in one self-contained page (compare.html) and figures, e.g. the simulator against the
kernel (`tcplab emulate`), two algorithms, two buffer sizes."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

from ..result import Result
from . import page_html, plot_divs, write_figures, write_page
from .panels import Panel, Trace, series

PAGE = "compare.html"
COMPARED = (
    ("Goodput", "goodput_mbps", "Mbps"),
    ("Smoothed RTT", "srtt_ms", "ms"),
    ("Congestion window", "cwnd_pkts", "packets"),
)


def compare(results: dict[str, Result], output: Path, table_text: str, formats: tuple[str, ...] = ("png",)) -> Path:
    """Writes OUTPUT/compare.html and OUTPUT/figures/; `results` are named runs."""
    output.mkdir(parents=True, exist_ok=True)
    panels: list[tuple[Panel, list[Trace]]] = []
    for title, column, unit in COMPARED:
        panel = Panel(title, "flows", column, unit, cases=[{}], per_flow=True)
        traces = []
        for name, result in results.items():
            for trace in series(panel, lambda _case, r=result: [r]):
                traces.append(dataclasses.replace(trace, name=f"{name}: {trace.name.strip()}"))
        panels.append((panel, traces))
    write_figures(panels, output / "figures", formats)
    runs = "".join(
        f"<li>{html.escape(name)}: {html.escape(result.summary['run'].get('backend', 'sim'))}, {html.escape(result.name)}</li>"
        for name, result in results.items()
    )
    body = f"<ul>{runs}</ul><pre>{html.escape(table_text)}</pre>{plot_divs(panels)}"
    return write_page(output / PAGE, page_html("tcplab: compare " + ", ".join(results), body))
