"""`python -m tcplab.emu.delayline --tun NAME@BPS ... --route NET/LEN=NS ... --report FILE`:
the constant-delay line (crates/emu) on TUN devices NAME of the current network namespace, at
real-time priority when allowed, until SIGTERM or Ctrl-C. Each packet read from a device goes
through that device's transmitter at BPS bit/s (one packet after the other, as on the
bottleneck link; @0: none), then waits NS nanoseconds (the first route matching its
destination), and is written back into its device. Then the line's report (packets, drops,
release lateness percentiles, longest wait for a transmitter) is written to FILE as JSON. A
device's carrier comes up once the line is attached to it."""

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


def _tun(text: str) -> tuple[str, int]:
    name, _, rate_bps = text.partition("@")
    return name, int(rate_bps or 0)


def _route(text: str) -> tuple[str, int, int]:
    network, _, delay_ns = text.partition("=")
    address, _, length = network.partition("/")
    return address, int(length or 32), int(delay_ns)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcplab.emu.delayline", description=__doc__.splitlines()[0])
    parser.add_argument("--tun", action="append", type=_tun, required=True)
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
