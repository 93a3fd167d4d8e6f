"""The `tcplab` command line: run a scenario file or a built-in study (in the simulator, or on
this machine's kernel TCP with `--backend emu` / `emulate`) and write its run directory, print
the scenario JSON Schema, list what scenarios can use, and a CUBIC-vs-BBR demo.

Bad input (a scenario error, a missing file, a bad --set or --seed, a TOML syntax error, an
occupied output directory) prints one `error: ...` line on stderr and exits 2, without a
traceback; Ctrl-C or SIGTERM prints `interrupted`, writes nothing and exits 130. Long steps
show their progress on stderr: a bar on a terminal, plain lines in a log (CI, nohup).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import polars as pl
import typer

from . import _core, studies
from . import run as run_scenario
from ._core import ScenarioError
from .progress import ProgressLine, SweepProgressLine, simulated_seconds
from .report import build_report
from .reproduce import Backend, FigureFormat, check_campaign_directory, figure_formats_of
from .reproduce import reproduce as reproduce_study
from .result import SUMMARY_FILE, Result, check_run_name, claimed, write_directory
from .scenario import check_seed, parse_assignment
from .scenario import resolve as resolve_scenario
from .tables import (
    format_campaign_counts,
    format_campaign_table,
    format_catalog,
    format_comparison,
    format_studies,
    format_summary,
)

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INVALID_RUN = 3  # an emulation run marked invalid: written, but not to be trusted
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it

DEFAULT_RUNS_DIRECTORY = Path("runs")
DEMO_STUDY = "rtt-lens"
DEMO_ALGORITHMS = ("cubic", "bbr")


class RunBackend(StrEnum):
    """Where `tcplab run` runs a scenario (`tcplab reproduce` can also run both: `Backend`)."""

    SIM = "sim"
    EMU = "emu"


class Engine(StrEnum):
    """Where a sweep runs (`sweep.ENGINES`)."""

    LOCAL = "local"
    DASK = "dask"


app = typer.Typer(
    name="tcplab",
    help="A packet-level TCP congestion-control lab.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: flags without types, wrapped to the terminal
)


@app.callback(invoke_without_command=True)
def _help_without_a_command(context: typer.Context) -> None:
    """`tcplab` alone prints the help on stdout."""
    if context.invoked_subcommand is None:
        print(context.get_help())


# click's UsageError (typer may vendor click, so it is reached through typer's subclass).
UsageError: type[Exception] = typer.BadParameter.__base__


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `tcplab` script; exits with the command's exit code. A mistyped
    command line (unknown command or option, a value of the wrong type) is one `error:` line
    naming the command's --help, exit 2."""
    with _sigterm_as_interrupt():
        try:
            code = app(args=argv, prog_name="tcplab", standalone_mode=False)
        except UsageError as error:
            context = getattr(error, "ctx", None)
            command = context.command_path if context is not None else "tcplab"
            message = " ".join(error.format_message().split())  # type: ignore[attr-defined]
            # typer checks a choice with pydantic, whose message starts `Value error, `.
            message = message.replace(": Value error, ", ": ")
            print(f"error: {message} (see '{command} --help')", file=sys.stderr)
            code = EXIT_BAD_INPUT
        except (typer.Abort, KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
            code = EXIT_INTERRUPTED
    sys.exit(code if isinstance(code, int) else 0)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM stops it as Ctrl-C does (a KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():  # signals reach only that one
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _interrupt(signal_number: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _output_option(help_text: str) -> Any:
    """An `--output/-o DIR` option (each command says what the directory is)."""
    return Annotated[Path | None, typer.Option("--output", "-o", metavar="DIR", help=help_text)]


def _plots_option(figures: str, help_text: str) -> Any:
    """`--plots/--no-plots`, on by default."""
    return Annotated[
        bool,
        typer.Option("--plots/--no-plots", show_default=False, help=f"Draw {figures}, or not{help_text}. Default: --plots."),
    ]


def _choice_option(choices: type[StrEnum], help_text: str) -> Any:
    """An option that takes one of `choices` (its help names the default)."""
    return Annotated[choices, typer.Option(metavar="|".join(choices), show_default=False, help=help_text)]


# Options shared by `run` and `emulate`.
RunDirectoryOption = _output_option("Run directory, new or empty (default: under runs/, named NAME-YYYYmmdd-HHMMSS).")
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a scenario key, e.g. flows.0.cc=bbr or duration=5s (repeatable).",
    ),
]
PlotsOption = _plots_option("plots/*.png", " (faster with many flows)")
RunBackendOption = _choice_option(
    RunBackend, "sim: the simulator (default); emu: this machine's kernel TCP, as root (exit 3 if the run is marked invalid)."
)
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace the output directory if it holds an earlier output of this command (never any other directory).",
    ),
]
SeedOption = Annotated[
    int | None,
    typer.Option(metavar="N", help="Seed, 0 to 2^64-1, instead of the scenario's."),
]
JobsOption = Annotated[int | None, typer.Option("--jobs", "-j", metavar="N", help="Workers (default: every core).")]
EngineOption = _choice_option(Engine, "local: a process pool on this machine (default); dask: a Dask cluster.")
SchedulerOption = Annotated[
    str | None,
    typer.Option(metavar="URL", help="With --engine dask: an existing scheduler, tcp://host:port."),
]
CampaignDirectoryOption = _output_option("Campaign directory: new, empty or this campaign's (default: runs/NAME).")
StudyDirectoryOption = _output_option("Directory: new, empty or this study's (default: runs/reproduce-STUDY[-quick]).")
CompareDirectoryOption = _output_option(
    "Where compare.html and figures/ go, new or empty (default: under runs/, named compare-YYYYmmdd-HHMMSS)."
)
FiguresOption = _plots_option("figures/*.png", "; report.html is written either way")
CampaignFigureOption = _plots_option(
    "delay-throughput.png (goodput against p95 RTT per combination; with sized flows fct.png, median against p99 FCT)", ""
)
StudyBackendOption = _choice_option(Backend, "sim: the simulator (default); emu: this machine's kernel, as root; or both.")
FormatOption = Annotated[
    list[FigureFormat] | None,
    typer.Option(
        "--format",
        metavar="png|svg|pdf",
        help="Figure format: png (default), svg or pdf (repeatable).",
    ),
]


