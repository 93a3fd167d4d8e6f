"""Campaign files: a base scenario and the axes a sweep varies.

    name = "buffers"                 # the campaign directory's default name
    base = "rtt-lens"                # a scenario file (relative to this file), a study, or a table
    seeds = 3                        # replications: seeds 1, 2, 3 (or a list: [7, 8])
    combine = "cross"                # "cross" (every combination) or "zip" (the i-th of each)
    [axes]
    "flows.0.cc" = ["cubic", "bbr"]
    "topology.bottleneck.buffer" = ["50pkt", "330pkt"]
    [labels]                         # optional: derived columns, {dotted.key} replaced by its value
    case = "{flows.0.cc}-{topology.bottleneck.buffer}"

An axis may instead name its values, each a table of overrides (the `[study.axes]` format of
the built-in studies, so a study file is a campaign too: `study_campaign`):

    [axes.buffer.4MB]
    "topology.rlc.buffer" = "4MB"

`load_campaign()` checks the file (types, a name for one directory, distinct seeds and axis
values, label and axis names unlike the index's own columns, at most `MAX_RUNS` runs), then
`expand()` turns it into its runs — every one resolved by the Rust core before anything runs,
so a malformed axis (unknown key, a value of the wrong type) is a one-line error naming the
axis. A run is identified by the hash of its resolved scenario, seed included: the same run
in another campaign, or after an axis changed, has the same identity.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core import ScenarioError
from ..result import check_run_name
from ..scenario import apply_overrides, check_seed, load, validate
from .store import is_reserved_column, reserved_columns_text

COMBINE_MODES = ("cross", "zip")
CAMPAIGN_KEYS = {"name", "base", "seeds", "combine", "axes", "labels"}
MAX_RUNS = 100_000
"""The most runs a campaign may have (docs/campaigns.md): every run is resolved before any
starts, about a millisecond and 10 kB each, so a larger sweep is split into campaigns."""
_LABEL_FIELD = re.compile(r"\{([^{}]+)\}")


@dataclass(frozen=True)
class Run:
    """One run of a campaign: its axis values, seed, resolved scenario and identity."""

    params: dict[str, Any]
    seed: int
    labels: dict[str, str]
    scenario: dict[str, Any]
    run_id: str


@dataclass(frozen=True)
class CampaignSpec:
    name: str
    base: dict[str, Any]
    # Per axis, its values as (value as the index shows it, the overrides it applies).
    axes: dict[str, list[tuple[Any, dict[str, Any]]]]
    seeds: list[int]
    combine: str
    labels: dict[str, str]


def _fail(path: str, message: str) -> ScenarioError:
    return ScenarioError(f"{path}: {message}")


def load_campaign(source: str | Path | Mapping[str, Any]) -> CampaignSpec:
    """Reads and checks a campaign file (or an already parsed table); every check that needs
    no scenario to be resolved, the number of runs included, is made here."""
    origin = Path(source) if not isinstance(source, Mapping) else None
    table = _read(origin) if origin is not None else dict(source)
    unknown = set(table) - CAMPAIGN_KEYS
    if unknown:
        raise _fail(sorted(unknown)[0], f"unknown campaign key; allowed: {', '.join(sorted(CAMPAIGN_KEYS))}")
    name = table.get("name", origin.stem if origin is not None else "campaign")
    if not isinstance(name, str):
        raise _fail("name", f"{name!r}; allowed: a name for one directory, as a string")
    check_run_name(name)
    axes = _axes(table.get("axes", {}))
    combine = table.get("combine", "cross")
    if combine not in COMBINE_MODES:
        raise _fail("combine", f"{combine!r}; allowed: {', '.join(COMBINE_MODES)}")
    if combine == "zip" and len({len(v) for v in axes.values()}) > 1:
        lengths = ", ".join(f"{k}: {len(v)}" for k, v in axes.items())
        raise _fail("axes", f"zipped axes need lists of one length ({lengths})")
    seeds = _seeds(table.get("seeds", 1))
    combinations = len(next(iter(axes.values()), [None])) if combine == "zip" else math.prod(map(len, axes.values()))
    if combinations * len(seeds) > MAX_RUNS:
        raise _fail(
            "axes" if axes else "seeds",
            f"{combinations} combinations x {len(seeds)} seeds = {combinations * len(seeds)} runs;"
            f" allowed: at most {MAX_RUNS} runs per campaign (split it into several)",
        )
    labels = _labels(table.get("labels", {}), axes)
    return CampaignSpec(name=name, base=_base(table, origin), axes=axes, seeds=seeds, combine=combine, labels=labels)


def _read(origin: Path) -> dict[str, Any]:
    """The table of a campaign file: a regular file of UTF-8 TOML."""
    try:
        if not origin.is_file():  # a directory, a FIFO (reading it would wait), a device
            origin.stat()  # raises if it does not exist
            raise _fail(str(origin), "not a regular file; allowed: a campaign .toml file")
        return tomllib.loads(origin.read_text(encoding="utf-8"))
    except OSError as error:
        raise _fail(str(origin), f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise _fail(str(origin), "cannot read: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise _fail(str(origin), f"invalid TOML: {error}") from None


def _base(table: Mapping[str, Any], origin: Path | None) -> dict[str, Any]:
    """The base scenario: a file (relative to the campaign file), a study, or a table."""
    if "base" not in table:
        raise _fail("base", "missing; allowed: a scenario file, a study name or an inline table")
    source = table["base"]
    if isinstance(source, str):
        relative = origin.parent / source if origin is not None else None
        return load(relative if relative is not None and relative.is_file() else source)
    if isinstance(source, Mapping):
        return load(source)
    raise _fail("base", f"{source!r}; allowed: a scenario file, a study name or an inline table")


def _seeds(value: Any) -> list[int]:
    """`seeds = N` (seeds 1 to N) or a list of distinct seeds."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_RUNS:
            raise _fail("seeds", f"{value}; allowed: a number of replications from 1 to {MAX_RUNS}, or a list of seeds")
        return list(range(1, value + 1))
    if not isinstance(value, list) or not value:
        raise _fail("seeds", f"{value!r}; allowed: a number of replications (1 or more) or a non-empty list of seeds")
    for seed in value:
        check_seed(seed, "seeds: seed")
    repeated = next((seed for seed, count in collections.Counter(value).items() if count > 1), None)
    if repeated is not None:
        raise _fail("seeds", f"{repeated} is listed twice; allowed: distinct seeds (each is one replication)")
    return list(value)


