"""tcplab validate: the grid and its --quick subset, the errors worked by hand (zeros, floors,
10 s bins), invalid kernel runs kept out of the statistics, the dry run, the refusals (no
root, a missing algorithm), resuming, and the comparison redrawn from a tiny kernel cache
recorded on this machine (tests/data/validate-kernel-cache: two 5 s cases, both valid, made
by `tcplab validate --cases 10M-40ms-2bdp-cubic --cases 50M-10ms-2bdp-bbr+cubic --duration
5s`) — none of it needs root: the kernel is a stand-in where a test needs one."""

from __future__ import annotations

import itertools
import json
import os
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.emu import plan as emu_plan
from tcplab.emu import plan_for
from tcplab.emu import run as emu_run
from tcplab.scenario import apply_overrides, validate
from tcplab.validate import KERNEL_ATTEMPTS, cache, grid, redraw
from tcplab.validate import validate as run_validation
from tcplab.validate.errors import (
    Measured,
    bbr_goodput_bins,
    binned,
    case_errors,
    measured,
    relative_error,
    summary_table,
)

from .conftest import REPOSITORY

CACHE_FIXTURE = REPOSITORY / "tests" / "data" / "validate-kernel-cache"
# Two short cases for runs through the stand-in kernel.
SHORT = grid.with_duration(grid.select(grid.quick(), ["10M-40ms-2bdp-cubic", "10M-10ms-0.5bdp-2cubic"]), "2s")


# --- the grid ------------------------------------------------------------------------------------


def test_the_grid_is_every_rate_rtt_buffer_and_mix_and_the_deep_buffer_bench() -> None:
    cases = grid.grid()
    assert len(cases) == 3 * 3 * 3 * 6 + 1 == 163
    assert len({c.name for c in cases}) == 163
    assert cases[0].name == "10M-10ms-0.5bdp-reno" and cases[-1].name == grid.DEEP_BUFFER_CASE
    by_name = {c.name: c.overrides for c in cases}
    # BDP in 1500-B packets: 10 Mbit/s x 10 ms = 8.33 packets; 300 Mbit/s x 100 ms = 2500.
    assert by_name["10M-10ms-0.5bdp-reno"]["topology.bottleneck.buffer"] == "4pkt"
    assert by_name["300M-100ms-16bdp-bbr+cubic"]["topology.bottleneck.buffer"] == "40000pkt"
    assert by_name["50M-40ms-2bdp-2bbr"]["topology.bottleneck.buffer"] == "333pkt"
    assert by_name["50M-40ms-2bdp-2bbr"]["topology.bottleneck.delay"] == "20ms"  # half the base RTT
    assert by_name["50M-40ms-2bdp-2bbr"]["topology.pairs"] == 2
    assert [f["cc"] for f in by_name["10M-10ms-2bdp-bbr+cubic"]["flows"]] == ["bbr", "cubic"]


def test_the_deep_buffer_case_is_bench_d_for_300_seconds() -> None:
    ours = validate(apply_overrides(grid.BASE, grid.deep_buffer_case().overrides))
    bench = tcplab.resolve(REPOSITORY / "benches" / "scenarios" / "d-deep-buffer.toml", {"duration": "300s"})
    assert ours["topology"]["bottleneck"] == bench["topology"]["bottleneck"]
    assert ours["topology"]["access"]["rate"] == bench["topology"]["access"]["rate"]
    assert ours["flows"] == bench["flows"] and [f["cc"]["kind"] for f in ours["flows"]] == ["bbr", "cubic"]
    assert (ours["duration"], ours["tcp"]) == (bench["duration"], bench["tcp"])


def test_every_case_resolves_and_the_emulation_accepts_it() -> None:
    """Without warnings, but where the rate is beyond what this machine emulates faithfully."""
    for case in grid.grid():
        plan = plan_for(validate(apply_overrides(grid.BASE, case.overrides)))
        expected = ["outside the 10-100Mbps"] if plan.bottleneck_rate_bps > emu_plan.FAITHFUL_RATE_BPS[1] else []
        assert [w for w in expected if any(w in warning for warning in plan.warnings)] == expected, case.name
        assert len(plan.warnings) == len(expected), (case.name, plan.warnings)


