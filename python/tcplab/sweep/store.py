"""The campaign store: one directory per campaign.

    DIR/campaign.toml            the campaign as it was last run
    DIR/runs/<run id>/           each finished run's directory (written atomically by Result.save)
    DIR/failed/<run id>.json     a failed run's error (removed when the run later succeeds)
    DIR/index.parquet            one row per run of the campaign: axis values, labels, seed,
                                 status, error and summary metrics

A run directory exists only once complete, so "finished" is "its directory exists" (what a
save cut short leaves, its staging directory and lock file, is removed at the end of an
invocation, once every worker has stopped): a second invocation after Ctrl-C, a crash or a
lost worker runs only what is missing, and a changed axis adds only the new runs. Axes and
labels are columns of the index beside its own (`is_reserved_column`). Wall-clock fields are
kept out of the index, so the index of a campaign is the same, bit for bit, whichever engine
and worker count produced it.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ..metrics import FLOW_METRICS, METRICS, metrics
from ..result import remove_stale_leftovers

if TYPE_CHECKING:
    from .campaign import Run

RUNS = "runs"
FAILED = "failed"
INDEX = "index.parquet"
# The columns of the index besides axes and labels, and those `aggregate` adds to the table.
INDEX_COLUMNS = ("run_id", "seed", "status", "error")
TABLE_COLUMNS = ("runs",)
AGGREGATES = ("mean", "ci95")
_METRIC = re.compile(rf"(?:{'|'.join(METRICS)}|flow\d+_(?:{'|'.join(FLOW_METRICS)}))(?:_(?:{'|'.join(AGGREGATES)}))?")
# Student's t, two-sided 95 %, by degrees of freedom 1..30; beyond, the normal 1.96.
_T95 = [
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
]


def is_reserved_column(name: str) -> bool:
    """Whether an axis or label named `name` would collide with a column of the index or the table."""
    return name in INDEX_COLUMNS or name in TABLE_COLUMNS or _METRIC.fullmatch(name) is not None


def reserved_columns_text() -> str:
    """The reserved column names, for error messages."""
    flows = ", ".join(f"flowN_{m}" for m in FLOW_METRICS)
    return f"{', '.join(INDEX_COLUMNS + TABLE_COLUMNS)}, the metrics ({', '.join(METRICS)}, {flows}) and each metric with _{' or _'.join(AGGREGATES)}"


def t95(degrees_of_freedom: int) -> float:
    return _T95[degrees_of_freedom - 1] if degrees_of_freedom <= len(_T95) else 1.96


class Store:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.runs = directory / RUNS
        self.failed = directory / FAILED

    def run_directory(self, run_id: str) -> Path:
        return self.runs / run_id

    def is_finished(self, run_id: str) -> bool:
        return (self.runs / run_id / "summary.json").is_file()

    def record_failure(self, run_id: str, error: str) -> None:
        self.failed.mkdir(parents=True, exist_ok=True)
        staging = self.failed / f".{run_id}.partial"
        staging.write_text(json.dumps({"error": error}), encoding="utf-8")
        os.replace(staging, self.failed / f"{run_id}.json")

    def clear_failure(self, run_id: str) -> None:
        (self.failed / f"{run_id}.json").unlink(missing_ok=True)

    def failure(self, run_id: str) -> str | None:
        path = self.failed / f"{run_id}.json"
        return json.loads(path.read_text(encoding="utf-8"))["error"] if path.is_file() else None

    def index(self, runs: list[Run]) -> pl.DataFrame:
        """One row per run, from the run directories and failure records."""
        rows = []
        for run in runs:
            row: dict[str, Any] = {"run_id": run.run_id, "seed": run.seed}
            row.update({key: _cell(value) for key, value in run.params.items()})
            row.update(run.labels)
            if self.is_finished(run.run_id):
                summary = json.loads((self.runs / run.run_id / "summary.json").read_text(encoding="utf-8"))
                row.update(status="ok", error=None, **metrics(summary, run.scenario))
            else:
                error = self.failure(run.run_id)
                row.update(status="failed" if error else "missing", error=error)
            rows.append(row)
        return pl.DataFrame(rows, infer_schema_length=None)

    def remove_leftovers(self) -> None:
        """Removes what the saves of killed workers left (staging directories, lock files; see
        `remove_stale_leftovers`); the runs they belonged to are missing and run again next time."""
        if self.runs.is_dir():
            remove_stale_leftovers(self.runs)

    def write_index(self, frame: pl.DataFrame) -> None:
        staging = self.directory / f".{INDEX}.partial"
        frame.write_parquet(staging)
        os.replace(staging, self.directory / INDEX)


def _cell(value: Any) -> Any:
    """Axis values as index cells: scalars as they are, tables and lists as JSON text."""
    return value if isinstance(value, (str, int, float, bool)) else json.dumps(value, sort_keys=True)


def aggregate(index: pl.DataFrame, group_by: list[str]) -> pl.DataFrame:
    """Mean and 95 % confidence half-width (Student's t over the seeds) of every metric per
    combination of `group_by`, over the finished runs."""
    done = index.filter(pl.col("status") == "ok")
    fixed = {"run_id", "seed", "status", "error", *group_by}
    numeric = [c for c, dtype in done.schema.items() if c not in fixed and dtype.is_numeric()]
    if done.is_empty():
        return pl.DataFrame({key: [] for key in group_by})
    aggregations = [pl.len().alias("runs")]
    for column in numeric:  # the standard deviation, in the column that receives the half-width
        aggregations += [pl.col(column).mean().alias(f"{column}_mean"), pl.col(column).std().alias(f"{column}_ci95")]
    table = done.group_by(group_by, maintain_order=True).agg(aggregations) if group_by else done.select(aggregations)
    for column in numeric:
        half = [
            None if sd is None or n < 2 or math.isnan(sd) else t95(n - 1) * sd / math.sqrt(n)
            for sd, n in zip(table[f"{column}_ci95"], table["runs"], strict=True)
        ]
        table = table.with_columns(pl.Series(f"{column}_ci95", half, dtype=pl.Float64))
    return table
