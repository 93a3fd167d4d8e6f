"""`tcplab validate`: the simulator against this machine's kernel TCP on a standing grid of
wired cases (`grid`), every case run on both, the error of each metric (`errors`), a table,
figures and report.html (`report`), and the kernel runs kept small enough to commit (`cache`).

    from tcplab.validate import grid, validate, redraw
    done = validate(grid.quick(), "runs/validate", jobs=2)     # as root
    done = redraw("validation/kernel/x86_64-linux-6.18.44-fc-v595", "runs/redrawn")  # no root

OUT (default runs/validate) holds:

    OUT/validate.json        each case run here and its settings (a changed case is refused)
    OUT/sim/                 the simulator's runs: a campaign (docs/campaigns.md)
    OUT/kernel/<case>/       each case's kernel run (a run directory, valid or marked invalid)
    OUT/kernel-cache/        those kernel runs, compact (`cache`)
    OUT/errors.parquet|csv   one row per case and metric, and per flow and 10 s bin
    OUT/summary.parquet|csv  median and worst |error| per metric beside the acceptance limits
    OUT/report.html, OUT/figures/

It resumes like a campaign: the simulator's runs and the kernel's are each written whole or
not at all, so after Ctrl-C or a crash the next invocation runs only what is missing. A kernel
run whose validity checks fail (docs/emulation.md; a busy machine is the usual cause) is run
again, at most KERNEL_ATTEMPTS times per invocation; the last attempt is kept, marked invalid,
and left out of the error statistics. The simulator runs first, on every core, and the kernel
cases after it, one at a time, so that the simulator does not load the machine they measure.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import tomli_w

from .._core import ScenarioError
from ..emu import run as emu_run
from ..emu.settings import KERNEL_CC_NAMES
from ..result import Result, ensure_no_file_in_the_way
from ..scenario import apply_overrides
from ..sweep import Campaign, Progress
from ..units import duration_ns
from . import grid
from .cache import CachedCase, machine_name, read_cache, write_cache
from .errors import ERROR_SCHEMA, Measured, bbr_goodput_bins, case_errors, measured, summary_table
from .report import write_report

DEFAULT_DIRECTORY = Path("runs") / "validate"
FROM_CACHE_DIRECTORY = Path("runs") / "redrawn"
STATE_FILE = "validate.json"
SIM_DIRECTORY = "sim"
KERNEL_DIRECTORY = "kernel"
CACHE_DIRECTORY = "kernel-cache"
KERNEL_ATTEMPTS = 3
# Kernel time per run besides its duration: building and removing the namespaces, the delay
# line's start, the senders' 0.5 s start slack and stop (measured here: 2.6 s under load).
KERNEL_OVERHEAD_S = 3.0


@dataclass(frozen=True)
class Validation:
    """What a validation did: its directory, the simulator's counts, the kernel runs made now,
    the errors and the summary (`errors`), the cases whose kernel run is invalid (left out of
    the statistics) or absent, and the report."""

    directory: Path
    sim: Progress
    kernel_runs: int
    errors: pl.DataFrame
    summary: pl.DataFrame
    invalid: list[str]
    missing: list[str]
    report: Path


def plan_text(cases: list[grid.Case]) -> str:
    """What `tcplab validate --dry-run` prints: every case and the kernel time it needs."""
    seconds = [_duration_s(c) for c in cases]
    total = sum(seconds) + KERNEL_OVERHEAD_S * len(cases)
    lines = [f"{'case':<28} {'flows':<14} {'duration':>8}"]
    lines += [f"{c.name:<28} {' + '.join(c.algorithms):<14} {s:>7g}s" for c, s in zip(cases, seconds, strict=True)]
    refusal = kernel_refusal(cases)
    lines += [
        "",
        f"{len(cases)} cases, each on the simulator (every core first) and on this machine's kernel (one at a time).",
        f"Kernel time: {sum(seconds):g} s of runs + about {KERNEL_OVERHEAD_S:g} s each to build and remove them"
        f" = about {total / 60:.0f} min; an invalid run is repeated up to {KERNEL_ATTEMPTS - 1} more times.",
        f"This machine: {'ready' if refusal is None else 'cannot run it: ' + refusal}",
    ]
    return "\n".join(lines)


def kernel_refusal(cases: list[grid.Case]) -> str | None:
    """Why this machine cannot run `cases` on its kernel, in one line (None: it can)."""
    if os.geteuid() != 0:
        return (
            "tcplab validate runs every case on this machine's kernel, which needs root (network namespaces, qdiscs);"
            " allowed: run it as root, or --from-cache DIR or --dry-run without root"
        )
    try:
        emu_run.require_host()
    except emu_run.EmulationError as error:
        return str(error)
    available = emu_run.available_algorithms()
    needed = sorted({KERNEL_CC_NAMES.get(cc, cc) for case in cases for cc in case.algorithms})
    missing = [cc for cc in needed if cc not in available]
    if missing:
        return (
            f"this kernel lacks {', '.join(missing)} (tcp_available_congestion_control: {' '.join(available)});"
            f" the cases need {', '.join(needed)}; allowed: load the module (modprobe tcp_{missing[0]}),"
            " --cases without it, or --from-cache DIR"
        )
    return None


def validate(
    cases: list[grid.Case],
    output: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    overwrite: bool = False,
    progress: Callable[[Progress], None] | None = None,
    say: Callable[[str], None] | None = None,
) -> Validation:
    """Runs `cases` on the simulator and on the kernel (as root) into `output` and compares
    them (module doc). `overwrite`: run the cases on the kernel again, replacing the runs the
    directory holds, also of cases whose settings changed. `say` receives one line per kernel
    run. Raises ScenarioError (one line) when this machine cannot run them or the directory
    holds these cases with other settings."""
    directory = Path(output) if output is not None else DEFAULT_DIRECTORY
    refusal = kernel_refusal(cases)
    if refusal is not None:
        raise ScenarioError(refusal)
    recorded = _claim(directory, cases, overwrite)
    state = _simulate(directory, cases, jobs, progress)
    made = _run_kernel(directory, cases, overwrite, say or (lambda line: print(line, file=sys.stderr)))
    kernel = {}
    for name, overrides in recorded.items():
        target = directory / KERNEL_DIRECTORY / name
        if (target / "summary.json").is_file():
            kernel[name] = CachedCase(name, apply_overrides(grid.BASE, overrides), measured(Result.load(target)))
    write_cache(directory / CACHE_DIRECTORY, list(kernel.values()))
    selected = [(c.name, kernel[c.name] if c.name in kernel else None) for c in cases]
    return _compare(directory, selected, state, made, notes=[f"Kernel: {machine_name()}."])


def redraw(
    cache: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    patterns: list[str] | None = None,
    jobs: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> Validation:
    """The comparison against the kernel runs of a cache (`cache`), with the simulator run
    afresh on the very scenarios the kernel ran; needs no root."""
    cached = {c.name: c for c in read_cache(Path(cache))}
    cases = grid.select([grid.Case(name, dict(c.scenario)) for name, c in cached.items()], patterns)
    directory = Path(output) if output is not None else FROM_CACHE_DIRECTORY
    if (directory / KERNEL_DIRECTORY).exists():
        raise ScenarioError(f"{directory}: holds kernel runs of its own; allowed: another directory for --from-cache")
    _claim(directory, cases, overwrite=True)
    state = _simulate(directory, cases, jobs, progress)
    notes = [f"Kernel runs from the cache {cache}; the simulator's runs are new."]
    return _compare(directory, [(c.name, cached[c.name]) for c in cases], state, 0, notes)


def _duration_s(case: grid.Case) -> float:
    return duration_ns(case.overrides.get("duration", grid.BASE["duration"])) / 1e9


def _claim(directory: Path, cases: list[grid.Case], overwrite: bool) -> dict[str, Any]:
    """Checks that `directory` is new, empty or a validation's own whose cases have these
    settings (unless `overwrite`), records them there; returns every case it records."""
    ensure_no_file_in_the_way(directory)
    state_path = directory / STATE_FILE
    if directory.is_dir() and any(directory.iterdir()) and not state_path.is_file():
        raise FileExistsError(
            f"{directory}: exists, is not empty and holds no validation (no {STATE_FILE});"
            " allowed: a new or empty directory, or a validation's own to resume it"
        )
    recorded = json.loads(state_path.read_text(encoding="utf-8"))["cases"] if state_path.is_file() else {}
    changed = [c for c in cases if c.name in recorded and _canonical(recorded[c.name]) != _canonical(c.overrides)]
    if changed and not overwrite:
        raise ScenarioError(
            f"{directory}: holds case {changed[0].name} run with other settings; allowed: the same settings"
            " (same --duration), another directory, or --overwrite to run it again"
        )
    for case in changed:  # its kernel run is of the old settings: gone before they are replaced
        shutil.rmtree(directory / KERNEL_DIRECTORY / case.name, ignore_errors=True)
    recorded.update({case.name: case.overrides for case in cases})
    directory.mkdir(parents=True, exist_ok=True)
    _write_atomically(state_path, json.dumps({"cases": recorded}, indent=1) + "\n")
    return recorded


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _write_atomically(path: Path, text: str) -> None:
    staging = path.with_name(f".{path.name}.partial")
    staging.write_text(text, encoding="utf-8")
    staging.replace(path)


def _simulate(
    directory: Path, cases: list[grid.Case], jobs: int | None, progress: Callable[[Progress], None] | None
) -> tuple[Progress, dict[str, Result]]:
    """The simulator's runs of `cases`: a campaign in DIR/sim whose one axis, `case`, names them."""
    table = {"name": "validate", "base": grid.BASE, "seeds": [1], "axes": {"case": {c.name: c.overrides for c in cases}}}
    source = directory / SIM_DIRECTORY / "campaign.toml"
    source.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(source, tomli_w.dumps(table))
    campaign = Campaign(source, source.parent)
    state = campaign.run(jobs=jobs, progress=progress)
    results = {
        run.params["case"]: Result.load(campaign.store.run_directory(run.run_id))
        for run in campaign.runs
        if campaign.store.is_finished(run.run_id)
    }
    return state, results