@app.command()
def run(
    scenario: Annotated[
        str,
        typer.Argument(metavar="SCENARIO", help="A scenario .toml file, a study name, or STUDY:CASE (see `tcplab list`)."),
    ],
    output: RunDirectoryOption = None,
    assignments: SetOption = None,
    seed: SeedOption = None,
    plots: PlotsOption = True,
    overwrite: OverwriteOption = False,
    backend: RunBackendOption = RunBackend.SIM,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="With --backend emu: print the commands, run nothing.")] = False,
    threads: Annotated[
        int | None,
        typer.Option(
            "--threads",
            min=1,
            help="Simulate on 1 or 2 threads (a network whose parts are joined by wires of 1 ms or more, "
            "such as a dumbbell's sides); the results are the same. Default: 2 when two cores are free to use "
            "and the run would gain from them.",
        ),
    ] = None,
) -> None:
    """Run a scenario, print its summary and write its run directory.

    No other tcplab process can write to the run directory while this one runs."""
    with _reported_errors():
        if dry_run and backend != RunBackend.EMU:
            raise ScenarioError("--dry-run goes with --backend emu")
        check_seed(seed, "--seed")
        overrides = dict(parse_assignment(text) for text in assignments or [])
        resolved = resolve_scenario(scenario, overrides)
        if dry_run:
            from .emu import plan_for

            print(plan_for(resolved).commands_text())
            return
        name = resolved.get("name") or "run"
        check_run_name(name)
        with _claimed_output(output, name, overwrite=overwrite) as directory:
            if backend == RunBackend.EMU:
                from .emu import emulate as emulate_scenario

                result = emulate_scenario(scenario, overrides=overrides, seed=seed)
            else:
                with ProgressLine(name, describe=simulated_seconds(resolved)) as progress:
                    result = run_scenario(scenario, seed=seed, overrides=overrides, progress=progress, threads=threads)
            with ProgressLine("plotting") as progress:
                result.save(directory, overwrite=overwrite, plots=plots, progress=progress)
    print(format_summary(result))
    validity = result.summary["run"].get("validity")
    invalid = validity is not None and not validity["valid"]
    if invalid:
        print(f"\nINVALID emulation run: {'; '.join(validity['reasons'])}")
    print(f"\nwrote {directory}")
    if invalid:
        raise typer.Exit(EXIT_INVALID_RUN)


