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

Two more tables tie a study file to the paper it reproduces; the report shows both:

    [study.assumptions]
    segment = "the segment size: the study does not say; ns-3's default is 536 B"
    "topology.bottleneck.buffer" = "330 packets: its 400 ms peaks need 300 or more"

says what is assumed where the study leaves a value open: a key that is an axis is swept (the
report checks the findings for each of its values), a dotted scenario key is fixed at the file's
value; and each `[[study.published]]` entry is one number the study publishes:

    [[study.published]]
    what = "CUBIC goodput, 1 flow, P2P"   # the study's words
    source = "text, section 4"            # where it says so
    case = { access = "p2p", flows = "1-cubic" }
    metric = "goodput_mbps"               # a column of the campaign index (tcplab.metrics)
    unit = "Mibit/s"                      # the study's unit (see UNITS)
    value = 8.65102                       # or [low, high] for a range it gives

The report sets it beside tcplab's mean ± 95 % CI in the case, for every value of the axes
the entry leaves out (the stack, the assumptions), with the difference in %.
"""

from __future__ import annotations

import itertools
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STUDY_DIRECTORY = Path(__file__).parent
STUDY_TABLE = "study"
# axes: the cases; seeds: replications `tcplab reproduce` runs; quick: overrides for --quick;
# assumptions and published: see the module doc.
STUDY_KEYS = {"axes", "seeds", "quick", "assumptions", "published"}
PUBLISHED_KEYS = {"what", "source", "case", "metric", "unit", "value"}
# A published number's unit -> (the unit of the metrics it may be compared with, as their names
# end, and the factor from that unit to it). A study's "Mbps" of 2^20 bit/s is Mibit/s.
UNITS = {
    "Mbit/s": ("_mbps", 1.0),
    "Mibit/s": ("_mbps", 1e6 / 2**20),
    "ms": ("_ms", 1.0),
    "%": ("_pct", 1.0),
    "ratio": ("", 1.0),
}
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


@dataclass(frozen=True)
class Published:
    """One number a study publishes (see the module doc); `value` is a number or a range."""

    what: str
    source: str
    case: dict[str, str]
    metric: str
    unit: str
    value: float | tuple[float, float]

    def from_metric(self, x: float) -> float:
        """A value of `metric` in the study's unit."""
        return x * UNITS[self.unit][1]

    def difference(self, x: float) -> float:
        """How far `x` (in the study's unit) is from the published value, as a fraction of it:
        0 inside a published range, else from its nearest end."""
        if isinstance(self.value, tuple):
            low, high = self.value
            nearest = low if x < low else high if x > high else x
            return 0.0 if nearest == x else (x - nearest) / nearest if nearest else math.inf
        return (x - self.value) / self.value if self.value else math.inf


def assumptions_of(document: Mapping[str, Any], origin: str) -> dict[str, str]:
    """The `[study.assumptions]` of a study document: an axis or a dotted scenario key -> what
    it assumes (see the module doc)."""
    table = document.get(STUDY_TABLE, {}).get("assumptions", {})
    axes = document.get(STUDY_TABLE, {}).get("axes", {})
    for key, text in table.items():
        if key not in axes and _lookup(document, key) is None:
            raise StudyFormatError(
                f"{origin}: study.assumptions.{key}: neither an axis ({', '.join(axes) or 'none'}) nor a key the file sets"
            )
        if not isinstance(text, str) or not text.strip():
            raise StudyFormatError(f"{origin}: study.assumptions.{key} must say what is assumed (a non-empty string)")
    return dict(table)


def swept_assumptions(document: Mapping[str, Any], origin: str) -> tuple[str, ...]:
    """The assumptions of a study document that are axes."""
    axes = document.get(STUDY_TABLE, {}).get("axes", {})
    return tuple(key for key in assumptions_of(document, origin) if key in axes)


def _lookup(document: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted key of a document (None if it has none)."""
    value: Any = document
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def published_of(document: Mapping[str, Any], origin: str, metrics: tuple[str, ...]) -> list[Published]:
    """The `[[study.published]]` entries of a study document, checked against its axes and
    against `metrics` (the columns a campaign's index has)."""
    axes = document.get(STUDY_TABLE, {}).get("axes", {})
    entries = []
    for i, entry in enumerate(document.get(STUDY_TABLE, {}).get("published", [])):
        where = f"{origin}: study.published.{i}"
        if not isinstance(entry, Mapping) or set(entry) != PUBLISHED_KEYS:
            raise StudyFormatError(f"{where} must have exactly the keys {', '.join(sorted(PUBLISHED_KEYS))}")
        case = entry["case"]
        if not isinstance(case, Mapping):
            raise StudyFormatError(f"{where}.case must be a table of axis = value")
        for axis, value in case.items():
            if value not in axes.get(axis, {}):
                raise StudyFormatError(f"{where}.case: {axis} = {value!r} is not a value of an axis of the study")
        if entry["metric"] not in metrics:
            raise StudyFormatError(f"{where}.metric: {entry['metric']!r} is not a metric; allowed: {', '.join(metrics)}")
        if entry["unit"] not in UNITS or not entry["metric"].endswith(UNITS[entry["unit"]][0]):
            fitting = [u for u, (suffix, _) in UNITS.items() if entry["metric"].endswith(suffix) and suffix]
            raise StudyFormatError(
                f"{where}.unit: {entry['unit']!r} does not fit {entry['metric']}; allowed: {', '.join(fitting or ['ratio'])}"
            )
        value = entry["value"]
        is_range = (
            isinstance(value, list)
            and len(value) == 2
            and all(isinstance(v, int | float) for v in value)
            and value[0] <= value[1]
        )
        if not (isinstance(value, int | float) or is_range):
            raise StudyFormatError(f"{where}.value must be a number or a range [low, high]")
        entries.append(
            Published(
                str(entry["what"]),
                str(entry["source"]),
                dict(case),
                entry["metric"],
                entry["unit"],
                (float(value[0]), float(value[1])) if is_range else float(value),
            )
        )
    return entries


def quick_overrides(path: Path) -> dict[str, Any]:
    """The `[study.quick]` overrides of a study file (what `--quick` shortens)."""
    table = tomllib.loads(path.read_text(encoding="utf-8")).get(STUDY_TABLE, {})
    return dict(table.get("quick", {}))


def _study(path: Path) -> Study:
    text = path.read_text(encoding="utf-8")
    description = text.splitlines()[0].removeprefix("#").strip() if text else ""
    return Study(path.stem, description, path, cases_of(tomllib.loads(text), str(path)))
