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
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, TextIO

import polars as pl
import typer

from . import _core, studies
from . import run as run_scenario
from ._core import ScenarioError
from .report import build_report, identical_across_seeds, read_metadata, write_metadata
from .result import (
    SUMMARY_FILE,
    Result,
    check_run_name,
    claimed,
    ensure_no_file_in_the_way,
    write_directory,
)
from .scenario import check_seed, parse_assignment
from .scenario import resolve as resolve_scenario
from .units import duration_ns

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INVALID_RUN = 3  # an emulation run marked invalid: written, but not to be trusted
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it

DEFAULT_RUNS_DIRECTORY = Path("runs")
BACKENDS = ("sim", "emu")
DEMO_STUDY = "rtt-lens"
DEMO_ALGORITHMS = ("cubic", "bbr")
# Links below this utilization and without drops are left out of the summary table.
QUIET_LINK_UTILIZATION = 0.01

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


# Options shared by `run` and `emulate`.
RunDirectoryOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="DIR",
        help="Run directory, new or empty (default: under runs/, named NAME-YYYYmmdd-HHMMSS).",
    ),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a scenario key, e.g. flows.0.cc=bbr or duration=5s (repeatable).",
    ),
]
PlotsOption = Annotated[
    bool,
    typer.Option(
        "--plots/--no-plots",
        show_default=False,
        help="Draw plots/*.png, or not (faster with many flows). Default: --plots.",
    ),
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Replace the output directory if it holds an earlier output of this command"
        " (never any other directory).",
    ),
]
SeedOption = Annotated[
    int | None,
    typer.Option(metavar="N", help="Seed, 0 to 2^64-1, instead of the scenario's."),
]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", "-j", metavar="N", help="Workers (default: every core).")
]
EngineOption = Annotated[
    str,
    typer.Option(
        metavar="local|dask",
        show_default=False,
        help="local: a process pool on this machine (default); dask: a Dask cluster.",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(metavar="URL", help="With --engine dask: an existing scheduler, tcp://host:port."),
]
FormatOption = Annotated[
    list[str] | None,
    typer.Option(
        "--format", metavar="FORMAT", help="Figure format: png (default), svg or pdf (repeatable)."
    ),
]


@app.command()
def run(
    scenario: Annotated[
        str,
        typer.Argument(
            metavar="SCENARIO", help="A scenario .toml file, a study name, or STUDY:CASE (see `tcplab list`)."
        ),
    ],
    output: RunDirectoryOption = None,
    assignments: SetOption = None,
    seed: SeedOption = None,
    plots: PlotsOption = True,
    overwrite: OverwriteOption = False,
    backend: Annotated[
        str,
        typer.Option(
            metavar="sim|emu",
            show_default=False,
            help="sim: the simulator (default); emu: this machine's kernel TCP, as root (exit 3 if the run is marked invalid).",
        ),
    ] = "sim",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="With --backend emu: print the commands, run nothing.")
    ] = False,
) -> None:
    """Run a scenario, print its summary and write its run directory.

    No other tcplab process can write to the run directory while this one runs."""
    with _reported_errors():
        if backend not in BACKENDS:
            raise ScenarioError(f"--backend {backend!r}: allowed: {', '.join(BACKENDS)}")
        if dry_run and backend != "emu":
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
            if backend == "emu":
                from .emu import emulate as emulate_scenario

                result = emulate_scenario(scenario, overrides=overrides, seed=seed)
            else:
                with ProgressLine(name, describe=_simulated_seconds(resolved)) as progress:
                    result = run_scenario(scenario, seed=seed, overrides=overrides, progress=progress)
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
        typer.Option("--cleanup", help="Only remove what killed emulation runs left behind (namespaces, processes, temporary files)."),
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
    run(scenario, output, assignments, None, plots, overwrite, "emu", dry_run)


