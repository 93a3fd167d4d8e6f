"""tcplab.plots: every figure is written as a non-empty PNG, titled with the scenario name,
labelled with units, and coloured by algorithm the same way in every figure and every run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from tcplab import Result
from tcplab.plots import FCT_FIGURES, FIGURES, RADIO_FIGURES, WIFI_FIGURES, save_plots
from tcplab.plots.figures import (
    ALGORITHM_COLOURS,
    algorithm_colour,
    backlog_figure,
    cwnd_figure,
    fct_figure,
    fct_points,
    flow_styles,
    nlos_spans,
    radio_figure,
    throughput_figure,
    wifi_figure,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def synthetic_result(algorithms: list[str], *, samples: int = 40, interval: float = 0.01) -> Result:
    """A Result with made-up series: goodput alternating 0 and 10 Mbps, a busy and an idle link."""
    times = np.arange(samples) * interval
    flows = pl.concat(
        pl.DataFrame(
            {
                "t_s": times,
                "flow": pl.Series([flow_id] * samples, dtype=pl.UInt32),
                "cwnd_pkts": np.full(samples, 10.0 + flow_id),
                "srtt_ms": np.full(samples, 40.0),
                "goodput_mbps": np.tile([0.0, 10.0], samples // 2),
            }
        )
        for flow_id in range(len(algorithms))
    )
    links = pl.DataFrame(
        {
            "t_s": np.repeat(times, 2),
            "link": ["left->right", "right->left"] * samples,
            "backlog_pkts": np.ravel([[float(i), 0.0] for i in range(samples)]),
        }
    )
    return Result(
        scenario={"name": "synthetic"},
        summary={"flows": [{"id": i, "cc": cc} for i, cc in enumerate(algorithms)]},
        flows=flows,
        links=links,
        rtt=None,
    )


def test_every_figure_is_saved_as_a_non_empty_png(two_flow_result: Result, tmp_path: Path) -> None:
    paths = save_plots(two_flow_result, tmp_path / "plots")
    assert [path.name for path in paths] == ["throughput.png", "rtt.png", "cwnd.png", "backlog.png"]
    for path in paths:
        assert path.read_bytes().startswith(PNG_SIGNATURE)
        assert path.stat().st_size > 10_000, f"{path.name} looks empty"


@pytest.mark.parametrize("name", list(FIGURES))
def test_figures_are_titled_with_the_scenario_and_label_their_units(two_flow_result: Result, name: str) -> None:
    axes = FIGURES[name](two_flow_result).axes[0]
    assert axes.get_title().startswith("two-flows: ")
    assert axes.get_xlabel() == "time (s)"
    assert any(unit in axes.get_ylabel() for unit in ("(Mbps", "(ms)", "(packets)"))
    assert axes.get_ylim()[0] == 0


def test_the_rtt_figure_shows_the_samples_when_they_were_recorded(two_flow_result: Result) -> None:
    axes = FIGURES["rtt"](two_flow_result).axes[0]
    assert "samples" in axes.get_title()
    assert len(axes.collections) == 2, "one cloud of samples per flow"


def test_each_algorithm_keeps_its_colour_and_flows_of_one_algorithm_differ_by_line_style() -> None:
    result = synthetic_result(["cubic", "bbr", "cubic"])
    lines = cwnd_figure(result).axes[0].lines
    assert [line.get_color() for line in lines] == [
        ALGORITHM_COLOURS["cubic"],
        ALGORITHM_COLOURS["bbr"],
        ALGORITHM_COLOURS["cubic"],
    ]
    assert lines[0].get_linestyle() != lines[2].get_linestyle()
    assert [line.get_label() for line in lines] == [
        "flow 0 (cubic)",
        "flow 1 (bbr)",
        "flow 2 (cubic)",
    ]


def test_flows_recorded_in_groups_are_drawn_one_line_per_group() -> None:
    times = np.arange(4) * 0.01
    groups = pl.DataFrame(
        {
            "t_s": np.repeat(times, 2),
            "cc": ["cubic", "bbr"] * 4,
            "stack": ["linux"] * 8,
            "flows_active": pl.Series([500, 500] * 4, dtype=pl.UInt32),
            "goodput_mbps": [400.0, 600.0] * 4,
            "cwnd_p50_pkts": [20.0, 30.0] * 4,
            "srtt_p50_ms": [25.0, 21.0] * 4,
        }
    )
    result = Result(
        scenario={"name": "many"},
        summary={"flows": [{"id": i, "cc": "cubic" if i % 2 == 0 else "bbr"} for i in range(1000)]},
        flows=pl.DataFrame(schema={"t_s": pl.Float64, "flow": pl.UInt32}),
        links=pl.DataFrame(schema={"t_s": pl.Float64, "link": pl.String, "backlog_pkts": pl.Float64}),
        rtt=None,
        flow_groups=groups,
    )
    lines = cwnd_figure(result).axes[0].lines
    assert [line.get_label() for line in lines] == [
        "cubic, median over up to 500 active flows",
        "bbr, median over up to 500 active flows",
    ]
    assert [line.get_color() for line in lines] == [ALGORITHM_COLOURS["cubic"], ALGORITHM_COLOURS["bbr"]]
    assert list(lines[1].get_ydata()) == [30.0] * 4
    figure = throughput_figure(result)
    assert figure.axes[0].get_title() == "many: goodput per group of flows"
    assert figure.axes[0].lines[0].get_label() == "cubic, sum over up to 500 active flows"


def test_the_colour_of_an_algorithm_does_not_depend_on_the_run() -> None:
    alone = flow_styles(synthetic_result(["bbr"]))[0].colour
    second = flow_styles(synthetic_result(["newreno", "bbr"]))[1].colour
    assert alone == second == ALGORITHM_COLOURS["bbr"]
    assert algorithm_colour("some-new-algorithm") == algorithm_colour("some-new-algorithm")
    assert len(set(ALGORITHM_COLOURS.values())) == len(ALGORITHM_COLOURS)


def test_goodput_is_averaged_over_100_ms() -> None:
    axes = throughput_figure(synthetic_result(["cubic"], interval=0.01)).axes[0]
    assert axes.get_ylabel() == "goodput (Mbps, 100 ms mean)"
    smoothed = axes.lines[0].get_ydata()
    assert smoothed[0] == 0.0
    assert np.allclose(smoothed[10:], 5.0), "alternating 0 and 10 Mbps averages to 5"


def test_the_backlog_figure_shows_only_links_that_queued() -> None:
    axes = backlog_figure(synthetic_result(["cubic"])).axes[0]
    assert [line.get_label() for line in axes.lines] == ["left->right"]


def test_a_result_without_samples_still_draws_and_says_so() -> None:
    empty = synthetic_result(["cubic"], samples=0)
    for make_figure in FIGURES.values():
        figure = make_figure(empty)
        assert isinstance(figure, Figure)
        assert "no samples" in [text.get_text() for text in figure.axes[0].texts]


def test_a_cell_run_also_draws_the_radio_figure(mmwave_result: Result, tmp_path: Path) -> None:
    paths = save_plots(mmwave_result, tmp_path / "plots")
    assert [path.stem for path in paths] == [*FIGURES, *RADIO_FIGURES]
    figure = radio_figure(mmwave_result)
    sinr_axes, capacity_axes = figure.axes
    assert (sinr_axes.get_ylabel(), capacity_axes.get_ylabel()) == (
        "SINR (dB)",
        "DL PHY rate at the MCS (Mbps)",
    )
    assert [line.get_label() for line in sinr_axes.lines] == ["ue0"]


def test_spans_without_line_of_sight_are_shaded_in_every_time_series(mmwave_result: Result) -> None:
    assert nlos_spans(mmwave_result) == {"ue0": [(0.25, 0.75)]}
    axes = throughput_figure(mmwave_result).axes[0]
    shaded = [patch for patch in axes.patches if patch.get_label() == "ue0: no line of sight"]
    assert len(shaded) == 1
    assert nlos_spans(synthetic_result(["cubic"])) == {}


def test_spans_at_the_ends_of_the_run_are_closed_at_the_last_sample() -> None:
    result = synthetic_result(["cubic"], samples=6)
    radio = pl.DataFrame(
        {
            "t_s": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5] * 2,
            "ue": ["a"] * 6 + ["b"] * 6,
            "los": [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0],
        }
    )
    spans = nlos_spans(Result(result.scenario, result.summary, result.flows, result.links, None, radio))
    assert spans == {"a": [(0.0, 0.2), (0.4, 0.5)], "b": [(0.1, 0.2), (0.3, 0.4)]}


def test_a_wifi_run_also_draws_the_wifi_figure(wifi_result: Result, tmp_path: Path) -> None:
    paths = save_plots(wifi_result, tmp_path / "plots")
    assert [path.stem for path in paths] == [*FIGURES, *WIFI_FIGURES]
    busy_axes, retry_axes = wifi_figure(wifi_result).axes
    assert busy_axes.get_ylim() == (0.0, 100.0)
    assert [line.get_label() for line in retry_axes.lines] == ["left (AP)", "s0", "s1"]


def test_a_run_with_sized_flows_also_draws_their_completion_times(sized_flows_result: Result, tmp_path: Path) -> None:
    result = sized_flows_result
    paths = save_plots(result, tmp_path / "plots")
    assert [path.stem for path in paths] == [*FIGURES, *FCT_FIGURES]
    assert (tmp_path / "plots" / "fct.png").read_bytes().startswith(PNG_SIGNATURE)
    points = fct_points(result)
    assert len(points) == 7, "the six of the group and the 1 GB flow; the unbounded one has no size"
    assert points[6] == ("cubic", 1_000_000_000, None)
    assert all(20_000 <= size <= 400_000 and fct_ms is not None for _, size, fct_ms in points[:6])
    axes = fct_figure(result).axes[0]
    assert (axes.get_xscale(), axes.get_yscale()) == ("log", "log")
    assert axes.get_title() == "sized: flow completion time by size (1 unfinished, not shown)"
    assert len(axes.collections) == 2, "one cloud of dots per algorithm"
    assert sorted(line.get_label() for line in axes.lines) == ["bbr p50", "bbr p99", "cubic p50", "cubic p99"]
    dots = np.concatenate([c.get_offsets() for c in axes.collections])
    assert sorted(map(tuple, dots)) == sorted((size, fct_ms) for _, size, fct_ms in points[:6])


def test_a_run_without_sized_flows_draws_no_completion_time_figure(two_flow_result: Result, tmp_path: Path) -> None:
    assert "fct" not in two_flow_result.summary
    assert [path.stem for path in save_plots(two_flow_result, tmp_path / "plots")] == list(FIGURES)
    assert fct_points(two_flow_result) == []
