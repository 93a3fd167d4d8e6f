"""A reference study on this machine's kernel (`tcplab reproduce STUDY --backend emu|both`):
every case of a wired study, once each (the kernel is not seeded), into DIR/emu/<case>/;
cases already there are not run again. A case the kernel here cannot emulate (its path needs
netem, say) is skipped, and DIR/emu/skipped.json says why, for the report."""

from __future__ import annotations

import json
from pathlib import Path

from .. import studies
from .._core import ScenarioError
from ..result import Result
from ..scenario import apply_overrides, load
from .run import emulate, require_host

# The studies whose scenarios are wired dumbbells (the others need radio models).
EMULATED_STUDIES = ("deep-buffer", "rtt-lens")
EMU_DIRECTORY = "emu"
SKIPPED_FILE = "skipped.json"


def require_emulatable(study: str) -> None:
    if study not in EMULATED_STUDIES:
        raise ScenarioError(
            f"--backend emu: {study} needs radio models the kernel cannot emulate; emulated studies: {', '.join(EMULATED_STUDIES)}"
        )


def emulate_study(study: str, quick: bool, directory: Path) -> dict[str, Result]:
    """Runs (or loads) every case of `study` on the kernel; returns the results by case."""
    require_emulatable(study)
    found = studies.find(study)
    assert found is not None, "require_emulatable knows only built-in studies"
    quick_overrides = studies.quick_overrides(found.path) if quick else {}
    require_host()  # a machine that can emulate nothing refuses at once, not case by case
    results, skipped = {}, {}
    for case in found.cases:
        target = directory / EMU_DIRECTORY / case
        if not (target / "summary.json").is_file():
            document = apply_overrides(load(f"{study}:{case}"), quick_overrides)
            try:
                result = emulate(document)
            except ScenarioError as refused:  # refused before anything ran: the kernel lacks what it needs
                skipped[case] = str(refused)
                continue
            result.save(target, plots=False, overwrite=True)
        results[case] = Result.load(target)
    (directory / EMU_DIRECTORY).mkdir(parents=True, exist_ok=True)
    (directory / EMU_DIRECTORY / SKIPPED_FILE).write_text(json.dumps(skipped, indent=2) + "\n", encoding="utf-8")
    return results


def skipped_cases(directory: Path) -> dict[str, str]:
    """The cases of a reproduce directory the kernel could not emulate, with why."""
    path = directory / EMU_DIRECTORY / SKIPPED_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def emulated_cases(directory: Path) -> dict[str, Result]:
    """The kernel runs a reproduce directory holds, by case."""
    root = directory / EMU_DIRECTORY
    if not root.is_dir():
        return {}
    return {p.name: Result.load(p) for p in sorted(root.iterdir()) if p.is_dir() and (p / "summary.json").is_file()}
