"""The qualitative findings of each reference study (docs/validation.md, reference studies), each checked against a
study's runs by an explicit rule, so a report says which ones these runs reproduce and shows
the numbers behind the verdict. A rule's thresholds are stated in its text.

A check gets the `StudyRuns` of a reproduced study (its index, its means table and access to
each run's time series) and returns (reproduced?, evidence).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..result import Result


@dataclass(frozen=True)
class Verdict:
    finding: str
    reproduced: bool
    evidence: str


class StudyRuns:
    """What a check may look at: the index (a row per run), the means table (a row per
    case) and the runs themselves, loaded on demand."""

    def __init__(self, directory: Path, index: pl.DataFrame, table: pl.DataFrame) -> None:
        self.directory = directory
        self.index = index.filter(pl.col("status") == "ok")
        self.table = table
        self._loaded: dict[str, Result] = {}

    def only(self, **values: str) -> StudyRuns:
        """The runs of one value of each of some axes, as a study without those axes."""
        where = [pl.col(axis) == value for axis, value in values.items()]
        return StudyRuns(self.directory, self.index.filter(*where).drop(*values), self.table.filter(*where).drop(*values))

    def mean(self, metric: str, **case: Any) -> float:
        rows = self.table.filter(*[pl.col(k) == v for k, v in case.items()])
        if rows.height != 1:
            raise KeyError(f"no single case {case} in the table")
        return float(rows[f"{metric}_mean"][0])

    def runs(self, **case: Any) -> list[Result]:
        ids = self.index.filter(*[pl.col(k) == v for k, v in case.items()])["run_id"].to_list()
        for run_id in ids:
            if run_id not in self._loaded:
                self._loaded[run_id] = Result.load(self.directory / "runs" / run_id)
        return [self._loaded[i] for i in ids]

    def window_mean(self, column: str, start_s: float, end_s: float, flow: int = 0, **case: Any) -> float:
        """Mean of a flows.parquet column over [start, end) and over the case's seeds."""
        values = []
        for result in self.runs(**case):
            rows = result.flows.filter((pl.col("flow") == flow) & pl.col("t_s").is_between(start_s, end_s, closed="left"))
            values.append(rows[column].mean())
        return float(np.mean([v for v in values if v is not None]))


Check = Callable[[StudyRuns], tuple[bool, str]]


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


# --- siad-mmwave ---------------------------------------------------------------------------


def _siad_close(r: StudyRuns) -> tuple[bool, str]:
    gaps = {
        b: abs(r.mean("goodput_mbps", cc="siad", buffer=b) / r.mean("goodput_mbps", cc="bbr", buffer=b) - 1)
        for b in ("7MB", "20MB", "40MB")
    }
    return max(gaps.values()) <= 0.015, "SIAD vs BBR goodput gap " + ", ".join(f"{b}: {_pct(g)}" for b, g in gaps.items())


def _siad_buffers_irrelevant(r: StudyRuns) -> tuple[bool, str]:
    spreads = {}
    for cc in ("siad", "bbr"):
        values = [r.mean("goodput_mbps", cc=cc, buffer=b) for b in ("7MB", "20MB", "40MB")]
        spreads[cc] = (max(values) - min(values)) / max(values)
    return max(spreads.values()) <= 0.01, "goodput spread over 7/20/40 MB: " + ", ".join(
        f"{cc} {_pct(s)}" for cc, s in spreads.items()
    )


def _siad_drop(r: StudyRuns) -> dict[str, float]:
    return {
        cc: 1 - r.mean("goodput_mbps", cc=cc, buffer="4MB") / r.mean("goodput_mbps", cc=cc, buffer="7MB")
        for cc in ("siad", "bbr")
    }


def _siad_4mb_drops(r: StudyRuns) -> tuple[bool, str]:
    drop = _siad_drop(r)
    return all(d > 0 for d in drop.values()), "goodput 4 MB vs 7 MB: " + ", ".join(f"{cc} −{_pct(d)}" for cc, d in drop.items())


