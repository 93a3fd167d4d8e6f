"""What emulation runs leave behind when they are killed (SIGKILL, a crash, a power cut before
teardown): their network namespaces (with the TUN device and routes inside), the processes
running in them (delay line, receiver, senders) and their temporary directory.

Every run first writes its owner file, /run/tcplab/PREFIX.json (pid and start time), then
builds namespaces PREFIX{s,r,d} and a temporary directory tcplab-PREFIX-*, and removes all
of them when it ends. `find()` reports the leftovers of runs whose owner is no longer running
(a pid reused by another process does not count: its start time differs); those of a live
run are never touched. `remove()` kills the processes in a dead run's namespaces, deletes
the namespaces, the directory and the owner file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

STATE_DIRECTORY = Path("/run/tcplab")
PREFIX_PATTERN = r"tl[0-9a-f]{6}"
_NAMESPACE = re.compile(rf"^({PREFIX_PATTERN})[srd]$")
_WORK_DIRECTORY = re.compile(rf"^tcplab-({PREFIX_PATTERN})-")
KILL_TIMEOUT_S = 5.0


@dataclass
class Leftover:
    """What one dead run left behind."""

    prefix: str
    owner: int | None  # the pid that ran it, when its owner file survived
    namespaces: list[str] = field(default_factory=list)
    processes: dict[int, str] = field(default_factory=dict)  # pid -> what it is
    directories: list[Path] = field(default_factory=list)
    owner_file: Path | None = None

    def describe(self) -> str:
        owner = f"owner pid {self.owner}, not running" if self.owner else "no owner file"
        parts = []
        if self.processes:
            parts.append(
                f"{len(self.processes)} processes (" + ", ".join(f"{pid} {what}" for pid, what in self.processes.items()) + ")"
            )
        if self.namespaces:
            parts.append("namespaces " + " ".join(self.namespaces))
        parts += [str(d) for d in self.directories]
        if self.owner_file is not None:
            parts.append(str(self.owner_file))
        return f"run {self.prefix} ({owner}): " + "; ".join(parts)


def _start_ticks(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (/proc/PID/stat field 22), None when
    it no longer runs (a zombie counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in "ZX" else int(fields[19])


def claim(prefix: str) -> Path:
    """Records this process as the owner of run `prefix`; call before building anything."""
    STATE_DIRECTORY.mkdir(parents=True, exist_ok=True)
    path = STATE_DIRECTORY / f"{prefix}.json"
    path.write_text(json.dumps({"pid": os.getpid(), "start_ticks": _start_ticks(os.getpid())}), encoding="utf-8")
    return path


def owner_running(owner: dict[str, int]) -> bool:
    """Whether the process an owner file names (pid and start time) still runs."""
    return owner.get("start_ticks") is not None and _start_ticks(owner["pid"]) == owner["start_ticks"]


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _processes_in(namespace: str) -> dict[int, str]:
    """The processes running in `namespace`, each named by its module and subcommand
    (`tcplab.emu.traffic send`) or its program."""
    out = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout
    processes = {}
    for pid in map(int, out.split()):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        module = args.index("-m") + 1 if "-m" in args else None
        named = args[module : module + 2] if module is not None else args[:1]
        processes[pid] = " ".join(a for a in named if a and not a.startswith("-"))
    return processes


def find() -> list[Leftover]:
    """The leftovers of every dead run. Namespaces and directories are listed before the
    owner files: a run writes its owner file first, so whatever is seen here has one by then."""
    found: dict[str, Leftover] = {}

    def of(prefix: str) -> Leftover:
        return found.setdefault(prefix, Leftover(prefix, None))

    for name in _namespaces():
        match = _NAMESPACE.match(name)
        if match:
            of(match.group(1)).namespaces.append(name)
    temporary = Path(tempfile.gettempdir())
    for path in sorted(temporary.iterdir()):
        match = _WORK_DIRECTORY.match(path.name)
        if match and path.is_dir():
            of(match.group(1)).directories.append(path)
    owner_files = sorted(STATE_DIRECTORY.glob("tl*.json")) if STATE_DIRECTORY.is_dir() else []
    for path in owner_files:
        try:
            owner = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            owner = {}
        if owner_running(owner):
            found.pop(path.stem, None)
            continue
        leftover = of(path.stem)
        leftover.owner, leftover.owner_file = owner.get("pid"), path
    for leftover in found.values():
        for namespace in leftover.namespaces:
            leftover.processes.update(_processes_in(namespace))
    return list(found.values())


def remove(leftover: Leftover) -> None:
    """Kills the run's processes (and waits for them), deletes its namespaces, directories
    and owner file."""
    for pid in leftover.processes:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while any(_start_ticks(pid) is not None for pid in leftover.processes) and time.monotonic() < deadline:
        time.sleep(0.05)
    for namespace in leftover.namespaces:
        subprocess.run(["ip", "netns", "delete", namespace], capture_output=True)
    for directory in leftover.directories:
        shutil.rmtree(directory, ignore_errors=True)
    if leftover.owner_file is not None:
        leftover.owner_file.unlink(missing_ok=True)


def clean() -> list[str]:
    """Removes the leftovers of every dead run; returns one line per run saying what went."""
    removed = []
    for leftover in find():
        remove(leftover)
        removed.append(leftover.describe())
    return removed
