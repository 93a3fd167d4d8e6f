"""Campaign engine speed: a 16-run campaign of runs of at least 2 s each, with 1 and
with 2 workers on the local engine (and 2 on Dask), fresh directory each time; then the same
campaign of near-empty runs, whose wall time per run is the engine's own overhead (scheduling
and the store). Targets: speed-up with 2 workers >= 1.8x; overhead per run < 50 ms.
This is a benchmark, not a test: it never fails a build.
Usage: .venv/bin/python benches/sweep_speed.py
"""

import tempfile
import time
from pathlib import Path

from tcplab.sweep import Campaign

# 16 runs (2 algorithms x 8 seeds) of rtt-lens at 1 Gbps with a 10-BDP buffer for 120 s:
# about 2.8 s of wall time each here.
HEAVY = """
name = "speed"
base = "rtt-lens"
seeds = 8
[axes]
"flows.0.cc" = ["cubic", "bbr"]
"topology.bottleneck.rate" = ["1Gbps"]
"topology.bottleneck.buffer" = ["3300pkt"]
"duration" = ["120s"]
"""
LIGHT = HEAVY.replace("1Gbps", "1Mbps").replace("120s", "1s")


def timed(text: str, jobs: int, engine: str = "local") -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "campaign.toml"
        path.write_text(text)
        campaign = Campaign(path, Path(work) / "out")
        started = time.perf_counter()
        state = campaign.run(jobs=jobs, engine=engine)
        return time.perf_counter() - started, state.done


def main() -> None:
    one, runs = timed(HEAVY, 1)
    two, _ = timed(HEAVY, 2)
    dask_two, _ = timed(HEAVY, 2, "dask")
    light, light_runs = timed(LIGHT, 1)
    print(
        f"{runs} heavy runs: 1 worker {one:.1f} s ({one / runs:.2f} s per run), 2 workers {two:.1f} s,"
        f" speed-up {one / two:.2f}x; Dask with 2 workers {dask_two:.1f} s ({one / dask_two:.2f}x)"
    )
    print(
        f"{light_runs} near-empty runs on 1 worker: {light:.2f} s, {1000 * light / light_runs:.0f} ms per run"
        " (process start included)"
    )


if __name__ == "__main__":
    main()
