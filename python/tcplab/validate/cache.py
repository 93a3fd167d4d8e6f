"""The kernel cache: what `tcplab validate` keeps of its kernel runs, small enough to commit,
so that the comparison can be redrawn against a fresh simulator run without root
(`tcplab validate --from-cache DIR`).

    DIR/cases.json.gz    per case: its name, its scenario (unresolved, as the grid wrote it:
                         the simulator reruns it with its own defaults of the day) and the
                         kernel run's summary.json (validity included); the machine and kernel
    DIR/flows.parquet    each flow's goodput, smoothed RTT and cwnd in 0.5 s bins (zstd)
    DIR/queue.parquet    the bottleneck's backlog in 0.5 s bins (zstd)

A validation writes it to OUT/kernel-cache/; the repository keeps a finished grid's under
validation/kernel/<machine>/ (`machine_name`), see docs/validation.md.
"""

from __future__ import annotations

import gzip
import json
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from .._core import ScenarioError
from ..result import write_directory
from .errors import Measured

CASES_FILE = "cases.json.gz"
FLOWS_FILE = "flows.parquet"
QUEUE_FILE = "queue.parquet"


@dataclass(frozen=True)
class CachedCase:
    name: str
    scenario: dict[str, Any]
    kernel: Measured


def machine_name() -> str:
    """This machine's architecture and kernel release, e.g. x86_64-linux-6.18.44."""
    return f"{platform.machine()}-linux-{platform.release()}"


def write_cache(directory: Path, cases: list[CachedCase]) -> Path:
    """Writes (or replaces) the cache of `cases` at `directory`, atomically."""
    document = {
        "machine": machine_name(),
        "cases": [{"case": c.name, "scenario": c.scenario, "summary": c.kernel.summary} for c in cases],
    }

    def write(staging: Path) -> None:
        with gzip.open(staging / CASES_FILE, "wt", encoding="utf-8") as file:
            json.dump(document, file, separators=(",", ":"))
        for name, attribute in ((FLOWS_FILE, "flows"), (QUEUE_FILE, "queue")):
            frames = [getattr(c.kernel, attribute).with_columns(case=pl.lit(c.name)) for c in cases]
            frame = pl.concat(frames) if frames else pl.DataFrame({"case": []}, schema={"case": pl.String})
            frame.select("case", pl.exclude("case")).write_parquet(staging / name, compression="zstd")

    return write_directory(directory, write, overwrite=True, marker=CASES_FILE)


def read_cache(directory: Path) -> list[CachedCase]:
    """The cases of the cache at `directory`; one line naming the path if it holds none."""
    if not (directory / CASES_FILE).is_file():
        raise ScenarioError(
            f"--from-cache {directory}: not a kernel cache (no {CASES_FILE}); allowed: a validation's kernel-cache/ or validation/kernel/<machine>/"
        )
    with gzip.open(directory / CASES_FILE, "rt", encoding="utf-8") as file:
        document = json.load(file)
    if not document["cases"]:
        raise ScenarioError(f"--from-cache {directory}: holds no case; allowed: the cache of a validation that ran one")
    flows, queue = pl.read_parquet(directory / FLOWS_FILE), pl.read_parquet(directory / QUEUE_FILE)
    return [
        CachedCase(
            entry["case"],
            entry["scenario"],
            Measured(
                entry["summary"],
                flows.filter(pl.col("case") == entry["case"]).drop("case"),
                queue.filter(pl.col("case") == entry["case"]).drop("case"),
            ),
        )
        for entry in document["cases"]
    ]
