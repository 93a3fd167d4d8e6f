"""Simulator speed and memory: runs each scenario of benches/scenarios/ in its own process
and prints simulated packets delivered per wall-second, wall time, events and peak RSS.

Targets: >= 3 million delivered packets per wall-second on (c); (d) under 5 s;
peak RSS under 150 MB everywhere; (f), FQ-CoDel, within 15 % of (b)'s packets per wall-second,
drop tail on the same path ((g) is CoDel's); (i), a Mahimahi trace link, within 10 % of (h),
the constant-rate link it replays. Run it from the repository root (trace paths are relative
to the current directory). This is a benchmark, not a test: it never fails a
build. On a busy machine, compare instructions instead: `valgrind --tool=callgrind` of a child
run, less the instructions of the same scenario over 1 ms (Python's start-up).
Usage: .venv/bin/python benches/speed.py [SCENARIO.toml ...]
"""

import json
import resource
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys, tcplab
r = tcplab.run(sys.argv[1])
print(json.dumps(r.summary["run"]))
"""


def measure(path: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], check=True, capture_output=True, text=True)
    run = json.loads(out.stdout.strip().splitlines()[-1])
    # ru_maxrss of children is the max over all finished children (KiB on Linux):
    # each child runs alone, so a rise is this child's peak.
    run["peak_rss_mb"] = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    return run


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]] or sorted((Path(__file__).parent / "scenarios").glob("*.toml"))
    print(f"{'scenario':<22} {'sim s':>7} {'wall s':>8} {'events':>12} {'delivered':>12} {'pkts/wall-s':>12} {'peak RSS MB':>12}")
    for path in paths:
        r = measure(path)
        rate = r["packets_delivered"] / r["wall_seconds"] if r["wall_seconds"] > 0 else float("inf")
        print(
            f"{path.stem:<22} {r['sim_seconds']:>7.0f} {r['wall_seconds']:>8.2f} {r['events']:>12,} {r['packets_delivered']:>12,} {rate:>12,.0f} {r['peak_rss_mb']:>12.1f}"
        )


if __name__ == "__main__":
    main()