@app.command()
def emulate(
    scenario: Annotated[str | None, typer.Argument(metavar="SCENARIO", help="As for `tcplab run`.")] = None,
    output: RunDirectoryOption = None,
    assignments: SetOption = None,
    plots: PlotsOption = True,
    overwrite: OverwriteOption = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the commands, run nothing.")] = False,
    cleanup: Annotated[
        bool,
        typer.Option(
            "--cleanup", help="Only remove what killed emulation runs left behind (namespaces, processes, temporary files)."
        ),
    ] = False,
) -> None:
    """Run a scenario on this machine's kernel TCP, as root.

    The same as `tcplab run --backend emu`. Exits 3 when the run is marked invalid
    (docs/emulation.md); first removes what killed emulation runs left behind."""
    if cleanup:
        with _reported_errors():
            from .emu.run import clean_leftovers

            removed = clean_leftovers()
        print("\n".join(f"removed {line}" for line in removed) or "nothing left behind by killed emulation runs")
        return
    if scenario is None:
        with _reported_errors():
            raise ScenarioError("SCENARIO: missing; allowed: a scenario file or study, or --cleanup")
    run(
        scenario=scenario,
        output=output,
        assignments=assignments,
        seed=None,
        plots=plots,
        overwrite=overwrite,
        backend=RunBackend.EMU,
        dry_run=dry_run,
    )


@app.command()
def sweep(
    campaign_file: Annotated[Path, typer.Argument(metavar="CAMPAIGN", help="A campaign .toml file.")],
    output: CampaignDirectoryOption = None,
    jobs: JobsOption = None,
    engine: EngineOption = Engine.LOCAL,
    scheduler: SchedulerOption = None,
    plots: CampaignFigureOption = True,
) -> None:
    """Run a campaign's missing runs and print its means and 95 % CIs.

    Runs every combination of the campaign's axes and seeds that its directory does not hold
    yet: run it again after Ctrl-C, a crash or a new axis value and it resumes. Then prints
    the metric means and 95 % confidence intervals over the seeds, and draws each
    combination's goodput against its p95 RTT. Exits 1 if a run failed."""
    from .sweep import Campaign

    with _reported_errors():
        _check_jobs(jobs)
        campaign = Campaign(campaign_file, output)
        check_campaign_directory(campaign.directory)
        with SweepProgressLine() as progress:
            state = campaign.run(jobs=jobs, engine=engine.value, scheduler=scheduler, progress=progress)
        table = campaign.table()
    print(format_campaign_counts(campaign.spec.name, state, campaign.directory))
    if not table.is_empty():
        print()
        print(format_campaign_table(table, list(campaign.spec.axes) + list(campaign.spec.labels)))
        if plots:
            print(f"\nwrote {campaign.save_figure()}")
    if state.failed:
        failures = campaign.index().filter(pl.col("status") == "failed")
        for row in failures.head(5).iter_rows(named=True):
            print(f"failed {row['run_id']}: {row['error']}", file=sys.stderr)
        raise typer.Exit(EXIT_FAILURE)