def test_quick_is_an_orthogonal_array_of_grid_cases() -> None:
    quick = grid.quick()
    full = {c.name: c.overrides for c in grid.grid()}
    assert len(quick) == 18
    assert all(full[c.name] == c.overrides for c in quick)  # the same runs: a full grid reuses them
    rows = [tuple(map(int, levels)) for levels in grid.L9]
    for first, second in itertools.combinations(range(4), 2):  # every pair of levels exactly once
        assert sorted((row[first], row[second]) for row in rows) == sorted(itertools.product(range(3), repeat=2))
    assert {c.name.rsplit("-", 1)[1] for c in quick} == set(grid.MIXES)
    for prefix in ("10M-", "50M-", "300M-", "-10ms-", "-40ms-", "-100ms-", "-0.5bdp-", "-2bdp-", "-16bdp-"):
        assert sum(prefix in f"-{c.name}" for c in quick) == 6, prefix


def test_cases_are_selected_by_pattern_and_a_pattern_matching_nothing_is_refused() -> None:
    assert [c.name for c in grid.select(grid.grid(), ["300M-10ms-*-bbr"])] == [
        "300M-10ms-0.5bdp-bbr",
        "300M-10ms-2bdp-bbr",
        "300M-10ms-16bdp-bbr",
    ]
    with pytest.raises(ScenarioError, match=r"^--cases '1G-\*': matches no case; allowed: "):
        grid.select(grid.grid(), ["1G-*"])


# --- the errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sim", "kernel", "floor", "expected"),
    [
        (10.5, 10.0, 0.1, (0.05, False)),  # relative to the kernel
        (9.0, 10.0, 0.1, (-0.1, False)),
        (25.0, 0.0, 10.0, (2.5, True)),  # the kernel retransmitted nothing: relative to 10
        (0.0, 0.0, 10.0, (0.0, True)),  # two zeros agree
        (3.0, 4.0, 10.0, (-0.1, True)),  # below the floor both: (3 - 4) / 10
        (None, 4.0, 10.0, (None, False)),  # nothing to compare
    ],
)
def test_relative_errors_and_the_floor_for_values_near_zero(sim, kernel, floor, expected) -> None:
    error, floored = relative_error(sim, kernel, floor)
    assert (None if error is None else pytest.approx(error)) == expected[0] and floored == expected[1]


def test_samples_fall_in_the_bin_of_their_middle_even_when_sampled_late() -> None:
    # 50 ms samples over 20 s: 10 Mbit/s up to t = 10 s (the sample at exactly 10 s included),
    # 20 after; each sample 3 ms late, as the kernel's are.
    t = [round(0.05 * k, 2) + 0.003 for k in range(1, 401)]
    frame = pl.DataFrame({"t_s": t, "flow": [0] * 400, "goodput_mbps": [10.0 if k <= 200 else 20.0 for k in range(1, 401)]})
    bins = binned(frame, 10.0, ["flow"], 0.05)
    assert bins["t_s"].to_list() == [10.0, 20.0] and bins["goodput_mbps"].to_list() == [10.0, 20.0]
    halves = binned(frame, 0.5, ["flow"], 0.05)
    assert halves.height == 40 and halves["t_s"][0] == 0.5 and halves["t_s"][-1] == 20.0


def summary(goodputs: list[float], rtt: float, retransmits: int, queue: float, valid: bool = True) -> dict[str, Any]:
    flows = [
        {"id": i, "cc": "cubic", "goodput_mbps": g, "rtt_mean_ms": rtt, "rtt_p95_ms": 1.5 * rtt, "retransmits": retransmits}
        for i, g in enumerate(goodputs)
    ]
    jain = sum(goodputs) ** 2 / (len(goodputs) * sum(g * g for g in goodputs))
    links = [{"id": "left->right", "utilization": 1.0, "drops": 0, "backlog_mean_pkts": queue}]
    return {"flows": flows, "links": links, "fairness_jain": jain, "run": {"validity": {"valid": valid, "reasons": []}}}


