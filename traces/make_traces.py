#!/usr/bin/env python3
"""Writes the synthetic Mahimahi-format traces of this directory (docs/path-models.md).

A trace has one line per 1500-byte delivery opportunity: its time in whole milliseconds since
the start, never decreasing; the trace repeats with its last time as the period. The traces
are made up here (fixed seed, so the files are reproducible); none is a recording.

    python3 traces/make_traces.py   # rewrites traces/*.trace
"""

import random
from pathlib import Path

OPPORTUNITY_BITS = 1500 * 8


def opportunities(rate_mbps_per_ms):
    """Lines for a rate (Mbit/s) given per millisecond, spread evenly: a running sum of the
    opportunities each millisecond is owed."""
    owed = 0.0
    lines = []
    for ms, rate in enumerate(rate_mbps_per_ms, start=1):
        owed += rate * 1e6 / 1000 / OPPORTUNITY_BITS
        while owed >= 1.0:
            lines.append(ms)
            owed -= 1.0
    return lines


def constant():
    """12 Mbit/s: one opportunity every millisecond for 1 s."""
    return opportunities([12.0] * 1000)


def cellular(seed=1):
    """5 s whose rate takes a random walk between 2 and 40 Mbit/s: a step of up to ±6 Mbit/s
    every 100 ms, so the rate wanders across its range in about a second."""
    rng = random.Random(seed)
    rate, per_ms = 20.0, []
    for _ in range(50):
        rate = min(40.0, max(2.0, rate + rng.uniform(-6.0, 6.0)))
        per_ms += [rate] * 100
    return opportunities(per_ms)


def outages():
    """2 s at 12 Mbit/s with no opportunity from 500 to 800 ms and from 1500 to 1700 ms."""
    return opportunities([0.0 if 500 <= ms < 800 or 1500 <= ms < 1700 else 12.0 for ms in range(2000)])


def main():
    here = Path(__file__).parent
    for name, lines in [("constant-12mbps", constant()), ("cellular", cellular()), ("outages", outages())]:
        (here / f"{name}.trace").write_text("".join(f"{ms}\n" for ms in lines))


if __name__ == "__main__":
    main()