def _siad_bbr_worse(r: StudyRuns) -> tuple[bool, str]:
    drop = _siad_drop(r)
    return drop["bbr"] > 2 * max(drop["siad"], 0.0) and drop[
        "bbr"
    ] > 0.02, f"drop at 4 MB: BBR −{_pct(drop['bbr'])}, SIAD −{_pct(drop['siad'])} (rule: BBR's > 2× SIAD's and > 2 %)"


def _siad_rtt_lower(r: StudyRuns) -> tuple[bool, str]:
    ratios = {
        cc: r.mean("rtt_mean_ms", cc=cc, buffer="4MB") / r.mean("rtt_mean_ms", cc=cc, buffer="7MB") for cc in ("siad", "bbr")
    }
    return all(x <= 0.9 for x in ratios.values()), "mean RTT 4 MB / 7 MB: " + ", ".join(
        f"{cc} {x:.2f}" for cc, x in ratios.items()
    ) + " (rule: ≤ 0.90)"


def _siad_refill(r: StudyRuns) -> tuple[bool, str]:
    def recovery(cc: str) -> float:
        before = r.window_mean("goodput_mbps", 2.0, 5.0, cc=cc, buffer="4MB")
        return r.window_mean("goodput_mbps", 10.0, 11.0, cc=cc, buffer="4MB") / before

    siad, bbr = recovery("siad"), recovery("bbr")
    return (
        siad >= 0.8 and bbr < 0.6,
        f"4 MB, goodput in the first second after the blockage over before it: SIAD {siad:.2f}, BBR {bbr:.2f} (rule: SIAD ≥ 0.8, BBR < 0.6)",
    )


# --- wifi-cubic-bbr --------------------------------------------------------------------------

WIFI_BOTTLENECK_MBPS = 10.0


def _wifi_cubic_scales(r: StudyRuns) -> tuple[bool, str]:
    shares = {
        f"{a}-{n}": r.mean("goodput_mbps", access=a, flows=f"{n}-cubic") / WIFI_BOTTLENECK_MBPS
        for a in ("p2p", "wifi4", "wifi6")
        for n in (1, 4)
    }
    return min(shares.values()) >= 0.9, "CUBIC goodput / 10 Mbps: " + ", ".join(f"{k} {_pct(v)}" for k, v in shares.items())


def _wifi_cubic_fair(r: StudyRuns) -> tuple[bool, str]:
    jain = {a: r.mean("fairness_jain", access=a, flows="4-cubic") for a in ("p2p", "wifi4", "wifi6")}
    return min(jain.values()) >= 0.95, "Jain's index, 4 CUBIC flows: " + ", ".join(f"{a} {j:.3f}" for a, j in jain.items())


def _wifi_gap(r: StudyRuns, n: int) -> float:
    p2p = r.mean("goodput_mbps", access="p2p", flows=f"{n}-cubic")
    return 1 - min(r.mean("goodput_mbps", access=a, flows=f"{n}-cubic") for a in ("wifi4", "wifi6")) / p2p


def _wifi_below_p2p(r: StudyRuns) -> tuple[bool, str]:
    gaps = {n: _wifi_gap(r, n) for n in (1, 4)}
    return all(g >= 0.02 for g in gaps.values()), "CUBIC goodput below P2P (worse WiFi): " + ", ".join(
        f"{n} flow(s) {_pct(g)}" for n, g in gaps.items()
    ) + " (rule: ≥ 2 %)"


def _wifi_gap_grows(r: StudyRuns) -> tuple[bool, str]:
    g1, g4 = _wifi_gap(r, 1), _wifi_gap(r, 4)
    return g4 >= g1 + 0.01, f"gap with 1 flow {_pct(g1)}, with 4 flows {_pct(g4)} (rule: at least 1 point wider)"


