"""Aligned text tables of what tcplab prints: a run's summary (flows, links, radio users, WiFi
devices), runs side by side, a campaign's means ± 95 % CIs, and the catalog of `tcplab list`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from .metrics import busiest_link, metrics
from .report import identical_across_seeds
from .result import Result
from .studies import Study

# Links below this utilization and without drops are left out of the summary table.
QUIET_LINK_UTILIZATION = 0.01
CAMPAIGN_TABLE_METRICS = ("goodput_mbps", "rtt_mean_ms", "retransmits", "fairness_jain")
# Shown too when the runs have flows of a set size.
CAMPAIGN_FCT_METRICS = ("fct_p50_ms", "fct_p99_ms")
IDENTICAL_MARK = "*"


def format_table(rows: list[list[str]], align: str) -> str:
    """Rows of cells as aligned text; `align` has one `l` (left) or `r` (right) per column."""
    widths = [max(map(len, column)) for column in zip(*rows, strict=True)]
    return "\n".join(
        "  ".join(
            cell.ljust(width) if side == "l" else cell.rjust(width) for cell, width, side in zip(row, widths, align, strict=True)
        ).rstrip()
        for row in rows
    )


def format_summary(result: Result) -> str:
    """The summary of a run: a headline, a table of flows, a table of links, Jain's index."""
    summary, run_info = result.summary, result.summary["run"]
    if run_info.get("backend") == "emu":
        headline = (
            f"{result.name}: {run_info['sim_seconds']:g} s on this machine's kernel TCP"
            f" in {run_info['wall_seconds']:.2f} s (emulation)"
        )
    else:
        headline = (
            f"{result.name}: {run_info['sim_seconds']:g} s simulated"
            f" in {run_info['wall_seconds']:.2f} s on {run_info.get('threads', 1)} thread{'s' if run_info.get('threads', 1) > 1 else ''}"
            f" ({run_info['events']:,} events,"
            f" seed {run_info['seed']})"
        )
    lines = [headline, "", _flow_table(summary["flows"]), "", _link_table(summary["links"])]
    if summary.get("radio"):
        lines += ["", _radio_table(summary["radio"])]
    if summary.get("wifi"):
        lines += ["", _wifi_table(summary["wifi"])]
    if summary.get("fct"):
        lines += ["", _fct_table(summary["fct"])]
    lines += ["", f"Jain's fairness index: {summary['fairness_jain']:.3f}"]
    return "\n".join(lines)


