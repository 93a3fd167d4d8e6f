"""The result of one run: the resolved scenario, the summary, and the recorded time series as
polars DataFrames; saving it as a run directory and loading it back.

A run directory holds scenario.toml (the resolved scenario: running it again reproduces the
run), summary.json, flows.parquet (empty when the flows were recorded in groups),
flow_groups.parquet (only then), links.parquet, rtt.parquet (only when per-ACK RTT samples
were recorded), radio.parquet (only with an mmWave cell), wifi.parquet (only with a WiFi
BSS) and plots/*.png.

Every output directory of tcplab (a run, `tcplab compare`'s) is written by `write_directory`:
into a hidden staging directory beside it, renamed into place at the end, so a directory with
the final name is always complete; under a lock, so that two processes never write one
directory; replacing only an earlier output of tcplab, never the current directory. What a
killed write leaves behind is removed by the next write into the same parent.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ._core import ScenarioError
from .scenario import resolved_document, to_toml
from .series import frame_schema

SCENARIO_FILE = "scenario.toml"
SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
FLOW_GROUPS_FILE = "flow_groups.parquet"
LINKS_FILE = "links.parquet"
RTT_FILE = "rtt.parquet"
RADIO_FILE = "radio.parquet"
WIFI_FILE = "wifi.parquet"
PLOTS_DIRECTORY = "plots"

# Column types of the core's packed columns: little-endian numpy dtype and polars dtype.
_PACKED_DTYPES = {"f64": ("<f8", pl.Float64), "u32": ("<u4", pl.UInt32)}


@dataclass(frozen=True, eq=False, repr=False)
class Result:
    """One run. `flows` has one row per flow and sampling interval (none when the run recorded
    its flows in groups: `record.flows`), `flow_groups` one row per group of flows (algorithm
    and stack) and interval (None unless recorded in groups), `links` one row per sampled link
    direction and interval, `rtt` one row per RTT sample (None unless the scenario set `record.rtt`),
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
    flow_groups: pl.DataFrame | None = None

    @classmethod
    def from_core(cls, raw: Mapping[str, Any]) -> Result:
        """A Result from what `_core.run` returns: the scenario and summary as JSON text, and
        under "series" the column dicts of flows (or flow_groups), links and, when recorded, rtt
        and the cell's series (tcplab.series lists their columns)."""
        frames = {name: _frame(columns) for name, columns in raw["series"].items()}
        return cls(
            scenario=resolved_document(raw["scenario"]),
            summary=json.loads(raw["summary"]),
            flows=frames["flows"] if "flows" in frames else pl.DataFrame(schema=frame_schema("flows")),
            flow_groups=frames.get("flow_groups"),
            links=frames["links"],
            rtt=frames.get("rtt"),
            radio=frames.get("radio"),
            wifi=frames.get("wifi"),
        )

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Reads a run directory written by `save`."""
        directory = Path(directory)
        optional = {name: directory / name for name in (RTT_FILE, RADIO_FILE, WIFI_FILE, FLOW_GROUPS_FILE)}
        return cls(
            scenario=tomllib.loads((directory / SCENARIO_FILE).read_text(encoding="utf-8")),
            summary=json.loads((directory / SUMMARY_FILE).read_text(encoding="utf-8")),
            flows=pl.read_parquet(directory / FLOWS_FILE),
            links=pl.read_parquet(directory / LINKS_FILE),
            rtt=_read_if_present(optional[RTT_FILE]),
            radio=_read_if_present(optional[RADIO_FILE]),
            wifi=_read_if_present(optional[WIFI_FILE]),
            flow_groups=_read_if_present(optional[FLOW_GROUPS_FILE]),
        )

    @property
    def name(self) -> str:
        """The scenario's name ("run" when it has none)."""
        return self.scenario.get("name") or "run"

    def save(
        self,
        directory: str | os.PathLike[str],
        *,
        overwrite: bool = False,
        plots: bool = True,
        progress: Callable[[float], None] | None = None,
    ) -> Path:
        """Writes the run directory and returns its path (see `write_directory`).

        Refuses an existing non-empty directory unless `overwrite` and it is a run directory,
        which is then replaced only once the new one is complete. On any failure (or Ctrl-C)
        nothing is left behind and an earlier directory at that path is untouched. `progress`
        is called with the fraction of the plots drawn."""
        target = Path(directory)
        write_directory(
            target,
            lambda staging: self._write_files(staging, plots=plots, progress=progress),
            overwrite=overwrite,
        )
        return target

    def _write_files(self, directory: Path, *, plots: bool, progress: Callable[[float], None] | None) -> None:
        run = self.summary.get("run", {})
        header = (
            f"Resolved scenario of a tcplab {run.get('tcplab_version', '')} run"
            f" (seed {run.get('seed')}).\n`tcplab run {SCENARIO_FILE}` reproduces it."
        )
        (directory / SCENARIO_FILE).write_text(to_toml(self.scenario, header), encoding="utf-8")
        (directory / SUMMARY_FILE).write_text(json.dumps(self.summary, indent=2) + "\n", encoding="utf-8")
        self.flows.write_parquet(directory / FLOWS_FILE)
        self.links.write_parquet(directory / LINKS_FILE)
        optional = ((RTT_FILE, self.rtt), (RADIO_FILE, self.radio), (WIFI_FILE, self.wifi), (FLOW_GROUPS_FILE, self.flow_groups))
        for name, frame in optional:
            if frame is not None:
                frame.write_parquet(directory / name)
        if plots:
            from .plots import save_plots  # matplotlib is imported only when plotting

            save_plots(self, directory / PLOTS_DIRECTORY, progress)

    def __repr__(self) -> str:
        run = self.summary.get("run", {})
        return (
            f"<Result {self.name!r}: {len(self.summary.get('flows', []))} flows,"
            f" {run.get('sim_seconds')} s simulated, seed {run.get('seed')}>"
        )