def _wifi_drops_rise(r: StudyRuns) -> tuple[bool, str]:
    rises = {}
    for a in ("wifi4", "wifi6"):
        one, four = (r.mean("wifi_ap_drop_ratio", access=a, flows=f"{n}-cubic") for n in (1, 4))
        rises[a] = four / one if one > 0 else float("inf") if four > 0 else 1.0
    return min(rises.values()) >= 2, "AP drop ratio, 4 flows / 1 flow (CUBIC): " + ", ".join(
        f"{a} ×{x:.1f}" for a, x in rises.items()
    ) + " (rule: ≥ ×2)"


# --- rtt-lens ---------------------------------------------------------------------------------

RTT_LENS_BASE_MS = 40.0


def _rtt_bbr_near_base(r: StudyRuns) -> tuple[bool, str]:
    rtt = r.mean("rtt_mean_ms", cc="bbr")
    return rtt <= 1.5 * RTT_LENS_BASE_MS, f"BBR mean RTT {rtt:.1f} ms (rule: ≤ 1.5 × 40 ms)"


def _rtt_bbr_no_loss(r: StudyRuns) -> tuple[bool, str]:
    pct = float(np.mean([res.summary["flows"][0]["retransmit_pct"] for res in r.runs(cc="bbr")]))
    return pct < 0.5, f"BBR retransmitted {pct:.2f} % of segments (rule: < 0.5 %)"


def _rtt_cubic_queue(r: StudyRuns) -> tuple[bool, str]:
    p95 = float(np.mean([res.summary["flows"][0]["rtt_p95_ms"] for res in r.runs(cc="cubic")]))
    return p95 >= 5 * RTT_LENS_BASE_MS, f"CUBIC RTT p95 {p95:.0f} ms (rule: ≥ 5 × 40 ms)"


def _rtt_cubic_loss(r: StudyRuns) -> tuple[bool, str]:
    pct = float(np.mean([res.summary["flows"][0]["retransmit_pct"] for res in r.runs(cc="cubic")]))
    return pct >= 1.0, f"CUBIC retransmitted {pct:.2f} % of segments (rule: ≥ 1 %)"


def _rtt_both_fill(r: StudyRuns) -> tuple[bool, str]:
    util = {cc: r.mean("bottleneck_utilization", cc=cc) for cc in ("cubic", "bbr")}
    return min(util.values()) >= 0.9, "bottleneck utilization: " + ", ".join(f"{cc} {_pct(u)}" for cc, u in util.items())


# --- deep-buffer ------------------------------------------------------------------------------


def _deep_jain(r: StudyRuns, buffer: str, start: float, end: float) -> float:
    goodputs = [r.window_mean("goodput_mbps", start, end, flow=f, buffer=buffer) for f in (0, 1)]
    return sum(goodputs) ** 2 / (2 * sum(g * g for g in goodputs))


def _deep_unfair_then_fair(r: StudyRuns) -> tuple[bool, str]:
    duration = max(res.flows["t_s"].max() for res in r.runs(buffer="65536pkt"))
    early, late = _deep_jain(r, "65536pkt", 0, duration / 4), _deep_jain(r, "65536pkt", 3 * duration / 4, duration)
    return (
        early < 0.8 and late >= 0.9,
        f"65536 packets: Jain's index over the first quarter {early:.2f}, over the last quarter {late:.2f} (rule: < 0.8 then ≥ 0.9)",
    )


def _deep_cycles(r: StudyRuns) -> tuple[bool, str]:
    result = r.runs(buffer="16384pkt")[0]
    queue = result.links.filter(pl.col("link") == "left->right")["backlog_pkts"].to_numpy()
    high, low = 0.8 * queue.max(), 0.2 * queue.max()
    cycles, state = 0, "low"
    for q in queue:
        if state == "low" and q >= high:
            state = "high"
        elif state == "high" and q <= low:
            state, cycles = "low", cycles + 1
    return (
        cycles >= 2,
        f"16384 packets: the queue filled above 80 % and drained below 20 % of its peak {cycles} times (rule: ≥ 2)",
    )