def _labels(table: Any, axes: Mapping[str, Any]) -> dict[str, str]:
    """Label columns: each a name of its own and a text template of `{axis}` fields."""
    if not isinstance(table, Mapping):
        raise _fail("labels", f'{table!r}; allowed: a table of names and text templates, e.g. case = "{{flows.0.cc}}"')
    for label, template in table.items():
        where = f"labels.{label}"
        if not isinstance(template, str):
            raise _fail(where, f'{template!r}; allowed: a text template, e.g. "{{flows.0.cc}}-{{duration}}"')
        if label in axes:
            raise _fail(where, "an axis has this name; allowed: a name no axis has")
        if is_reserved_column(label):
            raise _fail(where, f"a column of the index has this name; reserved: {reserved_columns_text()}")
        missing = [k for k in _LABEL_FIELD.findall(template) if k not in axes]
        if missing:
            raise _fail(where, f"{{{missing[0]}}} is not an axis; axes: {', '.join(axes) or 'none'}")
    return dict(table)


def _axes(table: Any) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    """Dotted-key axes (a list of distinct values) and named axes (a table of override tables).
    An axis is an index column, so its name is none of the index's own; the seed is `seeds`'s."""
    if not isinstance(table, Mapping):
        raise _fail("axes", "must be a table of dotted keys and lists of values")
    axes = {}
    for key, values in table.items():
        if isinstance(values, list) and values:
            axes[key] = [(value, {key: value}) for value in values]
        elif isinstance(values, Mapping) and values and all(isinstance(v, Mapping) for v in values.values()):
            axes[key] = [(name, dict(overrides)) for name, overrides in values.items()]
        else:
            raise _fail(f"axes.{key}", "must be a non-empty list of values (or a table of named override tables)")
        if any("seed" in overrides for _, overrides in axes[key]):
            raise _fail(f"axes.{key}", "sets the seed; allowed: seeds = N or a list of seeds, not an axis")
        if is_reserved_column(key):
            raise _fail(f"axes.{key}", f"a column of the index has this name; reserved: {reserved_columns_text()}")
        texts = [json.dumps(value, sort_keys=True, default=str) for value, _ in axes[key]]
        counts = collections.Counter(texts)
        repeated = next((value for (value, _), text in zip(axes[key], texts, strict=True) if counts[text] > 1), None)
        if repeated is not None:
            raise _fail(f"axes.{key}", f"{repeated!r} is listed twice; allowed: distinct values")
    return axes