def check_run_name(name: str, where: str = "name") -> None:
    """Raises ScenarioError unless `name` can name one directory: `tcplab run` writes to
    runs/NAME-<time> and a campaign to runs/NAME, so a path separator or `..` in a name would
    write elsewhere, and an empty name nowhere."""
    found = next((part for part in ("/", "\\", "..", "\0") if part in name), None)
    if found is not None or not name.strip():
        what = "is empty" if found is None else f"contains {found!r}"
        raise ScenarioError(f"{where}: {name!r} {what}; allowed: a name for one directory, without '/', '\\' or '..'")


def ensure_writable(directory: str | os.PathLike[str], *, overwrite: bool, marker: str = SUMMARY_FILE) -> None:
    """Raises unless `directory` can receive a new output: it is absent or empty, or it is an
    earlier output (it holds `marker`) and `overwrite` is set. It may be a symbolic link (the
    output goes where it points) but not the current directory or one of its parents, nor lie
    below a file. Each refusal is one line naming the path: NotADirectoryError for a file in
    the way, FileExistsError for the rest."""
    given = Path(directory)
    ensure_no_file_in_the_way(given)
    target = _physical(given)
    if _holds_current_directory(target):
        raise FileExistsError(
            f"{given}: is the current directory or one of its parents; allowed: a new or empty directory elsewhere"
        )
    if not _is_non_empty_directory(target):
        return
    if not overwrite:
        raise FileExistsError(
            f"{given}: exists and is not empty; allowed: a new or empty directory,"
            " or --overwrite to replace an earlier output of tcplab"
        )
    if not (target / marker).is_file():
        raise FileExistsError(
            f"{given}: not an output of tcplab (no {marker}), so --overwrite leaves it alone; allowed: a new or empty directory"
        )


def ensure_no_file_in_the_way(directory: str | os.PathLike[str]) -> None:
    """Raises NotADirectoryError, one line naming it, if `directory` or the nearest of its
    parents that exists is a file (`-o notes.txt/run`)."""
    given = Path(directory)
    for path in (given, *given.parents):
        if path.exists():
            if not path.is_dir():
                raise NotADirectoryError(f"{path}: is a file, not a directory")
            return


@contextmanager
def claimed(directory: str | os.PathLike[str], *, overwrite: bool, marker: str = SUMMARY_FILE) -> Iterator[Path]:
    """Checks `directory` (`ensure_writable`) and keeps any other tcplab process from writing
    there until the block ends; yields its physical path (symbolic links resolved).

    The claim is an flock(2) lock on the hidden file `.NAME.lock` beside the directory; the
    kernel releases it when its holder dies, and the file is removed on release. A directory
    another process holds is a FileExistsError naming it. Claims nest within a process. The
    first claim in a parent removes what killed writes left there (`remove_stale_leftovers`)."""
    ensure_writable(directory, overwrite=overwrite, marker=marker)
    target = _physical(Path(directory))
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target, Path(directory)) as locked:
        if locked and target.parent not in _tidied_parents:
            _tidied_parents.add(target.parent)
            remove_stale_leftovers(target.parent)  # may put back an earlier output at `target`
        ensure_writable(directory, overwrite=overwrite, marker=marker)  # as it is now it is ours
        yield target


