"""Simulator speed and memory: runs each scenario of benches/scenarios/ and each many-flow
scenario this script generates (`MANY_FLOWS`), each in its own process, and prints simulated
packets delivered per wall-second, wall time, events and peak RSS.

Targets: >= 3 million delivered packets per wall-second on (c); (d) under 5 s; peak RSS under
150 MB everywhere; (f), FQ-CoDel, within 15 % of (b)'s packets per wall-second, drop tail on the
same path ((g) is CoDel's); (i), a Mahimahi trace link, within 10 % of (h), the constant-rate
link it replays. Many flows (issue "Scale to ten thousand flows"): 1000 flows, half CUBIC and
half BBR, on a 1 Gbit/s, 10 ms dumbbell with a 2000-packet buffer for 20 s (`many-1000`): >= 2 M
packets per wall-second, peak RSS <= 400 MB; 10 000 flows on a 10 Gbit/s dumbbell for 10 s
(`many-10000`): >= 1.5 M, <= 2 GB. A scenario the simulator refuses (e.g. its recorded series
over `record.memory_limit`) prints the refusal in its row; the `-100ms` and `-1s` variants
sample that often instead of every 10 ms; `many-100` is many-1000's link with 100 flows, whose
larger buffer share loses far fewer packets. `scaled-N` gives each of N flows the same 10 Mbit/s
and 40 packets of buffer, so its events per packet do not depend on N: what its rate loses as N
grows is memory traffic (cachegrind, 2026-11-26: 4280, 3840 and 4040 instructions per delivered
packet at 100, 1000 and 4000 flows, while the rate falls fourfold). Measured on 2026-11-26, second session (best of 3, interleaved with the
build before): many-1000 1.54 M packets per wall-second and 99 MB (many-100 2.9 M, 78 MB),
many-10000 1.20 M and 296 MB, scaled-100/1000/4000 3.68/1.94/0.86 M, c 4.52 M (the build before
measured 15-30 % slower in the day's first session: compare only runs interleaved on one
machine). On two threads (docs/architecture.md, "Two threads"; 2026-11-26, third session, 3
to 5 runs each interleaved with one thread and the build before): many-1000 2.05-2.20 M and
96 MB (one thread 1.44-1.57 M; 1.94-1.99 M in a slower hour), many-10000 1.56-1.64 M and 328 MB
(1.08-1.20 M, 296 MB), many-100 3.27-3.69 M (2.51-2.62 M), c 5.52-6.13 M (4.37-4.46 M). Left to choose (no --threads), one flow and ten
flows at 100 Mbit/s stay on one thread: two ran them 0-15 % slower and -2 to +5 %.
Run it from the repository root (trace paths are relative to the current
directory). This is a benchmark, not a test: it never fails a build. Wall times move by
±10 % with the machine's other load: compare two builds by running them interleaved
(PYTHONPATH pointing at the other build's package), or compare instructions:
`valgrind --tool=callgrind` of a child run, less the instructions of the same scenario over
1 ms (Python's start-up).
Usage: .venv/bin/python benches/speed.py [--threads=1|2] [SCENARIO.toml | MANY-FLOWS NAME ...]
(threads: as `tcplab.run`'s, two when two cores are free by default)
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, resource, sys, tcplab
r = tcplab.run(sys.argv[1], threads=None if sys.argv[2] == "auto" else int(sys.argv[2]))
run = r.summary["run"]
run["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(json.dumps(run))
"""


def many_flows(
    flows: int, rate: str, duration: str, sample_interval: str | None = None, buffer: int = 2000, grouped: bool = False
) -> str:
    """A dumbbell of `flows` pairs, flow i CUBIC when i is even and BBR when odd, 10 ms one way,
    a `buffer`-packet bottleneck buffer, 10 Gbit/s access links; `grouped`: flows recorded in
    groups and only shared links, as above `record.aggregate_above` flows."""
    lines = [f'name = "speed-{flows}-flows"', f'duration = "{duration}"']
    if sample_interval:
        lines.append(f'sample_interval = "{sample_interval}"')
    if grouped:
        lines += ["[record]", 'flows = "groups"', 'links = "shared"']
    lines += [
        "[topology]",
        'kind = "dumbbell"',
        f'bottleneck = {{ rate = "{rate}", delay = "10ms", buffer = "{buffer}pkt" }}',
        'access = { rate = "10Gbps", delay = "0ms", buffer = "10000pkt" }',
    ]
    lines += [f'[[flows]]\ncc = "{"bbr" if i % 2 else "cubic"}"' for i in range(flows)]
    return "\n".join(lines) + "\n"


MANY_FLOWS = {
    # many-1000's link with a tenth of the flows, recorded as many-1000 is: 2000 packets of
    # buffer are 20 per flow here and 2 there, where a third of the segments sent are
    # retransmissions (8 % here), so part of what many-1000 costs more per packet is loss
    # recovery, not the number of flows.
    "many-100": lambda: many_flows(100, "1Gbps", "20s", grouped=True),
    "many-1000": lambda: many_flows(1000, "1Gbps", "20s"),
    "many-1000-100ms": lambda: many_flows(1000, "1Gbps", "20s", "100ms"),
    "many-10000": lambda: many_flows(10000, "10Gbps", "10s"),
    "many-10000-1s": lambda: many_flows(10000, "10Gbps", "10s", "1s"),
    # The same work per flow at every count (10 Mbit/s and 40 packets of buffer per flow): the
    # events per packet stay the same, so what the rate loses from 100 to 4000 flows is memory
    # traffic (the state a packet touches no longer fits in cache), not per-event work.
    **{f"scaled-{n}": (lambda n=n: many_flows(n, f"{10 * n}Mbps", "5s", "100ms", buffer=40 * n)) for n in (100, 1000, 4000)},
}


def measure(path: Path, threads: str) -> dict:
    """The child run's summary["run"] with its own peak RSS, or {"refused": the error's last line}."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), threads], capture_output=True, text=True)
    if out.returncode != 0:
        return {"refused": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    args = sys.argv[1:]
    threads = "auto"
    if args and args[0].startswith("--threads="):
        threads = args.pop(0).removeprefix("--threads=")
    names = args or [*sorted(map(str, (Path(__file__).parent / "scenarios").glob("*.toml"))), *MANY_FLOWS]
    print(
        f"{'scenario':<22} {'sim s':>7} {'wall s':>8} {'threads':>7} {'events':>12} {'delivered':>12} {'pkts/wall-s':>12} {'peak RSS MB':>12}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            path = Path(name)
            if name in MANY_FLOWS:
                path = Path(scratch) / f"{name}.toml"
                path.write_text(MANY_FLOWS[name](), encoding="utf-8")
            report(path, measure(path, threads))


def report(path: Path, r: dict) -> None:
    if "refused" in r:
        print(f"{path.stem:<22} refused: {r['refused']}")
        return
    rate = r["packets_delivered"] / r["wall_seconds"] if r["wall_seconds"] > 0 else float("inf")
    print(
        f"{path.stem:<22} {r['sim_seconds']:>7.0f} {r['wall_seconds']:>8.2f} {r.get('threads', 1):>7} {r['events']:>12,}"
        f" {r['packets_delivered']:>12,} {rate:>12,.0f} {r['peak_rss_mb']:>12.1f}"
    )


if __name__ == "__main__":
    main()
