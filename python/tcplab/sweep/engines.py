"""Where a campaign's runs execute: `local` (a process pool over this machine's cores) or
`dask` (Dask distributed: a LocalCluster, or an existing scheduler at tcp://host:port).

Both call `execute(run_id, scenario, directory)` once per missing run, and report each run's
outcome as it completes; a run that raises is recorded as failed and does not stop the others.
The simulator is deterministic, so where a run executes never changes its result.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

ENGINES = ("local", "dask")
Outcome = tuple[str, str | None]  # (run id, error or None)


def execute(run_id: str, scenario: dict[str, Any], directory: str) -> Outcome:
    """Runs one scenario and writes its run directory; never raises."""
    try:
        from .. import run as run_scenario

        result = run_scenario(scenario)
        target = Path(directory)
        if not (target / "summary.json").is_file():  # another worker may have finished it
            result.save(target, plots=False, overwrite=True)
        return run_id, None
    except Exception as error:  # noqa: BLE001 - every failure is recorded, none stops the campaign
        return run_id, f"{type(error).__name__}: {' '.join(str(error).splitlines())}"


Task = tuple[str, dict[str, Any], str]


def run_local(tasks: list[Task], jobs: int, done: Callable[[Outcome], None]) -> None:
    """A pool of `jobs` fresh processes (spawned: a forked polars/pyo3 process can deadlock)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        pending: set[Future[Outcome]] = {pool.submit(execute, *task) for task in tasks}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                done(future.result())


def run_dask(tasks: list[Task], jobs: int, scheduler: str | None, done: Callable[[Outcome], None]) -> None:
    """Dask distributed: `scheduler` (tcp://host:port) or a LocalCluster of `jobs` workers.
    Tasks are pure and retried on another worker if theirs is lost (retries=3)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as error:  # pragma: no cover - dask is a dependency
        raise RuntimeError("the dask engine needs dask[distributed] (pip install 'dask[distributed]')") from error
    cluster = None if scheduler else LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with Client(scheduler or cluster) as client:
            futures = [client.submit(execute, *task, key=f"tcplab-run-{task[0]}", pure=False, retries=3) for task in tasks]
            for future in as_completed(futures):
                done(future.result())
    finally:
        if cluster is not None:
            cluster.close()