def write_directory(
    directory: str | os.PathLike[str],
    write: Callable[[Path], None],
    *,
    overwrite: bool = False,
    marker: str = SUMMARY_FILE,
) -> Path:
    """Writes an output directory atomically and returns its physical path: claims it
    (`claimed`), lets `write` fill a hidden staging directory beside it, `.NAME.partial-PID-*`,
    and renames that into place, replacing an earlier output only once the new one is complete.
    On any failure (or Ctrl-C) the staging directory is removed and an earlier directory at
    that path is untouched."""
    with claimed(directory, overwrite=overwrite, marker=marker) as target:
        staging = target.with_name(f".{target.name}.partial-{os.getpid()}-{secrets.token_hex(4)}")
        staging.mkdir()
        try:
            write(staging)
            _move_into_place(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def remove_stale_leftovers(parent: Path) -> None:
    """Removes what writes killed midway (SIGKILL, a power cut) left in `parent`: staging
    directories (`.NAME.partial-PID-*`), earlier outputs an overwrite had moved aside
    (`.NAME.retired-PID-*`) and lock files — only for names nobody is writing (their lock is
    free) and only leftovers whose process is gone. An earlier output moved aside goes back to
    NAME when NAME is missing (the overwrite never happened). On a file system without locks
    nothing is removed."""
    try:
        entries = [Path(entry.path) for entry in os.scandir(parent)]
    except OSError:
        return
    groups: dict[str, list[re.Match[str]]] = {}
    for path in entries:
        match = _LEFTOVER.match(path.name)
        if match and (match["kind"] or _is_our_lock_file(path)):
            groups.setdefault(match["name"], []).append(match)
    for name, leftovers in groups.items():
        target = parent / name
        try:
            with _locked(target, target) as locked:
                if locked:
                    _restore_and_remove(target, leftovers)
        except OSError:  # FileExistsError: being written right now
            continue


# What an interrupted write leaves: .NAME.partial-PID-HEX, .NAME.retired-PID-HEX, .NAME.lock
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:(?P<kind>partial|retired)-(?P<pid>\d+)-[0-9a-f]{8}|lock)$")
_LOCK_OWNER = b"tcplab "  # a lock file holds "tcplab PID"
# Physical path of each directory this process has claimed -> [lock descriptor or None, depth].
_held: dict[Path, list[Any]] = {}
_tidied_parents: set[Path] = set()


@contextmanager
def _locked(target: Path, given: Path) -> Iterator[bool]:
    """Holds the lock of `target` (reentrant); yields False where the file system has no locks."""
    held = _held.get(target)
    if held is not None:
        held[1] += 1
        try:
            yield held[0] is not None
        finally:
            held[1] -= 1
        return
    lock_path = target.with_name(f".{target.name}.lock")
    descriptor = _acquire(lock_path, given)
    _held[target] = [descriptor, 1]
    try:
        yield descriptor is not None
    finally:
        del _held[target]
        if descriptor is not None:
            _release(lock_path, descriptor)


def _acquire(lock_path: Path, given: Path) -> int | None:
    """A descriptor of `lock_path` locked by this process (None: no locks on this file system)."""
    while True:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(descriptor, 64, 0).decode(errors="replace").split()
            os.close(descriptor)
            pid = f" (pid {owner[1]})" if len(owner) == 2 and owner[0] == "tcplab" else ""
            raise FileExistsError(
                f"{given}: another tcplab process{pid} is writing it; allowed: wait for it to finish, or another directory"
            ) from None
        except OSError:  # e.g. a cluster file system mounted without flock support
            os.close(descriptor)
            with suppress(OSError):
                os.unlink(lock_path)
            return None
        except BaseException:
            os.close(descriptor)
            raise
        if not _is_same_file(descriptor, lock_path):
            os.close(descriptor)  # its holder removed the file as we opened it: open the new one
            continue
        try:
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, _LOCK_OWNER + f"{os.getpid()}\n".encode(), 0)
        except BaseException:
            _release(lock_path, descriptor)
            raise
        return descriptor


def _release(lock_path: Path, descriptor: int) -> None:
    with suppress(FileNotFoundError):
        os.unlink(lock_path)  # while still locked: a process that opened it meanwhile retries
    os.close(descriptor)


def _is_same_file(descriptor: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(descriptor)
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)


def _is_our_lock_file(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(_LOCK_OWNER)) == _LOCK_OWNER
    except OSError:
        return False


def _restore_and_remove(target: Path, leftovers: list[re.Match[str]]) -> None:
    """With `target`'s lock held: the leftovers of dead processes go, an earlier output moved
    aside first goes back if `target` is missing. Lock files go with the lock."""
    stale = [m for m in leftovers if m["kind"] and not _is_alive(int(m["pid"]))]
    retired = [m for m in stale if m["kind"] == "retired"]
    if retired and not os.path.lexists(target):
        os.rename(target.with_name(retired[0].string), target)
        stale.remove(retired[0])
    for match in stale:
        shutil.rmtree(target.with_name(match.string), ignore_errors=True)


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _physical(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _holds_current_directory(target: Path) -> bool:
    try:
        current = Path.cwd()
    except OSError:  # the current directory was removed
        return False
    return current == target or target in current.parents


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
    shutil.rmtree(retired, ignore_errors=True)  # the new output is in place: leftovers are harmless


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
