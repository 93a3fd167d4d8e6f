"""Progress of long steps on stderr, as the CLI shows it: a bar redrawn in place on a terminal,
plain lines now and then in a log (CI, nohup). `ProgressLine` takes a fraction done (the
callback of `tcplab.run` and `Result.save`), `SweepProgressLine` a campaign's counts (the
callback of `Campaign.run` and `tcplab.reproduce.reproduce`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from .units import duration_ns


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
        self.erase()

    def erase(self) -> None:
        """Erases the bar, if one is drawn (before other lines are written to the terminal)."""
        if self.last_drawn is not None and self.stream.isatty():
            self.stream.write("\r\033[K")  # back to the line start, erase to its end
            self.stream.flush()
            self.last_drawn = None


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


def simulated_seconds(scenario: Mapping[str, Any]) -> Callable[[float], str]:
    """The `describe` of a run's ProgressLine: `6.0 of 15 s simulated`."""
    seconds = duration_ns(scenario["duration"]) / 1e9
    return lambda fraction: f"{fraction * seconds:.1f} of {seconds:g} s simulated"