def _run_kernel(directory: Path, cases: list[grid.Case], overwrite: bool, say: Callable[[str], None]) -> int:
    """Each case without a valid kernel run (every case with `overwrite`), up to KERNEL_ATTEMPTS
    times while invalid; returns the number of kernel runs made."""
    made = 0
    todo = [c for c in cases if overwrite or not _valid_run(directory / KERNEL_DIRECTORY / c.name)]
    for number, case in enumerate(todo, start=1):
        target = directory / KERNEL_DIRECTORY / case.name
        for attempt in range(1, KERNEL_ATTEMPTS + 1):
            result = emu_run.emulate(apply_overrides(grid.BASE, case.overrides))
            result.save(target, plots=False, overwrite=True)
            made += 1
            validity = result.summary["run"]["validity"]
            verdict = "valid" if validity["valid"] else "invalid: " + "; ".join(validity["reasons"])
            say(f"kernel {number}/{len(todo)} {case.name} (attempt {attempt}/{KERNEL_ATTEMPTS}): {verdict}")
            if validity["valid"]:
                break
    return made


def _valid_run(target: Path) -> bool:
    if not (target / "summary.json").is_file():
        return False
    validity = json.loads((target / "summary.json").read_text(encoding="utf-8"))["run"].get("validity") or {}
    return bool(validity.get("valid"))


