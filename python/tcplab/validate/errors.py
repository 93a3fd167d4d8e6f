"""The simulator against the kernel, case by case: what each run is measured by, the error of
each metric, and the summary over the grid beside the acceptance thresholds.

Both backends are measured alike, from their sampled series (`measured`): the RTT statistics
come from the smoothed RTT sampled every interval (the kernel's only RTT, TCP_INFO; the
simulator's summary uses every ACK instead) and the mean bottleneck queue from the sampled
backlog, so the error is the models', not the estimators'.

An error is relative: (sim − kernel) / kernel. Where the kernel's value is near zero (below
the metric's floor: 0.1 Mbit/s, 0.1 ms, 10 retransmissions, 1 queued packet, Jain 0.01) it is
relative to the floor instead, (sim − kernel) / floor, and marked `floored`: two zeros give
0, a kernel without retransmissions against 25 in the simulator gives 2.5 (250 %). The time
series (each flow's goodput and smoothed RTT) are compared in 10 s bins, each the mean of its
0.5 s bins (`SERIES_BIN_SECONDS`, the resolution the kernel cache keeps).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ..metrics import metrics, rtt_statistics
from ..result import Result
from ..units import duration_ns

BOTTLENECK = "left->right"  # the dumbbell's data direction, in both backends
SERIES_BIN_SECONDS = 0.5
ERROR_BIN_SECONDS = 10.0
BBR_BIN_SECONDS, BBR_FACTOR = 20.0, 1.5
FLOW_COLUMNS = ("goodput_mbps", "srtt_ms", "cwnd_pkts")
QUEUE_COLUMN = "backlog_pkts"


@dataclass(frozen=True)
class Metric:
    """A compared quantity: its label, the floor below which a kernel value counts as zero, and
    the acceptance thresholds of docs/validation.md on the median and the worst |error| (None: none set)."""

    name: str
    label: str
    floor: float
    median_limit: float | None = None
    worst_limit: float | None = None


METRICS = (
    Metric("goodput_mbps", "goodput", 0.1, 0.02, 0.10),
    Metric("rtt_mean_ms", "mean RTT", 0.1, 0.05, 0.25),
    Metric("rtt_p95_ms", "p95 RTT", 0.1, 0.10),
    Metric("retransmits", "retransmissions", 10.0),
    Metric("queue_mean_pkts", "mean bottleneck queue", 1.0),
    Metric("fairness_jain", "Jain's index", 0.01),
    Metric("flow_goodput_10s", "goodput per flow, 10 s bins", 0.1),
    Metric("flow_srtt_10s", "smoothed RTT per flow, 10 s bins", 0.1),
)
SCALAR_METRICS = tuple(m.name for m in METRICS[:6])
BIN_METRICS = {"flow_goodput_10s": "goodput_mbps", "flow_srtt_10s": "srtt_ms"}
ERROR_SCHEMA = {
    "case": pl.String,
    "metric": pl.String,
    "flow": pl.Int64,
    "t_s": pl.Float64,
    "sim": pl.Float64,
    "kernel": pl.Float64,
    "error": pl.Float64,
    "floored": pl.Boolean,
    "kernel_valid": pl.Boolean,
}


@dataclass(frozen=True)
class Measured:
    """What the comparison keeps of one run: its summary (RTT statistics and the bottleneck's
    mean backlog from the sampled series) and its series in 0.5 s bins, each row labelled by
    the end of its bin: flows (t_s, flow, goodput_mbps, srtt_ms, cwnd_pkts) and queue (t_s,
    backlog_pkts of the bottleneck)."""

    summary: dict[str, Any]
    flows: pl.DataFrame
    queue: pl.DataFrame

    @property
    def valid(self) -> bool:
        """False only for a kernel run its validity checks failed."""
        validity = self.summary["run"].get("validity")
        return validity is None or bool(validity["valid"])

    def headline(self) -> dict[str, float | None]:
        values = metrics(self.summary)
        link = next(link for link in self.summary["links"] if link["id"] == BOTTLENECK)
        return {**{name: values[name] for name in SCALAR_METRICS if name in values}, "queue_mean_pkts": link["backlog_mean_pkts"]}

    def as_result(self, scenario: dict[str, Any]) -> Result:
        """The binned series as a Result, for the report's panels."""
        links = self.queue.with_columns(link=pl.lit(BOTTLENECK))
        return Result(scenario=scenario, summary=self.summary, flows=self.flows, links=links, rtt=None)


