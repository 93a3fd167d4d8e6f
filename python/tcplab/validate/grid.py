"""The validation grid: the wired cases `tcplab validate` runs on the simulator and on this
machine's kernel, and the `--quick` subset.

Every case is one drop-tail dumbbell: bottleneck rate 10, 50 or 300 Mbit/s; base RTT 10, 40
or 100 ms (the bottleneck's one-way delay is half of it, as rtt-lens's 40 ms RTT is 20 ms each
way; the access links add none); a buffer of 0.5, 2 or 16 bandwidth-delay products in 1500-B
packets (at least one); and one of six flow mixes, 20 s each. Then bench (d) of
benches/speed.py (benches/scenarios/d-deep-buffer.toml: BBR and CUBIC, 100 Mbit/s, 10 ms RTT,
16384 packets) for its first 300 s. 3 × 3 × 3 × 6 + 1 = 163 cases.

`--quick` runs 18 of them: the nine rows of the orthogonal array L9(3^4) (Taguchi; every pair
of levels of any two of its four factors occurs exactly once) over rate, RTT and buffer, once
with the single-flow algorithms (reno, cubic, bbr) as the fourth factor and once with the
two-flow mixes. Each rate, RTT, buffer and mix thus occurs, every rate meets every RTT and
every buffer, and each algorithm meets every level of the other factors once; 18 × 20 s and
the building of each run are about 7 minutes of kernel time. Quick cases are cases of the
grid, so a later full run reuses them.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from .._core import ScenarioError

RATES_MBPS = (10, 50, 300)
RTTS_MS = (10, 40, 100)
BUFFERS_BDP = (0.5, 2, 16)
PACKET_BYTES = 1500  # the queue holds MTU-size packets
# Flow mixes: name -> each flow's algorithm (the catalog's names; the kernel calls newreno reno).
MIXES: dict[str, tuple[str, ...]] = {
    "reno": ("newreno",),
    "cubic": ("cubic",),
    "bbr": ("bbr",),
    "2cubic": ("cubic", "cubic"),
    "2bbr": ("bbr", "bbr"),
    "bbr+cubic": ("bbr", "cubic"),
}
SINGLE_FLOW_MIXES = ("reno", "cubic", "bbr")
TWO_FLOW_MIXES = ("2cubic", "2bbr", "bbr+cubic")
CASE_DURATION = "20s"
DEEP_BUFFER_CASE = "bench-d-deep-buffer-300s"
# L9(3^4): each row is the level (0, 1, 2) of four factors.
L9 = (
    (0, 0, 0, 0),
    (0, 1, 1, 1),
    (0, 2, 2, 2),
    (1, 0, 1, 2),
    (1, 1, 2, 0),
    (1, 2, 0, 1),
    (2, 0, 2, 1),
    (2, 1, 0, 2),
    (2, 2, 1, 0),
)

# What every case shares. Socket buffers of 100 MiB (bench (d)'s) hold the largest window of
# the grid, 17 BDP at 300 Mbit/s and 100 ms (64 MB), so the bottleneck buffer, not the hosts,
# limits the flows; 10 Gbit/s access links with 1000-packet queues never queue (the emulation
# needs access links at least 10 times the bottleneck's rate, docs/emulation.md).
BASE: dict[str, Any] = {
    "name": "validate",
    "duration": CASE_DURATION,
    "sample_interval": "50ms",
    "tcp": {"snd_buf": "100MiB", "rcv_buf": "100MiB"},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "10pkt", "queue": "droptail"},
        "access": {"rate": "10Gbps", "delay": "0ms", "buffer": "1000pkt"},
    },
    "flows": [{"cc": "cubic"}],
}


@dataclass(frozen=True)
class Case:
    """One case: its name and its overrides of `BASE` (dotted keys)."""

    name: str
    overrides: dict[str, Any]

    @property
    def algorithms(self) -> tuple[str, ...]:
        return tuple(flow["cc"] for flow in self.overrides["flows"])


def buffer_packets(rate_mbps: float, rtt_ms: float, bdp: float) -> int:
    """`bdp` bandwidth-delay products in 1500-B packets, rounded, at least one."""
    return max(1, round(bdp * rate_mbps * 1e6 * rtt_ms / 1e3 / 8 / PACKET_BYTES))


def case(rate_mbps: int, rtt_ms: int, bdp: float, mix: str, duration: str = CASE_DURATION, name: str | None = None) -> Case:
    flows = MIXES[mix]
    overrides = {
        "name": f"validate-{name or case_name(rate_mbps, rtt_ms, bdp, mix)}",
        "duration": duration,
        "topology.pairs": len(flows),
        "topology.bottleneck.rate": f"{rate_mbps}Mbps",
        "topology.bottleneck.delay": f"{rtt_ms / 2:g}ms",
        "topology.bottleneck.buffer": f"{buffer_packets(rate_mbps, rtt_ms, bdp)}pkt",
        "flows": [{"cc": cc} for cc in flows],
    }
    return Case(name or case_name(rate_mbps, rtt_ms, bdp, mix), overrides)


def case_name(rate_mbps: int, rtt_ms: int, bdp: float, mix: str) -> str:
    return f"{rate_mbps}M-{rtt_ms}ms-{bdp:g}bdp-{mix}"


def deep_buffer_case() -> Case:
    """Bench (d): 100 Mbit/s, 10 ms, 16384 packets (about 197 BDP), BBR then CUBIC, 300 s."""
    found = case(100, 10, 1, "bbr+cubic", duration="300s", name=DEEP_BUFFER_CASE)
    return Case(found.name, {**found.overrides, "topology.bottleneck.buffer": "16384pkt"})


def grid() -> list[Case]:
    """Every case of the full validation, in run order (the deep-buffer case last)."""
    cases = [case(rate, rtt, bdp, mix) for rate in RATES_MBPS for rtt in RTTS_MS for bdp in BUFFERS_BDP for mix in MIXES]
    return [*cases, deep_buffer_case()]


def quick() -> list[Case]:
    """The `--quick` subset (module doc): L9 over rate, RTT, buffer and the algorithm."""
    return [
        case(RATES_MBPS[a], RTTS_MS[b], BUFFERS_BDP[c], mixes[d])
        for mixes in (SINGLE_FLOW_MIXES, TWO_FLOW_MIXES)
        for a, b, c, d in L9
    ]


def select(cases: list[Case], patterns: list[str] | None) -> list[Case]:
    """The cases whose name matches one of the shell-style `patterns` (all without any); a
    pattern that matches none is refused in one line."""
    if not patterns:
        return cases
    for pattern in patterns:
        if not any(fnmatch.fnmatchcase(c.name, pattern) for c in cases):
            raise ScenarioError(
                f"--cases {pattern!r}: matches no case; allowed: names such as 10M-40ms-2bdp-cubic or patterns such"
                f" as '300M-*-bbr+cubic', {DEEP_BUFFER_CASE} (`tcplab validate --dry-run` lists them)"
            )
    return [c for c in cases if any(fnmatch.fnmatchcase(c.name, p) for p in patterns)]


def with_duration(cases: list[Case], duration: str | None) -> list[Case]:
    """`cases` with every duration replaced (a check by hand: no longer the grid's numbers)."""
    if duration is None:
        return cases
    return [Case(c.name, {**c.overrides, "duration": duration}) for c in cases]
