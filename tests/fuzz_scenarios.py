"""A bounded, deterministic scenario fuzzer: mutates the shipped scenarios (scenarios/*.toml and
every case of the built-in studies, in their resolved form so that every key is present) and
runs each mutant through `tcplab.run` in a worker process, classifying what happens.

Outcomes: `ok` (it ran), `error` (a one-line ScenarioError), and the failures: `multiline`
(a ScenarioError of several lines), `traceback` (any other exception escaping the library),
`abort` (the worker died of a signal or a non-zero exit: a Rust panic that crossed into
Python, an allocation failure), `hang` (no answer within HANG_SECONDS of wall time), `slow`
(more than CPU_SECONDS of the worker's CPU time: CPU time, unlike wall time, does not grow
when other processes load the machine), `memory` (peak RSS over RSS_LIMIT_BYTES).

    python -m tests.fuzz_scenarios --count 2000 --seed 7     # prints the table of outcomes

tests/test_fuzz.py runs a fixed number of mutants with a fixed seed in CI and asserts that no
failure occurs.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[1]
CPU_SECONDS = 30.0
HANG_SECONDS = 120.0
RSS_LIMIT_BYTES = 1 << 30
# Mutants whose resolved duration is longer than this are validated, not run, so that a
# mutant legitimately simulating hours is not mistaken for a hang.
RUN_DURATION_LIMIT_NS = 3_000_000_000
CORPUS_DURATION = "1s"
QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)([A-Za-z]+)$")
FAILURES = ("multiline", "traceback", "abort", "hang", "slow", "memory")

# Values a mutation substitutes for a leaf: edges of every type the schema uses, quantities
# with odd numbers and units, and values of the wrong type.
INTERESTING = [
    0,
    1,
    -1,
    2,
    7,
    255,
    65536,
    2**31,
    2**32,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64,
    10**30,
    -(2**63),
    0.0,
    -0.0,
    0.5,
    -0.5,
    1e-300,
    1e300,
    1e308,
    -1e308,
    3.14,
    True,
    False,
    "",
    " ",
    "abc",
    "ü",
    "x" * 5000,
    "\x00",
    "inf",
    "-inf",
    "nan",
    "NaN",
    "0B",
    "1B",
    "1pkt",
    "0pkt",
    "-1pkt",
    "1e400B",
    "99999999999999999999GiB",
    "1.5.2MB",
    "10 MB",
    "0s",
    "1ns",
    "-1s",
    "1e-9s",
    "10000000s",
    "99999999999999999999s",
    "1e400s",
    "5min",
    "nan s",
    "0bps",
    "1bps",
    "1Tbps",
    "99999999999999999999Gbps",
    "-5Mbps",
    "10Mbps",
    "1e-3Mbps",
    "0ms",
    "1us",
    "10ms",
    "1h",
    "cubic",
    "bbr",
    "nope",
    "r0",
    "h0",
    "dumbbell",
    [],
    [0],
    ["a"],
    [[1]],
    {},
    {"kind": "cubic"},
    {"kind": 5},
    {"x": 1},
]


@dataclass(frozen=True)
class Mutant:
    origin: str
    mutation: str
    document: dict[str, Any]


def corpus() -> list[tuple[str, dict[str, Any]]]:
    """The resolved documents of the shipped scenarios and of every case of every study."""
    import tcplab
    from tcplab import studies

    sources = [str(path) for path in sorted((REPOSITORY / "scenarios").glob("*.toml"))]
    for study in studies.all_studies().values():
        sources.append(study.name)
        sources += [f"{study.name}{studies.CASE_SEPARATOR}{case}" for case in study.cases]
    documents = []
    for source in sources:
        document = tcplab.resolve(source)
        document["duration"] = CORPUS_DURATION  # short runs; mutations may still lengthen them
        documents.append((Path(source).name, document))
    return documents


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of every table entry and array element, innermost last."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key)
        yield from _leaves(item, (*path, key))


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        document = document[key]
    return document


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(key) for key in path)


def mutate(rng: random.Random, document: dict[str, Any], mutations: int) -> tuple[str, dict[str, Any]]:
    """`mutations` random edits of a copy of `document`; returns their description too."""
    document = copy.deepcopy(document)
    done = []
    for _ in range(mutations):
        paths = list(_leaves(document))
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _parent(document, path), path[-1]
        kind, quantity = rng.random(), QUANTITY.match(str(parent[key]))
        if kind < 0.35 and quantity and isinstance(parent[key], str):
            number = float(quantity.group(1)) * rng.choice((0, 0.01, 0.5, 2, 10, 1000, 1e6))
            parent[key] = f"{number:g}{quantity.group(2)}"
            done.append(f"{_dotted(path)}={parent[key]}")
        elif kind < 0.70:
            value = copy.deepcopy(rng.choice(INTERESTING))
            parent[key] = value
            done.append(f"{_dotted(path)}={json.dumps(value)[:40]}")
        elif kind < 0.80:
            del parent[key]
            done.append(f"del {_dotted(path)}")
        elif kind < 0.88 and isinstance(parent, dict):
            parent[f"{key}_typo"] = parent[key]
            done.append(f"unknown {_dotted(path)}_typo")
        elif kind < 0.95 and isinstance(parent, list):
            parent.extend(copy.deepcopy(parent) * rng.choice((1, 3)))
            done.append(f"repeat {_dotted(path[:-1])}")
        elif isinstance(parent[key], (int, float)) and not isinstance(parent[key], bool):
            parent[key] = parent[key] * rng.choice((-1, 10, 1000, 1e6))
            done.append(f"scale {_dotted(path)}")
        else:
            parent[key] = str(parent[key])
            done.append(f"stringify {_dotted(path)}")
    return "; ".join(done), document


def mutants(count: int, seed: int) -> list[Mutant]:
    rng = random.Random(seed)
    documents = corpus()
    result = []
    for _ in range(count):
        origin, document = rng.choice(documents)
        description, mutated = mutate(rng, document, rng.choice((1, 1, 1, 2, 3)))
        result.append(Mutant(origin, description, mutated))
    return result


# ---- the worker: one process runs mutants one after another, reporting each on stdout ----


def _worker() -> None:
    """Reads one JSON document a line; answers one JSON outcome a line."""
    import traceback

    import tcplab
    from tcplab import scenario as scenario_module

    for line in sys.stdin:
        document = json.loads(line)
        started = time.process_time()

        def budget(_fraction: float, started: float = started) -> None:
            if time.process_time() - started > CPU_SECONDS:
                raise TimeoutError("cpu budget")

        outcome: dict[str, Any]
        try:
            resolved = scenario_module.validate(document)
            from tcplab.units import duration_ns

            if duration_ns(resolved["duration"]) > RUN_DURATION_LIMIT_NS:
                outcome = {"kind": "ok", "detail": "validated only (long duration)"}
            else:
                tcplab.run(document, progress=budget)
                outcome = {"kind": "ok", "detail": "ran"}
        except TimeoutError:
            outcome = {"kind": "slow", "detail": f"over {CPU_SECONDS} s of CPU"}
        except tcplab.ScenarioError as error:
            text = str(error)
            outcome = {"kind": "error" if "\n" not in text.strip() else "multiline", "detail": text}
        except Exception:
            outcome = {"kind": "traceback", "detail": traceback.format_exc(limit=4)}
        if outcome["kind"] == "ok" and time.process_time() - started > CPU_SECONDS:
            outcome = {"kind": "slow", "detail": f"{time.process_time() - started:.1f} s of CPU"}
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if peak > RSS_LIMIT_BYTES:
            outcome = {"kind": "memory", "detail": f"peak RSS {peak / 2**20:.0f} MiB"}
        print(json.dumps(outcome), flush=True)
        if outcome["kind"] == "memory":
            return  # the high-water mark stays up: start a fresh worker


class Worker:
    """A worker process with an address-space cap, so a runaway allocation aborts the worker
    instead of exhausting the machine."""

    ADDRESS_SPACE_BYTES = 16 << 30

    def __init__(self) -> None:
        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (self.ADDRESS_SPACE_BYTES, self.ADDRESS_SPACE_BYTES))

        self.process = subprocess.Popen(
            [sys.executable, "-c", "import tests.fuzz_scenarios as f; f._worker()"],
            cwd=REPOSITORY,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=limit,
            env={**os.environ, "RUST_BACKTRACE": "0"},
        )

    def ask(self, document: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        try:
            self.process.stdin.write(json.dumps(document) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            return self._death()
        ready = _readable(self.process.stdout, HANG_SECONDS)
        if not ready:
            self.close()
            return {"kind": "hang", "detail": f"no answer in {HANG_SECONDS} s"}
        line = self.process.stdout.readline()
        if not line:
            return self._death()
        return json.loads(line)

    def _death(self) -> dict[str, Any]:
        code = self.process.wait()
        stderr = self.process.stderr.read() if self.process.stderr else ""
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        return {"kind": "abort", "detail": f"exit {code}: {tail}"}

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def _readable(stream: Any, timeout: float) -> bool:
    import select

    ready, _, _ = select.select([stream], [], [], timeout)
    return bool(ready)


def fuzz(count: int, seed: int) -> list[tuple[Mutant, dict[str, Any]]]:
    """Every mutant with its outcome."""
    outcomes = []
    worker = Worker()
    try:
        for mutant in mutants(count, seed):
            if not worker.alive():
                worker = Worker()
            outcome = worker.ask(mutant.document)
            outcomes.append((mutant, outcome))
            if outcome["kind"] in ("abort", "hang", "memory"):
                worker.close()
    finally:
        worker.close()
    return outcomes


def table(outcomes: list[tuple[Mutant, dict[str, Any]]]) -> str:
    counts = collections.Counter(outcome["kind"] for _, outcome in outcomes)
    kinds = ("ok", "error", *FAILURES)
    lines = ["tried  " + "  ".join(kinds), f"{len(outcomes):5d}  " + "  ".join(f"{counts[k]:{len(k)}d}" for k in kinds)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=14)
    arguments = parser.parse_args()
    outcomes = fuzz(arguments.count, arguments.seed)
    print(table(outcomes))
    for mutant, outcome in outcomes:
        if outcome["kind"] in FAILURES:
            print(f"{outcome['kind']}: {mutant.origin}: {mutant.mutation}: {outcome['detail'][:300]!r}")


if __name__ == "__main__":
    main()