def _fct_table(fct: dict[str, Any]) -> str:
    """Flow completion times of the sized flows: all, per algorithm, per size bin."""
    header = ["FCT of", "flows", "completed", "unfinished", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    groups = [("all sized flows", fct), *fct["by_cc"].items(), *((b["bin"], b) for b in fct["by_size"])]
    rows = [
        [
            name,
            str(stats["flows"]),
            str(stats["completed"]),
            str(stats["unfinished"]),
            *(_number(stats[key], 1) for key in ("p50_ms", "p95_ms", "p99_ms", "max_ms")),
        ]
        for name, stats in groups
    ]
    return format_table([header, *rows], "lrrrrrrr")


def _flow_table(flows: list[dict[str, Any]]) -> str:
    header = ["flow", "cc", "stack", "goodput Mbps", "RTT mean ms", "RTT p95 ms", "retransmits", "retx %"]
    rows = [
        [
            str(flow["id"]),
            flow["cc"],
            flow.get("stack", "linux"),
            _number(flow["goodput_mbps"], 2),
            _number(flow["rtt_mean_ms"], 1),
            _number(flow["rtt_p95_ms"], 1),
            str(flow["retransmits"]),
            _number(flow["retransmit_pct"], 2),
        ]
        for flow in flows
    ]
    return format_table([header, *rows], "lllrrrrr")


def _link_table(links: list[dict[str, Any]]) -> str:
    """The links that carried traffic or dropped packets; a note counts the others."""
    shown = [link for link in links if link["drops"] or link["utilization"] >= QUIET_LINK_UTILIZATION]
    rows = [
        [
            link["id"],
            f"{link['utilization']:.1%}",
            str(link["drops"]),
            str(link.get("drops_by_reason", {}).get("aqm", 0)),
            str(link["ce_marks"]),
            _number(link.get("sojourn_mean_ms"), 2),
            _number(link.get("sojourn_p95_ms"), 2),
        ]
        for link in shown
    ]
    header = ["link", "utilization", "drops", "AQM drops", "CE marks", "wait mean ms", "wait p95 ms"]
    table = format_table([header, *rows], "lrrrrrr")
    quiet = len(links) - len(shown)
    if not quiet:
        return table
    return f"{table}\n({quiet} more under {QUIET_LINK_UTILIZATION:.0%} utilization without drops)"


def _radio_table(users: list[dict[str, Any]]) -> str:
    header = ["user", "SINR mean dB", "line of sight", "DL PHY mean Mbps", "RLC drops DL/UL"]
    header.append("HARQ retx DL/UL")
    rows = [
        [
            user["ue"],
            _number(user["sinr_mean_db"], 1),
            f"{user['los_fraction']:.0%}",
            _number(user["capacity_mean_mbps"], 0),
            f"{user['rlc_drops']}/{user['ul_rlc_drops']}",
            f"{user['harq_retx']}/{user['ul_harq_retx']}",
        ]
        for user in users
    ]
    return format_table([header, *rows], "lrrrrr")


def _wifi_table(bss: dict[str, Any]) -> str:
    header = ["device", "PPDUs", "collisions", "retries", "MAC drops", "rx MPDUs ok/err/coll"]
    rows = [
        [
            device["device"] + (" (AP)" if position == 0 else ""),
            str(device["ppdus"]),
            str(device["collisions"]),
            str(device["retries"]),
            str(device["mac_drops"]),
            f"{device['rx_ok_mpdus']}/{device['rx_error_mpdus']}/{device['rx_collision_mpdus']}",
        ]
        for position, device in enumerate(bss["devices"])
    ]
    headline = (
        f"WiFi: MCS {bss['mcs']} ({bss['phy_rate_mbps']:.1f} Mbps PHY) at {bss['snr_db']:.2f} dB SNR,"
        f" medium busy {bss['airtime_busy']:.0%}, drop ratio at the AP {bss['ap_drop_ratio']:.2%}"
    )
    return headline + "\n" + format_table([header, *rows], "lrrrrr")


# The rows of `tcplab compare`: a metric of `metrics.metrics`, its label, how it is printed.
COMPARED_METRICS: tuple[tuple[str, str, Callable[[float], str]], ...] = (
    ("goodput_mbps", "goodput Mbps, all flows", lambda v: f"{v:.2f}"),
    ("rtt_mean_ms", "RTT mean ms, flows' mean", lambda v: f"{v:.1f}"),
    ("rtt_p95_ms", "RTT p95 ms, highest flow's", lambda v: f"{v:.1f}"),
    ("retransmits", "retransmits, all flows", lambda v: f"{v:.0f}"),
    ("fairness_jain", "Jain's fairness index", lambda v: f"{v:.3f}"),
    ("bottleneck_utilization", "busiest link utilization", lambda v: f"{v:.1%}"),
    ("bottleneck_drops", "busiest link drops", lambda v: f"{v:.0f}"),
)


def format_comparison(results: Mapping[str, Result]) -> str:
    """Runs side by side, one column per run: the TCP stack, their headline metrics
    (`metrics.metrics`), the busiest link's name and the wall time."""
    columns = {name: _comparison_column(result.summary) for name, result in results.items()}
    labels = next(iter(columns.values())).keys()
    rows = [["", *columns]] + [[label, *(column[label] for column in columns.values())] for label in labels]
    return format_table(rows, "l" + "r" * len(columns))


def _comparison_column(summary: Mapping[str, Any]) -> dict[str, str]:
    values = metrics(summary)
    column = {"stack": run_stack(summary)}
    column |= {label: "-" if values[key] is None else shown(values[key]) for key, label, shown in COMPARED_METRICS}
    busiest = busiest_link(summary)
    column["busiest link"] = busiest["id"] if busiest else "-"
    column["wall time s"] = f"{summary['run']['wall_seconds']:.2f}"
    return column


def run_stack(summary: Mapping[str, Any]) -> str:
    """Whose TCP a run's flows ran ("linux", "ns3", or both as "linux+ns3"); an emulated run
    is the kernel's ("linux")."""
    stacks = sorted({flow.get("stack", "linux") for flow in summary["flows"]})
    return "+".join(stacks) or "-"


def format_campaign_counts(name: str, state: Any, directory: Path) -> str:
    """`NAME: 6 runs, 0 already done, 6 run now, 0 failed -> DIR` (`state`: a sweep.Progress)."""
    return f"{name}: {state.total} runs, {state.skipped} already done, {state.done} run now, {state.failed} failed -> {directory}"


def format_campaign_table(table: pl.DataFrame, keys: list[str]) -> str:
    """The main metrics (and the FCT percentiles, when the runs have them) as `mean ± CI` per
    combination of axis values; a mean that every seed gave alike is marked instead (`± 0.000` would look like a bug), with a note below."""
    shown = [
        *CAMPAIGN_TABLE_METRICS,
        *(m for m in CAMPAIGN_FCT_METRICS if table.get_column(f"{m}_mean", default=None) is not None),
    ]
    header = [*keys, "runs", *shown]
    rows, marked = [], False
    for row in table.iter_rows(named=True):
        cells = [str(row[k]) for k in keys] + [str(row["runs"])]
        for metric in shown:
            mean, ci = row.get(f"{metric}_mean"), row.get(f"{metric}_ci95")
            if mean is None:
                cells.append("-")
            elif ci is None:
                cells.append(f"{mean:.3f}")
            elif identical_across_seeds(mean, ci):
                cells.append(f"{mean:.3f} {IDENTICAL_MARK}")
                marked = True
            else:
                cells.append(f"{mean:.3f} ± {ci:.3f}" if ci >= 0.0005 else f"{mean:.3f} ± {ci:.1g}")
        rows.append(cells)
    text = format_table([header, *rows], "l" * len(keys) + "r" * (1 + len(shown)))
    return text + (f"\n{IDENTICAL_MARK} identical across seeds" if marked else "")


def format_studies(studies: Iterable[Study]) -> str:
    """One line per study: its name and what it shows."""
    return format_table([[study.name, study.description] for study in studies], "ll")


def format_catalog(catalog: Mapping[str, Any], studies: Iterable[Study]) -> str:
    """`tcplab list`: each algorithm with its parameters (defaults, units), the queues, the
    topologies and the studies with their cases. `catalog` is `_core.catalog()` parsed."""
    lines = ["algorithms  (flows.N.cc = NAME, or { kind = NAME, PARAMETER = VALUE, ... })"]
    lines += _kinds_with_parameters(catalog["algorithms"])
    lines += ["", "queues  (queue = NAME, or { kind = NAME, PARAMETER = VALUE, ... }; Linux's defaults)"]
    lines += _kinds_with_parameters(catalog["queues"])
    study_rows = []
    for study in studies:
        study_rows.append([study.name, study.description])
        if study.cases:
            study_rows.append(["", f"cases (NAME:CASE): {', '.join(study.cases)}"])
    for title, rows in [
        (
            "topologies  (topology.kind = NAME)",
            [[t["name"], t["summary"]] for t in catalog["topologies"]],
        ),
        ("studies  (tcplab run NAME)", study_rows),
    ]:
        lines += ["", title, _indented(format_table(rows, "ll"), 2)]
    return "\n".join(lines)


def _kinds_with_parameters(kinds: Iterable[Mapping[str, Any]]) -> list[str]:
    """Each algorithm or queue discipline: its name and summary, then its parameters."""
    lines = []
    for kind in kinds:
        lines.append(f"  {kind['name']}: {kind['summary']}")
        parameters = [[p["name"], f"= {_with_unit(p['default'], p['unit'])}", p["doc"]] for p in kind["params"]]
        if parameters:
            lines.append(_indented(format_table(parameters, "lll"), 6))
    return lines


def _with_unit(value: Any, unit: str) -> str:
    """`1 packet`, `2 packets`, `25 ms`, `true`: a unit that is a plural word loses its `s` at 1."""
    if str(value) == "1" and unit.endswith("s") and unit.isalpha() and len(unit) > 2:
        unit = unit[:-1]
    return f"{value} {unit}".rstrip()


def _number(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _indented(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())
