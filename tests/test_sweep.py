"""tcplab.sweep: campaigns expand, validate before running, run on a local pool or Dask with
identical results, resume after an interruption, add only new runs when an axis changes,
record failures without stopping, and aggregate means with 95 % confidence intervals. A sweep
stops at once on SIGINT or SIGTERM, and leaves no process behind even when killed."""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.metrics import metrics
from tcplab.sweep import Campaign, engines
from tcplab.sweep.campaign import MAX_RUNS
from tcplab.sweep.store import is_reserved_column, t95

from .conftest import REPOSITORY

# 2 algorithms x 2 buffers x 3 seeds = 12 runs; the lossy link makes the seeds matter.
CAMPAIGN = """
name = "small"
base = "rtt-lens"
seeds = 3
[axes]
"flows.0.cc" = ["cubic", "bbr"]
"topology.bottleneck.buffer" = ["50pkt", "330pkt"]
"topology.bottleneck.loss" = [0.002]
"duration" = ["2s"]
[labels]
case = "{flows.0.cc}-{topology.bottleneck.buffer}"
"""


def campaign_file(tmp_path: Path, text: str = CAMPAIGN) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_campaign_runs_every_combination_and_seed_once(tmp_path: Path) -> None:
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    state = campaign.run(jobs=2)
    assert (state.total, state.done, state.failed, state.skipped) == (12, 12, 0, 0)
    index = pl.read_parquet(tmp_path / "out" / "index.parquet")
    assert index.height == 12 and set(index["status"]) == {"ok"}
    assert index["run_id"].n_unique() == 12 and sorted(set(index["seed"])) == [1, 2, 3]
    assert sorted(set(index["case"])) == ["bbr-330pkt", "bbr-50pkt", "cubic-330pkt", "cubic-50pkt"]
    assert len(list((tmp_path / "out" / "runs").iterdir())) == 12
    assert (tmp_path / "out" / "campaign.toml").read_text() == CAMPAIGN


def test_local_and_dask_give_identical_index_tables(tmp_path: Path) -> None:
    local = Campaign(campaign_file(tmp_path), tmp_path / "local")
    local.run(jobs=2)
    dask = Campaign(campaign_file(tmp_path), tmp_path / "dask")
    dask.run(jobs=2, engine="dask")
    a = pl.read_parquet(tmp_path / "local" / "index.parquet")
    b = pl.read_parquet(tmp_path / "dask" / "index.parquet")
    assert a.equals(b)
    assert a["goodput_mbps"].n_unique() > 4, "seeds change the lossy runs"


def test_a_second_invocation_runs_only_what_is_missing(tmp_path: Path) -> None:
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    campaign.run(jobs=2)
    before = campaign.index()
    lost = sorted((tmp_path / "out" / "runs").iterdir())[:3]
    for directory in lost:  # as if the first invocation had been interrupted
        for file in directory.iterdir():
            file.unlink()
        directory.rmdir()
    again = Campaign(campaign_file(tmp_path), tmp_path / "out").run(jobs=2)
    assert (again.skipped, again.done) == (9, 3)
    assert campaign.index().equals(before)
    assert Campaign(campaign_file(tmp_path), tmp_path / "out").run(jobs=2).done == 0


def test_what_killed_saves_left_is_removed(tmp_path: Path) -> None:
    """A worker killed while saving leaves a staging directory and a lock file beside the run;
    the next invocation removes them, even one with nothing to run (so nothing to save)."""
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    campaign.run(jobs=2)
    gone = subprocess.Popen(["true"])
    gone.wait()
    runs = tmp_path / "out" / "runs"
    staging = runs / f".{campaign.runs[0].run_id}.partial-{gone.pid}-0123abcd"
    staging.mkdir()
    (staging / "summary.json").write_text("{")
    (runs / f".{campaign.runs[0].run_id}.lock").write_text(f"tcplab {gone.pid}\n")
    assert campaign.run(jobs=2).done == 0
    assert sorted(p.name for p in runs.iterdir()) == sorted(r.run_id for r in campaign.runs)


