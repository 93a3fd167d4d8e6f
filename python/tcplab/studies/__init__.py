"""The built-in studies: reference scenarios that ship with tcplab and run by name
(`tcplab run rtt-lens`, `tcplab.run("rtt-lens")`).

Each study is one TOML scenario file in this folder, named after the study, whose first line
is a `# ` comment describing it in one line. Adding a study is adding such a file.

A study that is a sweep names its cases in a `[study.axes]` table: each axis is a table of
values, each value a table of dotted-key overrides. The cases are every combination of one
value per axis, in file order, named by the values joined with `-`:

    [study.axes.cc.bbr]
    "flows.0.cc" = "bbr"
    [study.axes.buffer.4MB]
    "topology.rlc.buffer" = "4MB"

gives the case `bbr-4MB`, run as `tcplab run NAME:bbr-4MB` (siad-mmwave's cases also name their
stack: `siad-mmwave:ns3-bbr-4MB`). `study.seeds` is how many
replications `tcplab reproduce` runs of every case, and `[study.quick]` holds the overrides of
`--quick` (shorter runs). The `study` table is metadata: it is removed before the scenario is
validated, and the study name alone runs the file's own values.
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STUDY_DIRECTORY = Path(__file__).parent
STUDY_TABLE = "study"
# axes: the cases; seeds: replications `tcplab reproduce` runs; quick: overrides for --quick.
STUDY_KEYS = {"axes", "seeds", "quick"}
CASE_SEPARATOR = ":"


class StudyFormatError(ValueError):
    """A `[study]` table that does not describe axes of overrides."""


@dataclass(frozen=True)
class Study:
    """One built-in study: its name, a one-line description, its scenario file and its cases
    (case name -> dotted-key overrides; empty for a study that is a single scenario)."""

    name: str
    description: str
    path: Path
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)


def all_studies() -> dict[str, Study]:
    """Every built-in study by name, in name order."""
    return {path.stem: _study(path) for path in sorted(STUDY_DIRECTORY.glob("*.toml"))}


def find(name: str) -> Study | None:
    """The study called `name`, or None."""
    return all_studies().get(name)


def cases_of(document: Mapping[str, Any], origin: str) -> dict[str, dict[str, Any]]:
    """The cases a scenario document's `[study.axes]` table describes (see the module doc)."""
    table = document.get(STUDY_TABLE, {})
    if not isinstance(table, Mapping) or set(table) - STUDY_KEYS:
        raise StudyFormatError(f"{origin}: [study] may only hold {', '.join(sorted(STUDY_KEYS))}")
    axes = table.get("axes", {})
    values_per_axis = []
    for axis, values in axes.items() if isinstance(axes, Mapping) else [("axes", None)]:
        if not isinstance(values, Mapping) or not values:
            raise StudyFormatError(f"{origin}: study.axes.{axis} must be a table of values")
        for value, overrides in values.items():
            if not isinstance(overrides, Mapping):
                raise StudyFormatError(f"{origin}: study.axes.{axis}.{value} must be a table of dotted-key overrides")
        values_per_axis.append(list(values.items()))
    if not values_per_axis:
        return {}
    cases = {}
    for combination in itertools.product(*values_per_axis):
        name = "-".join(value for value, _ in combination)
        cases[name] = {key: item for _, overrides in combination for key, item in overrides.items()}
    return cases


def quick_overrides(path: Path) -> dict[str, Any]:
    """The `[study.quick]` overrides of a study file (what `--quick` shortens)."""
    table = tomllib.loads(path.read_text(encoding="utf-8")).get(STUDY_TABLE, {})
    return dict(table.get("quick", {}))


def _study(path: Path) -> Study:
    text = path.read_text(encoding="utf-8")
    description = text.splitlines()[0].removeprefix("#").strip() if text else ""
    return Study(path.stem, description, path, cases_of(tomllib.loads(text), str(path)))
