"""tcplab: a packet-level TCP congestion-control lab.

    import tcplab
    result = tcplab.run("scenario.toml", seed=2, overrides={"flows.0.cc": "bbr"}, duration="5s")
    result.summary["fairness_jain"], result.flows   # a dict and polars DataFrames
    result.save("runs/bbr")                        # scenario.toml, summary.json, *.parquet, plots/
    tcplab.load("runs/bbr")
    tcplab.reproduce.reproduce("rtt-lens", quick=True, jobs=2)   # a study's sweep and report
    tcplab.sweep.Campaign("buffers.toml").run(jobs=2)           # a campaign (docs/campaigns.md)

The simulator and the scenario schema live in the Rust extension `tcplab._core`; this package
loads scenarios, applies overrides, and turns what the core returns into a `Result`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from typing import Any

from . import _core
from ._core import ScenarioError
from .result import Result
from .scenario import ScenarioSource, ScenarioWarning, check_seed, prepare, resolve, to_json, warn_unusual

__version__: str = _core.version()
__all__ = ["Result", "ScenarioError", "ScenarioSource", "ScenarioWarning", "__version__", "load", "resolve", "run"]
# Imported on first use, so that `import tcplab` (and every sweep worker) stays quick.
LAZY_SUBMODULES = ("reproduce", "sweep")


def run(
    scenario: ScenarioSource,
    *,
    seed: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    output: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
    plots: bool = True,
    progress: Callable[[float], None] | None = None,
    threads: int | None = None,
    **settings: Any,
) -> Result:
    """Runs a scenario in the simulator and returns its Result.

    scenario   a .toml path, a study name (`tcplab list`), TOML text, or a dict
    seed       overrides the scenario's `seed`
    overrides  dotted keys to set first: {"flows.0.cc": "bbr", "topology.bottleneck.loss": 0.01}
    settings   more keys as keywords, `__` standing for a dot: duration="5s", flows__0__cc="bbr"
    output     when given, the run directory is written there (see `Result.save`)
    progress   called now and then with the fraction done; an exception it raises aborts the run
    threads    1 or 2 (more count as 2): on 2, a network whose parts are joined only by wires of
               1 ms or more (a dumbbell's sides) is simulated on two cores, with the same
               results; None: 2 when this process may use two cores and the wires between the
               parts carry enough to gain from it (about 300 Mbit/s at 10 ms), else 1

    Raises ScenarioError (a ValueError) for a bad scenario or seed, RuntimeError for an internal
    failure; warns (ScenarioWarning) about settings that are allowed but unusual.
    """
    check_seed(seed)
    threads = _automatic_threads() if threads is None else _checked_threads(threads)
    # The core checks the scenario as it builds the run: the network is built once.
    raw = _core.run(to_json(prepare(scenario, overrides, **settings)), seed, progress or _let_python_run, threads)
    warn_unusual(raw["warnings"], stacklevel=3)
    result = Result.from_core(raw)
    if output is not None:
        result.save(output, overwrite=overwrite, plots=plots)
    return result


def load(directory: str | os.PathLike[str]) -> Result:
    """Reads a run directory written by `Result.save` (or `tcplab run`)."""
    return Result.load(directory)


def _automatic_threads() -> int:
    """0 (the core chooses one thread or two) when this process may run on two cores or more
    (its CPU affinity), else 1."""
    return 0 if len(os.sched_getaffinity(0)) >= 2 else 1


def _checked_threads(threads: object) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads: {threads!r} is not a thread count; allowed: 1 or more")
    return threads


def _let_python_run(fraction_done: float) -> None:
    """The default progress callback: does nothing, but calling into Python now and then lets
    Ctrl-C (KeyboardInterrupt) stop a long run."""


def __getattr__(name: str) -> Any:
    if name in LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