def _compare(
    directory: Path,
    selected: list[tuple[str, CachedCase | None]],
    simulated: tuple[Progress, dict[str, Result]],
    made: int,
    notes: list[str],
) -> Validation:
    state, sims = simulated
    frames, overlays, missing = [], {}, []
    deep_buffer = None
    for name, kernel in selected:
        sim = sims.get(name)
        if sim is None or kernel is None:
            missing.append(name)
            continue
        sim_measured: Measured = measured(sim)
        frames.append(case_errors(name, sim_measured, kernel.kernel))
        overlays[name] = (sim_measured.as_result(sim.scenario), kernel.kernel.as_result(kernel.scenario))
        if name == grid.DEEP_BUFFER_CASE:
            deep_buffer = bbr_goodput_bins(sim_measured, kernel.kernel)
    errors = pl.concat(frames) if frames else pl.DataFrame(schema=ERROR_SCHEMA)
    summary = summary_table(errors)
    invalid = errors.filter(~pl.col("kernel_valid"))["case"].unique(maintain_order=True).to_list()
    for name, frame in (("errors", errors), ("summary", summary)):
        for suffix, write in ((".parquet", frame.write_parquet), (".csv", frame.write_csv)):
            staging = directory / f".{name}{suffix}.partial"
            write(staging)
            staging.replace(directory / f"{name}{suffix}")
    if missing:
        notes = [*notes, f"Not compared (a run is missing): {', '.join(missing)}."]
    if invalid:
        notes = [*notes, f"Invalid kernel runs, left out of the statistics: {', '.join(invalid)}."]
    page = write_report(directory, errors, summary, overlays, notes, deep_buffer)
    return Validation(directory, state, made, errors, summary, invalid, missing, page)