@app.command()
def sweep(
    campaign_file: Annotated[Path, typer.Argument(metavar="CAMPAIGN", help="A campaign .toml file.")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Campaign directory: new, empty or this campaign's (default: runs/NAME).",
        ),
    ] = None,
    jobs: JobsOption = None,
    engine: EngineOption = "local",
    scheduler: SchedulerOption = None,
) -> None:
    """Run a campaign's missing runs and print its means and 95 % CIs.

    Runs every combination of the campaign's axes and seeds that its directory does not hold
    yet: run it again after Ctrl-C, a crash or a new axis value and it resumes. Then prints
    the metric means and 95 % confidence intervals over the seeds. Exits 1 if a run failed."""
    from .sweep import Campaign

    with _reported_errors():
        if engine not in ("local", "dask"):
            raise ScenarioError(f"--engine {engine!r}: allowed: local, dask")
        if jobs is not None and jobs < 1:
            raise ScenarioError(f"--jobs {jobs}: must be at least 1")
        campaign = Campaign(campaign_file, output)
        _check_campaign_directory(campaign.directory)
        with SweepProgressLine() as progress:
            state = campaign.run(jobs=jobs, engine=engine, scheduler=scheduler, progress=progress)
        table = campaign.table()
    print(
        f"{campaign.spec.name}: {state.total} runs, {state.skipped} already done,"
        f" {state.done} run now, {state.failed} failed -> {campaign.directory}"
    )
    if not table.is_empty():
        print()
        print(format_campaign_table(table, list(campaign.spec.axes) + list(campaign.spec.labels)))
    if state.failed:
        failures = campaign.index().filter(pl.col("status") == "failed")
        for row in failures.head(5).iter_rows(named=True):
            print(f"failed {row['run_id']}: {row['error']}", file=sys.stderr)
        raise typer.Exit(EXIT_FAILURE)


@app.command()
def reproduce(
    study: Annotated[str | None, typer.Argument(metavar="STUDY", help="A study (none: list them).")] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Directory: new, empty or this study's (default: runs/reproduce-STUDY[-quick]).",
        ),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Shorter runs, for a first look.")] = False,
    jobs: JobsOption = None,
    engine: EngineOption = "local",
    scheduler: SchedulerOption = None,
    figure_format: FormatOption = None,
    plots: Annotated[
        bool,
        typer.Option(
            "--plots/--no-plots",
            show_default=False,
            help="Draw figures/*.png, or not; report.html is written either way. Default: --plots.",
        ),
    ] = True,
    backend: Annotated[
        str,
        typer.Option(
            metavar="sim|emu|both",
            show_default=False,
            help="sim: the simulator (default); emu: this machine's kernel, as root; or both.",
        ),
    ] = "sim",
) -> None:
    """Run a reference study's sweep and write its report.

    Runs every case with every seed, prints the table and writes report.html and figures/.
    Runs already in the directory are kept: after Ctrl-C or a crash it resumes. With no
    STUDY, lists the studies."""
    from .sweep import Campaign, Progress
    from .sweep.campaign import study_campaign

    if study is None:
        rows = [[s.name, s.description] for s in studies.all_studies().values()]
        print(format_table(rows, "ll"))
        return
    with _reported_errors():
        found = studies.find(study)
        if found is None:
            raise ScenarioError(f"{study}: no such study (studies: {', '.join(studies.all_studies())})")
        if backend not in ("sim", "emu", "both"):
            raise ScenarioError(f"--backend {backend!r}: allowed: sim, emu, both")
        if backend != "sim":
            from .emu.study import emulate_study, require_emulatable

            require_emulatable(study)
        if figure_format and not plots:
            raise ScenarioError("--format: --no-plots draws no figures; give one or the other")
        formats = _figure_formats(figure_format) if plots else ()
        suffix = "-quick" if quick else ""
        campaign = Campaign.from_spec(study_campaign(found.path, quick), found.path, output or Path("runs") / f"reproduce-{study}{suffix}")
        _check_campaign_directory(campaign.directory)
        started = time.perf_counter()
        state = Progress(total=0, skipped=0)
        if backend != "emu":
            with SweepProgressLine() as progress:
                state = campaign.run(jobs=jobs, engine=engine, scheduler=scheduler, progress=progress)
        else:
            campaign.directory.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found.path, campaign.directory / "campaign.toml")
        if backend != "sim":
            kernel = emulate_study(study, quick, campaign.directory)
            print(f"kernel: {len(kernel)} cases in {campaign.directory / 'emu'}")
        table = campaign.table() if backend != "emu" else pl.DataFrame()
        wall = time.perf_counter() - started
        previous = read_metadata(campaign.directory)
        if state.done + state.failed == 0 and previous:  # nothing ran now: keep the sweep's own time
            wall = previous.get("wall_seconds", wall)
        write_metadata(campaign.directory, study=study, quick=quick, engine=engine, jobs=jobs or os.cpu_count(), wall_seconds=wall,
                       figure_formats=list(formats))
        with ProgressLine("plotting") as progress:
            page = build_report(campaign.directory, progress)
    quick_note = " (--quick: shortened runs, a first look only)" if quick else ""
    print(f"{study}{quick_note}: {state.total} runs, {state.skipped} already done, {state.done} run now, {state.failed} failed -> {campaign.directory}")
    if not table.is_empty():
        print()
        print(format_campaign_table(table, list(campaign.spec.axes)))
    print(f"\nreport: {page}")
    if state.failed:
        raise typer.Exit(EXIT_FAILURE)


