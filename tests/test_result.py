"""tcplab.Result and tcplab.run: frames built from the core's columns as the series schema
(tcplab.series) declares them, saving and loading a run directory (atomically), determinism from
Python, seeds, and progress callbacks."""

from __future__ import annotations

import struct
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import tcplab
from tcplab import Result, ScenarioError, plots, series

from .conftest import TINY_SCENARIO

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
        "series": {
            "flows": {
                "t_s": ("f64", struct.pack("<3d", 0.0, 0.5, 1.0)),
                "flow": ("u32", struct.pack("<3I", 0, 1, 4_000_000_000)),
                "ssthresh_pkts": ("f64", struct.pack("<3d", float("nan"), 20.0, float("nan"))),
                "cc_state": ["open", "recovery", "open"],
            },
            "links": {"t_s": ("f64", b""), "link": []},
        },
    }
    result = Result.from_core(raw)
    assert result.scenario == {"name": "x"}, "absent optional keys are left out"
    assert result.flows.schema == pl.Schema(
        {"t_s": pl.Float64, "flow": pl.UInt32, "ssthresh_pkts": pl.Float64, "cc_state": pl.String}
    )
    assert result.flows["flow"].to_list() == [0, 1, 4_000_000_000]
    assert result.flows["ssthresh_pkts"].to_list() == [None, 20.0, None]
    assert result.links.height == 0 and result.links.columns == ["t_s", "link"]
    assert result.rtt is None and result.radio is None and result.wifi is None


def assert_schema(frame: pl.DataFrame | None, name: str) -> None:
    """`frame` has exactly the columns the schema declares for series `name`, in its order."""
    assert frame is not None, name
    assert list(frame.schema.items()) == list(series.frame_schema(name).items()), name


@pytest.mark.parametrize(
    ("fixture", "recorded"),
    [
        ("tiny_result", {"flows", "links"}),
        ("two_flow_result", {"flows", "links", "rtt"}),
        ("mmwave_result", {"flows", "links", "radio"}),
        ("wifi_result", {"flows", "links", "wifi"}),
    ],
)
def test_a_run_has_the_series_it_records_with_exactly_their_schema_columns(
    fixture: str, recorded: set[str], request: pytest.FixtureRequest
) -> None:
    result: Result = request.getfixturevalue(fixture)
    frames = {name: getattr(result, name) for name in series.series_names()}
    assert {name for name, frame in frames.items() if frame is not None} == recorded
    for name in recorded:
        assert_schema(frames[name], name)


def test_a_run_has_one_row_per_flow_and_sampling_interval(tiny_result: Result) -> None:
    assert tiny_result.flows.height >= 2 / 0.05


# Dimensionless f64 columns (flags, indices, fractions): the only ones whose unit may be "" besides
# the u32 indices and the str names and labels. Every other column names its unit, and a column
# whose name ends in a unit suffix declares that unit.
DIMENSIONLESS = {
    ("flows", "bbr_pacing_gain"),
    ("flows", "bbr_cwnd_gain"),
    ("radio", "los"),
    ("radio", "cqi"),
    ("radio", "mcs"),
    ("radio", "ul_mcs"),
    ("wifi", "airtime_busy"),
    ("flow_groups", "jain_index"),
}
UNIT_SUFFIXES = {"_s": "s", "_ms": "ms", "_mbps": "Mbit/s", "_db": "dB", "_pkts": "packets", "_bytes": "bytes"}


def test_every_column_has_a_meaning_and_a_unit() -> None:
    assert {"flows", "links", "rtt", "radio", "wifi"} <= set(series.series_names())
    for name in series.series_names():
        for column in series.columns(name):
            where = f"{name}.{column.name}"
            assert column.dtype in ("f64", "u32", "str"), where
            assert column.meaning.strip() and column.meaning.endswith("."), where
            suffix = next((s for s in UNIT_SUFFIXES if column.name.endswith(s)), None)
            if suffix is not None:
                assert column.unit == UNIT_SUFFIXES[suffix], where
            if column.unit == "":
                assert column.dtype != "f64" or (name, column.name) in DIMENSIONLESS, f"{where} needs a unit"
            else:
                assert column.dtype == "f64" and (name, column.name) not in DIMENSIONLESS, where