def series(goodput: list[float], srtt: list[float]) -> pl.DataFrame:
    """One flow in 0.5 s bins over 20 s: the first 10 s at goodput[0] and srtt[0], then [1]."""
    return pl.DataFrame(
        {
            "t_s": [0.5 * k for k in range(1, 41)],
            "flow": [0] * 40,
            "goodput_mbps": [goodput[k > 20] for k in range(1, 41)],
            "srtt_ms": [srtt[k > 20] for k in range(1, 41)],
            "cwnd_pkts": [10.0] * 40,
        }
    )


QUEUE = pl.DataFrame({"t_s": [0.5 * k for k in range(1, 41)], "backlog_pkts": [0.0] * 40})


def test_case_errors_worked_by_hand() -> None:
    sim = Measured(summary([9.8], 52.0, 12, 0.5), series([9.0, 10.6], [50.0, 54.0]), QUEUE)
    kernel = Measured(summary([10.0], 50.0, 0, 0.2), series([10.0, 10.0], [50.0, 50.0]), QUEUE)
    errors = {(r["metric"], r["t_s"]): r for r in case_errors("c", sim, kernel).iter_rows(named=True)}
    assert errors[("goodput_mbps", None)]["error"] == pytest.approx(-0.02)  # (9.8 - 10) / 10
    assert errors[("rtt_mean_ms", None)]["error"] == pytest.approx(0.04)  # (52 - 50) / 50
    assert errors[("rtt_p95_ms", None)]["error"] == pytest.approx(0.04)  # (78 - 75) / 75
    # The kernel retransmitted nothing: 12 against 0 is 12 / 10 (the floor).
    assert (errors[("retransmits", None)]["error"], errors[("retransmits", None)]["floored"]) == (pytest.approx(1.2), True)
    # 0.5 against 0.2 queued packets, both below one: (0.5 - 0.2) / 1.
    assert errors[("queue_mean_pkts", None)]["error"] == pytest.approx(0.3)
    assert errors[("fairness_jain", None)]["error"] == 0.0
    # The 10 s bins: goodput 9 then 10.6 against 10; smoothed RTT 50 then 54 against 50.
    assert errors[("flow_goodput_10s", 10.0)]["error"] == pytest.approx(-0.1)
    assert errors[("flow_goodput_10s", 20.0)]["error"] == pytest.approx(0.06)
    assert errors[("flow_srtt_10s", 10.0)]["error"] == 0.0
    assert errors[("flow_srtt_10s", 20.0)]["error"] == pytest.approx(0.08)


def test_bbr_goodput_in_20_second_bins_against_a_factor_of_1_5() -> None:
    def run(bbr: list[float], cubic: float) -> Measured:
        t = [0.5 * k for k in range(1, 81)]  # 40 s
        flows = pl.DataFrame(
            {
                "t_s": t + t,
                "flow": [0] * 80 + [1] * 80,
                "goodput_mbps": [bbr[k > 40] for k in range(1, 81)] + [cubic] * 80,
            }
        )
        described = summary([sum(bbr) / 2, cubic], 20.0, 0, 10.0)
        described["flows"][0]["cc"] = "bbr"
        return Measured(described, flows, QUEUE)

    bins = bbr_goodput_bins(run([30.0, 70.0], 5.0), run([40.0, 40.0], 60.0))
    assert bins["flow"].to_list() == [0, 0] and bins["t_s"].to_list() == [20.0, 40.0]  # BBR only
    assert bins["ratio"].to_list() == [pytest.approx(0.75), pytest.approx(1.75)]
    assert bins["within"].to_list() == [True, False]