@app.command()
def compare(
    directories: Annotated[list[Path], typer.Argument(metavar="DIR...", help="Run directories (2 or more).")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="DIR",
            help="Where compare.html and figures/ go, new or empty (default: under runs/,"
            " named compare-YYYYmmdd-HHMMSS).",
        ),
    ] = None,
    figure_format: FormatOption = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Overlay two or more runs: a table and figures.

    For instance the simulator against the kernel, two algorithms or two buffers."""
    from .report.compare import PAGE
    from .report.compare import compare as compare_runs

    with _reported_errors():
        formats = _figure_formats(figure_format)
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


FIGURE_FORMATS = ("png", "svg", "pdf")


def _figure_formats(given: list[str] | None) -> tuple[str, ...]:
    formats = tuple(given or ["png"])
    for fmt in formats:
        if fmt not in FIGURE_FORMATS:
            raise ScenarioError(f"--format {fmt!r}: allowed: {', '.join(FIGURE_FORMATS)}")
    return formats


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


CAMPAIGN_TABLE_METRICS = ("goodput_mbps", "rtt_mean_ms", "retransmits", "fairness_jain")


IDENTICAL_MARK = "*"


def format_campaign_table(table: pl.DataFrame, keys: list[str]) -> str:
    """The main metrics as `mean ± CI` per combination of axis values; a mean that every seed
    gave alike is marked instead (`± 0.000` would look like a bug), with a note below."""
    header = [*keys, "runs", *CAMPAIGN_TABLE_METRICS]
    rows, marked = [], False
    for row in table.iter_rows(named=True):
        cells = [str(row[k]) for k in keys] + [str(row["runs"])]
        for metric in CAMPAIGN_TABLE_METRICS:
            mean, ci = row.get(f"{metric}_mean"), row.get(f"{metric}_ci95")
            if mean is None:
                cells.append("-")
            elif ci is None:
                cells.append(f"{mean:.3f}")
            elif identical_across_seeds(mean, ci):
                cells.append(f"{mean:.3f} {IDENTICAL_MARK}")
                marked = True
            else:
                cells.append(f"{mean:.3f} ± {ci:.3f}" if ci >= 0.0005 else f"{mean:.3f} ± {ci:.1g}")
        rows.append(cells)
    text = format_table([header, *rows], "l" * len(keys) + "r" * (1 + len(CAMPAIGN_TABLE_METRICS)))
    return text + (f"\n{IDENTICAL_MARK} identical across seeds" if marked else "")


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    print(_core.schema())


@app.command("list")
def list_catalog() -> None:
    """List the algorithms, queues, topologies and studies.

    Each algorithm with its parameters, their defaults and units."""
    catalog = json.loads(_core.catalog())
    lines = ["algorithms  (flows.N.cc = NAME, or { kind = NAME, PARAMETER = VALUE, ... })"]
    for algorithm in catalog["algorithms"]:
        lines.append(f"  {algorithm['name']}: {algorithm['summary']}")
        parameters = [
            [p["name"], f"= {_with_unit(p['default'], p['unit'])}", p["doc"]]
            for p in algorithm["params"]
        ]
        if parameters:
            lines.append(_indented(format_table(parameters, "lll"), 6))
    study_rows = []
    for study in studies.all_studies().values():
        study_rows.append([study.name, study.description])
        if study.cases:
            study_rows.append(["", f"cases (NAME:CASE): {', '.join(study.cases)}"])
    for title, rows in [
        ("queues  (queue = NAME)", [[q["name"], q["summary"]] for q in catalog["queues"]]),
        (
            "topologies  (topology.kind = NAME)",
            [[t["name"], t["summary"]] for t in catalog["topologies"]],
        ),
        ("studies  (tcplab run NAME)", study_rows),
    ]:
        lines += ["", title, _indented(format_table(rows, "ll"), 2)]
    print("\n".join(lines))


def _with_unit(value: Any, unit: str) -> str:
    """`1 packet`, `2 packets`, `25 ms`, `true`: a unit that is a plural word loses its `s` at 1."""
    if str(value) == "1" and unit.endswith("s") and unit.isalpha() and len(unit) > 2:
        unit = unit[:-1]
    return f"{value} {unit}".rstrip()


@app.command()
def demo(seed: SeedOption = None) -> None:
    """Compare CUBIC and BBR side by side on the rtt-lens study."""
    results = {}
    with _reported_errors():
        check_seed(seed, "--seed")
        for algorithm in DEMO_ALGORITHMS:
            with ProgressLine(label=algorithm) as progress:
                results[algorithm] = run_scenario(
                    DEMO_STUDY, seed=seed, overrides={"flows.0.cc": algorithm}, progress=progress
                )
    print(f"{DEMO_STUDY}: {studies.all_studies()[DEMO_STUDY].description}\n")
    print(format_comparison(results))
    print(
        f"\nplots and data: tcplab run {DEMO_STUDY} --set flows.0.cc=bbr -o runs/{DEMO_STUDY}-bbr"
    )


class ProgressLine:
    """The progress of a long step on stderr, once it has lasted a while: on a terminal a bar,
    redrawn in place and erased when the step ends; elsewhere (a log, CI, nohup) plain lines
    such as `rtt-lens: 40% (6.0 of 15 s simulated, 3 s)`, the first after `PLAIN_DELAY_SECONDS`,
    then one for each further tenth done but at least every `PLAIN_MAX_SECONDS` and at most
    every `PLAIN_MIN_SECONDS`. `describe(fraction)` says how much that is."""

    DELAY_SECONDS = 1.0
    REDRAW_SECONDS = 0.1
    BAR_WIDTH = 30
    PLAIN_DELAY_SECONDS = 10.0
    PLAIN_MIN_SECONDS = 10.0
    PLAIN_MAX_SECONDS = 60.0

    def __init__(
        self,
        label: str = "running",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        describe: Callable[[float], str] | None = None,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.clock = clock
        self.describe = describe
        self.started = clock()
        self.last_drawn: float | None = None
        self.last_tenth = 0

    def __call__(self, fraction_done: float) -> None:
        fraction = min(max(fraction_done, 0.0), 1.0)
        if self.stream.isatty():
            self._draw_bar(fraction)
        elif self._plain_line_due(fraction):
            detail = f"{self.describe(fraction)}, " if self.describe else ""
            percent = int(fraction * 100)  # never 100 % before the end
            self._print(f"{self.label}: {percent}% ({detail}{self.clock() - self.started:.0f} s)")

    def _draw_bar(self, fraction: float) -> None:
        now = self.clock()
        if now - self.started < self.DELAY_SECONDS:
            return
        if self.last_drawn is not None and now - self.last_drawn < self.REDRAW_SECONDS:
            return
        filled = round(fraction * self.BAR_WIDTH)
        bar = "#" * filled + "-" * (self.BAR_WIDTH - filled)
        elapsed = now - self.started
        self.stream.write(f"\r{self.label} [{bar}] {fraction:4.0%}  {elapsed:.0f} s")
        self.stream.flush()
        self.last_drawn = now

    def _plain_line_due(self, fraction: float) -> bool:
        now, tenth = self.clock(), int(fraction * 10)
        if now - self.started < self.PLAIN_DELAY_SECONDS:
            return False
        if self.last_drawn is not None:
            since = now - self.last_drawn
            if since < self.PLAIN_MIN_SECONDS or (tenth <= self.last_tenth and since < self.PLAIN_MAX_SECONDS):
                return False
        self.last_tenth = tenth
        return True

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)
        self.last_drawn = self.clock()

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exception: object) -> None:
        if self.last_drawn is not None and self.stream.isatty():
            self.stream.write("\r\033[K")  # back to the line start, erase to its end
            self.stream.flush()


class SweepProgressLine(ProgressLine):
    """Runs done / failed / remaining and an ETA: on a terminal redrawn after every run,
    elsewhere as plain lines like `sweep: 12 of 48 runs finished, 0 failed, ETA 40 s`."""

    def __init__(self) -> None:
        super().__init__(label="sweep")

    def __call__(self, state: Any) -> None:  # type: ignore[override]
        eta = "" if state.eta_seconds is None else f"ETA {state.eta_seconds:.0f} s"
        if self.stream.isatty():
            counts = f"{state.done} done, {state.failed} failed, {state.remaining} remaining"
            self.stream.write(f"\r{self.label}: {counts}{'  ' + eta if eta else ''}\033[K")
            self.stream.flush()
            self.last_drawn = self.clock()
            return
        todo, finished = state.total - state.skipped, state.done + state.failed
        if todo and self._plain_line_due(finished / todo):
            counts = f"{finished} of {todo} runs finished, {state.failed} failed"
            self._print(f"{self.label}: {counts}{', ' + eta if eta else ''}")


def format_summary(result: Result) -> str:
    """The summary of a run: a headline, a table of flows, a table of links, Jain's index."""
    summary, run_info = result.summary, result.summary["run"]
    if run_info.get("backend") == "emu":
        headline = (
            f"{result.name}: {run_info['sim_seconds']:g} s on this machine's kernel TCP"
            f" in {run_info['wall_seconds']:.2f} s (emulation)"
        )
    else:
        headline = (
            f"{result.name}: {run_info['sim_seconds']:g} s simulated"
            f" in {run_info['wall_seconds']:.2f} s ({run_info['events']:,} events,"
            f" seed {run_info['seed']})"
        )
    lines = [headline, "", _flow_table(summary["flows"]), "", _link_table(summary["links"])]
    if summary.get("radio"):
        lines += ["", _radio_table(summary["radio"])]
    if summary.get("wifi"):
        lines += ["", _wifi_table(summary["wifi"])]
    lines += ["", f"Jain's fairness index: {summary['fairness_jain']:.3f}"]
    return "\n".join(lines)


