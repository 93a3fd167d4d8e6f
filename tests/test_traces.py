"""The synthetic traces shipped in traces/ are what traces/make_traces.py writes (its seed is
fixed), so anyone can regenerate them and none is a recording."""

import importlib.util

from .conftest import REPOSITORY

TRACES = REPOSITORY / "traces"


def test_the_shipped_traces_are_those_the_script_makes() -> None:
    spec = importlib.util.spec_from_file_location("make_traces", TRACES / "make_traces.py")
    make_traces = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_traces)
    made = {"constant-12mbps": make_traces.constant(), "cellular": make_traces.cellular(), "outages": make_traces.outages()}
    assert {path.stem for path in TRACES.glob("*.trace")} == set(made)
    for name, lines in made.items():
        shipped = [int(line) for line in (TRACES / f"{name}.trace").read_text().split()]
        assert shipped == lines, name
    # 12 Mbit/s is one 1500-byte opportunity a millisecond
    assert made["constant-12mbps"] == list(range(1, 1001))