def measured(result: Result) -> Measured:
    """`result` measured as the kernel can be (module doc)."""
    summary = copy.deepcopy(result.summary)
    for flow in summary["flows"]:
        samples = result.flows.filter(pl.col("flow") == flow["id"])["srtt_ms"].drop_nulls().to_list()
        flow.update(rtt_statistics(samples))
    backlog = result.links.filter(pl.col("link") == BOTTLENECK)[QUEUE_COLUMN]
    for link in summary["links"]:
        if link["id"] == BOTTLENECK:
            link["backlog_mean_pkts"] = float(backlog.mean()) if len(backlog) else 0.0
    step = duration_ns(result.scenario["sample_interval"]) / 1e9
    flows = binned(result.flows.select("t_s", "flow", *FLOW_COLUMNS), SERIES_BIN_SECONDS, ["flow"], step)
    queue = binned(result.links.filter(pl.col("link") == BOTTLENECK).select("t_s", QUEUE_COLUMN), SERIES_BIN_SECONDS, [], step)
    return Measured(summary, flows, queue)


def binned(frame: pl.DataFrame, width: float, keys: list[str], step: float) -> pl.DataFrame:
    """Means of `frame`'s columns over bins of `width` seconds per `keys`. A row at t_s covers
    the `step` seconds that end at t_s (a sampling interval, or a bin), so it falls in the bin
    that holds its middle, t_s − step / 2: the kernel's sampling times, a little late, stay in
    their bin. Each bin is labelled by its end."""
    end = ((pl.col("t_s") - step / 2) / width).floor() * width + width
    values = [c for c in frame.columns if c not in ("t_s", *keys)]
    return (
        frame.with_columns(t_s=end)
        .group_by([*keys, "t_s"], maintain_order=True)
        .agg([pl.col(c).cast(pl.Float64).mean() for c in values])
        .sort([*keys, "t_s"])
    )


def relative_error(sim: float | None, kernel: float | None, floor: float) -> tuple[float | None, bool]:
    """(sim − kernel) / kernel, or / floor where |kernel| < floor (then also True); None
    where either is missing."""
    if sim is None or kernel is None or not (np.isfinite(sim) and np.isfinite(kernel)):
        return None, False
    floored = abs(kernel) < floor
    return (sim - kernel) / (floor if floored else abs(kernel)), floored


def case_errors(case: str, sim: Measured, kernel: Measured) -> pl.DataFrame:
    """One row per scalar metric and one per flow and 10 s bin of each series (ERROR_SCHEMA)."""
    floors = {m.name: m.floor for m in METRICS}
    rows = []
    sim_values, kernel_values = sim.headline(), kernel.headline()
    for name in SCALAR_METRICS:
        error, floored = relative_error(sim_values.get(name), kernel_values.get(name), floors[name])
        rows.append((case, name, None, None, sim_values.get(name), kernel_values.get(name), error, floored))
    sim_bins = binned(sim.flows, ERROR_BIN_SECONDS, ["flow"], SERIES_BIN_SECONDS)
    kernel_bins = binned(kernel.flows, ERROR_BIN_SECONDS, ["flow"], SERIES_BIN_SECONDS)
    joined = sim_bins.join(kernel_bins, on=["flow", "t_s"], how="inner", suffix="_kernel")
    for name, column in BIN_METRICS.items():
        for row in joined.iter_rows(named=True):
            error, floored = relative_error(row[column], row[f"{column}_kernel"], floors[name])
            rows.append((case, name, row["flow"], row["t_s"], row[column], row[f"{column}_kernel"], error, floored))
    return pl.DataFrame([(*row, kernel.valid) for row in rows], schema=ERROR_SCHEMA, orient="row")