def test_invalid_kernel_runs_are_kept_out_of_the_statistics() -> None:
    kernel = Measured(summary([10.0], 50.0, 100, 20.0), series([10.0, 10.0], [50.0, 50.0]), QUEUE)
    good = Measured(summary([10.1], 51.0, 100, 20.0), series([10.1, 10.1], [51.0, 51.0]), QUEUE)
    bad = Measured(summary([5.0], 200.0, 100, 20.0), series([5.0, 5.0], [200.0, 200.0]), QUEUE)
    broken = Measured(summary([10.0], 50.0, 100, 20.0, valid=False), kernel.flows, QUEUE)
    errors = pl.concat([case_errors("good", good, kernel), case_errors("broken", bad, broken)])
    assert errors.filter(pl.col("case") == "broken")["kernel_valid"].to_list() == [False] * (6 + 2 * 2)
    table = {row["metric"]: row for row in summary_table(errors).iter_rows(named=True)}
    goodput, rtt, p95 = table["goodput"], table["mean RTT"], table["p95 RTT"]
    assert (goodput["cases"], goodput["median_abs_error"], goodput["worst_case"]) == (1, pytest.approx(0.01), "good")
    assert (goodput["median_limit"], goodput["worst_limit"], goodput["meets_limits"]) == (0.02, 0.10, True)
    assert (rtt["median_abs_error"], rtt["meets_limits"]) == (pytest.approx(0.02), True)
    assert (p95["worst_limit"], p95["meets_limits"]) == (None, True)
    assert table["goodput per flow, 10 s bins"]["values"] == 2
    assert table["goodput per flow, 10 s bins"]["worst_case"] == "good flow 0 at 0–10 s"
    assert table["retransmissions"]["meets_limits"] is None  # the issue sets no limit


def test_a_run_measured_again_is_unchanged_so_both_backends_share_one_estimator(two_flow_result) -> None:
    once = measured(two_flow_result)
    srtts = two_flow_result.flows.filter(pl.col("flow") == 1)["srtt_ms"].drop_nulls()
    assert once.summary["flows"][1]["rtt_mean_ms"] == pytest.approx(srtts.mean())
    # The emulation's summary is already over the sampled smoothed RTT: measuring one changes nothing.
    kernel_like = tcplab.Result(two_flow_result.scenario, once.summary, two_flow_result.flows, two_flow_result.links, None)
    assert measured(kernel_like).summary == once.summary
    assert measured(kernel_like).flows.equals(once.flows)


# --- runs, with a stand-in kernel ----------------------------------------------------------------


def stand_in_kernel(monkeypatch: pytest.MonkeyPatch, invalid: frozenset[str] = frozenset()) -> list[str]:
    """This machine as root with every algorithm, and a kernel that is the simulator itself
    (every error is then 0), its runs of the cases named in `invalid` marked invalid; returns
    the names of the runs made."""
    made = []
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(emu_run, "require_host", lambda: None)
    monkeypatch.setattr(emu_run, "available_algorithms", lambda: ["reno", "cubic", "bbr"])

    def emulate(document: dict[str, Any]) -> tcplab.Result:
        result = tcplab.run(document)
        name = document["name"].removeprefix("validate-")
        made.append(name)
        reasons = ["other processes used 1.70 cores during the run"] if name in invalid else []
        result.summary["run"].update(backend="emu", validity={"valid": not reasons, "reasons": reasons})
        return result

    monkeypatch.setattr(emu_run, "emulate", emulate)
    return made