def _flow_table(flows: list[dict[str, Any]]) -> str:
    header = ["flow", "cc", "goodput Mbps", "RTT mean ms", "RTT p95 ms", "retransmits", "retx %"]
    rows = [
        [
            str(flow["id"]),
            flow["cc"],
            _number(flow["goodput_mbps"], 2),
            _number(flow["rtt_mean_ms"], 1),
            _number(flow["rtt_p95_ms"], 1),
            str(flow["retransmits"]),
            _number(flow["retransmit_pct"], 2),
        ]
        for flow in flows
    ]
    return format_table([header, *rows], "llrrrrr")


def _link_table(links: list[dict[str, Any]]) -> str:
    """The links that carried traffic or dropped packets; a note counts the others."""
    shown = [
        link for link in links if link["drops"] or link["utilization"] >= QUIET_LINK_UTILIZATION
    ]
    rows = [
        [link["id"], f"{link['utilization']:.1%}", str(link["drops"]), str(link["ce_marks"])]
        for link in shown
    ]
    table = format_table([["link", "utilization", "drops", "CE marks"], *rows], "lrrr")
    quiet = len(links) - len(shown)
    if not quiet:
        return table
    return f"{table}\n({quiet} more under {QUIET_LINK_UTILIZATION:.0%} utilization without drops)"


