"""The built-in studies: reference scenarios that ship with tcplab and run by name
(`tcplab run rtt-lens`, `tcplab.run("rtt-lens")`).

Each study is one TOML scenario file in this folder, named after the study, whose first line
is a `# ` comment describing it in one line. Adding a study is adding such a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STUDY_DIRECTORY = Path(__file__).parent


@dataclass(frozen=True)
class Study:
    """One built-in study: its name, a one-line description and its scenario file."""

    name: str
    description: str
    path: Path


def all_studies() -> dict[str, Study]:
    """Every built-in study by name, in name order."""
    return {path.stem: _study(path) for path in sorted(STUDY_DIRECTORY.glob("*.toml"))}


def find(name: str) -> Study | None:
    """The study called `name`, or None."""
    return all_studies().get(name)


def _study(path: Path) -> Study:
    with path.open(encoding="utf-8") as file:
        first_line = file.readline()
    return Study(name=path.stem, description=first_line.removeprefix("#").strip(), path=path)