def test_a_changed_axis_adds_only_the_new_runs(tmp_path: Path) -> None:
    Campaign(campaign_file(tmp_path), tmp_path / "out").run(jobs=2)
    wider = CAMPAIGN.replace('["50pkt", "330pkt"]', '["50pkt", "330pkt", "100pkt"]')
    state = Campaign(campaign_file(tmp_path, wider), tmp_path / "out").run(jobs=2)
    assert (state.total, state.skipped, state.done) == (18, 12, 6)


DASK_ATTEMPTS = 3


def test_a_lost_dask_worker_still_completes_every_run_exactly_once(tmp_path: Path) -> None:
    """Dask's own timeouts (a worker or nanny starting, connecting, answering: seconds to tens
    of seconds) can expire on a loaded machine: that is retried, then skipped, never failed."""
    reason = ""
    for attempt in range(DASK_ATTEMPTS):
        directory = tmp_path / f"attempt-{attempt}"
        try:
            killed, campaign, state = sweep_losing_a_dask_worker(directory)
            break
        except (TimeoutError, OSError, RuntimeError) as error:  # a cluster that did not start in time
            # is a RuntimeError, a connection that timed out or closed an OSError
            reason = f"{type(error).__name__}: {error}"
    else:
        pytest.skip(f"Dask timed out {DASK_ATTEMPTS} times, the machine is too loaded: {reason}")
    assert killed and state.done == 12 and state.failed == 0
    index = campaign.index()
    assert index.height == 12 and set(index["status"]) == {"ok"}
    runs = list((directory / "out" / "runs").iterdir())
    assert len(runs) == 12 and not [p for p in runs if p.name.startswith(".")]