def test_recorded_rtt_samples_become_a_frame(two_flow_result: Result) -> None:
    assert two_flow_result.rtt is not None
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


def test_sized_flows_have_completion_times_in_the_summary_and_its_table(sized_flows_result: Result) -> None:
    from tcplab.tables import format_summary

    summary = sized_flows_result.summary
    fct = summary["fct"]
    finished = sorted(f["completion_s"] * 1e3 for f in summary["flows"][:6])
    assert (fct["flows"], fct["completed"], fct["unfinished"]) == (7, 6, 1)
    assert (fct["p50_ms"], fct["max_ms"]) == (pytest.approx(finished[2]), pytest.approx(finished[5]))
    assert fct["by_cc"]["cubic"]["unfinished"] == 1 and fct["by_cc"]["bbr"]["flows"] == 3
    assert [b["bin"] for b in fct["by_size"]] == ["<100KB", "100KB-10MB", ">=10MB"]
    assert fct["by_size"][2]["unfinished"] == 1
    rows = {line.split("  ")[0].strip(): line.split() for line in format_summary(sized_flows_result).splitlines()}
    assert rows["all sized flows"][3:] == [
        "7",
        "6",
        "1",
        f"{finished[2]:.1f}",
        f"{finished[5]:.1f}",
        f"{finished[5]:.1f}",
        f"{finished[5]:.1f}",
    ]
    assert rows[">=10MB"][1:] == ["1", "0", "1", "-", "-", "-", "-"]
    assert "FCT of" in rows


def test_repr_is_short(tiny_result: Result) -> None:
    assert repr(tiny_result) == "<Result 'tiny': 1 flows, 2.0 s simulated, seed 1>"


# --- tcplab.run ----------------------------------------------------------------------------


def test_same_seed_gives_identical_frames() -> None:
    first = tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY)
    second = tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY)
    assert_same_series(first, second)
    assert first.summary["flows"] == second.summary["flows"]


def test_two_threads_give_the_results_of_one() -> None:
    one, two = (tcplab.run(TINY_SCENARIO, seed=3, overrides=LOSSY, threads=n) for n in (1, 2))
    assert (one.summary["run"]["threads"], two.summary["run"]["threads"]) == (1, 2)
    assert_same_series(two, one)
    assert {**two.summary, "run": None} == {**one.summary, "run": None}


@pytest.mark.parametrize("threads", [0, -1, True, 1.5, "2"])
def test_a_thread_count_that_is_not_a_positive_integer_is_refused_in_one_line(threads: object) -> None:
    with pytest.raises(ValueError, match=r"^threads: .+ is not a thread count; allowed: 1 or more$"):
        tcplab.run(TINY_SCENARIO, threads=threads)  # type: ignore[arg-type]


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


def test_a_wifi_run_has_a_series_per_device_and_a_bss_summary(wifi_result: Result, tmp_path: Path) -> None:
    wifi = wifi_result.wifi
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


def test_flows_recorded_in_groups_are_saved_and_loaded(tmp_path: Path) -> None:
    grouped = tcplab.run(TINY_SCENARIO, overrides={"record.flows": "groups", "record.links": "shared"}, plots=False)
    each = tcplab.run(TINY_SCENARIO)
    assert grouped.flows.is_empty() and list(grouped.flows.columns) == list(each.flows.columns)
    assert grouped.flow_groups is not None and each.flow_groups is None
    assert grouped.flow_groups.columns == list(series.frame_schema("flow_groups"))
    # One flow: its group's goodput is its goodput, its only link directions are its own.
    assert grouped.flow_groups["goodput_mbps"].to_list() == each.flows["goodput_mbps"].to_list()
    assert grouped.links.is_empty() and grouped.summary["links"] == each.summary["links"]
    directory = grouped.save(tmp_path / "run")
    assert (directory / "flow_groups.parquet").exists() and (directory / "plots" / "throughput.png").exists()
    assert_same_result(tcplab.load(directory), grouped)


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
