"""Figures of one run, one PNG each in a run directory's plots/: goodput, RTT, congestion
window and queue backlog over time; with an mmWave cell the radio of each user, with a WiFi
BSS its medium and retransmissions; with flows of a set size their completion times. See
`figures` for what each shows and how it is styled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from .figures import (
    backlog_figure,
    cwnd_figure,
    fct_figure,
    radio_figure,
    rtt_figure,
    throughput_figure,
    wifi_figure,
)

if TYPE_CHECKING:
    from ..result import Result

FIGURES: dict[str, Callable[[Result], Figure]] = {
    "throughput": throughput_figure,
    "rtt": rtt_figure,
    "cwnd": cwnd_figure,
    "backlog": backlog_figure,
}
"""Every figure by the stem of its file name."""

RADIO_FIGURES: dict[str, Callable[[Result], Figure]] = {"radio": radio_figure}
"""The figures of runs with an mmWave cell (`Result.radio` is not None)."""

WIFI_FIGURES: dict[str, Callable[[Result], Figure]] = {"wifi": wifi_figure}
"""The figures of runs with a WiFi BSS (`Result.wifi` is not None)."""

FCT_FIGURES: dict[str, Callable[[Result], Figure]] = {"fct": fct_figure}
"""The figures of runs with flows of a set size (the summary has an `fct` block)."""


def save_plots(result: Result, directory: Path, progress: Callable[[float], None] | None = None) -> list[Path]:
    """Writes every figure of `FIGURES` (and of `RADIO_FIGURES` / `WIFI_FIGURES` when the run
    has a radio / WiFi series, of `FCT_FIGURES` when it has sized flows) as `directory/<name>.png` and returns the paths; `progress` is
    called with the fraction drawn after each figure."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    figures = {
        **FIGURES,
        **(RADIO_FIGURES if result.radio is not None else {}),
        **(WIFI_FIGURES if result.wifi is not None else {}),
        **(FCT_FIGURES if result.summary.get("fct") else {}),
    }
    for number, (name, make_figure) in enumerate(figures.items(), start=1):
        path = directory / f"{name}.png"
        make_figure(result).savefig(path)
        paths.append(path)
        if progress is not None:
            progress(number / len(figures))
    return paths