def sweep_losing_a_dask_worker(directory: Path):
    """Runs the campaign (60 s runs) on a LocalCluster of two workers, one killed after the first run."""
    from dask.distributed import Client, LocalCluster

    directory.mkdir()
    heavier = CAMPAIGN.replace('"duration" = ["2s"]', '"duration" = ["60s"]')
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        pids = list(client.run(os.getpid).values())
        killed = []

        def kill_one_worker(state) -> None:
            if not killed and state.done >= 1:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])

        campaign = Campaign(campaign_file(directory, heavier), directory / "out")
        state = campaign.run(engine="dask", scheduler=cluster.scheduler_address, progress=kill_one_worker)
    return killed, campaign, state


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('"duration" = ["2s"]', '"flows.0.ccx" = ["cubic"]'), "axes.flows.0.ccx = 'cubic': flows.0.ccx"),
        (('"duration" = ["2s"]', '"duration" = []'), "axes.duration: must be a non-empty list of values"),
        (('"duration" = ["2s"]', '"duration" = 5'), "axes.duration: must be a non-empty list of values"),
        (('"duration" = ["2s"]', '"duration" = [{ a = 1 }]'), "axes.duration = {'a': 1}: duration"),
        (('"duration" = ["2s"]', '"duration" = ["2s", "2s"]'), "axes.duration: '2s' is listed twice; allowed: distinct"),
        (('"duration" = ["2s"]', '"topology.pairs" = ["two"]'), "axes.topology.pairs = 'two': topology.pairs"),
        (('"duration" = ["2s"]', '"seed" = [1, 2]'), "axes.seed: sets the seed; allowed: seeds = N"),
        (('"duration" = ["2s"]', '"runs" = { a = { duration = "1s" } }'), "axes.runs: a column of the index has this name"),
        (("seeds = 3", "seeds = 0"), "seeds: 0; allowed: a number of replications"),
        (("seeds = 3", "seeds = 1000000"), f"seeds: 1000000; allowed: a number of replications from 1 to {MAX_RUNS}"),
        (("seeds = 3", "seeds = 99999999999999999999"), "seeds: 99999999999999999999; allowed"),
        (("seeds = 3", "seeds = 30000"), f"axes: 4 combinations x 30000 seeds = 120000 runs; allowed: at most {MAX_RUNS} runs"),
        (("seeds = 3", "seeds = [1, 2, 1]"), "seeds: 1 is listed twice; allowed: distinct seeds"),
        (("seeds = 3", "seeds = [-1]"), "seeds: seed -1: not a seed; allowed: an integer from 0 to 2^64-1"),
        (("seeds = 3", "seeds = [1.5]"), "seeds: seed 1.5: not a seed"),
        (("seeds = 3", 'seeds = "3"'), "seeds: '3'; allowed: a number of replications"),
        (("seeds = 3", "seeds = 3\ncombine = 5"), "combine: 5; allowed: cross, zip"),
        (('name = "small"', 'name = "small"\nengine = "x"'), "engine: unknown campaign key"),
        (('name = "small"', 'name = "../escaped"'), "name: '../escaped' contains '/'"),
        (('name = "small"', "name = 5"), "name: 5; allowed: a name for one directory"),
        (('base = "rtt-lens"', "base = 5"), "base: 5; allowed: a scenario file, a study name or an inline table"),
        (('base = "rtt-lens"', 'base = ["rtt-lens"]'), "base: ['rtt-lens']; allowed: a scenario file"),
        (('base = "rtt-lens"', "base = {}"), "campaign run {'flows.0.cc': 'cubic', "),
        (('"{flows.0.cc}-', '"{cc}-'), "labels.case: {cc} is not an axis"),
        (('case = "{flows.0.cc}-{topology.bottleneck.buffer}"', "case = 5"), "labels.case: 5; allowed: a text template"),
        (
            ('case = "{flows.0.cc}-', 'duration = "{flows.0.cc}-'),
            "labels.duration: an axis has this name; allowed: a name no axis has",
        ),
        (
            ('case = "{flows.0.cc}-', 'goodput_mbps = "{flows.0.cc}-'),
            "labels.goodput_mbps: a column of the index has this name; reserved: run_id, seed",
        ),
        (('case = "{flows.0.cc}-', 'seed = "{flows.0.cc}-'), "labels.seed: a column of the index has this name"),
        (
            [('[labels]\ncase = "{flows.0.cc}-{topology.bottleneck.buffer}"', ""), ("seeds = 3", "seeds = 3\nlabels = 5")],
            "labels: 5; allowed: a table",
        ),
    ],
)
def test_a_malformed_campaign_is_one_line_before_anything_runs(run_cli, tmp_path: Path, change, expected) -> None:
    text = CAMPAIGN
    for old, new in [change] if isinstance(change, tuple) else change:
        assert old in text
        text = text.replace(old, new)
    path = campaign_file(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        Campaign(path, tmp_path / "out")
    assert str(error.value).startswith(expected) and "\n" not in str(error.value)
    outcome = run_cli("sweep", path, "-o", tmp_path / "out")
    assert outcome.code == 2 and outcome.stderr.startswith(f"error: {expected}")
    assert len(outcome.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda path: path.write_bytes(b'base = "\xff"\n'), "cannot read: not UTF-8 text"),
        (lambda path: path.mkdir(), "not a regular file; allowed: a campaign .toml file"),
        (lambda path: os.mkfifo(path), "not a regular file; allowed: a campaign .toml file"),  # reading it would wait
        (lambda path: path.symlink_to(path), "cannot read: Too many levels of symbolic links"),
        (lambda path: None, "cannot read: No such file or directory"),
    ],
    ids=["not-utf8", "directory", "fifo", "symlink-loop", "missing"],
)
def test_a_campaign_file_that_cannot_be_read_is_one_line(run_cli, tmp_path: Path, make, expected) -> None:
    path = tmp_path / "campaign.toml"
    make(path)
    outcome = run_cli("sweep", path, "-o", tmp_path / "out")
    assert outcome.code == 2 and outcome.stderr == f"error: {path}: {expected}\n"
    assert run_cli("sweep", "/dev/null", "-o", tmp_path / "out").stderr.startswith("error: /dev/null: not a regular file")


