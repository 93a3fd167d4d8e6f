"""tcplab.report: a reproduced study's self-contained report (findings checked from the data,
the table, interactive figures with the plotting library embedded, PNG figures), rebuilt by
`tcplab report`, and rendered by headless Chromium when the machine has it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tcplab.metrics import metrics

from .conftest import REPOSITORY  # noqa: F401 - the package under test is installed


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tcplab import cli

    directory = tmp_path_factory.mktemp("reproduce") / "rtt-lens"
    with pytest.raises(SystemExit) as done:
        cli.main(["reproduce", "rtt-lens", "--quick", "-o", str(directory), "-j", "2"])
    assert (done.value.code or 0) == 0
    return directory


def test_the_report_is_one_offline_page_with_findings_table_and_figures(reproduced: Path) -> None:
    page = (reproduced / "report.html").read_text()
    assert "tcplab: rtt-lens (--quick)" in page and "--quick: every run was shortened" in page
    # 6 findings, checked for each value of the loss assumption
    assert re.search(r"Findings \(\d+ of 18 reproduced\)", page)
    assert page.count("<li class='yes'>") + page.count("<li class='no'>") == 18
    assert "BBR smoothed RTT, time average" in page and "± " in page
    # The one miss a drop-tail buffer explains says so.
    miss = next(item for item in page.split("<li ") if "loss none: CUBIC&#x27;s RTT drains below 100 ms" in item)
    assert miss.startswith("class='no'>") and "Why: with a drop-tail buffer alone CUBIC keeps 0.7" in miss
    assert "<b>loss</b> (swept: none, random, bursty)" in page and "<b>topology.bottleneck.buffer</b> (fixed: 330pkt)" in page
    assert "<td style='text-align:left'>topology.bottleneck.rate</td><td style='text-align:left'>10Mbps</td>" in page
    assert page.count("resolved scenario of ") == 6 and "resolved scenario of bbr-bursty (seed 1)" in page
    assert page.count("Plotly.newPlot(") == 2
    # Offline: the library is inline, nothing is fetched.
    assert "plotly.js v" in page or "Plotly" in page[:5_000_000]
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']https?://""", page)
    figures = sorted(p.name for p in (reproduced / "figures").iterdir())
    assert figures == ["01-rtt-per-ack--loss-none.png", "02-throughput--loss-none.png"]