def _radio_table(users: list[dict[str, Any]]) -> str:
    header = ["user", "SINR mean dB", "line of sight", "DL PHY mean Mbps", "RLC drops DL/UL"]
    header.append("HARQ retx DL/UL")
    rows = [
        [
            user["ue"],
            _number(user["sinr_mean_db"], 1),
            f"{user['los_fraction']:.0%}",
            _number(user["capacity_mean_mbps"], 0),
            f"{user['rlc_drops']}/{user['ul_rlc_drops']}",
            f"{user['harq_retx']}/{user['ul_harq_retx']}",
        ]
        for user in users
    ]
    return format_table([header, *rows], "lrrrrr")


def _wifi_table(bss: dict[str, Any]) -> str:
    header = ["device", "PPDUs", "collisions", "retries", "MAC drops", "rx MPDUs ok/err/coll"]
    rows = [
        [
            device["device"] + (" (AP)" if position == 0 else ""),
            str(device["ppdus"]),
            str(device["collisions"]),
            str(device["retries"]),
            str(device["mac_drops"]),
            f"{device['rx_ok_mpdus']}/{device['rx_error_mpdus']}/{device['rx_collision_mpdus']}",
        ]
        for position, device in enumerate(bss["devices"])
    ]
    headline = (
        f"WiFi: MCS {bss['mcs']} ({bss['phy_rate_mbps']:.1f} Mbps PHY) at {bss['snr_db']:.2f} dB SNR,"
        f" medium busy {bss['airtime_busy']:.0%}, drop ratio at the AP {bss['ap_drop_ratio']:.2%}"
    )
    return headline + "\n" + format_table([header, *rows], "lrrrrr")


