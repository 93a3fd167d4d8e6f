"""tcplab.sweep: campaigns expand, validate before running, run on a local pool or Dask with
identical results, resume after an interruption, add only new runs when an axis changes,
record failures without stopping, and aggregate means with 95 % confidence intervals."""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path

import polars as pl
import pytest
from tcplab import ScenarioError
from tcplab.sweep import Campaign
from tcplab.sweep.store import t95

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


def test_a_changed_axis_adds_only_the_new_runs(tmp_path: Path) -> None:
    Campaign(campaign_file(tmp_path), tmp_path / "out").run(jobs=2)
    wider = CAMPAIGN.replace('["50pkt", "330pkt"]', '["50pkt", "330pkt", "100pkt"]')
    state = Campaign(campaign_file(tmp_path, wider), tmp_path / "out").run(jobs=2)
    assert (state.total, state.skipped, state.done) == (18, 12, 6)


def test_a_lost_dask_worker_still_completes_every_run_exactly_once(tmp_path: Path) -> None:
    from dask.distributed import Client, LocalCluster

    heavier = CAMPAIGN.replace('"duration" = ["2s"]', '"duration" = ["60s"]')
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        killed = []

        def kill_one_worker(state) -> None:
            if not killed and state.done >= 1:
                os.kill(pids[0], 9)
                killed.append(pids[0])

        campaign = Campaign(campaign_file(tmp_path, heavier), tmp_path / "out")
        state = campaign.run(engine="dask", scheduler=cluster.scheduler_address, progress=kill_one_worker)
    assert killed and state.done == 12 and state.failed == 0
    index = campaign.index()
    assert index.height == 12 and set(index["status"]) == {"ok"}
    runs = list((tmp_path / "out" / "runs").iterdir())
    assert len(runs) == 12 and not [p for p in runs if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('"duration" = ["2s"]', '"flows.0.ccx" = ["cubic"]'), "axes.flows.0.ccx = 'cubic': flows.0.ccx"),
        (('"duration" = ["2s"]', '"duration" = []'), "axes.duration: must be a non-empty list of values"),
        (('"duration" = ["2s"]', '"topology.pairs" = ["two"]'), "axes.topology.pairs = 'two': topology.pairs"),
        (('seeds = 3', 'seeds = 0'), "seeds: 0; a number of replications"),
        (('name = "small"', 'name = "small"\nengine = "x"'), "engine: unknown campaign key"),
        (('"{flows.0.cc}-', '"{cc}-'), "labels.case: {cc} is not an axis"),
    ],
)
def test_a_malformed_campaign_is_one_line_before_anything_runs(run_cli, tmp_path: Path, change, expected) -> None:
    path = campaign_file(tmp_path, CAMPAIGN.replace(*change))
    with pytest.raises(ScenarioError) as error:
        Campaign(path, tmp_path / "out")
    assert str(error.value).startswith(expected) and "\n" not in str(error.value)
    outcome = run_cli("sweep", path, "-o", tmp_path / "out")
    assert outcome.code == 2 and outcome.stderr.startswith(f"error: {expected}")
    assert not (tmp_path / "out").exists()


def test_a_failed_run_is_recorded_and_the_others_complete(run_cli, tmp_path: Path) -> None:
    campaign = Campaign(campaign_file(tmp_path), tmp_path / "out")
    victim = campaign.runs[4].run_id
    (tmp_path / "out" / "runs").mkdir(parents=True)
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
        Campaign(campaign_file(tmp_path, text.replace('"30Mbps"]', ']').replace(', ]', ']')), tmp_path / "x")


def test_the_progress_line_counts_runs_on_a_terminal() -> None:
    import io

    from tcplab.cli import SweepProgressLine
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


def test_reproduce_lists_the_studies_and_runs_one(run_cli, tmp_path: Path) -> None:
    listing = run_cli("reproduce")
    assert listing.code == 0 and "siad-mmwave" in listing.stdout and "wifi-cubic-bbr" in listing.stdout
    outcome = run_cli("reproduce", "rtt-lens", "--quick", "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("rtt-lens (--quick: shortened runs, a first look only): 6 runs")
    index = pl.read_parquet(tmp_path / "out" / "index.parquet")
    assert sorted(set(index["cc"])) == ["bbr", "cubic"] and sorted(set(index["seed"])) == [1, 2, 3]
    assert run_cli("reproduce", "no-such-study").code == 2