# --- mmwave-5cc -------------------------------------------------------------------------------

LOSS_BASED = ("newreno", "yeah", "hybla", "westwood")


def _peak(r: StudyRuns, variant: str, cc: str, window_s: float = 1.0) -> float:
    peaks = []
    for result in r.runs(variant=variant, cc=cc):
        rows = result.flows.filter(pl.col("flow") == 0).sort("t_s")
        goodput, t = rows["goodput_mbps"].to_numpy(), rows["t_s"].to_numpy()
        step = float(np.median(np.diff(t))) if len(t) > 1 else window_s
        width = max(1, round(window_s / step))
        peaks.append(float(np.convolve(goodput, np.ones(width) / width, mode="valid").max()))
    return float(np.mean(peaks))


def _5cc_loss_based_reach(r: StudyRuns) -> tuple[bool, str]:
    peaks = {cc: _peak(r, "1a", cc) for cc in LOSS_BASED}
    return min(peaks.values()) >= 900, "1a, best 1-s goodput: " + ", ".join(
        f"{cc} {p:.0f}" for cc, p in peaks.items()
    ) + " Mb/s (rule: all ≥ 900)"


def _5cc_vegas_low(r: StudyRuns) -> tuple[bool, str]:
    vegas = {v: r.mean("goodput_mbps", variant=v, cc="vegas") for v in ("1a", "1b", "1c")}
    reno = {v: r.mean("goodput_mbps", variant=v, cc="newreno") for v in ("1a", "1b", "1c")}
    ok = all(vegas[v] <= 0.5 * reno[v] for v in vegas)
    return ok, "mean goodput Vegas / NewReno: " + ", ".join(
        f"{v} {vegas[v]:.0f}/{reno[v]:.0f}" for v in vegas
    ) + " Mb/s (rule: Vegas ≤ half)"


def _5cc_yeah_early(r: StudyRuns) -> tuple[bool, str]:
    yeah = r.window_mean("goodput_mbps", 0.0, 2.5, variant="1a", cc="yeah")
    reno = r.window_mean("goodput_mbps", 0.0, 2.5, variant="1a", cc="newreno")
    return (
        yeah < 0.9 * reno,
        f"1a, mean goodput in the first LOS period (0–2.5 s): YeAH {yeah:.0f}, NewReno {reno:.0f} Mb/s (rule: YeAH < 0.9 × NewReno)",
    )


def _5cc_hybla_fastest(r: StudyRuns) -> tuple[bool, str]:
    after = {cc: r.window_mean("goodput_mbps", 7.5, 9.5, variant="1a", cc=cc) for cc in LOSS_BASED}
    best = max(after, key=after.get)
    return best == "hybla", "1a, mean goodput in the 2 s after the NLOS period: " + ", ".join(
        f"{cc} {g:.0f}" for cc, g in after.items()
    ) + " Mb/s"


def _5cc_short_blockage_costs(r: StudyRuns) -> tuple[bool, str]:
    after = r.window_mean("goodput_mbps", 1.3, 4.3, variant="1b", cc="newreno")
    return (
        after < 0.8 * 1000,
        f"1b, NewReno mean goodput in the 3 s after the 0.4 s blockage: {after:.0f} Mb/s (rule: < 800 of the 1000 offered)",
    )