def test_report_rebuilds_and_refuses_other_directories(run_cli, reproduced: Path, tmp_path: Path) -> None:
    (reproduced / "report.html").unlink()
    outcome = run_cli("report", reproduced)
    assert outcome.code == 0 and (reproduced / "report.html").exists()
    refused = run_cli("report", tmp_path)
    assert refused.code == 2 and "not a `tcplab reproduce` directory" in refused.stderr


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_the_report_renders_in_headless_chromium(reproduced: Path, tmp_path: Path) -> None:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = (reproduced / "report.html").as_uri()
    dom = subprocess.run(
        [CHROMIUM, *flags, "--virtual-time-budget=5000", "--dump-dom", url], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    # Plotly drew into every plot container: each holds its SVG.
    assert dom.stdout.count('class="main-svg"') >= 2, "no rendered plot"
    screenshot = tmp_path / "report.png"
    shot = subprocess.run(
        [CHROMIUM, *flags, "--virtual-time-budget=5000", "--window-size=1200,2400", f"--screenshot={screenshot}", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.returncode == 0 and screenshot.stat().st_size > 20_000, "blank screenshot"
    assert "Uncaught" not in dom.stderr and "SyntaxError" not in dom.stderr


def test_compare_overlays_runs_and_refuses_bad_input(run_cli, tiny_result, two_flow_result, tmp_path: Path) -> None:
    first, second = tiny_result.save(tmp_path / "tiny"), two_flow_result.save(tmp_path / "two", plots=False)
    outcome = run_cli("compare", first, second, "-o", tmp_path / "cmp", "--format", "png", "--format", "svg")
    assert outcome.code == 0, outcome.stderr
    header, *rows = outcome.stdout.split("\n\nwrote ")[0].splitlines()
    assert header.split() == ["tiny", "two"]
    table = {label: values for label, *values in (re.split(r"\s{2,}", row.strip()) for row in rows)}
    # Every flow counts, not flow 0 alone: the same numbers as a campaign's index.
    for column, result in enumerate((tiny_result, two_flow_result)):
        values = metrics(result.summary)
        assert table["goodput Mbps, all flows"][column] == f"{values['goodput_mbps']:.2f}"
        assert table["RTT p95 ms, highest flow's"][column] == f"{values['rtt_p95_ms']:.1f}"
        assert table["Jain's fairness index"][column] == f"{values['fairness_jain']:.3f}"
        assert table["busiest link drops"][column] == f"{values['bottleneck_drops']:.0f}"
    assert len(table) == 10 and "wall time s" in table and "busiest link" in table
    assert table["stack"] == ["linux", "linux"]
    page = (tmp_path / "cmp" / "compare.html").read_text()
    assert page.count("Plotly.newPlot(") == 3 and "tiny: flow 0 (cubic)" in page and "two: flow 1 (bbr)" in page
    figures = sorted(p.name for p in (tmp_path / "cmp" / "figures").iterdir())
    assert figures == [f"{n}.{ext}" for n in ("01-goodput", "02-smoothed-rtt", "03-congestion-window") for ext in ("png", "svg")]
    assert run_cli("compare", first).code == 2
    assert "not a run directory" in run_cli("compare", first, tmp_path).stderr
    assert "'--format': 'gif' is not one of 'png', 'svg', 'pdf'." in run_cli("compare", first, second, "--format", "gif").stderr


def test_a_study_with_a_stack_axis_has_each_finding_checked_on_each_stack(tmp_path: Path) -> None:
    """The rule "SIAD and BBR within 1.5 % at 7 MB and above" holds on one stack's numbers and
    not on the other's: the verdicts say which stack each is for."""
    import polars as pl

    from tcplab.report.findings import StudyRuns, check

    rows = [
        {"stack": stack, "cc": cc, "buffer": buffer, "goodput_mbps_mean": goodput}
        for stack, bbr in (("ns3", 1000.0), ("linux", 800.0))
        for cc, goodput in (("siad", 1000.0), ("bbr", bbr))
        for buffer in ("4MB", "7MB", "20MB", "40MB")
    ]
    table = pl.DataFrame(rows)
    index = table.select("stack", "cc", "buffer").with_columns(
        run_id=pl.format("{}-{}-{}", "stack", "cc", "buffer"), status=pl.lit("ok")
    )
    verdicts = check("siad-mmwave", StudyRuns(tmp_path, index, table))
    close = [v for v in verdicts if "SIAD and BBR are within" in v.finding]
    assert [v.finding.split(":")[0] for v in close] == ["ns-3's TCP (tcp.stack = ns3)", "Linux TCP (tcp.stack = linux)"]
    assert [v.reproduced for v in close] == [True, False]
    assert "25.0 %" in close[1].evidence
    # Reproduced on ns-3's TCP and missed on Linux's, with no other mechanism known: ns-3's semantics.
    assert close[0].mechanism is None and close[1].mechanism.startswith("ns-3's TCP semantics: the same case")
    # An assumption axis splits the verdicts again: per stack and assumed value.
    table = pl.concat([table.with_columns(rlc=pl.lit(rlc)) for rlc in ("ns3-timers", "study-file")])
    index = table.select("stack", "cc", "buffer", "rlc").with_columns(
        run_id=pl.format("{}-{}-{}-{}", "stack", "cc", "buffer", "rlc"), status=pl.lit("ok")
    )
    close = [
        v for v in check("siad-mmwave", StudyRuns(tmp_path, index, table), ("rlc",)) if "SIAD and BBR are within" in v.finding
    ]
    assert [v.finding.split(":")[0] for v in close] == [
        "ns-3's TCP (tcp.stack = ns3), rlc ns3-timers",
        "Linux TCP (tcp.stack = linux), rlc ns3-timers",
        "ns-3's TCP (tcp.stack = ns3), rlc study-file",
        "Linux TCP (tcp.stack = linux), rlc study-file",
    ]
    assert [v.reproduced for v in close] == [True, False, True, False]
    assert [v.mechanism is not None and v.mechanism.startswith("ns-3's TCP semantics") for v in close] == [
        False,
        True,
        False,
        True,
    ]


def test_a_trace_takes_the_colour_of_the_algorithm_it_names() -> None:
    """Every algorithm of the catalog has its colour in a report's figures, and `reno`, the
    kernel's name that scenarios also accept, is newreno's; the palette names only algorithms
    of the catalog."""
    from tcplab import _core
    from tcplab.plots.figures import ALGORITHM_COLOURS, algorithm_colour
    from tcplab.report import _styles
    from tcplab.report.panels import Trace

    names = [algorithm["name"] for algorithm in json.loads(_core.catalog())["algorithms"]]
    traces = [Trace(f"{name} 330pkt flow 0", np.zeros(1), np.zeros(1), []) for name in [*names, "reno"]]
    colours = [colour for colour, _ in _styles(traces)]
    assert colours == [algorithm_colour(name) for name in [*names, "newreno"]]
    assert set(ALGORITHM_COLOURS) <= set(names), "a colour for a name the catalog does not have"


def test_only_wired_studies_run_on_the_kernel(run_cli, tmp_path: Path) -> None:
    outcome = run_cli("reproduce", "siad-mmwave", "--backend", "emu", "-o", tmp_path / "out")
    assert outcome.code == 2
    assert outcome.stderr.startswith("error: --backend emu: siad-mmwave needs radio models the kernel cannot emulate")
    assert not (tmp_path / "out").exists()
    assert run_cli("reproduce", "rtt-lens", "--backend", "ns3").code == 2


from .test_emu import needs_root  # noqa: E402 - the same condition as the emulation tests


@needs_root
def test_backend_both_puts_the_kernel_runs_beside_the_simulated_ones(run_cli, tmp_path: Path) -> None:
    outcome = run_cli("reproduce", "rtt-lens", "--quick", "--backend", "both", "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    # the kernel here has no netem: the cases with loss on the path are not emulated, and say why
    assert sorted(p.name for p in (tmp_path / "out" / "emu").iterdir()) == ["bbr-none", "cubic-none", "skipped.json"]
    skipped = json.loads((tmp_path / "out" / "emu" / "skipped.json").read_text())
    assert sorted(skipped) == ["bbr-bursty", "bbr-random", "cubic-bursty", "cubic-random"]
    assert (
        skipped["cubic-random"]
        == "topology.bottleneck.loss: 0.001 needs random loss (netem), which this kernel lacks; allowed: 0"
    )
    page = (tmp_path / "out" / "report.html").read_text()
    assert "On this machine's kernel (emulation)" in page
    assert page.count("simulator (seed 1)") == 2 and page.count("<td>kernel</td>") == 2
    assert "Not emulated: this kernel lacks what these cases need." in page
    assert page.count("Plotly.newPlot(") == 2 + 6
    assert len(list((tmp_path / "out" / "figures").iterdir())) == 2 + 6