def study_campaign(study_path: Path, quick: bool = False) -> CampaignSpec:
    """The sweep of a built-in study: its `[study.axes]` cases, `study.seeds` replications,
    and with `quick` its `study.quick` overrides applied to the base (shorter runs)."""
    document = tomllib.loads(study_path.read_text(encoding="utf-8"))
    study = document.get("study", {})
    base = load(study_path)
    if quick:
        base = apply_overrides(base, study.get("quick", {}))
    return load_campaign(
        {"name": base.get("name") or study_path.stem, "base": base, "seeds": study.get("seeds", 1), "axes": study.get("axes", {})}
    )


def _axis_keys(campaign: CampaignSpec, axis: str) -> set[str]:
    """Every dotted key an axis sets."""
    return {key for _, overrides in campaign.axes[axis] for key in overrides}


def run_id(scenario: Mapping[str, Any]) -> str:
    """The identity of a resolved scenario: 16 hex digits of the SHA-256 of its canonical JSON."""
    canonical = json.dumps(scenario, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _combinations(campaign: CampaignSpec) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(axis values, merged overrides) of every combination."""
    keys = list(campaign.axes)
    if not keys:
        return [({}, {})]
    rows = zip(*campaign.axes.values(), strict=True) if campaign.combine == "zip" else itertools.product(*campaign.axes.values())
    combinations = []
    for row in rows:
        params = {key: value for key, (value, _) in zip(keys, row, strict=True)}
        overrides = {k: v for _, chosen in row for k, v in chosen.items()}
        combinations.append((params, overrides))
    return combinations


def expand(campaign: CampaignSpec) -> list[Run]:
    """Every run of the campaign, validated, in axis order then seed order.

    A combination is resolved once: the seed is a plain value of the resolved scenario, so
    each seed's scenario is that one with its seed (and shares its tables) — unless a flow
    group draws its start times or sizes (`[[flows]]` patterns, drawn from the seed when the
    scenario is resolved): then each seed's scenario is resolved with its own seed."""
    runs = []
    for params, overrides in _combinations(campaign):
        scenario = _validated(campaign, params, overrides, campaign.seeds[0])
        draws = _draws_from_the_seed(apply_overrides(campaign.base, overrides))
        labels = {
            name: _LABEL_FIELD.sub(lambda m, params=params: str(params[m.group(1)]), template)
            for name, template in campaign.labels.items()
        }
        for seed in campaign.seeds:
            seeded = (
                _validated(campaign, params, overrides, seed)
                if draws and seed != campaign.seeds[0]
                else {**scenario, "seed": seed}
            )
            runs.append(Run(params=params, seed=seed, labels=labels, scenario=seeded, run_id=run_id(seeded)))
    return runs


def _validated(campaign: CampaignSpec, params: dict[str, Any], overrides: dict[str, Any], seed: int) -> dict[str, Any]:
    """The resolved scenario of one combination and seed; an error names the axis at fault."""
    try:
        return validate(apply_overrides(campaign.base, {**overrides, "seed": seed}))
    except ScenarioError as error:
        path = str(error).split(": ", 1)[0]
        named = [k for k in params for o in _axis_keys(campaign, k) if path == o or path.startswith(f"{o}.")]
        culprit = max(named, key=len, default=None)
        where = f"axes.{culprit} = {params[culprit]!r}" if culprit is not None else f"campaign run {params}" if params else "base"
        raise ScenarioError(f"{where}: {error}") from None


def _draws_from_the_seed(document: dict[str, Any]) -> bool:
    """Whether resolving `document` draws from its seed: a flow group's start times or sizes
    given as a pattern or a distribution (a table) rather than a value."""
    return any(isinstance(flow.get(key), dict) for flow in document.get("flows", []) for key in ("start", "bytes"))
