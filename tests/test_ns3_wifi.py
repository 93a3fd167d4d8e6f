"""The wifi-cubic-bbr study's setup against ns-3 3.44 itself (benches/ns3_wifi.py, results
cached in tests/data/ns3/wifi.json): tcplab's ns3-stack run of each cached case, with the
study's queue assumption that matches ns-3's set-up (a drop-tail FIFO, or ns-3's default FqCoDel
over a 100-packet device queue), gives ns-3's goodput."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benches"))  # ns3_wifi imports ns3_diff beside it
_spec = importlib.util.spec_from_file_location("ns3_wifi", ROOT / "benches" / "ns3_wifi.py")
ns3_wifi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ns3_wifi)

CACHED = json.loads(ns3_wifi.CACHE.read_text(encoding="utf-8"))
GOODPUT_TOLERANCE = 0.03  # as the wired differential (docs/validation.md)


def test_the_cached_cases_are_cases_of_the_script() -> None:
    grid = ns3_wifi.cases()
    assert CACHED["ns3_version"].startswith("3.44") and len(CACHED["cases"]) == 12
    for name, cached in CACHED["cases"].items():
        assert cached["case"] == grid[name], name
        assert len(cached["ns3"]["flows"]) == cached["case"]["flows"], name


@pytest.mark.parametrize("name", sorted(CACHED["cases"]))
def test_tcplab_gives_ns3s_goodput_on_the_studys_setup(name: str) -> None:
    cached = CACHED["cases"][name]
    ours = ns3_wifi.run_tcplab(cached["case"])["goodput_mibps"]
    reference = cached["ns3"]["goodput_mibps"]
    assert abs(ours / reference - 1) <= GOODPUT_TOLERANCE, f"{name}: tcplab {ours:.4f}, ns-3 {reference:.4f} (2^20 bit/s)"
