"""The `tcplab` command line: run a scenario file or a built-in study (in the simulator, or on
this machine's kernel TCP with `--backend emu` / `emulate`) and write its run directory, print
the scenario JSON Schema, list what scenarios can use, and a CUBIC-vs-BBR demo.

Bad input (a scenario error, a missing file, a bad --set, a TOML syntax error, an occupied
output directory) prints one `error: ...` line on stderr and exits 2, without a traceback;
Ctrl-C prints `interrupted`, writes nothing and exits 130.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TextIO

import polars as pl
import typer

from . import _core, studies
from . import run as run_scenario
from ._core import ScenarioError
from .report import build_report, read_metadata, write_metadata
from .result import Result, ensure_writable
from .scenario import parse_assignment
from .scenario import resolve as resolve_scenario

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
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
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `tcplab` script; exits with the command's exit code."""
    app(args=argv, prog_name="tcplab")


# Options shared by `run` and `emulate`.
RunDirectoryOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Run directory (default: runs/NAME-YYYYmmdd-HHMMSS)."),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a scenario key, e.g. flows.0.cc=bbr or duration=5s (repeatable).",
    ),
]
PlotsOption = Annotated[bool, typer.Option("--plots/--no-plots", help="Write plots/*.png.")]
OverwriteOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace the output directory if it is not empty.")
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
    seed: Annotated[int | None, typer.Option(help="Seed, instead of the scenario's.")] = None,
    plots: PlotsOption = True,
    overwrite: OverwriteOption = False,
    backend: Annotated[
        str,
        typer.Option(help="sim (the simulator) or emu (this machine's kernel TCP, as root)."),
    ] = "sim",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="With --backend emu: print the commands, run nothing.")
    ] = False,
) -> None:
    """Run a scenario, print its summary and write its run directory."""
    with _reported_errors():
        if backend not in BACKENDS:
            raise ScenarioError(f"--backend {backend!r}: allowed: {', '.join(BACKENDS)}")
        if dry_run and backend != "emu":
            raise ScenarioError("--dry-run goes with --backend emu")
        overrides = dict(parse_assignment(text) for text in assignments or [])
        if dry_run:
            from .emu import plan_for

            print(plan_for(resolve_scenario(scenario, overrides)).commands_text())
            return
        if output is not None:
            ensure_writable(output, overwrite=overwrite)
        if backend == "emu":
            from .emu import emulate as emulate_scenario

            result = emulate_scenario(scenario, overrides=overrides, seed=seed)
        else:
            with ProgressLine() as progress:
                result = run_scenario(scenario, seed=seed, overrides=overrides, progress=progress)
        directory = output or _fresh_run_directory(result.name)
        result.save(directory, overwrite=overwrite, plots=plots)
    print(format_summary(result))
    validity = result.summary["run"].get("validity")
    if validity is not None and not validity["valid"]:
        print(f"\nINVALID emulation run: {'; '.join(validity['reasons'])}")
    print(f"\nwrote {directory}")


@app.command()
def emulate(
    scenario: Annotated[str, typer.Argument(metavar="SCENARIO", help="As for `tcplab run`.")],
    output: RunDirectoryOption = None,
    assignments: SetOption = None,
    plots: PlotsOption = True,
    overwrite: OverwriteOption = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the commands, run nothing.")] = False,
) -> None:
    """Run a scenario on this machine's kernel TCP (alias of `run --backend emu`)."""
    run(scenario, output, assignments, None, plots, overwrite, "emu", dry_run)


@app.command()
def sweep(
    campaign_file: Annotated[Path, typer.Argument(metavar="CAMPAIGN", help="A campaign .toml file.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Campaign directory (default: runs/NAME)."),
    ] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Workers (default: every core).")] = None,
    engine: Annotated[str, typer.Option(help="local (a process pool) or dask.")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(help="With --engine dask: an existing scheduler, tcp://host:port.")
    ] = None,
) -> None:
    """Run a campaign: every combination of its axes and seeds not already finished, then
    print metric means and 95 % confidence intervals over the seeds. Exits 1 if a run failed."""
    from .sweep import Campaign

    with _reported_errors():
        if engine not in ("local", "dask"):
            raise ScenarioError(f"--engine {engine!r}: allowed: local, dask")
        if jobs is not None and jobs < 1:
            raise ScenarioError(f"--jobs {jobs}: must be at least 1")
        campaign = Campaign(campaign_file, output)
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
        typer.Option("--output", "-o", help="Directory (default: runs/reproduce-STUDY[-quick])."),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Shorter runs, for a first look.")] = False,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Workers (default: every core).")] = None,
    engine: Annotated[str, typer.Option(help="local (a process pool) or dask.")] = "local",
    scheduler: Annotated[
        str | None, typer.Option(help="With --engine dask: an existing scheduler, tcp://host:port.")
    ] = None,
    figure_format: Annotated[
        list[str] | None, typer.Option("--format", help="Figure formats: png (default), svg, pdf (repeatable).")
    ] = None,
    backend: Annotated[
        str, typer.Option(help="sim (the simulator), emu (this machine's kernel, as root) or both.")
    ] = "sim",
) -> None:
    """Run a reference study's sweep (every case, every seed) and print its table; with no
    study, list the studies."""
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
        suffix = "-quick" if quick else ""
        campaign = Campaign.from_spec(study_campaign(found.path, quick), found.path, output or Path("runs") / f"reproduce-{study}{suffix}")
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
                       figure_formats=list(_figure_formats(figure_format)))
        page = build_report(campaign.directory)
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
    output: Annotated[Path, typer.Option("--output", "-o", help="Where compare.html and figures/ go.")] = Path("runs/compare"),
    figure_format: Annotated[
        list[str] | None, typer.Option("--format", help="Figure formats: png (default), svg, pdf (repeatable).")
    ] = None,
) -> None:
    """Overlay runs (simulator vs kernel, two algorithms, two buffers): a table and figures."""
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
        page = compare_runs(results, output, table, formats)
    print(table)
    print(f"\nwrote {page}")


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
    """Rebuild the report (report.html, figures/) of a reproduced study from its runs."""
    with _reported_errors():
        if not (directory / "reproduce.json").is_file():
            raise ScenarioError(f"{directory}: not a `tcplab reproduce` directory (no reproduce.json)")
        page = build_report(directory)
    print(f"report: {page}")