def test_every_metric_column_is_reserved(tiny_result, wifi_result) -> None:
    """Labels and axes cannot take a metric's name, so none can replace its column."""
    for result in (tiny_result, wifi_result):
        for column in metrics(result.summary, result.scenario):
            assert is_reserved_column(column) and is_reserved_column(f"{column}_mean") and is_reserved_column(f"{column}_ci95"), (
                column
            )
    assert not is_reserved_column("case") and not is_reserved_column("flows.0.cc")


def test_a_failed_run_is_recorded_and_the_others_complete(run_cli, tmp_path: Path) -> None:
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    victim = campaign.runs[4].run_id
    (tmp_path / "out" / "runs").mkdir(parents=True)
    (tmp_path / "out" / "campaign.toml").write_text(CAMPAIGN)  # the campaign's own directory
    (tmp_path / "out" / "runs" / victim).write_text("in the way")  # its directory cannot be written
    outcome = run_cli("sweep", tmp_path / "campaign.toml", "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 1
    assert "12 runs, 0 already done, 11 run now, 1 failed" in outcome.stdout
    assert f"failed {victim}:" in outcome.stderr
    index = pl.read_parquet(tmp_path / "out" / "index.parquet")
    failed = index.filter(pl.col("status") == "failed")
    assert failed["run_id"].to_list() == [victim] and failed["error"][0]
    assert index.filter(pl.col("status") == "ok").height == 11


def test_the_table_gives_means_and_student_t_confidence_intervals(tmp_path: Path) -> None:
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    campaign.run(jobs=2)
    table = campaign.table()
    assert table.height == 4 and set(table["runs"]) == {3}
    index = campaign.index()
    for row in table.iter_rows(named=True):
        values = index.filter(pl.col("case") == row["case"])["goodput_mbps"].to_list()
        assert math.isclose(row["goodput_mbps_mean"], statistics.mean(values))
        want = t95(2) * statistics.stdev(values) / math.sqrt(3)
        assert math.isclose(row["goodput_mbps_ci95"], want, rel_tol=1e-9, abs_tol=1e-12)


def test_the_cli_prints_the_table(run_cli, tmp_path: Path) -> None:
    outcome = run_cli("sweep", campaign_file(tmp_path), "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("small: 12 runs, 0 already done, 12 run now, 0 failed")
    assert "goodput_mbps" in outcome.stdout and " ± " in outcome.stdout and "cubic-50pkt" in outcome.stdout
    figure = tmp_path / "out" / "delay-throughput.png"
    assert outcome.stdout.rstrip().endswith(f"wrote {figure}") and figure.stat().st_size > 0
    assert not list((tmp_path / "out").glob("*.partial"))
    again = run_cli("sweep", campaign_file(tmp_path), "-o", tmp_path / "nofig", "-j", "2", "--no-plots")
    assert again.code == 0 and not (tmp_path / "nofig" / "delay-throughput.png").exists()


def test_the_delay_throughput_figure_places_each_combination_by_its_means(tmp_path: Path) -> None:
    """Colour by algorithm, marker by the second axis, a panel per value of the third: each
    combination's marker at (mean p95 RTT, mean goodput), its seeds as dots, delay decreasing."""
    from tcplab.plots.campaign import MARKERS, delay_throughput_figure
    from tcplab.plots.figures import algorithm_colour

    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    campaign.run(jobs=2)
    index, table = campaign.index(), campaign.table()
    axes = ["flows.0.cc", "topology.bottleneck.buffer", "topology.bottleneck.loss"]
    figure = delay_throughput_figure("small", index, table, axes)
    (panel,) = figure.axes  # one loss value: one panel
    means = {(line.get_color(), line.get_marker()): tuple(line.get_xydata()[0]) for line in panel.lines}
    for row in table.iter_rows(named=True):
        key = (algorithm_colour(row["flows.0.cc"]), MARKERS[["50pkt", "330pkt"].index(row["topology.bottleneck.buffer"])])
        assert means[key] == pytest.approx((row["rtt_p95_ms_mean"], row["goodput_mbps_mean"]))
    assert sum(len(dots.get_offsets()) for dots in panel.collections) == len(index)
    assert panel.get_xscale() == "log" and panel.xaxis_inverted()
    two = delay_throughput_figure("small", index, table, ["flows.0.cc", "topology.bottleneck.loss", "topology.bottleneck.buffer"])
    assert [a.get_title() for a in two.axes] == ["buffer = 50pkt", "buffer = 330pkt"]


def test_each_seed_draws_its_own_flow_group_workload(tmp_path: Path) -> None:
    """Sizes and start times a flow group draws come from the seed: each seed's run is the
    base resolved with that seed, as `tcplab run --seed` would resolve it."""
    text = """
seeds = 2
[base]
duration = "1s"
[base.topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", buffer = "50pkt" }
[[base.flows]]
cc = "cubic"
count = 3
start = { uniform = ["0s", "0.5s"] }
bytes = { uniform = ["10KB", "100KB"] }
[axes]
"topology.bottleneck.rate" = ["10Mbps", "20Mbps"]
"""
    campaign = Campaign(campaign_file(tmp_path, text), tmp_path / "out")
    sizes = {
        (run.params["topology.bottleneck.rate"], run.seed): [f["bytes"] for f in run.scenario["flows"]] for run in campaign.runs
    }
    assert sizes[("10Mbps", 1)] != sizes[("10Mbps", 2)] and sizes[("10Mbps", 1)] == sizes[("20Mbps", 1)]
    for run in campaign.runs:
        alone = tcplab.resolve(
            campaign.spec.base, {"topology.bottleneck.rate": run.params["topology.bottleneck.rate"]}, seed=run.seed
        )
        assert run.scenario == alone


def test_an_inline_base_and_zipped_axes(tmp_path: Path) -> None:
    text = """
seeds = [5]
combine = "zip"
[base]
duration = "1s"
[base.topology]
kind = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", buffer = "50pkt" }
[[base.flows]]
cc = "cubic"
[axes]
"flows.0.cc" = ["cubic", "bbr", "reno"]
"topology.bottleneck.rate" = ["10Mbps", "20Mbps", "30Mbps"]
"""
    campaign = Campaign(campaign_file(tmp_path, text), tmp_path / "out")
    assert campaign.spec.name == "campaign" and [r.seed for r in campaign.runs] == [5, 5, 5]
    assert [tuple(r.params.values()) for r in campaign.runs] == [("cubic", "10Mbps"), ("bbr", "20Mbps"), ("reno", "30Mbps")]
    campaign.run(jobs=1)
    goodputs = campaign.index()["goodput_mbps"].to_list()
    assert goodputs[0] < 10 < goodputs[1] < 20 < goodputs[2] < 30
    with pytest.raises(ScenarioError, match=r"^axes: zipped axes need lists of one length"):
        Campaign(campaign_file(tmp_path, text.replace('"30Mbps"]', "]").replace(", ]", "]")), tmp_path / "x")


def test_the_progress_line_counts_runs_on_a_terminal() -> None:
    import io

    from tcplab.progress import SweepProgressLine
    from tcplab.sweep import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    line = SweepProgressLine()
    line.stream = Terminal()
    line(Progress(total=10, skipped=2, done=3, failed=1, started=0.0))
    assert "sweep: 3 done, 1 failed, 4 remaining  ETA" in line.stream.getvalue()


def test_named_axes_apply_their_override_tables(tmp_path: Path) -> None:
    text = """
base = "rtt-lens"
[axes.size.small]
"topology.bottleneck.buffer" = "20pkt"
"duration" = "1s"
[axes.size.large]
"topology.bottleneck.buffer" = "200pkt"
"duration" = "2s"
"""
    campaign = Campaign(campaign_file(tmp_path, text), tmp_path / "out")
    assert [r.params for r in campaign.runs] == [{"size": "small"}, {"size": "large"}]
    assert [r.scenario["duration"] for r in campaign.runs] == ["1s", "2s"]
    bad = text.replace('"200pkt"', '"lots"')
    with pytest.raises(ScenarioError, match=r"^axes.size = 'large': topology.bottleneck.buffer"):
        Campaign(campaign_file(tmp_path, bad), tmp_path / "out")


def test_every_study_is_a_campaign_of_its_cases_and_seeds() -> None:
    from tcplab import studies
    from tcplab.sweep.campaign import expand, study_campaign

    for study in studies.all_studies().values():
        spec = study_campaign(study.path, quick=True)
        runs = expand(spec)
        assert len(runs) == len(study.cases) * len(spec.seeds), study.name
        assert {"-".join(map(str, r.params.values())) for r in runs} == set(study.cases)
        # A combination is resolved once and its seeds set after: as if resolved with each seed.
        for seed in spec.seeds:
            alone = expand(dataclasses.replace(spec, seeds=[seed]))
            assert [(r.scenario, r.run_id) for r in alone] == [(r.scenario, r.run_id) for r in runs if r.seed == seed]


def test_reproduce_lists_the_studies_and_runs_one(run_cli, tmp_path: Path) -> None:
    listing = run_cli("reproduce")
    assert listing.code == 0 and "siad-mmwave" in listing.stdout and "wifi-cubic-bbr" in listing.stdout
    outcome = run_cli("reproduce", "rtt-lens", "--quick", "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("rtt-lens (--quick: shortened runs, a first look only): 18 runs")
    index = pl.read_parquet(tmp_path / "out" / "index.parquet")
    assert sorted(set(index["cc"])) == ["bbr", "cubic"] and sorted(set(index["seed"])) == [1, 2, 3]
    assert run_cli("reproduce", "no-such-study").code == 2


def test_a_run_whose_worker_dies_is_recorded_and_the_others_complete(tmp_path: Path) -> None:
    """A local worker killed (as by the OOM killer) fails only the run it was given."""
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    killed: list[int] = []

    def kill_a_worker(state) -> None:
        if not killed:  # every worker has just been given a run
            killed.append(multiprocessing.active_children()[0].pid)
            os.kill(killed[0], signal.SIGKILL)

    state = campaign.run(jobs=2, progress=kill_a_worker)
    assert killed and state.done + state.failed == 12 and state.failed <= 1
    errors = campaign.index().filter(pl.col("status") == "failed")["error"].to_list()
    assert all(e.startswith("WorkerDied: the worker process running it died (killed by SIGKILL)") for e in errors)
    assert Campaign(campaign_file(tmp_path), tmp_path / "out").run(jobs=2).done == state.failed
    assert set(campaign.index()["status"]) == {"ok"}


def test_a_worker_that_dies_between_runs_is_replaced_and_no_run_is_lost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed right after it answered, before anyone knows it died (its process still
    reads as alive, its pipe is broken): its next run goes to a new worker."""
    answer = engines._Worker.outcome
    died: list[int] = []

    def answer_then_die(worker: engines._Worker) -> engines.Outcome:
        outcome = answer(worker)
        if not died:
            died.append(worker.process.pid)
            worker.process.kill()
            assert worker.connection.poll(30)  # its end of the pipe is closed: it is gone
            monkeypatch.setattr(worker.process, "is_alive", lambda: True)  # not yet reaped
        return outcome

    monkeypatch.setattr(engines._Worker, "outcome", answer_then_die)
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    state = campaign.run(jobs=2)
    assert died and state.done == 12 and state.failed == 0
    assert set(campaign.index()["status"]) == {"ok"}


# Runs of minutes each (a 10 Gbps dumbbell for 600 s): a sweep that does not stop at once would
# take far longer than the bounds below.
LONG_CAMPAIGN = """
name = "long"
seeds = 8
[base]
duration = "600s"
sample_interval = "1s"
[base.topology]
kind = "dumbbell"
bottleneck = { rate = "10Gbps", delay = "10ms", buffer = "2000pkt" }
[[base.flows]]
cc = "cubic"
"""
STOP_SECONDS = 30  # generous: the sweep stops in well under a second (Dask: about 5 s)
GONE_SECONDS = 20
MARKER = "TCPLAB_TEST_MARKER"


def marked_processes(marker: str) -> dict[int, bytes]:
    """The command lines of the live processes (zombies aside) whose environment holds `marker`."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or f"{MARKER}={marker}".encode() not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found[int(entry.name)] = (entry / "cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
    return found


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def start_long_sweep(tmp_path: Path, engine: str) -> tuple[subprocess.Popen[str], str]:
    """`tcplab sweep` of LONG_CAMPAIGN in its own session, as a terminal starts it (SIGINT
    handled), once its two workers are a second into their runs; and its marker."""
    marker = uuid.uuid4().hex
    command = [
        str(REPOSITORY / ".venv" / "bin" / "tcplab"),
        "sweep",
        str(campaign_file(tmp_path, LONG_CAMPAIGN)),
        "-o",
        str(tmp_path / "out"),
        "-j",
        "2",
        "--engine",
        engine,
    ]
    default_sigint = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    sweep = subprocess.Popen(
        [sys.executable, "-c", default_sigint, *command],
        env={**os.environ, MARKER: marker},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )

    def workers_busy() -> bool:
        workers = [pid for pid, cmdline in marked_processes(marker).items() if b"spawn_main" in cmdline]
        return len(workers) >= 2 and all(cpu_seconds(pid) > 2.0 for pid in workers)  # imports take about 1 s

    wait_until(workers_busy, 120)  # the signal must stop the sweep whatever it is doing: no assertion
    if sweep.poll() is not None:  # it ended by itself
        stderr = sweep.communicate()[1]
        if engine == "dask" and "failed to start" in stderr:
            pytest.skip(f"the Dask cluster did not start in time on this loaded machine: {stderr.splitlines()[-1]}")
        pytest.fail(f"the sweep ended before it was signalled: {stderr}")
    return sweep, marker


def stop_leftovers(marker: str) -> None:
    for pid in marked_processes(marker):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("engine", "signal_number", "to_group"),
    [
        ("local", signal.SIGINT, False),
        ("local", signal.SIGINT, True),  # Ctrl-C at a terminal signals the whole process group
        ("local", signal.SIGTERM, False),
        ("local", signal.SIGKILL, False),
        ("dask", signal.SIGINT, True),
        ("dask", signal.SIGKILL, False),
    ],
    ids=["local-sigint", "local-ctrl-c", "local-sigterm", "local-sigkill", "dask-ctrl-c", "dask-sigkill"],
)
def test_a_signalled_sweep_stops_at_once_and_leaves_no_process_or_partial_run(
    tmp_path: Path, engine, signal_number, to_group
) -> None:
    sweep, marker = start_long_sweep(tmp_path, engine)
    try:
        if to_group:
            os.killpg(sweep.pid, signal_number)
        else:
            sweep.send_signal(signal_number)
        try:
            _, stderr = sweep.communicate(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"{signal.Signals(signal_number).name}: the sweep or a process it started still ran after {STOP_SECONDS} s"
            )
        assert wait_until(lambda: not marked_processes(marker), GONE_SECONDS), marked_processes(marker)
    finally:  # whatever failed, end what is left: orphans hold the pipes `communicate` reads
        sweep.kill()
        stop_leftovers(marker)
        sweep.wait()
    runs = tmp_path / "out" / "runs"
    finished = {p.name for p in runs.iterdir()} if runs.is_dir() else set()
    assert not [name for name in finished if name.startswith(".")]  # no staging directory, no lock
    if signal_number == signal.SIGKILL:
        assert sweep.returncode == -signal.SIGKILL
        return
    assert sweep.returncode == 130 and stderr.splitlines()[-1] == "interrupted" and "Traceback" not in stderr, stderr
    index = pl.read_parquet(tmp_path / "out" / "index.parquet")  # consistent with the run directories
    assert index.height == 8 and set(index["status"]) <= {"ok", "missing"}
    assert set(index.filter(pl.col("status") == "ok")["run_id"]) == finished