@app.command()
def reproduce(
    study: Annotated[str | None, typer.Argument(metavar="STUDY", help="A study (none: list them).")] = None,
    output: StudyDirectoryOption = None,
    quick: Annotated[bool, typer.Option("--quick", help="Shorter runs, for a first look.")] = False,
    jobs: JobsOption = None,
    engine: EngineOption = Engine.LOCAL,
    scheduler: SchedulerOption = None,
    figure_format: FormatOption = None,
    plots: FiguresOption = True,
    backend: StudyBackendOption = Backend.SIM,
) -> None:
    """Run a reference study's sweep and write its report.

    Runs every case with every seed, prints the table and writes report.html and figures/.
    Runs already in the directory are kept: after Ctrl-C or a crash it resumes. With no
    STUDY, lists the studies."""
    if study is None:
        print(format_studies(studies.all_studies().values()))
        return
    with _reported_errors():
        _check_jobs(jobs)
        if figure_format and not plots:
            raise ScenarioError("--format: --no-plots draws no figures; give one or the other")
        with SweepProgressLine() as progress:
            done = reproduce_study(
                study,
                output,
                quick=quick,
                jobs=jobs,
                engine=engine.value,
                scheduler=scheduler,
                backend=backend,
                figure_formats=(figure_format or [FigureFormat.PNG]) if plots else (),
                report=False,
                progress=progress,
            )
        with ProgressLine("plotting") as progress:
            page = build_report(done.directory, progress)
    if backend != Backend.SIM:
        print(f"kernel: {len(done.kernel)} cases in {done.directory / 'emu'}")
    quick_note = " (--quick: shortened runs, a first look only)" if quick else ""
    print(format_campaign_counts(f"{study}{quick_note}", done.runs, done.directory))
    if not done.table.is_empty():
        print()
        print(format_campaign_table(done.table, done.axes))
    print(f"\nreport: {page}")
    if done.failed:
        raise typer.Exit(EXIT_FAILURE)


@app.command("validate")
def validate_command(
    quick: Annotated[bool, typer.Option("--quick", help="18 cases of the grid (about 7 minutes of kernel time).")] = False,
    output: _output_option(
        "Directory: new, empty or a validation's own to resume it (default: runs/validate, or runs/redrawn from a cache)."
    ) = None,
    jobs: JobsOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the cases and the kernel time they need; run nothing.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Run the cases on the kernel again, replacing the runs the directory holds.")
    ] = False,
    cases: Annotated[
        list[str] | None,
        typer.Option(
            "--cases", metavar="PATTERN", help="Only the cases matching a shell pattern, e.g. '300M-*-bbr' (repeatable)."
        ),
    ] = None,
    duration: Annotated[
        str | None, typer.Option(metavar="D", help="Every case this long, e.g. 5s (a check by hand; not the grid's numbers).")
    ] = None,
    from_cache: Annotated[
        Path | None,
        typer.Option(
            "--from-cache",
            metavar="DIR",
            help="Compare against the kernel runs cached in DIR (e.g. validation/kernel/MACHINE), without root.",
        ),
    ] = None,
) -> None:
    """Simulator vs this machine's kernel: errors per metric.

    Runs every case (docs/validation.md) on the simulator and, as root, on the kernel, and
    prints the median and worst error per metric beside the acceptance limits; writes the
    tables, figures and report.html. Resumes after Ctrl-C or a crash. Exits 2 without root or
    without an algorithm of the grid."""
    from . import validate as validation

    with _reported_errors():
        _check_jobs(jobs)
        if from_cache is not None and (quick or duration or dry_run or overwrite):
            raise ScenarioError("--from-cache redraws the cached cases as they ran; allowed with it: --cases, -o, -j")
        if from_cache is None:
            if duration is not None:
                from .units import duration_ns

                duration_ns(duration)
            selected = validation.grid.with_duration(
                validation.grid.select(validation.grid.quick() if quick else validation.grid.grid(), cases), duration
            )
            if dry_run:
                print(validation.plan_text(selected))
                return
        with SweepProgressLine() as progress:
            if from_cache is not None:
                done = validation.redraw(from_cache, output, patterns=cases, jobs=jobs, progress=progress)
            else:

                def say(line: str) -> None:
                    progress.erase()
                    print(line, file=sys.stderr, flush=True)

                done = validation.validate(selected, output, jobs=jobs, overwrite=overwrite, progress=progress, say=say)
    print(validation.errors.format_summary(done.summary, done.invalid))
    if done.missing:
        print(f"\nnot compared (a run is missing): {', '.join(done.missing)}")
    print(f"\nreport: {done.report}")
    if done.sim.failed:
        raise typer.Exit(EXIT_FAILURE)


def _check_jobs(jobs: int | None) -> None:
    if jobs is not None and jobs < 1:
        raise ScenarioError(f"--jobs {jobs}: must be at least 1")