FINDINGS: dict[str, list[tuple[str, Check]]] = {
    "siad-mmwave": [
        ("At 7 MB and above SIAD and BBR are within about 1 % of each other (rule: ≤ 1.5 %).", _siad_close),
        ("Buffers larger than 7 MB change nothing (rule: goodput within 1 % over 7, 20, 40 MB).", _siad_buffers_irrelevant),
        ("At 4 MB throughput drops for both algorithms.", _siad_4mb_drops),
        ("At 4 MB BBR loses much more than SIAD.", _siad_bbr_worse),
        ("At 4 MB the RTT is markedly lower than at 7 MB.", _siad_rtt_lower),
        ("After the blockage SIAD refills the link; BBR with the small buffer struggles to.", _siad_refill),
    ],
    "wifi-cubic-bbr": [
        ("CUBIC scales its window well in all cases (rule: ≥ 90 % of the bottleneck).", _wifi_cubic_scales),
        ("CUBIC shares fairly with 4 flows (rule: Jain ≥ 0.95).", _wifi_cubic_fair),
        ("Goodput over WiFi is several percent below P2P.", _wifi_below_p2p),
        ("The WiFi gap grows with 4 flows.", _wifi_gap_grows),
        ("Collisions and drops at the AP rise several-fold with 4 flows.", _wifi_drops_rise),
    ],
    "rtt-lens": [
        ("BBR holds RTT close to the base RTT.", _rtt_bbr_near_base),
        ("BBR has near-zero loss.", _rtt_bbr_no_loss),
        ("CUBIC builds a standing queue, RTT peaking many times the base RTT.", _rtt_cubic_queue),
        ("CUBIC loses a few percent of its packets.", _rtt_cubic_loss),
        ("Both fill the link.", _rtt_both_fill),
    ],
    "deep-buffer": [
        ("With 65 536 packets the flows are badly unfair at first, then converge to a fair share.", _deep_unfair_then_fair),
        ("With 16 384 packets they cycle: the queue fills and drains repeatedly.", _deep_cycles),
    ],
    "mmwave-5cc": [
        ("Loss-based algorithms reach about the 1 Gb/s application rate in LOS.", _5cc_loss_based_reach),
        ("Vegas stays far below the loss-based algorithms.", _5cc_vegas_low),
        ("YeAH leaves slow start early and does not reach the peak in the first LOS period.", _5cc_yeah_early),
        ("Hybla ramps up fastest after the NLOS period.", _5cc_hybla_fastest),
        ("Even a 0.4 s blockage costs seconds of reduced throughput.", _5cc_short_blockage_costs),
    ],
}


STACK_NAMES = {"ns3": "ns-3's TCP (tcp.stack = ns3)", "linux": "Linux TCP (tcp.stack = linux)"}


def check(study: str, runs: StudyRuns, assumptions: tuple[str, ...] = ()) -> list[Verdict]:
    """Every finding of `study`, checked; a check that cannot run (a case, metric or run missing
    from a partial campaign) is reported as not reproduced, with the reason. A study with a `stack`
    axis or `assumptions` axes (`[study.assumptions]`) has each finding checked on the runs of
    each combination of their values, the finding prefixed with it."""
    split = [axis for axis in ("stack", *assumptions) if axis in runs.table.columns]
    if not split:
        return _check(study, runs, "")
    verdicts = []
    for combination in runs.table.select(split).unique(maintain_order=True).iter_rows():
        values = dict(zip(split, combination, strict=True))
        label = ", ".join(STACK_NAMES.get(v, v) if axis == "stack" else f"{axis} {v}" for axis, v in values.items())
        verdicts += _check(study, runs.only(**values), f"{label}: ")
    return verdicts


def _check(study: str, runs: StudyRuns, prefix: str) -> list[Verdict]:
    verdicts = []
    for text, rule in FINDINGS.get(study, []):
        try:
            ok, evidence = rule(runs)
        except (
            KeyError,
            ValueError,
            IndexError,
            ZeroDivisionError,
            TypeError,
            OSError,
            pl.exceptions.ColumnNotFoundError,
        ) as error:
            ok, evidence = False, f"could not be checked: {error}"
        verdicts.append(Verdict(prefix + text, bool(ok), evidence))
    return verdicts
