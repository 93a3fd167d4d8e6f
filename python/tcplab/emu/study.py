"""A reference study on this machine's kernel (`tcplab reproduce STUDY --backend emu|both`):
every case of a wired study, once each (the kernel is not seeded), into DIR/emu/<case>/;
cases already there are not run again."""

from __future__ import annotations

from pathlib import Path

from .. import studies
from .._core import ScenarioError
from ..result import Result
from ..scenario import apply_overrides, load
from .run import emulate

# The studies whose scenarios are wired dumbbells (the others need radio models).
EMULATED_STUDIES = ("deep-buffer", "rtt-lens")
EMU_DIRECTORY = "emu"


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
    results = {}
    for case in found.cases:
        target = directory / EMU_DIRECTORY / case
        if not (target / "summary.json").is_file():
            document = apply_overrides(load(f"{study}:{case}"), quick_overrides)
            emulate(document).save(target, plots=False, overwrite=True)
        results[case] = Result.load(target)
    return results


def emulated_cases(directory: Path) -> dict[str, Result]:
    """The kernel runs a reproduce directory holds, by case."""
    root = directory / EMU_DIRECTORY
    if not root.is_dir():
        return {}
    return {p.name: Result.load(p) for p in sorted(root.iterdir()) if (p / "summary.json").is_file()}
