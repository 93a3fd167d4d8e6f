"""Campaign files: a base scenario and the axes a sweep varies (issue 7).

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

`expand()` turns a campaign into its runs — every one resolved by the Rust core before
anything runs, so a malformed axis (unknown key, empty list, a value of the wrong type) is a
one-line error naming the axis. A run is identified by the hash of its resolved scenario, seed
included: the same run in another campaign, or after an axis changed, has the same identity.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._core import ScenarioError
from ..scenario import apply_overrides, load, validate

COMBINE_MODES = ("cross", "zip")
CAMPAIGN_KEYS = {"name", "base", "seeds", "combine", "axes", "labels"}
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
    """Reads and checks a campaign file (or an already parsed table)."""
    origin = Path(source) if not isinstance(source, Mapping) else None
    if origin is not None:
        try:
            table = tomllib.loads(origin.read_text(encoding="utf-8"))
        except OSError as error:
            raise _fail(str(origin), f"cannot read: {error.strerror}") from None
        except tomllib.TOMLDecodeError as error:
            raise _fail(str(origin), f"invalid TOML: {error}") from None
    else:
        table = dict(source)
    unknown = set(table) - CAMPAIGN_KEYS
    if unknown:
        raise _fail(sorted(unknown)[0], f"unknown campaign key; allowed: {', '.join(sorted(CAMPAIGN_KEYS))}")
    if "base" not in table:
        raise _fail("base", "missing; a scenario file, a study name or an inline table")
    base_source = table["base"]
    if isinstance(base_source, str) and origin is not None and (origin.parent / base_source).is_file():
        base_source = origin.parent / base_source
    base = load(base_source)
    axes = _axes(table.get("axes", {}))
    combine = table.get("combine", "cross")
    if combine not in COMBINE_MODES:
        raise _fail("combine", f"{combine!r}; allowed: {', '.join(COMBINE_MODES)}")
    if combine == "zip" and len({len(v) for v in axes.values()}) > 1:
        lengths = ", ".join(f"{k}: {len(v)}" for k, v in axes.items())
        raise _fail("axes", f"zipped axes need lists of one length ({lengths})")
    seeds = table.get("seeds", 1)
    if isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1:
        seeds = list(range(1, seeds + 1))
    elif not (isinstance(seeds, list) and seeds and all(isinstance(s, int) and s >= 0 for s in seeds)):
        raise _fail("seeds", f"{seeds!r}; a number of replications (≥ 1) or a list of seeds")
    labels = table.get("labels", {})
    for label, template in labels.items():
        missing = [k for k in _LABEL_FIELD.findall(str(template)) if k not in axes]
        if missing:
            raise _fail(f"labels.{label}", f"{{{missing[0]}}} is not an axis; axes: {', '.join(axes)}")
    name = table.get("name") or (origin.stem if origin is not None else "campaign")
    return CampaignSpec(name=name, base=base, axes=axes, seeds=seeds, combine=combine, labels=dict(labels))


def _axes(table: Any) -> dict[str, list[tuple[Any, dict[str, Any]]]]:
    """Dotted-key axes (a list of values) and named axes (a table of override tables)."""
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
    return axes


def study_campaign(study_path: Path, quick: bool = False) -> CampaignSpec:
    """The sweep of a built-in study: its `[study.axes]` cases, `study.seeds` replications,
    and with `quick` its `study.quick` overrides applied to the base (shorter runs)."""
    document = tomllib.loads(study_path.read_text(encoding="utf-8"))
    study = document.get("study", {})
    base = load(study_path)
    if quick:
        base = apply_overrides(base, study.get("quick", {}))
    return load_campaign({"name": base.get("name") or study_path.stem, "base": base, "seeds": study.get("seeds", 1), "axes": study.get("axes", {})})


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
    """Every run of the campaign, validated, in axis order then seed order."""
    runs = []
    for params, overrides in _combinations(campaign):
        for seed in campaign.seeds:
            try:
                scenario = validate(apply_overrides(campaign.base, {**overrides, "seed": seed}))
            except ScenarioError as error:
                path = str(error).split(": ", 1)[0]
                named = [k for k in params for o in _axis_keys(campaign, k) if path == o or path.startswith(f"{o}.")]
                culprit = max(named, key=len, default=None)
                where = f"axes.{culprit} = {params[culprit]!r}" if culprit else f"campaign run {params}"
                raise ScenarioError(f"{where}: {error}") from None
            labels = {
                name: _LABEL_FIELD.sub(lambda m: str(params[m.group(1)]), template)
                for name, template in campaign.labels.items()
            }
            runs.append(Run(params=params, seed=seed, labels=labels, scenario=scenario, run_id=run_id(scenario)))
    return runs
