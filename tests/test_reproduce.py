"""tcplab.reproduce from Python (what `tcplab reproduce` runs), the choices of the CLI's
--backend/--engine/--format, and the example campaigns in scenarios/campaigns/."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tcplab import ScenarioError, cli
from tcplab.reproduce import Backend, FigureFormat, reproduce
from tcplab.sweep import ENGINES, Campaign, Progress

from .conftest import REPOSITORY, CliOutcome
from .test_cli import assert_bad_input

CAMPAIGNS = REPOSITORY / "scenarios" / "campaigns"


def test_a_study_reproduces_from_python_and_resumes(tmp_path: Path) -> None:
    counts: list[Progress] = []
    done = reproduce("rtt-lens", tmp_path / "out", quick=True, jobs=2, figure_formats=(), progress=counts.append)
    assert (done.runs.total, done.runs.done, done.runs.failed, done.failed) == (18, 18, 0, False)
    assert len(counts) == 18 and done.kernel == {}
    assert done.axes == ["cc", "loss"] and done.table["cc"].to_list() == ["cubic"] * 3 + ["bbr"] * 3
    assert done.report == tmp_path / "out" / "report.html" and done.report.is_file()
    assert not (tmp_path / "out" / "figures").exists()
    page = done.report.read_text(encoding="utf-8")
    published = page[page.index("<h2>Published vs tcplab</h2>") : page.index("<h2>Findings")]
    # rtt-lens's two published numbers, each beside its case's mean, in the study's unit
    bbr = done.table.filter(pl.col("cc") == "bbr")["srtt_mean_ms_mean"][0]
    assert "BBR settles near 50 ms of RTT" in published and f"{bbr:.4g}" in published
    assert f"{100 * (bbr - 50) / 50:+.1f} %" in published
    assert "CUBIC loses up to 2 % of its packets" in published and "0 to 2" in published
    meta = json.loads((tmp_path / "out" / "reproduce.json").read_text())
    assert (meta["study"], meta["quick"], meta["engine"], meta["jobs"], meta["figure_formats"]) == (
        "rtt-lens",
        True,
        "local",
        2,
        [],
    )
    again = reproduce("rtt-lens", tmp_path / "out", quick=True, jobs=2, figure_formats=(), report=False)
    assert (again.runs.skipped, again.runs.done, again.report) == (18, 0, None)
    assert again.table.equals(done.table)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"study": "nope"}, "nope: no such study (studies: "),
        ({"backend": "ns3"}, "--backend 'ns3': allowed: sim, emu, both"),
        ({"figure_formats": ["gif"]}, "--format 'gif': allowed: png, svg, pdf"),
        ({"backend": "both", "study": "siad-mmwave"}, "--backend emu: siad-mmwave needs radio models"),
    ],
)
def test_reproduce_refuses_bad_arguments_before_writing(tmp_path: Path, arguments: dict, message: str) -> None:
    with pytest.raises(ScenarioError) as error:
        reproduce(**{"study": "rtt-lens", "output": tmp_path / "out", **arguments})
    assert str(error.value).startswith(message)
    assert not (tmp_path / "out").exists()


# --- the CLI's choices --------------------------------------------------------------------------


def test_the_cli_choices_are_the_librarys() -> None:
    assert [engine.value for engine in cli.Engine] == list(ENGINES)
    assert [backend.value for backend in cli.RunBackend] == ["sim", "emu"]
    assert [backend.value for backend in Backend] == ["sim", "emu", "both"]
    assert [fmt.value for fmt in FigureFormat] == ["png", "svg", "pdf"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["run", "rtt-lens", "--backend", "ns3"], "'--backend': 'ns3' is not one of 'sim', 'emu'."),
        (["reproduce", "rtt-lens", "--backend", "ns3"], "'--backend': 'ns3' is not one of 'sim', 'emu', 'both'."),
        (["sweep", "c.toml", "--engine", "ray"], "'--engine': 'ray' is not one of 'local', 'dask'."),
        (["reproduce", "rtt-lens", "--engine", "ray"], "'--engine': 'ray' is not one of 'local', 'dask'."),
        (["reproduce", "rtt-lens", "--format", "gif"], "'--format': 'gif' is not one of 'png', 'svg', 'pdf'."),
        (["compare", "a", "b", "--format", "gif"], "'--format': 'gif' is not one of 'png', 'svg', 'pdf'."),
    ],
)
def test_a_bad_choice_is_one_line_listing_the_allowed_ones(run_cli, tmp_path: Path, arguments: list[str], message: str) -> None:
    outcome: CliOutcome = run_cli(*arguments, "-o", tmp_path / "out")
    assert_bad_input(outcome, f"error: Invalid value for {message} (see 'tcplab {arguments[0]} --help')")
    assert not (tmp_path / "out").exists()


def test_help_lists_the_choices(run_cli) -> None:
    assert "--backend sim|emu " in run_cli("run", "--help").stdout
    reproduce_help = run_cli("reproduce", "--help").stdout
    for choices in ("--backend sim|emu|both", "--engine local|dask", "--format png|svg|pdf"):
        assert choices in reproduce_help
    assert "--engine local|dask" in run_cli("sweep", "--help").stdout
    assert "--format png|svg|pdf" in run_cli("compare", "--help").stdout


def test_reproduce_needs_a_worker(run_cli, tmp_path: Path) -> None:
    assert_bad_input(run_cli("reproduce", "rtt-lens", "-j", "0", "-o", tmp_path / "out"), "error: --jobs 0: must be at least 1")
    assert not (tmp_path / "out").exists()


# --- the example campaigns ----------------------------------------------------------------------


def run_campaign(name: str, directory: Path) -> pl.DataFrame:
    campaign = Campaign(CAMPAIGNS / f"{name}.toml", directory)
    state = campaign.run(jobs=2)
    assert (state.failed, state.done) == (0, state.total)
    index = pl.read_parquet(directory / "index.parquet")
    assert index.height == len(campaign.runs) and set(index["status"]) == {"ok"}
    assert sorted(set(index["seed"])) == [1, 2, 3]
    return index


def test_the_buffers_campaign_shows_cubic_filling_the_buffer_and_bbr_not(tmp_path: Path) -> None:
    index = run_campaign("buffers", tmp_path / "buffers")
    assert index.height == 2 * 3 * 3
    rtt = {case: index.filter(pl.col("case") == case)["rtt_mean_ms"].mean() for case in set(index["case"])}
    assert rtt["cubic-50pkt"] < rtt["cubic-330pkt"] < rtt["cubic-1000pkt"]
    assert max(rtt[f"bbr-{buffer}"] for buffer in ("50pkt", "330pkt", "1000pkt")) < rtt["cubic-50pkt"]


def test_the_loss_campaign_shows_loss_based_algorithms_losing_goodput(tmp_path: Path) -> None:
    index = run_campaign("loss", tmp_path / "loss")
    assert index.height == 3 * 3 * 3
    goodput = index.group_by("flows.0.cc", "topology.bottleneck.loss").agg(pl.col("goodput_mbps").mean())
    mean = {(row["flows.0.cc"], row["topology.bottleneck.loss"]): row["goodput_mbps"] for row in goodput.iter_rows(named=True)}
    for cc in ("reno", "cubic"):
        assert mean[(cc, 0.0001)] > 2 * mean[(cc, 0.01)]
    assert mean[("bbr", 0.01)] > 2 * mean[("cubic", 0.01)]


def test_the_incast_campaign_shows_dctcp_keeping_the_fct_tail_short(tmp_path: Path) -> None:
    from tcplab.plots.campaign import fct_figure

    campaign = Campaign(CAMPAIGNS / "incast.toml", tmp_path / "incast")
    state = campaign.run(jobs=2)
    assert (state.failed, state.done) == (0, 4)
    index = pl.read_parquet(tmp_path / "incast" / "index.parquet")
    run = {(row["cc"], row["seed"]): row for row in index.iter_rows(named=True)}
    for seed in (1, 2):
        dctcp, cubic = run[("dctcp", seed)], run[("cubic", seed)]
        assert dctcp["fct_unfinished"] == cubic["fct_unfinished"] == 0
        # CUBIC's tail waits for the 200 ms minimum RTO; DCTCP's ECN keeps the port's queue
        # under its 200 packets, and its tail within a few milliseconds.
        assert dctcp["retransmits"] == 0 and cubic["retransmits"] > 0
        assert cubic["fct_p99_ms"] > 200 and dctcp["fct_p99_ms"] < 20
        assert dctcp["fct_p50_ms"] < 1 and cubic["fct_p50_ms"] < 1
    # Sized flows: the campaign draws their FCTs, each combination at its means, lower better.
    (panel,) = fct_figure("incast", index, campaign.table(), ["cc"]).axes
    table = campaign.table()
    means = sorted(value for line in panel.lines for value in line.get_xydata()[0])
    assert means == pytest.approx(sorted([*table["fct_p99_ms_mean"], *table["fct_p50_ms_mean"]]))
    assert panel.get_xscale() == panel.get_yscale() == "log" and panel.xaxis_inverted() and panel.yaxis_inverted()
    assert campaign.save_figure().name == "fct.png"


def test_import_tcplab_reaches_reproduce_and_sweep() -> None:
    import tcplab

    assert tcplab.reproduce.reproduce is reproduce and tcplab.sweep.Campaign is Campaign
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        tcplab.nope  # noqa: B018 - the attribute access is the test


def test_the_aqm_campaign_shows_the_aqms_holding_delay_where_drop_tail_fills_the_buffer(tmp_path: Path) -> None:
    index = run_campaign("aqm-sweep", tmp_path / "aqm")
    assert index.height == 3 * 5 * 2 * 3
    p95 = index.group_by("cc", "topology.bottleneck.queue", "topology.bottleneck.buffer").agg(pl.col("rtt_p95_ms").mean())
    rtt = {
        (r["cc"], r["topology.bottleneck.queue"], r["topology.bottleneck.buffer"]): r["rtt_p95_ms"]
        for r in p95.iter_rows(named=True)
    }
    # CUBIC fills an 8-BDP drop-tail buffer (~300 ms of queue over the 40 ms base RTT) ...
    assert rtt[("cubic", "droptail", "533pkt")] > 250
    # ... where CoDel, FQ-CoDel and PIE hold their targets whatever the buffer; NewReno's p95
    # keeps some of its slower slow-start overshoot, still well under drop tail's.
    for queue in ("codel", "fq_codel", "pie"):
        assert rtt[("cubic", queue, "533pkt")] < 100, (queue, rtt[("cubic", queue, "533pkt")])
        assert rtt[("newreno", queue, "533pkt")] < rtt[("newreno", "droptail", "533pkt")] / 1.5, queue
    assert (tmp_path / "aqm" / "index.parquet").exists()


def test_every_study_s_published_numbers_name_its_cases_and_metrics() -> None:
    import tomllib

    from tcplab.metrics import METRICS
    from tcplab.studies import all_studies, assumptions_of, published_of

    counts = {}
    for name, study in all_studies().items():
        document = tomllib.loads(study.path.read_text(encoding="utf-8"))
        counts[name] = len(published_of(document, name, METRICS))
        assumptions_of(document, name)
    assert counts == {"deep-buffer": 0, "mmwave-5cc": 1, "rtt-lens": 2, "siad-mmwave": 16, "wifi-cubic-bbr": 14}


def test_published_numbers_in_the_study_s_unit() -> None:
    from tcplab.studies import Published

    mib = Published("goodput", "text", {}, "goodput_mbps", "Mibit/s", 8.65102)
    # 9.07 Mbit/s is 9.07e6 / 1048576 = 8.649826 Mibit/s, 0.0138 % below the study's 8.65102
    assert abs(mib.from_metric(9.07) - 8.649826) < 1e-6
    assert abs(mib.difference(mib.from_metric(9.07)) + 0.000138) < 1e-6
    band = Published("loss", "text", {}, "retransmit_pct", "%", (0.0, 2.0))
    assert (band.difference(1.5), band.difference(3.0)) == (0.0, 0.5)


# A valid published entry of a study whose one axis is cc.
ENTRY = {"what": "x", "source": "text", "case": {"cc": "cubic"}, "metric": "goodput_mbps", "unit": "Mbit/s", "value": 1.0}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"assumptions": {"segment": "x"}}, "study.assumptions.segment: neither an axis (cc) nor a key the file sets"),
        ({"assumptions": {"cc": ""}}, "study.assumptions.cc must say what is assumed"),
        ({"published": [{"what": "x"}]}, "study.published.0 must have exactly the keys case, metric, source, unit, value, what"),
        ({"published": [dict(ENTRY, case={"cc": "reno"})]}, "study.published.0.case: cc = 'reno' is not a value of an axis"),
        (
            {"published": [dict(ENTRY, metric="speed")]},
            "study.published.0.metric: 'speed' is not a metric; allowed: goodput_mbps, ",
        ),
        (
            {"published": [dict(ENTRY, unit="ms")]},
            "study.published.0.unit: 'ms' does not fit goodput_mbps; allowed: Mbit/s, Mibit/s",
        ),
        ({"published": [dict(ENTRY, value=[3, 1])]}, "study.published.0.value must be a number or a range [low, high]"),
    ],
)
def test_a_bad_published_number_or_assumption_is_one_line(table: dict, message: str) -> None:
    from tcplab.metrics import METRICS
    from tcplab.studies import StudyFormatError, assumptions_of, published_of

    document = {"study": {"axes": {"cc": {"cubic": {}, "bbr": {}}}, **table}}
    with pytest.raises(StudyFormatError) as caught:
        published_of(document, "s", METRICS)
        assumptions_of(document, "s")
    assert str(caught.value).startswith(f"s: {message}") and "\n" not in str(caught.value)