CAMPAIGN_TABLE_METRICS = ("goodput_mbps", "rtt_mean_ms", "retransmits", "fairness_jain")


def format_campaign_table(table: pl.DataFrame, keys: list[str]) -> str:
    """The main metrics as `mean ± CI` per combination of axis values."""
    header = [*keys, "runs", *CAMPAIGN_TABLE_METRICS]
    rows = []
    for row in table.iter_rows(named=True):
        cells = [str(row[k]) for k in keys] + [str(row["runs"])]
        for metric in CAMPAIGN_TABLE_METRICS:
            mean, ci = row.get(f"{metric}_mean"), row.get(f"{metric}_ci95")
            cells.append("-" if mean is None else f"{mean:.3f}" + ("" if ci is None else f" ± {ci:.3f}"))
        rows.append(cells)
    return format_table([header, *rows], "l" * len(keys) + "r" * (1 + len(CAMPAIGN_TABLE_METRICS)))


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenario files."""
    print(_core.schema())


@app.command("list")
def list_catalog() -> None:
    """List the algorithms with their parameters, queue kinds, topologies and studies."""
    catalog = json.loads(_core.catalog())
    lines = ["algorithms  (flows.N.cc = NAME, or { kind = NAME, PARAMETER = VALUE, ... })"]
    for algorithm in catalog["algorithms"]:
        lines.append(f"  {algorithm['name']}: {algorithm['summary']}")
        parameters = [
            [p["name"], f"= {p['default']} {p['unit']}".rstrip(), p["doc"]]
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


@app.command()
def demo(
    seed: Annotated[int | None, typer.Option(help="Seed, instead of the study's.")] = None,
) -> None:
    """Run the rtt-lens study with CUBIC and with BBR and compare them side by side."""
    results = {}
    with _reported_errors():
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
    """A one-line progress bar for a run, drawn on stderr only when it is a terminal and only
    once the run has lasted `DELAY_SECONDS`; erased when the run ends."""

    DELAY_SECONDS = 1.0
    REDRAW_SECONDS = 0.1
    BAR_WIDTH = 30

    def __init__(
        self,
        label: str = "running",
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.clock = clock
        self.started = clock()
        self.last_drawn: float | None = None

    def __call__(self, fraction_done: float) -> None:
        now = self.clock()
        if now - self.started < self.DELAY_SECONDS or not self.stream.isatty():
            return
        if self.last_drawn is not None and now - self.last_drawn < self.REDRAW_SECONDS:
            return
        filled = round(min(max(fraction_done, 0.0), 1.0) * self.BAR_WIDTH)
        bar = "#" * filled + "-" * (self.BAR_WIDTH - filled)
        elapsed = now - self.started
        self.stream.write(f"\r{self.label} [{bar}] {fraction_done:4.0%}  {elapsed:.0f} s")
        self.stream.flush()
        self.last_drawn = now

    def __enter__(self) -> ProgressLine:
        return self

    def __exit__(self, *exception: object) -> None:
        if self.last_drawn is not None:
            self.stream.write("\r\033[K")  # back to the line start, erase to its end
            self.stream.flush()


class SweepProgressLine(ProgressLine):
    """Runs done / failed / remaining and an ETA, on stderr when it is a terminal."""

    def __init__(self) -> None:
        super().__init__(label="sweep")

    def __call__(self, state: Any) -> None:  # type: ignore[override]
        if not self.stream.isatty():
            return
        eta = state.eta_seconds
        eta_text = "" if eta is None else f"  ETA {eta:.0f} s"
        self.stream.write(f"\r{self.label}: {state.done} done, {state.failed} failed, {state.remaining} remaining{eta_text}\033[K")
        self.stream.flush()
        self.last_drawn = self.clock()


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


def _fresh_run_directory(name: str) -> Path:
    """runs/NAME-YYYYmmdd-HHMMSS, with -2, -3, ... appended if that exists already."""
    base = DEFAULT_RUNS_DIRECTORY / f"{name}-{datetime.now():%Y%m%d-%H%M%S}"
    candidates = itertools.chain(
        [base], (base.with_name(f"{base.name}-{n}") for n in itertools.count(2))
    )
    return next(path for path in candidates if not path.exists())


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
