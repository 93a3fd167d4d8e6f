"""The `tcplab` command line: run end to end, the summary it prints, bad input as one line and
exit code 2, Ctrl-C, schema, list, demo, and the progress line."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from tcplab import studies
from tcplab.progress import ProgressLine
from tcplab.scenario import to_toml

from .conftest import REPOSITORY, CliOutcome
from .test_scenario import MALFORMED

RunCli = Callable[..., CliOutcome]
RUN_FILES = {"scenario.toml", "summary.json", "flows.parquet", "links.parquet", "plots"}


def test_run_writes_every_file_and_prints_the_summary(run_cli: RunCli, tiny_scenario: Path, tmp_path: Path) -> None:
    outcome = run_cli("run", tiny_scenario, "-o", tmp_path / "out")
    assert (outcome.code, outcome.stderr) == (0, "")
    assert {path.name for path in (tmp_path / "out").iterdir()} == RUN_FILES
    pictures = sorted((tmp_path / "out" / "plots").glob("*.png"))
    assert [path.stem for path in pictures] == ["backlog", "cwnd", "rtt", "throughput"]
    assert all(path.stat().st_size > 0 for path in pictures)
    assert re.search(r"^0\s+cubic\s+linux\s+\d+\.\d\d\s", outcome.stdout, re.MULTILINE), outcome.stdout
    link_row = r"^left->right\s+\d+\.\d%\s+\d+\s+\d+\s+\d+\s+\d+\.\d\d\s+\d+\.\d\d$"
    assert re.search(link_row, outcome.stdout, re.MULTILINE), outcome.stdout
    assert "Jain's fairness index: 1.000" in outcome.stdout
    assert "events" in outcome.stdout
    assert outcome.stdout.rstrip().endswith(f"wrote {tmp_path / 'out'}")


def test_run_defaults_to_a_timestamped_directory_under_runs(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = run_cli("run", tiny_scenario, "--no-plots")
    second = run_cli("run", tiny_scenario, "--no-plots")
    assert first.code == second.code == 0
    directories = sorted(path.name for path in (tmp_path / "runs").iterdir())
    assert len(directories) == 2, "a second run in the same second gets its own directory"
    assert re.fullmatch(r"tiny-\d{8}-\d{6}", directories[0])
    assert f"wrote {Path('runs') / directories[0]}" in first.stdout + second.stdout


def test_run_applies_set_seed_and_no_plots(run_cli: RunCli, tiny_scenario: Path, tmp_path: Path) -> None:
    outcome = run_cli(
        "run",
        tiny_scenario,
        "-o",
        tmp_path / "out",
        "--seed",
        "9",
        "--no-plots",
        "--set",
        "flows.0.cc=bbr",
        "--set",
        "duration=1s",
        "--set",
        "topology.bottleneck.loss=0.01",
    )
    assert outcome.code == 0, outcome.stderr
    result = tcplab.load(tmp_path / "out")
    assert result.summary["flows"][0]["cc"] == "bbr"
    assert (result.scenario["seed"], result.scenario["duration"]) == (9, "1s")
    assert result.scenario["topology"]["bottleneck"]["loss"] == 0.01
    assert not (tmp_path / "out" / "plots").exists()


@pytest.mark.parametrize("threads", ["1", "2"])
def test_run_takes_a_thread_count_and_names_it_in_the_headline(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, threads: str
) -> None:
    outcome = run_cli("run", tiny_scenario, "-o", tmp_path / "out", "--no-plots", "--threads", threads)
    assert outcome.code == 0, outcome.stderr
    assert re.match(rf"tiny: 2 s simulated in \d+\.\d\d s on {threads} threads? \(", outcome.stdout), outcome.stdout
    assert tcplab.load(tmp_path / "out").summary["run"]["threads"] == int(threads)


def test_run_takes_a_study_name(run_cli: RunCli, tmp_path: Path) -> None:
    outcome = run_cli("run", "rtt-lens", "-o", tmp_path / "out", "--set", "duration=1s", "--no-plots")
    assert outcome.code == 0, outcome.stderr
    assert (tmp_path / "out" / "rtt.parquet").exists(), "the study records RTT samples"
    assert outcome.stdout.startswith("rtt-lens: ")


def test_run_takes_a_study_case_and_prints_the_radio_table(run_cli: RunCli, tmp_path: Path) -> None:
    outcome = run_cli("run", "siad-mmwave:ns3-bbr-4MB", "-o", tmp_path / "out", "--set", "duration=0.5s", "--no-plots")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.startswith("siad-mmwave-ns3-bbr-4MB: ")
    assert re.search(r"^0\s+bbr\s+ns3\s", outcome.stdout, re.MULTILINE), outcome.stdout
    assert "user  SINR mean dB  line of sight" in outcome.stdout
    assert tcplab.load(tmp_path / "out").scenario["topology"]["rlc"]["buffer"] == "4MB"


def test_a_wifi_run_prints_the_bss_table(run_cli: RunCli, tmp_path: Path) -> None:
    outcome = run_cli(
        "run", "wifi-cubic-bbr:ns3-wifi4-4-cubic-536B-droptail", "--set", "duration=1s", "--no-plots", "-o", tmp_path / "out"
    )
    assert outcome.code == 0, outcome.stderr
    assert "WiFi: MCS 4 (39.0 Mbps PHY) at 13.97 dB SNR" in outcome.stdout
    assert "left (AP)" in outcome.stdout and "drop ratio at the AP" in outcome.stdout


def test_an_unknown_case_exits_2_with_one_line(run_cli: RunCli) -> None:
    outcome = run_cli("run", "siad-mmwave:cubic-4MB", "--no-plots")
    assert outcome.code == 2
    assert outcome.stderr.startswith("error: siad-mmwave:cubic-4MB: no such case (cases: ns3-siad-4MB")
    assert outcome.stderr.count("\n") == 1


def scenario_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    return path


# fmt: off
BAD_INPUT = [
    ("unknown algorithm in --set", ["--set", "flows.0.cc=cubbic"], "error: flows.0.cc: "),
    ("unknown top-level key in --set", ["--set", "colour=red"], "error: colour"),
    ("--set without =", ["--set", "nonsense"], "error: --set 'nonsense': expected KEY=VALUE"),
    ("--set index past the end", ["--set", "flows.3.cc=bbr"], "error: flows.3: index 3 is past the end"),
    ("negative seed in --set", ["--set", "seed=-5"], "error: seed"),
]
# fmt: on


@pytest.mark.parametrize(("arguments", "expected"), [case[1:] for case in BAD_INPUT], ids=[case[0] for case in BAD_INPUT])
def test_bad_overrides_exit_2_with_one_line(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, arguments: list[str], expected: str
) -> None:
    assert_bad_input(run_cli("run", tiny_scenario, "-o", tmp_path / "out", *arguments), expected)
    assert not (tmp_path / "out").exists()


SOME_MALFORMED = [
    "bad rate unit",
    "negative delay",
    "duplicate node names",
    "empty flows list",
    "unknown cc parameter",
]


@pytest.mark.parametrize("case", [case for case in MALFORMED if case[0] in SOME_MALFORMED], ids=SOME_MALFORMED)
def test_bad_scenario_files_exit_2_with_one_line_naming_the_key(run_cli: RunCli, tmp_path: Path, case: tuple) -> None:
    _, document, path, _ = case
    outcome = run_cli("run", scenario_file(tmp_path, to_toml(document)), "-o", tmp_path / "out")
    assert_bad_input(outcome, f"error: {path}")
    assert not (tmp_path / "out").exists()


def test_a_missing_scenario_file_exits_2(run_cli: RunCli, tmp_path: Path) -> None:
    assert_bad_input(run_cli("run", tmp_path / "missing.toml"), f"error: {tmp_path / 'missing.toml'}: no such")


def test_a_toml_syntax_error_exits_2(run_cli: RunCli, tmp_path: Path) -> None:
    path = scenario_file(tmp_path, 'name = "x"\n[topology\n')
    assert_bad_input(run_cli("run", path), f"error: {path}: invalid TOML: ")


def test_an_occupied_output_directory_exits_2_before_running_and_stays_untouched(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    assert_bad_input(run_cli("run", tiny_scenario, "-o", tmp_path / "out"), f"error: {tmp_path / 'out'}: exists")
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["notes.txt"]
    assert_bad_input(
        run_cli("run", tiny_scenario, "-o", tmp_path / "out", "--overwrite"),
        f"error: {tmp_path / 'out'}: not an output of tcplab (no summary.json), so --overwrite",
    )
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["notes.txt"]
    (tmp_path / "out" / "summary.json").write_text("{}")  # now it looks like an earlier run
    assert run_cli("run", tiny_scenario, "-o", tmp_path / "out", "--overwrite", "--no-plots").code == 0
    assert {path.name for path in (tmp_path / "out").iterdir()} == RUN_FILES - {"plots"}


def test_ctrl_c_during_a_run_exits_130_and_writes_nothing(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupt(self: ProgressLine, fraction_done: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ProgressLine, "__call__", interrupt)
    outcome = run_cli("run", tiny_scenario, "-o", tmp_path / "out")
    assert (outcome.code, outcome.stderr, outcome.stdout) == (130, "interrupted\n", "")
    assert list(tmp_path.iterdir()) == [tiny_scenario]


def test_a_real_process_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "tcplab", "run", "no-such-scenario.toml"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert process.returncode == 2
    assert process.stderr.startswith("error: no-such-scenario.toml: no such scenario file or study")
    assert process.stderr.count("\n") == 1 and process.stdout == ""


def test_ctrl_c_stops_a_real_run_on_a_terminal_and_writes_nothing(tmp_path: Path) -> None:
    """SIGINT to a `tcplab run` whose stderr is a terminal, once its progress bar shows."""
    terminal, child_end = pty.openpty()
    command = [sys.executable, "-m", "tcplab", "run", "deep-buffer", "-o", tmp_path / "out"]
    process = subprocess.Popen(
        [*command, "--set", "duration=3600s"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=child_end,
        cwd=tmp_path,
    )
    os.close(child_end)
    try:
        shown = read_terminal(terminal, until=b"%", timeout=60)
        assert b"deep-buffer [" in shown, "no progress bar on a terminal"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 130
        assert b"interrupted" in read_terminal(terminal, until=b"interrupted", timeout=10)
    finally:
        process.kill()
        process.wait()
        os.close(terminal)
    assert process.stdout.read() == b""
    assert not (tmp_path / "out").exists()
    assert not list(tmp_path.iterdir()), "no staging directory left either"


def read_terminal(terminal: int, until: bytes, timeout: float) -> bytes:
    """What the terminal shows until `until` appears, the other side closes, or time is up."""
    shown, deadline = b"", time.monotonic() + timeout
    while until not in shown and time.monotonic() < deadline:
        if select.select([terminal], [], [], 0.1)[0]:
            try:
                shown += os.read(terminal, 4096)
            except OSError:  # EIO: the process has exited and closed the terminal
                break
    return shown


def assert_bad_input(outcome: CliOutcome, expected_start: str) -> None:
    assert outcome.code == 2, outcome
    assert outcome.stderr.startswith(expected_start), outcome.stderr
    assert outcome.stderr.count("\n") == 1, f"not one line: {outcome.stderr!r}"
    assert "Traceback" not in outcome.stderr + outcome.stdout


def test_schema_prints_the_checked_in_json_schema(run_cli: RunCli) -> None:
    outcome = run_cli("schema")
    assert outcome.code == 0
    checked_in = json.loads((REPOSITORY / "schema" / "scenario.schema.json").read_text(encoding="utf-8"))
    assert json.loads(outcome.stdout) == checked_in, "schema/scenario.schema.json is stale: make schema"


def test_list_shows_algorithms_queues_topologies_and_studies(run_cli: RunCli) -> None:
    outcome = run_cli("list")
    assert outcome.code == 0
    for name in (
        "newreno",
        "cubic",
        "bbr",
        "droptail",
        "dumbbell",
        "explicit",
        "parking_lot",
        "leaf_spine",
        *studies.all_studies(),
    ):
        assert re.search(rf"^\s+{name}\b", outcome.stdout, re.MULTILINE), f"{name} not listed"
    for study in studies.all_studies().values():
        assert study.description in outcome.stdout
        assert not study.cases or f"cases (NAME:CASE): {', '.join(study.cases)}" in outcome.stdout


def test_list_shows_the_parameters_of_algorithms_with_their_defaults(run_cli: RunCli) -> None:
    catalog = json.loads(tcplab._core.catalog())
    stdout = run_cli("list").stdout
    for algorithm in catalog["algorithms"]:
        for parameter in algorithm["params"]:
            assert re.search(
                rf"^\s+{parameter['name']}\s+= {re.escape(str(parameter['default']))}",
                stdout,
                re.MULTILINE,
            )


def test_demo_compares_cubic_and_bbr_side_by_side(run_cli: RunCli) -> None:
    outcome = run_cli("demo")
    assert outcome.code == 0, outcome.stderr
    header = next(line for line in outcome.stdout.splitlines() if "cubic" in line and "bbr" in line)
    assert header.split() == ["cubic", "bbr"]
    assert re.search(r"^goodput Mbps, all flows\s+\d+\.\d\d\s+\d+\.\d\d$", outcome.stdout, re.MULTILINE), outcome.stdout
    assert re.search(r"^RTT p95 ms, highest flow's\s+\d+\.\d\s+\d+\.\d$", outcome.stdout, re.MULTILINE)
    assert re.search(r"^busiest link utilization\s+\d+\.\d%\s+\d+\.\d%$", outcome.stdout, re.MULTILINE)


def test_no_arguments_shows_the_help(run_cli: RunCli) -> None:
    outcome = run_cli()
    assert "run" in outcome.stdout and "schema" in outcome.stdout


class FakeTerminal(io.StringIO):
    def __init__(self, is_terminal: bool) -> None:
        super().__init__()
        self.is_terminal = is_terminal

    def isatty(self) -> bool:
        return self.is_terminal


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_progress_line_appears_after_a_second_and_is_erased_at_the_end() -> None:
    terminal, clock = FakeTerminal(is_terminal=True), FakeClock()
    with ProgressLine(stream=terminal, clock=clock) as progress:
        progress(0.1)
        assert terminal.getvalue() == "", "nothing in the first second"
        clock.now += 1.5
        progress(0.5)
        assert terminal.getvalue() == f"\rrunning [{'#' * 15}{'-' * 15}]  50%  2 s"
        progress(0.6)
        assert terminal.getvalue().count("\r") == 1, "redrawn at most ten times a second"
    assert terminal.getvalue().endswith("\r\033[K")


def test_the_progress_line_is_quiet_in_a_log_for_the_first_ten_seconds() -> None:
    pipe, clock = FakeTerminal(is_terminal=False), FakeClock()
    with ProgressLine(stream=pipe, clock=clock) as progress:
        clock.now += 5
        progress(0.5)
    assert pipe.getvalue() == ""
