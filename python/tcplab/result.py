"""The result of one run: the resolved scenario, the summary, and the recorded time series as
polars DataFrames; saving it as a run directory and loading it back.

A run directory holds scenario.toml (the resolved scenario: running it again reproduces the
run), summary.json, flows.parquet, links.parquet, rtt.parquet (only when per-ACK RTT samples
were recorded), radio.parquet (only with an mmWave cell), wifi.parquet (only with a WiFi
BSS) and plots/*.png. It is written into a hidden sibling directory first and renamed
into place at the end, so a directory with the final name is always complete.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from .scenario import resolved_document, to_toml

SCENARIO_FILE = "scenario.toml"
SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
LINKS_FILE = "links.parquet"
RTT_FILE = "rtt.parquet"
RADIO_FILE = "radio.parquet"
WIFI_FILE = "wifi.parquet"
PLOTS_DIRECTORY = "plots"

# Column types of the core's packed columns: little-endian numpy dtype and polars dtype.
_PACKED_DTYPES = {"f64": ("<f8", pl.Float64), "u32": ("<u4", pl.UInt32)}


@dataclass(frozen=True, eq=False, repr=False)
class Result:
    """One run. `flows` has one row per flow and sampling interval, `links` one row per link
    and interval, `rtt` one row per RTT sample (None unless the scenario set `record.rtt`),
    `radio` one row per UE and interval (None without an mmWave cell), `wifi` one row per
    WiFi device and interval (None without a BSS). Missing values (no RTT sample yet, infinite
    ssthresh, no MCS while the downlink is stalled) are null."""

    scenario: dict[str, Any]
    summary: dict[str, Any]
    flows: pl.DataFrame
    links: pl.DataFrame
    rtt: pl.DataFrame | None
    radio: pl.DataFrame | None = None
    wifi: pl.DataFrame | None = None

    @classmethod
    def from_core(cls, raw: Mapping[str, Any]) -> Result:
        """A Result from what `_core.run` returns."""
        return cls(
            scenario=resolved_document(raw["scenario"]),
            summary=json.loads(raw["summary"]),
            flows=_frame(raw["flows"]),
            links=_frame(raw["links"]),
            rtt=None if raw["rtt"] is None else _frame(raw["rtt"]),
            radio=None if raw.get("radio") is None else _frame(raw["radio"]),
            wifi=None if raw.get("wifi") is None else _frame(raw["wifi"]),
        )

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Reads a run directory written by `save`."""
        directory = Path(directory)
        optional = {name: directory / name for name in (RTT_FILE, RADIO_FILE, WIFI_FILE)}
        return cls(
            scenario=tomllib.loads((directory / SCENARIO_FILE).read_text(encoding="utf-8")),
            summary=json.loads((directory / SUMMARY_FILE).read_text(encoding="utf-8")),
            flows=pl.read_parquet(directory / FLOWS_FILE),
            links=pl.read_parquet(directory / LINKS_FILE),
            rtt=_read_if_present(optional[RTT_FILE]),
            radio=_read_if_present(optional[RADIO_FILE]),
            wifi=_read_if_present(optional[WIFI_FILE]),
        )

    @property
    def name(self) -> str:
        """The scenario's name ("run" when it has none)."""
        return self.scenario.get("name") or "run"

    def save(
        self, directory: str | os.PathLike[str], *, overwrite: bool = False, plots: bool = True
    ) -> Path:
        """Writes the run directory and returns its path.

        Refuses an existing non-empty directory unless `overwrite`, in which case the old one
        is replaced only once the new one is complete. On any failure (or Ctrl-C) nothing is
        left behind and an earlier directory at that path is untouched."""
        target = Path(directory)
        ensure_writable(target, overwrite=overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.partial-{secrets.token_hex(4)}")
        staging.mkdir()
        try:
            self._write_files(staging, plots=plots)
            _move_into_place(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target

    def _write_files(self, directory: Path, *, plots: bool) -> None:
        run = self.summary.get("run", {})
        header = (
            f"Resolved scenario of a tcplab {run.get('tcplab_version', '')} run"
            f" (seed {run.get('seed')}).\n`tcplab run {SCENARIO_FILE}` reproduces it."
        )
        (directory / SCENARIO_FILE).write_text(to_toml(self.scenario, header), encoding="utf-8")
        (directory / SUMMARY_FILE).write_text(
            json.dumps(self.summary, indent=2) + "\n", encoding="utf-8"
        )
        self.flows.write_parquet(directory / FLOWS_FILE)
        self.links.write_parquet(directory / LINKS_FILE)
        for name, frame in ((RTT_FILE, self.rtt), (RADIO_FILE, self.radio), (WIFI_FILE, self.wifi)):
            if frame is not None:
                frame.write_parquet(directory / name)
        if plots:
            from .plots import save_plots  # matplotlib is imported only when plotting

            save_plots(self, directory / PLOTS_DIRECTORY)

    def __repr__(self) -> str:
        run = self.summary.get("run", {})
        return (
            f"<Result {self.name!r}: {len(self.summary.get('flows', []))} flows,"
            f" {run.get('sim_seconds')} s simulated, seed {run.get('seed')}>"
        )


def ensure_writable(directory: Path, *, overwrite: bool) -> None:
    """Raises unless `directory` can receive a run: it is absent, empty, or `overwrite` is set."""
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"{directory}: exists and is not a directory")
    if _is_non_empty_directory(directory) and not overwrite:
        raise FileExistsError(f"{directory}: exists and is not empty (overwrite to replace it)")


def _is_non_empty_directory(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def _move_into_place(staging: Path, target: Path) -> None:
    """Renames the complete `staging` directory to `target`, replacing what is there."""
    if not _is_non_empty_directory(target):
        os.replace(staging, target)  # rename(2) replaces an absent or empty directory atomically
        return
    retired = staging.with_name(staging.name.replace(".partial-", ".retired-"))
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(retired, target)
        raise
    shutil.rmtree(retired, ignore_errors=True)  # the new run is in place: leftovers are harmless


def _read_if_present(path: Path) -> pl.DataFrame | None:
    return pl.read_parquet(path) if path.exists() else None


def _frame(columns: Mapping[str, Any]) -> pl.DataFrame:
    return pl.DataFrame([_series(name, data) for name, data in columns.items()])


def _series(name: str, data: Any) -> pl.Series:
    """One core column: a list of strings, or (dtype, little-endian bytes) where NaN is missing."""
    if isinstance(data, list):
        return pl.Series(name, data, dtype=pl.String)
    packed_dtype, payload = data
    numpy_dtype, polars_dtype = _PACKED_DTYPES[packed_dtype]
    series = pl.Series(name, np.frombuffer(payload, dtype=numpy_dtype), dtype=polars_dtype)
    return series.fill_nan(None) if polars_dtype == pl.Float64 else series
