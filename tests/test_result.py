"""tcplab.Result and tcplab.run: frames built from the core's columns, saving and loading a run
directory (atomically), determinism from Python, seeds, and progress callbacks."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import tcplab
from tcplab import Result, ScenarioError, plots

from .conftest import TINY_SCENARIO

FLOW_COLUMNS = {
    "t_s": pl.Float64,
    "flow": pl.UInt32,
    "cwnd_pkts": pl.Float64,
    "ssthresh_pkts": pl.Float64,
    "inflight_pkts": pl.Float64,
    "srtt_ms": pl.Float64,
    "min_rtt_ms": pl.Float64,
    "pacing_rate_mbps": pl.Float64,
    "delivery_rate_mbps": pl.Float64,
    "goodput_mbps": pl.Float64,
    "retransmits": pl.Float64,
    "cc_state": pl.String,
}
LINK_COLUMNS = {
    "t_s": pl.Float64,
    "link": pl.String,
    "backlog_pkts": pl.Float64,
    "backlog_bytes": pl.Float64,
    "drops": pl.Float64,
    "ce_marks": pl.Float64,
}
RTT_COLUMNS = {"t_s": pl.Float64, "flow": pl.UInt32, "rtt_ms": pl.Float64}
RADIO_COLUMNS = {
    "t_s": pl.Float64,
    "ue": pl.String,
    **{
        name: pl.Float64
        for name in (
            "sinr_db los cqi mcs capacity_mbps rlc_backlog_bytes rlc_drops harq_retx ul_mcs"
            " ul_capacity_mbps ul_rlc_backlog_bytes ul_rlc_drops ul_harq_retx"
        ).split()
    },
}
LOSSY = {"topology.bottleneck.loss": 0.02}


def assert_same_result(actual: Result, expected: Result) -> None:
    assert actual.scenario == expected.scenario
    assert actual.summary == expected.summary
    assert_frame_equal(actual.flows, expected.flows)
    assert_frame_equal(actual.links, expected.links)
    for name in ("rtt", "radio", "wifi"):
        if getattr(expected, name) is None:
            assert getattr(actual, name) is None
        else:
            assert_frame_equal(getattr(actual, name), getattr(expected, name))


def assert_same_series(actual: Result, expected: Result) -> None:
    for name in ("flows", "links", "rtt"):
        if getattr(expected, name) is not None:
            assert_frame_equal(getattr(actual, name), getattr(expected, name))


# --- frames from the core's columns --------------------------------------------------------


def test_packed_columns_become_typed_series_and_nan_becomes_null() -> None:
    raw = {
        "scenario": '{"name": "x", "stop": null}',
        "summary": '{"flows": []}',
        "flows": {
            "t_s": ("f64", struct.pack("<3d", 0.0, 0.5, 1.0)),
            "flow": ("u32", struct.pack("<3I", 0, 1, 4_000_000_000)),
            "ssthresh_pkts": ("f64", struct.pack("<3d", float("nan"), 20.0, float("nan"))),
            "cc_state": ["open", "recovery", "open"],
        },
        "links": {"t_s": ("f64", b""), "link": []},
        "rtt": None,
    }
    result = Result.from_core(raw)
    assert result.scenario == {"name": "x"}, "absent optional keys are left out"
    assert result.flows.schema == pl.Schema(
        {"t_s": pl.Float64, "flow": pl.UInt32, "ssthresh_pkts": pl.Float64, "cc_state": pl.String}
    )
    assert result.flows["flow"].to_list() == [0, 1, 4_000_000_000]
    assert result.flows["ssthresh_pkts"].to_list() == [None, 20.0, None]
    assert result.links.height == 0 and result.links.columns == ["t_s", "link"]
    assert result.rtt is None


def test_a_run_has_every_contract_column_with_its_type(tiny_result: Result) -> None:
    assert dict(tiny_result.flows.schema) == FLOW_COLUMNS
    assert dict(tiny_result.links.schema) == LINK_COLUMNS
    assert tiny_result.rtt is None, "record.rtt is off in the tiny scenario"
    assert tiny_result.flows.height >= 2 / 0.05, "one row per sampling interval"


def test_recorded_rtt_samples_become_a_frame(two_flow_result: Result) -> None:
    assert two_flow_result.rtt is not None
    assert dict(two_flow_result.rtt.schema) == RTT_COLUMNS
    assert set(two_flow_result.rtt["flow"].unique()) == {0, 1}
    assert (two_flow_result.rtt["rtt_ms"] >= 20.0).all(), "no RTT below the 20 ms base RTT"


def test_missing_values_are_null_never_nan(tiny_result: Result) -> None:
    for frame in (tiny_result.flows, tiny_result.links):
        for name in frame.columns:
            if frame[name].dtype == pl.Float64:
                assert not frame[name].is_nan().any(), name
    assert tiny_result.flows["ssthresh_pkts"][0] is None, "infinite until the first loss"


def test_the_summary_follows_the_contract(two_flow_result: Result) -> None:
    summary = two_flow_result.summary
    assert [flow["cc"] for flow in summary["flows"]] == ["cubic", "bbr"]
    assert {"goodput_mbps", "rtt_p95_ms", "retransmits", "bytes_acked"} <= summary["flows"][0].keys()
    assert any(link["id"] == "left->right" for link in summary["links"])
    assert 0.5 <= summary["fairness_jain"] <= 1.0
    assert summary["run"]["tcplab_version"] == tcplab.__version__
    assert summary["run"]["sim_seconds"] == pytest.approx(2.0)


def test_repr_is_short(tiny_result: Result) -> None:
    assert repr(tiny_result) == "<Result 'tiny': 1 flows, 2.0 s simulated, seed 1>"


# --- tcplab.run ----------------------------------------------------------------------------


def test_same_seed_gives_identical_frames() -> None:
    first = tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY)
    second = tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY)
    assert_same_series(first, second)
    assert first.summary["flows"] == second.summary["flows"]


def test_another_seed_on_a_lossy_link_gives_different_frames() -> None:
    first = tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY)
    second = tcplab.run(TINY_SCENARIO, seed=4, overrides=LOSSY)
    assert not first.flows.equals(second.flows)


def test_the_seed_argument_is_recorded_in_the_scenario_and_the_summary() -> None:
    result = tcplab.run(TINY_SCENARIO, seed=7)
    assert result.scenario["seed"] == 7
    assert result.summary["run"]["seed"] == 7


def test_overrides_and_keyword_settings_reach_the_simulator() -> None:
    result = tcplab.run(TINY_SCENARIO, overrides={"flows.0.cc": "bbr"}, duration="1s")
    assert result.summary["flows"][0]["cc"] == "bbr"
    assert result.summary["run"]["sim_seconds"] == pytest.approx(1.0)
    assert result.flows["t_s"].max() <= 1.0


def test_a_bad_scenario_raises_scenario_error_before_running() -> None:
    with pytest.raises(ScenarioError, match=r"^flows\.0\.cc: "):
        tcplab.run(TINY_SCENARIO, overrides={"flows.0.cc": "cubbic"})


def test_progress_is_reported_as_fractions_that_grow_to_one() -> None:
    fractions: list[float] = []
    tcplab.run(TINY_SCENARIO, progress=fractions.append)
    assert fractions, "progress was never called"
    assert all(0.0 <= f <= 1.0 for f in fractions)
    assert fractions == sorted(fractions)


def test_an_exception_in_the_progress_callback_aborts_the_run() -> None:
    class Stop(Exception):
        pass

    def stop(fraction: float) -> None:
        raise Stop

    with pytest.raises(Stop):
        tcplab.run(TINY_SCENARIO, progress=stop)


def test_run_with_output_saves_the_directory(tmp_path: Path) -> None:
    result = tcplab.run(TINY_SCENARIO, output=tmp_path / "out", plots=False)
    assert_same_result(tcplab.load(tmp_path / "out"), result)
    assert not (tmp_path / "out" / "plots").exists()


# --- save and load -------------------------------------------------------------------------


def test_save_writes_every_file_and_load_reads_back_an_equal_result(two_flow_result: Result, tmp_path: Path) -> None:
    directory = two_flow_result.save(tmp_path / "run")
    names = {path.name for path in directory.iterdir()}
    assert names == {
        "scenario.toml",
        "summary.json",
        "flows.parquet",
        "links.parquet",
        "rtt.parquet",
        "plots",
    }
    assert {path.name for path in (directory / "plots").iterdir()} == {f"{name}.png" for name in plots.FIGURES}
    assert_same_result(tcplab.load(directory), two_flow_result)


def test_without_recorded_rtt_there_is_no_rtt_file(tiny_result: Result, tmp_path: Path) -> None:
    directory = tiny_result.save(tmp_path / "run", plots=False)
    assert not (directory / "rtt.parquet").exists()
    assert tcplab.load(directory).rtt is None
    assert not (directory / "radio.parquet").exists()
    assert tcplab.load(directory).radio is None


def test_a_cell_run_has_a_radio_series_per_user_and_interval(mmwave_result: Result) -> None:
    radio = mmwave_result.radio
    assert dict(radio.schema) == RADIO_COLUMNS
    assert radio["ue"].unique().to_list() == ["ue0"]
    assert radio.height == 100  # 1 s at 10 ms
    blocked = radio.filter(pl.col("los") == 0)["t_s"]
    assert (blocked.min(), blocked.max()) == (0.25, 0.74)
    los_sinr = radio.filter((pl.col("los") == 1) & (pl.col("t_s") > 0))["sinr_db"].mean()
    assert los_sinr - radio.filter(pl.col("t_s") > 0.3)["sinr_db"].min() > 25
    # The interval counters add up to the run's totals.
    user = mmwave_result.summary["radio"][0]
    assert radio["rlc_drops"].sum() == user["rlc_drops"] > 0
    assert radio["harq_retx"].sum() == user["harq_retx"]


WIFI_COLUMNS = {
    "t_s": pl.Float64,
    "bss": pl.String,
    "station": pl.String,
    **{name: pl.Float64 for name in "phy_rate_mbps collisions retries mac_drops phy_drops airtime_busy".split()},
}


def test_a_wifi_run_has_a_series_per_device_and_a_bss_summary(wifi_result: Result, tmp_path: Path) -> None:
    wifi = wifi_result.wifi
    assert dict(wifi.schema) == WIFI_COLUMNS
    assert wifi["station"].unique(maintain_order=True).to_list() == ["left", "s0", "s1"]
    assert set(wifi["bss"]) == {"left"} and wifi.height == 3 * 100
    assert set(wifi["phy_rate_mbps"]) == {39.0}
    assert wifi["airtime_busy"].is_between(0.0, 1.0).all() and wifi["airtime_busy"].max() > 0.1
    bss = wifi_result.summary["wifi"]
    assert [device["device"] for device in bss["devices"]] == ["left", "s0", "s1"]
    per_device = wifi.group_by("station", maintain_order=True).agg(pl.col("retries").sum())
    assert per_device["retries"].to_list() == [d["retries"] for d in bss["devices"]]
    assert wifi_result.radio is None
    directory = wifi_result.save(tmp_path / "run")
    assert (directory / "wifi.parquet").exists() and (directory / "plots" / "wifi.png").exists()
    assert_same_result(tcplab.load(directory), wifi_result)


def test_the_radio_series_is_saved_and_loaded(mmwave_result: Result, tmp_path: Path) -> None:
    directory = mmwave_result.save(tmp_path / "run")
    assert (directory / "radio.parquet").exists() and (directory / "plots" / "radio.png").exists()
    assert_same_result(tcplab.load(directory), mmwave_result)


def test_the_saved_scenario_reproduces_the_run(tmp_path: Path) -> None:
    original = tcplab.run(TINY_SCENARIO, seed=11, overrides=LOSSY, output=tmp_path / "run", plots=False)
    rerun = tcplab.run(tmp_path / "run" / "scenario.toml")
    assert rerun.scenario == original.scenario
    assert_same_series(rerun, original)


def test_save_creates_missing_parents_and_accepts_an_empty_directory(tiny_result: Result, tmp_path: Path) -> None:
    tiny_result.save(tmp_path / "a" / "b" / "run", plots=False)
    (tmp_path / "empty").mkdir()
    tiny_result.save(tmp_path / "empty", plots=False)
    assert (tmp_path / "empty" / "summary.json").exists()


def test_save_refuses_a_non_empty_directory(tiny_result: Result, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not empty"):
        tiny_result.save(tmp_path / "run")
    assert [path.name for path in (tmp_path / "run").iterdir()] == ["notes.txt"]


def test_save_refuses_a_file(tiny_result: Result, tmp_path: Path) -> None:
    (tmp_path / "run").write_text("a file")
    with pytest.raises(NotADirectoryError):
        tiny_result.save(tmp_path / "run", overwrite=True)


def test_overwrite_replaces_the_whole_directory(tiny_result: Result, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.json").write_text("{}")  # an earlier run
    (tmp_path / "run" / "stale.txt").write_text("old")
    tiny_result.save(tmp_path / "run", overwrite=True, plots=False)
    assert not (tmp_path / "run" / "stale.txt").exists()
    assert_same_result(tcplab.load(tmp_path / "run"), tiny_result)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"], "nothing left beside it"


def plots_failing_with(failure: BaseException):
    """A stand-in for plots.save_plots that writes half a picture, then fails."""

    def save_plots(result: Result, directory: Path, progress: object = None) -> None:
        directory.mkdir()
        (directory / "throughput.png").write_bytes(b"half a picture")
        raise failure

    return save_plots


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_a_save_that_fails_midway_leaves_nothing(
    tiny_result: Result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    monkeypatch.setattr(plots, "save_plots", plots_failing_with(failure))
    with pytest.raises(type(failure)):
        tiny_result.save(tmp_path / "run")
    assert list(tmp_path.iterdir()) == [], "neither the directory nor a staging directory remains"


def test_a_failed_overwrite_leaves_the_earlier_directory_untouched(
    tiny_result: Result, two_flow_result: Result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny_result.save(tmp_path / "run")
    before = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    monkeypatch.setattr(plots, "save_plots", plots_failing_with(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        two_flow_result.save(tmp_path / "run", overwrite=True)
    after = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before
