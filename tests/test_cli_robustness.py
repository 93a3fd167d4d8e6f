"""The command line under bad arguments, concurrent writers, signals and kills: out-of-range
seeds, `-o .`, run names that are paths, a directory two processes write, SIGTERM and SIGKILL
during a save, `-o` through a symbolic link or below a file; progress lines in logs,
`reproduce --no-plots`, confidence intervals every seed agrees on, `--help` in 80 columns,
`tcplab list` units, and one overwrite rule for every command."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError
from tcplab.progress import ProgressLine, SweepProgressLine
from tcplab.report import _table_html
from tcplab.result import check_run_name, claimed, remove_stale_leftovers
from tcplab.tables import format_campaign_table

from .conftest import TINY_SCENARIO, CliOutcome
from .test_cli import FakeClock, FakeTerminal, assert_bad_input

RunCli = Callable[..., CliOutcome]
TCPLAB = [sys.executable, "-m", "tcplab"]


def leftovers(directory: Path) -> list[str]:
    """Hidden entries tcplab writes beside an output: staging, moved-aside and lock files."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def is_running(pid: int) -> bool:
    """Whether the process table still has `pid` as a live (not zombie) process."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def dead_pid() -> int:
    """The pid of a process that has exited and been reaped."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


# --- seeds ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [["run", "rtt-lens", "--seed", "-1"], ["run", "rtt-lens", "--seed", "99999999999999999999999"], ["demo", "--seed", "-1"]],
    ids=["run -1", "run 10^23", "demo -1"],
)
def test_an_out_of_range_seed_is_one_line(
    run_cli: RunCli, arguments: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = run_cli(*arguments)
    assert_bad_input(outcome, f"error: --seed {arguments[-1]}: not a seed; allowed: an integer from 0 to 2^64-1")
    assert list(tmp_path.iterdir()) == [], "nothing written"


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_the_library_rejects_a_seed_out_of_range_with_scenario_error(seed: object) -> None:
    with pytest.raises(ScenarioError, match=r"^seed .*: not a seed; allowed: an integer from 0 to 2\^64-1"):
        tcplab.run(TINY_SCENARIO, seed=seed)


def test_the_largest_seed_runs() -> None:
    assert tcplab.run(TINY_SCENARIO, seed=2**64 - 1, duration="0.1s").summary["run"]["seed"] == 2**64 - 1


# --- where a run is written ---------------------------------------------------------------------


def test_the_current_directory_and_its_parents_are_never_replaced(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside = tmp_path / "earlier-run" / "plots"
    inside.mkdir(parents=True)
    (tmp_path / "earlier-run" / "summary.json").write_text("{}")  # it looks like a run
    monkeypatch.chdir(inside)
    for target in (".", ".."):
        outcome = run_cli("run", tiny_scenario, "-o", target, "--overwrite", "--no-plots")
        assert_bad_input(outcome, f"error: {target}: is the current directory or one of its parents")
    assert sorted(p.name for p in (tmp_path / "earlier-run").iterdir()) == ["plots", "summary.json"]
    assert Path.cwd() == inside.resolve()


@pytest.mark.parametrize("name", ["../../../escaped", "/tmp/absolute-escape", "a/b", "..", "x\\y"])
def test_a_run_name_with_a_path_in_it_is_refused(
    run_cli: RunCli, tiny_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    outcome = run_cli("run", tiny_scenario, "--no-plots", "--set", f"name={name}")
    assert_bad_input(outcome, f"error: name: {name!r} contains ")
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p != tiny_scenario] == []
    assert not list(Path("/tmp").glob("absolute-escape*"))


def test_check_run_name_takes_one_directory_name() -> None:
    for good in ("rtt-lens", "case 1", "bbr.v2", "siad-mmwave-bbr-4MB"):
        check_run_name(good)
    for bad in ("", " ", "a/b", "a\\b", "..", "a..b", "/abs", "nul\0"):
        with pytest.raises(ScenarioError, match=r"^campaign\.toml: name: "):
            check_run_name(bad, "campaign.toml: name")


def test_a_file_in_the_output_path_is_named(run_cli: RunCli, tiny_scenario: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    for target in (tmp_path / "notes.txt" / "sub", tmp_path / "notes.txt"):
        outcome = run_cli("run", tiny_scenario, "-o", target, "--no-plots")
        assert_bad_input(outcome, f"error: {tmp_path / 'notes.txt'}: is a file, not a directory")


def test_output_through_a_symbolic_link_lands_where_it_points(run_cli: RunCli, tiny_scenario: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "link").symlink_to("empty")
    outcome = run_cli("run", tiny_scenario, "-o", tmp_path / "link", "--no-plots")
    assert outcome.code == 0, outcome.stderr
    assert (tmp_path / "link").is_symlink() and (tmp_path / "empty" / "summary.json").is_file()
    assert tcplab.load(tmp_path / "link").name == "tiny"
    assert leftovers(tmp_path) == []


# --- one writer per directory -------------------------------------------------------------------


def test_a_directory_another_process_writes_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_SCENARIO)
    with claimed(tmp_path / "out", overwrite=False):  # as a concurrent `tcplab run -o out` would
        assert (tmp_path / ".out.lock").read_text() == f"tcplab {os.getpid()}\n"
        second = subprocess.run(
            [*TCPLAB, "run", "tiny.toml", "-o", "out", "--no-plots"], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
    assert second.returncode == 2, second.stderr
    assert (
        second.stderr
        == f"error: out: another tcplab process (pid {os.getpid()}) is writing it; allowed: wait for it to finish, or another directory\n"
    )
    assert not (tmp_path / "out").exists() and leftovers(tmp_path) == [], "the lock file goes with the lock"


def test_two_runs_into_one_directory_at_once_do_not_both_succeed(tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_SCENARIO.replace('"2s"', '"20s"'))
    command = [*TCPLAB, "run", "tiny.toml", "-o", "out", "--no-plots"]
    first = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / ".out.lock").exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    second = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    _, first_err = first.communicate(timeout=120)
    codes = sorted([first.returncode, second.returncode])
    assert codes == [0, 2], (first_err, second.stderr)
    refused = second.stderr if second.returncode else first_err
    assert re.fullmatch(r"error: out: (another tcplab process \(pid \d+\) is writing it|exists and is not empty); .*\n", refused)
    assert leftovers(tmp_path) == []


# --- signals and kills during a save -------------------------------------------------------------

# `tcplab run SCENARIO -o DIR` whose plotting writes half a picture, says "saving" and hangs.
STUCK_IN_SAVE = """
import sys, time
import tcplab.plots
from tcplab import cli

def stuck(result, directory, progress=None):
    directory.mkdir()
    (directory / "half.png").write_bytes(b"half a picture")
    print("saving", flush=True)
    time.sleep(600)

tcplab.plots.save_plots = stuck
cli.main(["run", sys.argv[1], "-o", sys.argv[2]])
"""


@dataclass
class StuckSave:
    process: subprocess.Popen[str]

    def stop(self, signal_number: int) -> int:
        self.process.send_signal(signal_number)
        code = self.process.wait(timeout=60)
        assert not is_running(self.process.pid)
        return code


@pytest.fixture
def stuck_save(tmp_path: Path) -> Callable[[str], StuckSave]:
    processes: list[subprocess.Popen[str]] = []

    def start(target: str) -> StuckSave:
        (tmp_path / "tiny.toml").write_text(TINY_SCENARIO)
        process = subprocess.Popen(
            [sys.executable, "-c", STUCK_IN_SAVE, "tiny.toml", target],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        processes.append(process)
        assert process.stdout is not None and process.stdout.readline() == "saving\n", process.stderr.read()
        return StuckSave(process)

    yield start
    for process in processes:
        process.kill()
        process.wait()


def test_sigterm_during_a_save_is_an_interrupt_that_leaves_nothing(stuck_save, tmp_path: Path) -> None:
    saving = stuck_save("out")
    assert len([name for name in leftovers(tmp_path) if ".out.partial-" in name]) == 1
    assert saving.stop(signal.SIGTERM) == 130
    assert saving.process.stderr.read() == "interrupted\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.toml"]


def test_leftovers_of_a_killed_save_go_at_the_next_save_but_not_while_it_lives(
    stuck_save, tiny_result: tcplab.Result, tmp_path: Path
) -> None:
    saving = stuck_save("out")
    staging = [name for name in leftovers(tmp_path) if ".out.partial-" in name]
    assert staging == [f".out.partial-{saving.process.pid}-{staging[0][-8:]}"]
    remove_stale_leftovers(tmp_path)
    assert leftovers(tmp_path) == [".out.lock", *staging], "a live save keeps its staging directory"
    assert saving.stop(signal.SIGKILL) == -signal.SIGKILL
    assert leftovers(tmp_path) == [".out.lock", *staging]
    tiny_result.save(tmp_path / "next", plots=False)  # the next save into that parent
    assert leftovers(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["next", "tiny.toml"]


def test_an_overwrite_killed_between_its_renames_gets_the_earlier_run_back(
    tiny_result: tcplab.Result, two_flow_result: tcplab.Result, tmp_path: Path
) -> None:
    pid, parent = dead_pid(), tmp_path / "runs"
    tiny_result.save(tmp_path / "old", plots=False)
    parent.mkdir()
    os.rename(tmp_path / "old", parent / f".run.retired-{pid}-0123abcd")
    (parent / f".run.partial-{pid}-4567cdef").mkdir()
    two_flow_result.save(parent / "other", plots=False)
    assert leftovers(parent) == []
    assert tcplab.load(parent / "run").name == "tiny"


# --- SIGTERM as Ctrl-C ----------------------------------------------------------------------------


def test_sigterm_stops_a_long_run_like_ctrl_c(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*TCPLAB, "run", "deep-buffer", "--set", "duration=3600s", "-o", "out"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        lock = tmp_path / ".out.lock"
        while not (lock.exists() and lock.read_text().startswith("tcplab")):  # claimed: it runs
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
            time.sleep(0.01)
        time.sleep(0.2)  # into the simulation
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert (process.returncode, stdout, stderr) == (130, "", "interrupted\n")
    assert not is_running(process.pid) and list(tmp_path.iterdir()) == []


def test_the_cli_restores_the_sigterm_handler(run_cli: RunCli) -> None:
    before = signal.getsignal(signal.SIGTERM)
    assert run_cli("schema").code == 0
    assert signal.getsignal(signal.SIGTERM) is before


# --- progress in logs -----------------------------------------------------------------------------


def test_progress_in_a_log_is_a_plain_line_now_and_then() -> None:
    log, clock = FakeTerminal(is_terminal=False), FakeClock()
    with ProgressLine("rtt-lens", stream=log, clock=clock, describe=lambda f: f"{15 * f:.1f} of 15 s simulated") as progress:
        for seconds, fraction in [(5, 0.2), (10.4, 0.4), (12, 0.5), (21, 0.48), (25, 0.6), (33, 0.69), (84, 0.69), (86, 0.69)]:
            clock.now = 100 + seconds
            progress(fraction)
    assert log.getvalue().splitlines() == [
        "rtt-lens: 40% (6.0 of 15 s simulated, 10 s)",  # nothing in the first 10 s
        "rtt-lens: 60% (9.0 of 15 s simulated, 25 s)",  # at most every 10 s, when another tenth is done
        "rtt-lens: 69% (10.3 of 15 s simulated, 86 s)",  # but at least once a minute
    ]


@dataclass
class FakeSweepState:
    total: int
    skipped: int
    done: int
    failed: int
    eta_seconds: float | None

    @property
    def remaining(self) -> int:
        return self.total - self.skipped - self.done - self.failed


def test_sweep_progress_in_a_log_counts_runs_and_gives_an_eta() -> None:
    progress, clock = SweepProgressLine(), FakeClock()
    progress.stream, progress.clock, progress.started = FakeTerminal(is_terminal=False), clock, clock.now
    clock.now += 11
    progress(FakeSweepState(total=50, skipped=2, done=11, failed=1, eta_seconds=40.4))
    assert progress.stream.getvalue() == "sweep: 12 of 48 runs finished, 1 failed, ETA 40 s\n"


def test_plotting_reports_its_progress(tiny_result: tcplab.Result, tmp_path: Path) -> None:
    fractions: list[float] = []
    tiny_result.save(tmp_path / "run", progress=fractions.append)
    assert fractions == [0.25, 0.5, 0.75, 1.0]


def test_reproduce_no_plots_writes_the_report_without_figures(run_cli: RunCli, tmp_path: Path) -> None:
    outcome = run_cli("reproduce", "rtt-lens", "--quick", "--no-plots", "-o", tmp_path / "out", "-j", "2")
    assert outcome.code == 0, outcome.stderr
    assert (tmp_path / "out" / "report.html").is_file()
    assert not list((tmp_path / "out").rglob("*.png"))
    outcome = run_cli("reproduce", "rtt-lens", "--quick", "--no-plots", "--format", "svg", "-o", tmp_path / "out")
    assert_bad_input(outcome, "error: --format: --no-plots draws no figures")


# --- confidence intervals the seeds agree on ------------------------------------------------------

TABLE = pl.DataFrame(
    {
        "cc": ["cubic", "bbr"],
        "runs": [3, 3],
        "goodput_mbps_mean": [9.5880768, 9.5846016],
        "goodput_mbps_ci95": [0.0, 0.0],
        "rtt_mean_ms_mean": [295.246761, 47.433],
        "rtt_mean_ms_ci95": [0.0, 0.013041],
    }
)


def test_the_cli_table_says_identical_across_seeds_instead_of_plus_minus_zero() -> None:
    text = format_campaign_table(TABLE, ["cc"])
    assert "± 0.000" not in text
    assert re.search(r"^cubic\s+3\s+9\.588 \*\s+295\.247 \*", text, re.MULTILINE), text
    assert re.search(r"^bbr\s+3\s+9\.585 \*\s+47\.433 ± 0\.013", text, re.MULTILINE), text
    assert text.endswith("\n* identical across seeds")


def test_the_report_table_says_identical_across_seeds_too() -> None:
    page = _table_html(TABLE, ["cc"], {})
    assert "± 0<" not in page and "47.43 ± 0.01304" in page
    assert page.count("title='identical across seeds'") == 3
    assert "* identical across seeds: every seed gave this value." in page


# --- help and list --------------------------------------------------------------------------------

COMMANDS = ["run", "emulate", "sweep", "reproduce", "validate", "compare", "report", "schema", "list", "demo"]


def test_help_reads_well_in_80_columns(run_cli: RunCli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    overview = run_cli("--help").stdout
    commands = overview.split("Commands:\n")[1]
    assert "..." not in commands, "a command's summary is cut off"
    for command in COMMANDS:
        outcome = run_cli(command, "--help")
        assert outcome.code == 0
        lines = outcome.stdout.splitlines()
        assert "<bool>" not in outcome.stdout and "<int>" not in outcome.stdout, command
        assert max(map(len, lines)) <= 80, command
        for line in lines:
            assert not re.search(r"\w-$|\[default:$", line), f"{command}: broken mid-word: {line!r}"


def test_list_writes_parameters_as_a_scenario_does(run_cli: RunCli) -> None:
    listing = run_cli("list").stdout
    assert "in 1/256" not in listing and "1024 1/1024" not in listing
    assert re.search(r"^\s+cwnd_gain\s+= 2\.0\s+PROBE_BW cwnd gain, rounded to a multiple of 1/256$", listing, re.MULTILINE)
    assert re.search(r"^\s+alpha_on_init\s+= 1024\s+initial alpha in 1024ths: 1024 = 1\.0", listing, re.MULTILINE)
    assert re.search(r"^\s+gamma\s+= 1 packet\s", listing, re.MULTILINE)
    assert not re.search(r"= 1 (packets|RTTs|ACKs|rounds)\b", listing)


# --- one overwrite rule ---------------------------------------------------------------------------


def test_compare_refuses_an_occupied_directory_unless_overwrite_and_then_only_its_own(
    run_cli: RunCli,
    tiny_result: tcplab.Result,
    two_flow_result: tcplab.Result,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, second = tiny_result.save(tmp_path / "tiny", plots=False), two_flow_result.save(tmp_path / "two", plots=False)
    assert run_cli("compare", first, second, "-o", tmp_path / "cmp").code == 0
    (tmp_path / "cmp" / "figures" / "stale.svg").write_text("old")
    assert_bad_input(
        run_cli("compare", first, second, "-o", tmp_path / "cmp"), f"error: {tmp_path / 'cmp'}: exists and is not empty"
    )
    assert run_cli("compare", first, second, "-o", tmp_path / "cmp", "--overwrite").code == 0
    assert not (tmp_path / "cmp" / "figures" / "stale.svg").exists(), "replaced as a whole"
    assert_bad_input(
        run_cli("compare", first, second, "-o", first, "--overwrite"),
        f"error: {first}: not an output of tcplab (no compare.html)",
    )
    monkeypatch.chdir(tmp_path)
    defaults = [run_cli("compare", first, second) for _ in range(2)]
    assert [outcome.code for outcome in defaults] == [0, 0]
    assert len(list((tmp_path / "runs").glob("compare-*/compare.html"))) == 2, "each in a new directory"


def test_sweep_resumes_its_own_directory_but_refuses_another_occupied_one(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('name = "c"\nbase = "rtt-lens"\nseeds = 1\n[axes]\nduration = ["0.2s"]\n')
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "notes.txt").write_text("mine")
    outcome = run_cli("sweep", tmp_path / "c.toml", "-o", tmp_path / "occupied")
    assert_bad_input(outcome, f"error: {tmp_path / 'occupied'}: exists, is not empty and holds no campaign")
    assert [p.name for p in (tmp_path / "occupied").iterdir()] == ["notes.txt"]
    assert_bad_input(
        run_cli("sweep", tmp_path / "c.toml", "-o", tmp_path / "c.toml" / "x"),
        f"error: {tmp_path / 'c.toml'}: is a file, not a directory",
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["run", "rtt-lens", "--seed", "abc"], "error: Invalid value for '--seed': "),
        (["bogus"], "error: No such command 'bogus'. (see 'tcplab --help')"),
        (["run"], "error: Missing argument 'SCENARIO'. (see 'tcplab run --help')"),
        (["run", "rtt-lens", "--bogus"], "error: No such option: --bogus (see 'tcplab run --help')"),
    ],
)
def test_a_mistyped_command_line_is_one_line(run_cli: RunCli, arguments: list[str], message: str) -> None:
    outcome = run_cli(*arguments)
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith(message) and outcome.stderr.count("\n") == 1, outcome.stderr
