"""`python -m tcplab.emu.delayline --tun NAME --route NET/LEN=NS@BPS ... --report FILE`: the
constant-delay line (crates/emu) on TUN device NAME of the current network namespace, at
real-time priority when allowed, until SIGTERM or Ctrl-C: packets to NET/LEN wait NS
nanoseconds plus their length at BPS bit/s (the bottleneck's serialization; @0: none). Then
its report (packets, drops, release lateness percentiles) is written to FILE as JSON. The
device's carrier comes up once the line is attached."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from pathlib import Path

from .. import _core

REALTIME_PRIORITY = 50
MAX_QUEUED_BYTES = 256 * 2**20


def _route(text: str) -> tuple[str, int, int, int]:
    network, _, hold = text.partition("=")
    address, _, length = network.partition("/")
    delay_ns, _, rate_bps = hold.partition("@")
    return address, int(length or 32), int(delay_ns), int(rate_bps or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcplab.emu.delayline", description=__doc__.splitlines()[0])
    parser.add_argument("--tun", required=True)
    parser.add_argument("--route", action="append", type=_route, required=True)
    parser.add_argument("--report", required=True)
    args = parser.parse_args(argv)
    with contextlib.suppress(PermissionError, OSError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    report = _core.run_delay_line(args.tun, args.route, MAX_QUEUED_BYTES)
    Path(args.report).write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