def test_a_validation_compares_resumes_and_retries_invalid_kernel_runs(monkeypatch, tmp_path: Path) -> None:
    made = stand_in_kernel(monkeypatch, invalid=frozenset({"10M-10ms-0.5bdp-2cubic"}))
    lines: list[str] = []
    done = run_validation(SHORT, tmp_path / "v", jobs=2, say=lines.append)
    assert made == ["10M-40ms-2bdp-cubic"] + ["10M-10ms-0.5bdp-2cubic"] * KERNEL_ATTEMPTS
    assert lines[-1] == (
        f"kernel 2/2 10M-10ms-0.5bdp-2cubic (attempt {KERNEL_ATTEMPTS}/{KERNEL_ATTEMPTS}):"
        " invalid: other processes used 1.70 cores during the run"
    )
    assert (done.sim.done, done.kernel_runs, done.invalid, done.missing) == (
        2,
        1 + KERNEL_ATTEMPTS,
        ["10M-10ms-0.5bdp-2cubic"],
        [],
    )
    valid = done.errors.filter(pl.col("kernel_valid"))
    assert set(valid["case"]) == {"10M-40ms-2bdp-cubic"} and valid["error"].abs().max() == 0.0
    goodput = done.summary.filter(pl.col("metric") == "goodput").row(0, named=True)
    assert (goodput["cases"], goodput["median_abs_error"], goodput["meets_limits"]) == (1, 0.0, True)
    for name in ("errors.parquet", "errors.csv", "summary.parquet", "summary.csv", "report.html", "validate.json"):
        assert (tmp_path / "v" / name).is_file(), name
    assert pl.read_parquet(tmp_path / "v" / "errors.parquet").equals(done.errors)
    assert len(list((tmp_path / "v" / "figures").glob("*.png"))) == 8 + 2 * 3  # distributions, 3 per case
    page = (tmp_path / "v" / "report.html").read_text()
    assert "10M-10ms-0.5bdp-2cubic" in page and "left out of the statistics" in page
    cached = {c.name: c for c in cache.read_cache(tmp_path / "v" / "kernel-cache")}
    assert set(cached) == {"10M-40ms-2bdp-cubic", "10M-10ms-0.5bdp-2cubic"}
    assert not cached["10M-10ms-0.5bdp-2cubic"].kernel.valid
    # Again: the simulator's runs and the valid kernel run are kept; the invalid one is retried.
    made.clear()
    again = run_validation(SHORT, tmp_path / "v", jobs=2, say=lines.append)
    assert (again.sim.skipped, again.sim.done) == (2, 0)
    assert made == ["10M-10ms-0.5bdp-2cubic"] * KERNEL_ATTEMPTS


def test_the_report_reads_bench_d_in_20_second_bins(monkeypatch, tmp_path: Path) -> None:
    stand_in_kernel(monkeypatch)
    done = run_validation(grid.with_duration([grid.deep_buffer_case()], "40s"), tmp_path / "d", jobs=1, say=lambda line: None)
    page = done.report.read_text()
    assert f"{grid.DEEP_BUFFER_CASE}: BBR's goodput in 20 s bins" in page
    assert "2 of 2 bins within a factor 1.5 of the kernel's." in page


def test_the_command_runs_a_case_and_refuses_its_directory_for_other_settings(run_cli, monkeypatch, tmp_path: Path) -> None:
    stand_in_kernel(monkeypatch)
    arguments = ["validate", "--cases", "10M-40ms-2bdp-cubic", "-o", tmp_path / "v", "-j", "1"]
    outcome = run_cli(*arguments, "--duration", "1s")
    assert outcome.code == 0, outcome.stderr
    assert "kernel 1/1 10M-40ms-2bdp-cubic (attempt 1/3): valid\n" in outcome.stderr
    assert outcome.stdout.startswith("metric ") and outcome.stdout.rstrip().endswith(f"report: {tmp_path / 'v' / 'report.html'}")
    changed = run_cli(*arguments, "--duration", "2s")
    assert changed.code == 2 and len(changed.stderr.splitlines()) == 1
    assert changed.stderr.startswith(
        "error: " + str(tmp_path / "v") + ": holds case 10M-40ms-2bdp-cubic run with other settings;"
    )
    assert run_cli(*arguments, "--duration", "2s", "--overwrite").code == 0
    kernel_run = json.loads((tmp_path / "v" / "kernel" / "10M-40ms-2bdp-cubic" / "summary.json").read_text())
    assert kernel_run["run"]["sim_seconds"] == 2.0
    assert run_cli(*arguments, "--duration", "2s").code == 0  # the same settings again: resumed
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"other: exists, is not empty and holds no validation"):
        run_validation(SHORT, tmp_path / "other", jobs=1, say=lambda line: None)


# --- the command line ----------------------------------------------------------------------------