def bbr_goodput_bins(sim: Measured, kernel: Measured, width: float = BBR_BIN_SECONDS) -> pl.DataFrame:
    """The BBR flows' goodput in `width`-second bins, both runs, and the simulator's over the
    kernel's: what the bench (d) check reads (within a factor BBR_FACTOR of the kernel's
    in every 20 s bin)."""
    bins = []
    for run in (sim, kernel):
        ids = [flow["id"] for flow in run.summary["flows"] if flow["cc"] == "bbr"]
        flows = run.flows.filter(pl.col("flow").is_in(ids)).select("t_s", "flow", "goodput_mbps")
        bins.append(binned(flows, width, ["flow"], SERIES_BIN_SECONDS))
    joined = bins[0].join(bins[1], on=["flow", "t_s"], how="inner", suffix="_kernel")
    return joined.select(
        "flow",
        "t_s",
        sim_mbps="goodput_mbps",
        kernel_mbps="goodput_mbps_kernel",
        ratio=pl.col("goodput_mbps") / pl.col("goodput_mbps_kernel"),
    ).with_columns(within=pl.col("ratio").is_between(1 / BBR_FACTOR, BBR_FACTOR))


def summary_table(errors: pl.DataFrame) -> pl.DataFrame:
    """Per metric, over the valid kernel runs: cases, values compared, median and worst
    |error| (and where), the thresholds and whether they hold (None where none is set)."""
    rows = []
    valid = errors.filter(pl.col("kernel_valid") & pl.col("error").is_not_null())
    for metric in METRICS:
        rows_of = valid.filter(pl.col("metric") == metric.name).with_columns(abs_error=pl.col("error").abs())
        worst = rows_of.sort("abs_error", descending=True).head(1)
        median = rows_of["abs_error"].median() if rows_of.height else None
        worst_value = worst["abs_error"][0] if worst.height else None
        where = None
        if worst.height:
            flow, t_s = worst["flow"][0], worst["t_s"][0]
            where = worst["case"][0] + (f" flow {flow} at {t_s - ERROR_BIN_SECONDS:g}–{t_s:g} s" if flow is not None else "")
        passed = [
            value <= limit
            for value, limit in ((median, metric.median_limit), (worst_value, metric.worst_limit))
            if limit is not None and value is not None
        ]
        rows.append(
            {
                "metric": metric.label,
                "cases": rows_of["case"].n_unique(),
                "values": rows_of.height,
                "median_abs_error": median,
                "worst_abs_error": worst_value,
                "worst_case": where,
                "median_limit": metric.median_limit,
                "worst_limit": metric.worst_limit,
                "meets_limits": all(passed) if passed else None,
            }
        )
    return pl.DataFrame(
        rows, schema_overrides={"median_abs_error": pl.Float64, "worst_abs_error": pl.Float64, "meets_limits": pl.Boolean}
    )


def percent(value: float | None) -> str:
    """A relative error or limit as a percentage with one decimal ("–" for none)."""
    return "–" if value is None else f"{100 * value:.1f} %"


def format_summary(summary: pl.DataFrame, invalid: list[str]) -> str:
    """The summary table as text (errors in %), and the cases left out as invalid."""
    header = f"{'metric':<34} {'cases':>5} {'median |err|':>12} {'limit':>7} {'worst |err|':>11} {'limit':>7}  worst case"
    lines = [header]
    for row in summary.iter_rows(named=True):
        mark = {True: "", False: "  FAILS", None: ""}[row["meets_limits"]]
        lines.append(
            f"{row['metric']:<34} {row['cases']:>5} {percent(row['median_abs_error']):>12} {percent(row['median_limit']):>7}"
            f" {percent(row['worst_abs_error']):>11} {percent(row['worst_limit']):>7}  {row['worst_case'] or '–'}{mark}"
        )
    if invalid:
        lines.append(f"\n{len(invalid)} invalid kernel runs left out: {', '.join(invalid)}")
    return "\n".join(lines)
