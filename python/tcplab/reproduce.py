"""Reproduce a reference study, as `tcplab reproduce` does: run its sweep in the simulator
(every case with every seed; runs already in the directory are kept) and/or its cases on this
machine's kernel, record what was run (reproduce.json), and write report.html and figures/.

    from tcplab.reproduce import reproduce
    done = reproduce("rtt-lens", quick=True, jobs=2, figure_formats=())
    done.table     # polars: metric means and 95 % CIs per case
    done.report    # runs/reproduce-rtt-lens-quick/report.html (rebuilt by report.build_report)

See docs/campaigns.md for the directory and how an interrupted reproduction resumes.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import polars as pl

from . import studies
from ._core import ScenarioError
from .report import build_report, read_metadata, write_metadata
from .result import Result, ensure_no_file_in_the_way
from .sweep import Campaign, Progress
from .sweep.campaign import study_campaign

DEFAULT_DIRECTORY = Path("runs")


class FigureFormat(StrEnum):
    """A format of the report's figures (matplotlib's `savefig` picks it from the suffix)."""

    PNG = "png"
    SVG = "svg"
    PDF = "pdf"


class Backend(StrEnum):
    """Where a study runs: the simulator, this machine's kernel TCP (as root), or both."""

    SIM = "sim"
    EMU = "emu"
    BOTH = "both"


@dataclass(frozen=True)
class Reproduction:
    """What `reproduce` did: the sweep's counts (all zero with the kernel alone), its table of
    means and 95 % CIs over the seeds by case (empty with the kernel alone), the kernel's
    results by case (none with the simulator alone) and the report page (None when not
    written: `report=False`)."""

    study: str
    quick: bool
    directory: Path
    runs: Progress
    table: pl.DataFrame
    axes: list[str]
    report: Path | None
    kernel: dict[str, Result] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.runs.failed > 0


def reproduce(
    study: str,
    output: str | os.PathLike[str] | None = None,
    *,
    quick: bool = False,
    jobs: int | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    backend: Backend | str = Backend.SIM,
    figure_formats: Sequence[str] = ("png",),
    report: bool = True,
    progress: Callable[[Progress], None] | None = None,
    plot_progress: Callable[[float], None] | None = None,
) -> Reproduction:
    """Reproduces `study` (a name from `tcplab.studies`) in `output` (default:
    runs/reproduce-STUDY, with `-quick` for `quick`: shorter runs, a first look).

    jobs, engine, scheduler  where the sweep runs, as for `Campaign.run`
    backend                  "sim", "emu" (the kernel, as root) or "both"
    figure_formats           of figures/ (png, svg, pdf); none: report.html alone
    report                   write report.html and figures/ (or later: `report.build_report`)
    progress                 called with the sweep's counts after every run
    plot_progress            called with the fraction of the figures drawn

    Raises ScenarioError for an unknown study, backend or figure format, or a study the
    kernel cannot emulate; FileExistsError for an `output` that holds something else than
    this study's runs. A KeyboardInterrupt stops the sweep at once (see `Campaign.run`).
    """
    found = studies.find(study)
    if found is None:
        raise ScenarioError(f"{study}: no such study (studies: {', '.join(studies.all_studies())})")
    backend = _backend(backend)
    if backend != Backend.SIM:
        from .emu.study import require_emulatable

        require_emulatable(study)
    formats = figure_formats_of(figure_formats)
    suffix = "-quick" if quick else ""
    directory = Path(output) if output is not None else DEFAULT_DIRECTORY / f"reproduce-{study}{suffix}"
    campaign = Campaign.from_spec(study_campaign(found.path, quick), found.path, directory)
    check_campaign_directory(campaign.directory)
    started = time.perf_counter()
    state = Progress(total=0, skipped=0)
    if backend != Backend.EMU:
        state = campaign.run(jobs=jobs, engine=str(engine), scheduler=scheduler, progress=progress)
    else:
        campaign.directory.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found.path, campaign.directory / "campaign.toml")
    kernel = {}
    if backend != Backend.SIM:
        from .emu.study import emulate_study

        kernel = emulate_study(study, quick, campaign.directory)
    table = campaign.table() if backend != Backend.EMU else pl.DataFrame()
    wall = time.perf_counter() - started
    previous = read_metadata(campaign.directory)
    if state.done + state.failed == 0 and previous:  # nothing ran now: keep the sweep's own time
        wall = previous.get("wall_seconds", wall)
    write_metadata(
        campaign.directory,
        study=study,
        quick=quick,
        engine=str(engine),
        jobs=jobs or os.cpu_count(),
        wall_seconds=wall,
        figure_formats=list(formats),
    )
    page = build_report(campaign.directory, plot_progress) if report else None
    return Reproduction(
        study=study,
        quick=quick,
        directory=campaign.directory,
        runs=state,
        table=table,
        axes=list(campaign.spec.axes),
        report=page,
        kernel=kernel,
    )


def figure_formats_of(given: Sequence[str]) -> tuple[str, ...]:
    """`given` as plain strings, each a FigureFormat."""
    allowed = [fmt.value for fmt in FigureFormat]
    for fmt in given:
        if fmt not in allowed:
            raise ScenarioError(f"--format {fmt!r}: allowed: {', '.join(allowed)}")
    return tuple(str(fmt) for fmt in given)


def _backend(given: Backend | str) -> Backend:
    try:
        return Backend(given)
    except ValueError:
        allowed = ", ".join(backend.value for backend in Backend)
        raise ScenarioError(f"--backend {given!r}: allowed: {allowed}") from None


def check_campaign_directory(directory: Path) -> None:
    """A campaign resumes in its own directory; another non-empty one is refused."""
    ensure_no_file_in_the_way(directory)
    if directory.is_dir() and any(directory.iterdir()) and not (directory / "campaign.toml").is_file():
        raise FileExistsError(
            f"{directory}: exists, is not empty and holds no campaign (no campaign.toml);"
            " allowed: a new or empty directory, or a campaign's own to resume it"
        )
