"""Speed of the mmWave model: the whole siad-mmwave sweep (SIAD and BBR x RLC buffer 4/7/20/40 MB,
15 simulated seconds each), every run in its own process, two at a time on this 2-core machine.

Prints per run: wall time, simulated seconds per wall-second, packets delivered, peak RSS,
throughput and mean RTT; then the sweep's total wall time. Targets: the sweep under
20 s of wall time, each run under 300 MB peak RSS. ns-3's mmWave module simulates about 0.1 s
per wall-second for one UE. This is a benchmark, not a test: it never fails a build.
Usage: .venv/bin/python benches/mmwave_sweep.py [--jobs N] [CASE ...]
"""

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from tcplab import studies

STUDY = "siad-mmwave"

# The child reports its own peak RSS (ru_maxrss of the process itself, KiB on Linux).
CHILD = """
import json, resource, sys, tcplab
r = tcplab.run(sys.argv[1])
flow = r.summary["flows"][0]
print(json.dumps({**r.summary["run"], "goodput_mbps": flow["goodput_mbps"], "rtt_mean_ms": flow["rtt_mean_ms"],
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(case: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, f"{STUDY}:{case}"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    cases = args.cases or list(studies.find(STUDY).cases)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(measure, cases))
    total = time.perf_counter() - started
    print(f"{'case':<12} {'wall s':>7} {'sim s/wall s':>12} {'delivered':>11} {'peak RSS MB':>12} {'Mb/s':>8} {'RTT ms':>7}")
    for case, r in zip(cases, results, strict=True):
        speed = r["sim_seconds"] / r["wall_seconds"]
        print(
            f"{case:<12} {r['wall_seconds']:>7.2f} {speed:>12.1f} {r['packets_delivered']:>11,} {r['peak_rss_mb']:>12.0f} {r['goodput_mbps']:>8.1f} {r['rtt_mean_ms']:>7.1f}"
        )
    print(f"sweep of {len(cases)} runs with {args.jobs} jobs: {total:.1f} s wall")


if __name__ == "__main__":
    main()
