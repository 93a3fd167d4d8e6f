"""The study report's figures (tcplab.report.panels and their drawing): goodput over windows of
at least 100 ms clipped at the path's capacity with the seeds' spread as a band, cwnd in the
study's unit, colours per flow, NLOS shading from each panel's own run, the SINR outage line,
the geometry map, the assumed values a figure states, and the table's clear metric names.
Synthetic Results with known values: each test fails if its computation breaks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tcplab.report import _plotly_spec, _png, _styles, figure_title, metric_headers, with_fixed_axes
from tcplab.report.panels import PANELS, Panel, geometry_traces, series, ue_track, windowed
from tcplab.result import Result
from tcplab.studies import find

INTERVAL = 0.01


def dumbbell_run(goodput: np.ndarray, *, seed: int = 1, algorithms: tuple[str, ...] = ("cubic",), mss: int = 1448) -> Result:
    """A dumbbell run with a 10 Mbps bottleneck: every flow's goodput is `goodput` (10 ms
    samples), its cwnd 10 packets."""
    times = (np.arange(len(goodput)) + 1) * INTERVAL
    flows = pl.concat(
        pl.DataFrame(
            {
                "t_s": times,
                "flow": pl.Series([flow] * len(goodput), dtype=pl.UInt32),
                "goodput_mbps": goodput.astype(float),
                "cwnd_pkts": np.full(len(goodput), 10.0),
            }
        )
        for flow in range(len(algorithms))
    )
    scenario = {
        "duration": f"{len(goodput) * INTERVAL}s",
        "seed": seed,
        "tcp": {"mss": mss},
        "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps"}},
        "flows": [{"cc": cc} for cc in algorithms],
    }
    summary = {"flows": [{"id": i, "cc": cc} for i, cc in enumerate(algorithms)]}
    return Result(scenario, summary, flows, pl.DataFrame({"t_s": times}), None)


def mmwave_run(los: np.ndarray, *, ul_capacity: float = 50.0, goodput: float = 80.0, ue: dict | None = None) -> Result:
    """An uplink mmWave run: `los` per 10 ms sample, the uplink PHY rate `ul_capacity` Mbit/s
    (the downlink's ten times more), flow 0 from ue0 at `goodput` Mbit/s."""
    times = (np.arange(len(los)) + 1) * INTERVAL
    radio = pl.DataFrame(
        {
            "t_s": times,
            "ue": ["ue0"] * len(los),
            "sinr_db": np.where(los == 1, 20.0, -8.0),
            "los": los.astype(float),
            "capacity_mbps": np.full(len(los), 10 * ul_capacity),
            "ul_capacity_mbps": np.full(len(los), ul_capacity),
        }
    )
    flows = pl.DataFrame(
        {
            "t_s": times,
            "flow": pl.Series([0] * len(los), dtype=pl.UInt32),
            "goodput_mbps": np.full(len(los), goodput),
            "cwnd_pkts": np.full(len(los), 100.0),
        }
    )
    scenario = {
        "duration": f"{len(los) * INTERVAL}s",
        "seed": 1,
        "tcp": {"mss": 1000},
        "topology": {
            "kind": "mmwave",
            "enb": {"position": [0.0, 0.0, 10.0]},
            "buildings": [{"x": [75.0, 100.0], "y": [2.0, 5.0], "z": [0.0, 20.0]}],
            "ues": [ue or {"position": [150.0, 0.0, 1.5], "velocity": [0.0, 1.0, 0.0], "move_at": "0s"}],
        },
        "flows": [{"cc": "newreno", "src": "ue0", "dst": "remote"}],
    }
    return Result(scenario, {"flows": [{"id": 0, "cc": "newreno"}]}, flows, pl.DataFrame({"t_s": times}), None, radio)


def test_goodput_is_averaged_over_100_ms_windows_and_clipped_at_the_bottleneck() -> None:
    # 10 ms samples: 5 Mbps for 100 ms, then a 100 ms window whose SACK-hole burst averages 20 Mbps.
    goodput = np.concatenate([np.full(10, 5.0), np.full(5, 0.0), np.full(5, 40.0)])
    panel = Panel("Goodput", "flows", "goodput_mbps", "Mbps", [{"cc": "cubic"}])
    (trace,) = series(panel, lambda _case: [dumbbell_run(goodput)])
    np.testing.assert_allclose(trace.x, [0.05, 0.15])
    np.testing.assert_allclose(trace.y, [5.0, 10.0])  # 20 Mbps clipped at the 10 Mbps bottleneck
    assert trace.band is None and trace.seeds == (1,)


def test_a_window_is_the_mean_of_the_samples_whose_interval_it_holds() -> None:
    t = np.round((np.arange(30) + 1) * INTERVAL, 10) + 1e-13  # sample times with float noise
    np.testing.assert_allclose(windowed(t, np.arange(30.0), 0.1), [4.5, 14.5, 24.5])
    np.testing.assert_allclose(windowed(t, np.arange(30.0), 0.1, "max"), [9.0, 19.0, 29.0])


def test_goodput_over_seeds_is_their_mean_with_a_min_max_band() -> None:
    runs = [dumbbell_run(np.full(20, level), seed=seed) for seed, level in ((3, 2.0), (1, 4.0), (2, 9.0))]
    panel = Panel("Goodput", "flows", "goodput_mbps", "Mbps", [{"cc": "cubic"}])
    (trace,) = series(panel, lambda _case: runs)
    np.testing.assert_allclose(trace.y, [5.0, 5.0])
    np.testing.assert_allclose(trace.band[0], [2.0, 2.0])
    np.testing.assert_allclose(trace.band[1], [9.0, 9.0])
    assert trace.seeds == (1, 2, 3)
    assert figure_title(panel, [trace], False) == "Goodput, mean of 3 seeds (band: lowest to highest)"
    # Both drawings show the band: a filled area in the PNG, a filled plotly trace under the line.
    axes = _png(panel, [trace], False).axes[0]
    assert len(axes.collections) == 1 and axes.get_title().startswith("Goodput, mean of 3 seeds")
    data = _plotly_spec(panel, [trace], False)["data"]
    assert [d.get("fill") for d in data] == [None, "tonexty", None]
    assert data[0]["y"] == [2.0, 2.0] and data[1]["y"] == [9.0, 9.0] and data[2]["y"] == [5.0, 5.0]
    assert data[1]["fillcolor"].startswith("rgba(") and data[1]["fillcolor"].endswith(",0.2)")


def test_radio_goodput_is_clipped_at_the_radio_s_rate_in_the_flow_s_direction() -> None:
    panel = Panel("Uplink", "flows", "goodput_mbps", "Mbps", [{"cc": "newreno"}])
    (trace,) = series(panel, lambda _case: [mmwave_run(np.ones(20, dtype=int), ul_capacity=50.0, goodput=80.0)])
    np.testing.assert_allclose(trace.y, [50.0, 50.0])  # the uplink's 50, not the downlink's 500


@pytest.mark.parametrize(("unit", "expected"), [("bytes", 10 * 536), ("packets", 10)])
def test_cwnd_is_drawn_in_the_panel_s_unit(unit: str, expected: float) -> None:
    panel = Panel("cwnd", "flows", "cwnd_pkts", unit, [{"cc": "cubic"}])
    (trace,) = series(panel, lambda _case: [dumbbell_run(np.ones(20), mss=536), dumbbell_run(np.ones(20), seed=2)])
    np.testing.assert_allclose(trace.y, expected)
    assert figure_title(panel, [trace], True) == "cwnd, seed 1 (--quick: shortened runs)"
    assert _png(panel, [trace], False).axes[0].get_ylabel() == f"cwnd ({unit})"


def test_flows_of_one_algorithm_get_a_colour_each_and_distinct_algorithms_keep_theirs() -> None:
    from tcplab.plots.figures import algorithm_colour

    panel = Panel("Goodput", "flows", "goodput_mbps", "Mbps", [{"flows": "4-cubic"}], per_flow=True)
    traces = series(panel, lambda _case: [dumbbell_run(np.ones(20), algorithms=("cubic",) * 4)])
    assert [t.name for t in traces] == [f"flow {i} (cubic)" for i in range(4)]
    assert len({colour for colour, _ in _styles(traces)}) == 4
    mixed = series(panel, lambda _case: [dumbbell_run(np.ones(20), algorithms=("bbr", "cubic"))])
    assert [colour for colour, _ in _styles(mixed)] == [algorithm_colour("bbr"), algorithm_colour("cubic")]


def test_each_variant_s_panel_shades_its_own_run_s_nlos_and_marks_the_outage() -> None:
    los = {"1a": np.array([1] * 5 + [0] * 10 + [1] * 5), "1b": np.array([1] * 12 + [0] * 3 + [1] * 5)}
    runs = {variant: mmwave_run(values) for variant, values in los.items()}
    spans = {}
    for variant in los:
        panel = next(p for p in PANELS["mmwave-5cc"] if p.title == f"SINR, variant {variant}")
        traces = series(panel, lambda case: [runs[case["variant"]]])
        spans[variant] = traces[0].nlos
        spec = _plotly_spec(panel, traces, False)
        assert [(s["x0"], s["x1"]) for s in spec["layout"]["shapes"]] == spans[variant]
        outage = spec["data"][-1]
        assert outage["name"] == "outage (-5 dB)" and outage["y"] == [-5.0, -5.0] and outage["line"]["dash"] == "dash"
        axes = _png(panel, traces, False).axes[0]
        assert any(list(line.get_ydata()) == [-5.0, -5.0] for line in axes.lines)
    assert spans == {"1a": [(0.06, 0.16)], "1b": [(0.13, 0.16)]}


def test_a_ue_track_follows_its_waypoints_or_its_velocity() -> None:
    times = np.array([0.0, 1.0, 2.0, 4.0])
    walk = {"waypoints": [{"t": "1s", "position": [0.0, 0.0, 1.5]}, {"t": "3s", "position": [0.0, 10.0, 1.5]}]}
    np.testing.assert_allclose(ue_track(walk, times)[:, 1], [0.0, 0.0, 5.0, 10.0])
    drive = {"position": [150.0, 1.0, 1.5], "velocity": [0.0, 30.0, 0.0], "move_at": "1s"}
    np.testing.assert_allclose(ue_track(drive, times)[:, 1], [1.0, 1.0, 31.0, 91.0])


def test_the_geometry_map_draws_buildings_the_enb_and_the_track_with_its_nlos_stretch() -> None:
    los = np.array([1] * 5 + [0] * 10 + [1] * 5)
    buildings, enb, track, blocked = geometry_traces(mmwave_run(los))
    assert buildings.kind == "area" and list(buildings.x[:5]) == [75.0, 100.0, 100.0, 75.0, 75.0]
    assert list(buildings.y[:5]) == [2.0, 2.0, 5.0, 5.0, 2.0]
    assert enb.kind == "marker" and (enb.x[0], enb.y[0]) == (0.0, 0.0)
    np.testing.assert_allclose(track.y, (np.arange(20) + 1) * INTERVAL)
    np.testing.assert_array_equal(np.isfinite(blocked.y), los == 0)
    panel = next(p for p in PANELS["mmwave-5cc"] if p.title == "Geometry, variant 1a")
    spec = _plotly_spec(panel, [buildings, enb, track, blocked], False)
    assert spec["layout"]["yaxis"]["scaleanchor"] == "x" and spec["data"][0]["fill"] == "toself"
    assert _png(panel, [buildings, enb, track, blocked], False).axes[0].get_aspect() == 1.0


def test_a_figure_names_the_stack_and_assumed_values_its_cases_leave_open() -> None:
    panel = next(p for p in PANELS["wifi-cubic-bbr"] if p.title.startswith("Goodput per flow"))
    fixed = {"stack": "ns3", "segment": "536B"}
    assert with_fixed_axes(panel, fixed).title == panel.title + " (stack ns3, segment 536B)"
    assert with_fixed_axes(panel, {"flows": "4-cubic"}).title == panel.title


def test_every_panel_names_cases_its_study_has() -> None:
    import tomllib

    for study, panels in PANELS.items():
        axes = tomllib.loads(find(study).path.read_text(encoding="utf-8"))["study"]["axes"]
        for panel in panels:
            for case in panel.cases:
                assert all(value in axes[axis] for axis, value in case.items()), (study, panel.title, case)
    assert sum(p.frame == "geometry" for p in PANELS["mmwave-5cc"]) == 3 and any(
        p.frame == "geometry" for p in PANELS["siad-mmwave"]
    )
    assert all(len(p.cases) == 1 for p in PANELS["mmwave-5cc"] if p.column == "sinr_db")


def test_the_table_names_loss_and_the_radio_s_utilization() -> None:
    assert metric_headers(True)["bottleneck_utilization"].startswith("radio utilization")
    assert metric_headers(False)["bottleneck_utilization"].startswith("bottleneck utilization")
    assert metric_headers(False)["retransmit_pct"].startswith("loss %")
