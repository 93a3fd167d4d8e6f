"""Where a campaign's runs execute: `local` (worker processes on this machine's cores) or
`dask` (Dask distributed: a LocalCluster, or an existing scheduler at tcp://host:port).

Both call `execute(run_id, scenario, directory)` once per missing run, and report each run's
outcome as it completes; a run that raises, or whose local worker process dies, is recorded
as failed and does not stop the others. The simulator is deterministic, so where a run
executes never changes its result.

A KeyboardInterrupt in the calling thread (Ctrl-C; `tcplab` turns SIGTERM into one too)
stops an engine at once: runs not started are dropped and runs in flight abandoned, their
processes ended before the exception propagates, so nothing writes after it (a run directory
only counts once complete, see `store`). Worker processes also die with this process when it
is killed outright: local workers ask the kernel for SIGKILL when their parent dies
(PR_SET_PDEATHSIG, prctl(2)), or watch it where there is no such call; the worker processes of
a LocalCluster exit when the pipe from their nanny, in this process, closes (Dask's own).
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext
from pathlib import Path
from typing import Any

ENGINES = ("local", "dask")
Outcome = tuple[str, str | None]  # (run id, error or None)
Task = tuple[str, dict[str, Any], str]  # (run id, resolved scenario, run directory)

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PARENT_POLL_SECONDS = 0.5  # how often a worker without PR_SET_PDEATHSIG looks for its parent


def execute(run_id: str, scenario: dict[str, Any], directory: str) -> Outcome:
    """Runs one scenario and writes its run directory; never raises."""
    try:
        import warnings

        from .. import run as run_scenario
        from ..scenario import ScenarioWarning

        with warnings.catch_warnings():  # the campaign reported them when it expanded its runs
            warnings.simplefilter("ignore", ScenarioWarning)
            result = run_scenario(scenario, threads=1)  # the campaign's jobs share the cores
        target = Path(directory)
        if not (target / "summary.json").is_file():  # another worker may have finished it
            result.save(target, plots=False, overwrite=True)
        return run_id, None
    except Exception as error:
        return run_id, f"{type(error).__name__}: {' '.join(str(error).splitlines())}"


def run_local(tasks: list[Task], jobs: int, done: Callable[[Outcome], None]) -> None:
    """Up to `jobs` worker processes, each given one task at a time; a worker that dies is
    replaced and its run recorded as failed."""
    context = multiprocessing.get_context("spawn")  # a forked polars/pyo3 process can deadlock
    waiting = list(reversed(tasks))
    workers: list[_Worker] = []

    def hire() -> _Worker:
        worker = _Worker(context)
        workers.append(worker)  # before it starts, so that whatever happens it is stopped
        worker.start()
        return worker

    def assign(worker: _Worker, task: Task) -> None:
        """Gives `task` to `worker`, or to a new worker if that one has died since its last
        answer (its death may not be known yet: then the pipe is broken)."""
        if worker.process.is_alive():
            try:
                worker.give(task)
                return
            except OSError:
                pass
        workers.remove(worker)
        worker.stop()
        hire().give(task)

    try:
        for _ in range(min(jobs, len(tasks))):
            hire().give(waiting.pop())
        while busy := [worker for worker in workers if worker.task is not None]:
            ready = set(wait([w.connection for w in busy] + [w.process.sentinel for w in busy]))
            for worker in busy:
                if not {worker.connection, worker.process.sentinel} & ready:
                    continue
                outcome = worker.outcome()
                if waiting:
                    assign(worker, waiting.pop())
                done(outcome)
    finally:
        for worker in workers:
            worker.stop()


class _Worker:
    """A spawned worker process (`_serve`), the pipe to it and the task it runs, if any."""

    def __init__(self, context: SpawnContext) -> None:
        self.connection, self._theirs = context.Pipe()
        self.process = context.Process(target=_serve, args=(self._theirs, os.getpid()), daemon=True)
        self.task: Task | None = None

    def start(self) -> None:
        with _sigint_blocked():
            self.process.start()
            self._theirs.close()  # the worker holds the other end now: its death is an EOF here

    def give(self, task: Task) -> None:
        """Sends `task`; OSError (a broken pipe) if the process has died."""
        self.connection.send(task)
        self.task = task

    def outcome(self) -> Outcome:
        """The outcome of its task, once its pipe or its process is ready."""
        assert self.task is not None
        run_id, self.task = self.task[0], None
        try:
            return self.connection.recv()
        except (EOFError, OSError):  # it died before answering
            self.process.join()
            code = self.process.exitcode or 0
            how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            return run_id, f"WorkerDied: the worker process running it died ({how})"

    def stop(self) -> None:
        """Ends the process at once (an idle one has nothing to lose, a busy one is abandoned)."""
        if self.process.pid is not None:
            self.process.kill()
            self.process.join()
        self.process.close()
        self.connection.close()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Blocks SIGINT in this thread meanwhile. A process or thread started now inherits the
    blocked signal (sigprocmask(2), execve(2)), so a Ctrl-C at a terminal, which signals the
    whole foreground process group, reaches only this process, which then stops the workers;
    one that arrives meanwhile is delivered when the block ends. Multiprocessing's resource
    tracker, which every spawn needs, is started first: it unblocks SIGINT as it starts."""
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _serve(connection: Connection, parent: int) -> None:
    """A local worker: runs the tasks it receives until the pipe closes or its parent dies."""
    _exit_with_parent(parent)
    while True:
        try:
            task = connection.recv()
        except EOFError:
            return
        connection.send(execute(*task))


def _exit_with_parent(parent: int) -> None:
    """Makes this process die with `parent` (its parent when it started), even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    if sys.platform != "linux" or libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before that took effect
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def run_dask(tasks: list[Task], jobs: int, scheduler: str | None, done: Callable[[Outcome], None]) -> None:
    """Dask distributed: `scheduler` (tcp://host:port) or a LocalCluster of `jobs` workers.
    Tasks are pure and retried on another worker if theirs is lost (retries=3)."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError as error:  # pragma: no cover - dask is a dependency
        raise RuntimeError("the dask engine needs dask[distributed] (pip install 'dask[distributed]')") from error
    cluster = None
    try:
        if scheduler is None:
            with _sigint_blocked():  # its event loop thread, which spawns the worker processes
                # Dask's own log lines (a worker losing its scheduler while a Ctrl-C stops them) are not
                # the user's business: tcplab reports every run's outcome itself.
                cluster = LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.CRITICAL
                )
        with Client(scheduler or cluster) as client:
            futures = [client.submit(execute, *task, key=f"tcplab-run-{task[0]}", pure=False, retries=3) for task in tasks]
            for future in as_completed(futures):
                done(future.result())
    finally:
        if cluster is not None:
            cluster.close()
