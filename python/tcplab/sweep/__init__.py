"""Campaigns: parameter sweeps with replications, resumable, on all cores or a Dask cluster.

    from tcplab.sweep import Campaign
    campaign = Campaign("buffers.toml", "runs/buffers")
    campaign.run(jobs=2)            # or engine="dask", scheduler="tcp://host:8786"
    campaign.index()                # one row per run (polars)
    campaign.table()                # metric means and 95 % CIs over seeds per combination

`tcplab sweep CAMPAIGN.toml` does the same from the command line. See `campaign` for the file
format, `store` for the directory layout, `engines` for where runs execute.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .campaign import CampaignSpec, Run, expand, load_campaign
from .engines import ENGINES, Outcome, run_dask, run_local
from .store import Store, aggregate

__all__ = ["ENGINES", "Campaign", "Progress"]


@dataclass
class Progress:
    """Counts of an ongoing campaign, handed to the progress callback after every run."""

    total: int
    skipped: int
    done: int = 0
    failed: int = 0
    started: float = 0.0

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done - self.failed

    @property
    def eta_seconds(self) -> float | None:
        finished = self.done + self.failed
        if not finished:
            return None
        return (time.monotonic() - self.started) / finished * self.remaining


class Campaign:
    """A campaign file and the directory that stores its runs."""

    def __init__(self, source: str | Path, directory: str | Path | None = None) -> None:
        self._init(load_campaign(Path(source)), Path(source), directory)

    @classmethod
    def from_spec(cls, spec: CampaignSpec, source: Path, directory: str | Path | None = None) -> Campaign:
        """A campaign already parsed (a study's sweep); `source` is copied into the directory."""
        campaign = cls.__new__(cls)
        campaign._init(spec, source, directory)
        return campaign

    def _init(self, spec: CampaignSpec, source: Path, directory: str | Path | None) -> None:
        self.source = source
        self.spec = spec
        self.runs: list[Run] = expand(spec)
        self.store = Store(Path(directory) if directory is not None else Path("runs") / spec.name)

    @property
    def directory(self) -> Path:
        return self.store.directory

    def missing(self) -> list[Run]:
        """The runs without a finished directory, each once (two seeds can give one scenario)."""
        seen: set[str] = set()
        todo = []
        for run in self.runs:
            if run.run_id not in seen and not self.store.is_finished(run.run_id):
                seen.add(run.run_id)
                todo.append(run)
        return todo

    def run(
        self,
        *,
        jobs: int | None = None,
        engine: str = "local",
        scheduler: str | None = None,
        progress: Callable[[Progress], None] | None = None,
    ) -> Progress:
        """Runs what is missing and writes the index; returns the final counts. A
        KeyboardInterrupt stops the workers at once (see `engines`), and propagates once the
        index is written."""
        if engine not in ENGINES:
            raise ValueError(f"engine {engine!r}; allowed: {', '.join(ENGINES)}")
        jobs = jobs or os.cpu_count() or 1
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.source.resolve() != (self.directory / "campaign.toml").resolve():
            shutil.copyfile(self.source, self.directory / "campaign.toml")
        todo = self.missing()
        state = Progress(
            total=len({r.run_id for r in self.runs}),
            skipped=len({r.run_id for r in self.runs}) - len(todo),
            started=time.monotonic(),
        )

        def done(outcome: Outcome) -> None:
            run_id, error = outcome
            if error is None or self.store.is_finished(run_id):  # a worker may die after saving
                self.store.clear_failure(run_id)
                state.done += 1
            else:
                self.store.record_failure(run_id, error)
                state.failed += 1
            if progress is not None:
                progress(state)

        tasks = [(r.run_id, r.scenario, str(self.store.run_directory(r.run_id))) for r in todo]
        try:
            if tasks and engine == "local":
                run_local(tasks, jobs, done)
            elif tasks:
                run_dask(tasks, jobs, scheduler, done)
        finally:
            self.store.remove_leftovers()
            self.store.write_index(self.index())
        return state

    def index(self) -> pl.DataFrame:
        """One row per run: run_id, seed, axis values, labels, status, error, metrics."""
        return self.store.index(self.runs)

    def table(self) -> pl.DataFrame:
        """Means and 95 % confidence half-widths over seeds per combination of axis values."""
        group = list(self.spec.axes) + list(self.spec.labels)
        return aggregate(self.index(), group)

    def save_figure(self) -> Path:
        """Draws each combination's goodput against its p95 RTT (`plots.campaign`) into
        `delay-throughput.png` in the campaign directory — or, when its runs have flows of a set
        size, their median against their 99th-percentile FCT into `fct.png` — and returns its path."""
        from ..plots.campaign import delay_throughput_figure, fct_figure

        table = self.table()
        sized = "fct_p50_ms_mean" in table.columns and table["fct_p50_ms_mean"].drop_nulls().len() > 0
        path = self.directory / ("fct.png" if sized else "delay-throughput.png")
        partial = path.with_name(path.name + ".partial")  # a killed sweep leaves no half-drawn figure
        draw = fct_figure if sized else delay_throughput_figure
        figure = draw(self.spec.name, self.index(), table, list(self.spec.axes))
        figure.savefig(partial, format="png")
        partial.replace(path)
        return path