def test_dry_run_prints_the_plan_and_runs_nothing(run_cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    outcome = run_cli("validate", "--quick", "--dry-run")
    assert outcome.code == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert lines[1].split() == ["10M-10ms-0.5bdp-reno", "newreno", "20s"]
    assert sum(line.endswith(" 20s") for line in lines) == 18
    assert "18 cases" in outcome.stdout and "Kernel time: 360 s of runs" in outcome.stdout
    assert (
        "This machine: cannot run it: tcplab validate runs every case on this machine's kernel, which needs root"
        in outcome.stdout
    )
    full = run_cli("validate", "--dry-run")
    assert (
        "163 cases" in full.stdout and f"{grid.DEEP_BUFFER_CASE}" in full.stdout and "Kernel time: 3540 s of runs" in full.stdout
    )
    assert list(tmp_path.iterdir()) == []


def test_without_root_it_refuses_in_one_line_with_exit_2(run_cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    outcome = run_cli("validate", "--quick", "-o", tmp_path / "v")
    assert outcome.code == 2
    assert outcome.stderr.startswith("error: tcplab validate runs every case on this machine's kernel, which needs root")
    assert len(outcome.stderr.splitlines()) == 1 and not (tmp_path / "v").exists()


def test_a_kernel_without_an_algorithm_of_the_grid_is_refused_in_one_line(run_cli, monkeypatch, tmp_path: Path) -> None:
    stand_in_kernel(monkeypatch)
    monkeypatch.setattr(emu_run, "available_algorithms", lambda: ["reno", "cubic"])
    outcome = run_cli("validate", "-o", tmp_path / "v")
    assert outcome.code == 2 and len(outcome.stderr.splitlines()) == 1
    assert outcome.stderr.startswith("error: this kernel lacks bbr (tcp_available_congestion_control: reno cubic); ")
    assert not (tmp_path / "v").exists()
    # Cases without it are fine: the plan says the machine is ready.
    ready = run_cli("validate", "--cases", "*-cubic", "--dry-run")
    assert "This machine: ready" in ready.stdout


def test_from_cache_cannot_be_combined_with_what_changes_the_runs(run_cli, tmp_path: Path) -> None:
    outcome = run_cli("validate", "--from-cache", CACHE_FIXTURE, "--quick")
    assert outcome.code == 2 and outcome.stderr.startswith("error: --from-cache redraws the cached cases as they ran")
    missing = run_cli("validate", "--from-cache", tmp_path, "-o", tmp_path / "out")
    assert missing.code == 2 and f"--from-cache {tmp_path}: not a kernel cache" in missing.stderr


# --- the kernel cache ----------------------------------------------------------------------------


def test_the_comparison_is_redrawn_from_a_kernel_cache_without_root(run_cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    cached = cache.read_cache(CACHE_FIXTURE)
    assert [c.name for c in cached] == ["10M-40ms-2bdp-cubic", "50M-10ms-2bdp-bbr+cubic"]
    assert all(c.kernel.summary["run"]["backend"] == "emu" and c.kernel.valid for c in cached)
    outcome = run_cli("validate", "--from-cache", CACHE_FIXTURE, "-o", tmp_path / "redrawn", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("metric ")
    assert re.search(r"^goodput\s+2\s+\d+\.\d %\s+2\.0 %", outcome.stdout, re.MULTILINE), outcome.stdout
    errors = pl.read_parquet(tmp_path / "redrawn" / "errors.parquet")
    assert set(errors["case"]) == {c.name for c in cached}
    # 5 s runs: one 10 s bin per flow, three flows in all.
    assert errors.filter(pl.col("metric") == "flow_goodput_10s").height == 3
    assert (tmp_path / "redrawn" / "report.html").is_file()
    one = redraw(CACHE_FIXTURE, tmp_path / "one", patterns=["50M-*"], jobs=1)
    assert set(one.errors["case"]) == {"50M-10ms-2bdp-bbr+cubic"}


def test_the_cache_keeps_what_the_comparison_needs(tmp_path: Path) -> None:
    cached = cache.read_cache(CACHE_FIXTURE)
    cache.write_cache(tmp_path / "copy", cached)
    again = cache.read_cache(tmp_path / "copy")
    for before, after in zip(cached, again, strict=True):
        assert (before.name, before.scenario, before.kernel.summary) == (after.name, after.scenario, after.kernel.summary)
        assert before.kernel.flows.equals(after.kernel.flows) and before.kernel.queue.equals(after.kernel.queue)
    assert json.loads(json.dumps(cached[0].scenario))["duration"] == "5s"
    assert sum(f.stat().st_size for f in CACHE_FIXTURE.iterdir()) < 64_000