@app.command()
def compare(
    directories: Annotated[list[Path], typer.Argument(metavar="DIR...", help="Run directories (2 or more).")],
    output: CompareDirectoryOption = None,
    figure_format: FormatOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Overlay two or more runs: a table and figures.

    For instance the simulator against the kernel, two algorithms or two buffers."""
    from .report.compare import PAGE
    from .report.compare import compare as compare_runs

    with _reported_errors():
        formats = figure_formats_of(figure_format or [FigureFormat.PNG])
        if len(directories) < 2:
            raise ScenarioError("compare: give at least two run directories")
        results = {}
        for directory in directories:
            if not (directory / "summary.json").is_file():
                raise ScenarioError(f"{directory}: not a run directory (no summary.json)")
            name = directory.name if directory.name not in results else str(directory)
            results[name] = Result.load(directory)
        table = format_comparison(results)
        with _claimed_output(output, "compare", overwrite=overwrite, marker=PAGE) as directory:
            write_directory(
                directory,
                lambda staging: compare_runs(results, staging, table, formats),
                overwrite=overwrite,
                marker=PAGE,
            )
    print(table)
    print(f"\nwrote {directory / PAGE}")


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="A `tcplab reproduce` directory.")],
) -> None:
    """Rebuild the report of a reproduced study.

    Writes report.html and figures/ again from the runs in DIR."""
    with _reported_errors():
        if not (directory / "reproduce.json").is_file():
            raise ScenarioError(f"{directory}: not a `tcplab reproduce` directory (no reproduce.json)")
        page = build_report(directory)
    print(f"report: {page}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    print(_core.schema())


@app.command("list")
def list_catalog() -> None:
    """List the algorithms, queues, topologies and studies.

    Each algorithm with its parameters, their defaults and units."""
    print(format_catalog(json.loads(_core.catalog()), studies.all_studies().values()))


@app.command()
def demo(seed: SeedOption = None) -> None:
    """Compare CUBIC and BBR side by side on the rtt-lens study."""
    results = {}
    with _reported_errors():
        check_seed(seed, "--seed")
        for algorithm in DEMO_ALGORITHMS:
            with ProgressLine(label=algorithm) as progress:
                results[algorithm] = run_scenario(DEMO_STUDY, seed=seed, overrides={"flows.0.cc": algorithm}, progress=progress)
    print(f"{DEMO_STUDY}: {studies.all_studies()[DEMO_STUDY].description}\n")
    print(format_comparison(results))
    print(f"\nplots and data: tcplab run {DEMO_STUDY} --set flows.0.cc=bbr -o runs/{DEMO_STUDY}-bbr")


@contextmanager
def _claimed_output(output: Path | None, name: str, *, overwrite: bool, marker: str = SUMMARY_FILE) -> Iterator[Path]:
    """`output`, or else a new runs/NAME-YYYYmmdd-HHMMSS (-2, -3, ... appended if that is
    taken), claimed until the block ends: no other tcplab process writes there meanwhile.
    `--overwrite` replaces only a directory that holds `marker` (see `result.claimed`)."""
    if output is not None:
        with claimed(output, overwrite=overwrite, marker=marker):
            yield output
        return
    base = DEFAULT_RUNS_DIRECTORY / f"{name}-{datetime.now():%Y%m%d-%H%M%S}"
    candidates = itertools.chain([base], (base.with_name(f"{base.name}-{n}") for n in itertools.count(2)))
    for candidate in candidates:
        if os.path.lexists(candidate):
            continue
        with ExitStack() as stack:
            try:
                stack.enter_context(claimed(candidate, overwrite=False))
            except FileExistsError:  # another tcplab process took it in this same second
                continue
            yield candidate
        return


@contextmanager
def _reported_errors() -> Iterator[None]:
    """Turns the errors a user can cause into one line on stderr and an exit code."""
    try:
        yield
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (ScenarioError, FileExistsError, NotADirectoryError) as error:
        _exit_with_error(error, EXIT_BAD_INPUT)
    except (OSError, RuntimeError, subprocess.SubprocessError) as error:
        _exit_with_error(error, EXIT_FAILURE)


def _exit_with_error(error: Exception, code: int) -> None:
    print(f"error: {' '.join(str(error).splitlines())}", file=sys.stderr)
    raise typer.Exit(code) from None