def format_comparison(results: Mapping[str, Result]) -> str:
    """Flow 0 and the busiest link of each run, one column per run."""
    columns = {name: _comparison_column(result.summary) for name, result in results.items()}
    metrics = next(iter(columns.values())).keys()
    rows = [["", *columns]] + [
        [metric, *(column[metric] for column in columns.values())] for metric in metrics
    ]
    return format_table(rows, "l" + "r" * len(columns))


def _comparison_column(summary: Mapping[str, Any]) -> dict[str, str]:
    flow = summary["flows"][0]
    bottleneck = max(summary["links"], key=lambda link: link["utilization"])
    return {
        "goodput Mbps": _number(flow["goodput_mbps"], 2),
        "RTT mean ms": _number(flow["rtt_mean_ms"], 1),
        "RTT p95 ms": _number(flow["rtt_p95_ms"], 1),
        "RTT p99 ms": _number(flow["rtt_p99_ms"], 1),
        "retransmits": str(flow["retransmits"]),
        "busiest link": bottleneck["id"],
        "its utilization": f"{bottleneck['utilization']:.1%}",
        "its drops": str(bottleneck["drops"]),
        "its mean backlog pkts": _number(bottleneck["backlog_mean_pkts"], 1),
        "wall time s": f"{summary['run']['wall_seconds']:.2f}",
    }


def format_table(rows: list[list[str]], align: str) -> str:
    """Rows of cells as aligned text; `align` has one `l` (left) or `r` (right) per column."""
    widths = [max(map(len, column)) for column in zip(*rows, strict=True)]
    return "\n".join(
        "  ".join(
            cell.ljust(width) if side == "l" else cell.rjust(width)
            for cell, width, side in zip(row, widths, align, strict=True)
        ).rstrip()
        for row in rows
    )


def _number(value: float | None, decimals: int) -> str:
    return "-" if value is None else f"{value:.{decimals}f}"


def _indented(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())


@contextmanager
def _claimed_output(
    output: Path | None, name: str, *, overwrite: bool, marker: str = SUMMARY_FILE
) -> Iterator[Path]:
    """`output`, or else a new runs/NAME-YYYYmmdd-HHMMSS (-2, -3, ... appended if that is
    taken), claimed until the block ends: no other tcplab process writes there meanwhile.
    `--overwrite` replaces only a directory that holds `marker` (see `result.claimed`)."""
    if output is not None:
        with claimed(output, overwrite=overwrite, marker=marker):
            yield output
        return
    base = DEFAULT_RUNS_DIRECTORY / f"{name}-{datetime.now():%Y%m%d-%H%M%S}"
    candidates = itertools.chain(
        [base], (base.with_name(f"{base.name}-{n}") for n in itertools.count(2))
    )
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


def _check_campaign_directory(directory: Path) -> None:
    """A campaign resumes in its own directory; another non-empty one is refused."""
    ensure_no_file_in_the_way(directory)
    if directory.is_dir() and any(directory.iterdir()) and not (directory / "campaign.toml").is_file():
        raise FileExistsError(
            f"{directory}: exists, is not empty and holds no campaign (no campaign.toml);"
            " allowed: a new or empty directory, or a campaign's own to resume it"
        )


def _simulated_seconds(scenario: Mapping[str, Any]) -> Callable[[float], str]:
    seconds = duration_ns(scenario["duration"]) / 1e9
    return lambda fraction: f"{fraction * seconds:.1f} of {seconds:g} s simulated"


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
