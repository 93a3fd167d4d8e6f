"""The columns of every recorded time series (flows, links, rtt and each radio cell's) as the Rust
recorder declares them, once (`tcplab_sim::series_schema`): name, dtype, unit, meaning. The
simulator's frames come out of the core in this shape, the emulation backend builds its frames
with `frame_schema`, and docs/outputs.md shows `markdown_table`'s text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

import polars as pl

from . import _core

_POLARS_DTYPES = {"f64": pl.Float64, "u32": pl.UInt32, "str": pl.String}


@dataclass(frozen=True)
class Column:
    """One output column: `dtype` is "f64", "u32" or "str" (names and labels); `unit` is ""
    only for dimensionless values (flags, indices, fractions) and for u32 and str columns."""

    name: str
    dtype: str
    unit: str
    meaning: str


@cache
def _schema() -> dict[str, tuple[Column, ...]]:
    raw = json.loads(_core.series_schema())
    return {series: tuple(Column(**column) for column in columns) for series, columns in raw.items()}


def series_names() -> tuple[str, ...]:
    """Every series: flows, links, rtt and each kind of cell's."""
    return tuple(_schema())


def columns(series: str) -> tuple[Column, ...]:
    """The columns of `series`, in output order."""
    try:
        return _schema()[series]
    except KeyError:
        raise KeyError(f"no series {series!r}; series: {', '.join(_schema())}") from None


def frame_schema(series: str) -> dict[str, pl.DataType]:
    """Column name -> polars dtype of `series`, in output order (a `pl.DataFrame(schema=...)`)."""
    return {c.name: _POLARS_DTYPES[c.dtype] for c in columns(series)}


def markdown_table(series: str) -> str:
    """The columns of `series` as a Markdown table (name, unit, meaning), as docs/outputs.md
    shows them."""
    rows = ["| column | unit | meaning |", "|---|---|---|"]
    rows += [f"| `{c.name}` | {c.unit} | {c.meaning} |" for c in columns(series)]
    return "\n".join(rows) + "\n"
