"""Progress of a run on stderr: one redrawn bar with ETA on a terminal, plain status lines elsewhere.

CI logs and pipes get one line per call that finishes (or fails, or was kept from an earlier run), each
with the count and ETA, and nothing else: no carriage returns or colours to garble a log.  A terminal gets
a single bar that is redrawn in place; failures are printed above it so they stay visible.
"""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from voice.app.run.runner import CallStatus
from voice.core.clock import Clock, MonotonicClock
from voice.metrics.reduce import percentile
from voice.metrics.simulator import outcome_words

BAR_WIDTH = 24


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def describe(status: CallStatus) -> str:
    """A call's outcome in a few words: ``completed, 4/4 answered, latency p50 640 ms, rhythm 4.25``."""
    m = status.metrics
    if status.state == "kept":
        return "done earlier, kept"
    if status.state == "calling":
        return "calling"
    if m is None:
        return status.detail or status.state
    words = [outcome_words(m)]
    if status.detail:
        words.append(status.detail)
    else:
        words.append(f"{m.turns_completed}/{m.caller_turns_planned} answered")
        p50 = percentile(m.latencies_ms, 50)
        if p50 is not None:
            words.append(f"latency p50 {p50:.0f} ms")
        if m.rhythm is not None:
            words.append(f"rhythm {m.rhythm:.2f}")
    return ", ".join(words)


class Progress:
    """Counts finished calls against ``total`` and reports each status (callable as an ``on_status``)."""

    def __init__(
        self,
        total: int,
        *,
        stream: TextIO | None = None,
        tty: bool | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.clock = clock or MonotonicClock()
        self.finished = 0  # calls accounted for (kept, done or failed)
        self.made = 0  # calls made by this process (the ETA's rate)
        self.failed = 0
        self.running: dict[str, str] = {}
        self._start_ns: int | None = None
        self._drawn = False

    def eta_s(self) -> float | None:
        """Seconds to go at this session's pace; None before the first call of this session finished."""
        if self.made == 0 or self._start_ns is None:
            return None
        elapsed = (self.clock.now_ns() - self._start_ns) / 1e9
        return elapsed / self.made * (self.total - self.finished)

    def __call__(self, status: CallStatus) -> None:
        if status.state == "note":  # e.g. what a resumed folder held: said once, above the calls
            self._clear()
            print(f"{status.target}: {status.detail}", file=self.stream, flush=True)
            return
        key = f"{status.target}/{status.call_id}"
        if status.state == "calling":
            if self._start_ns is None:
                self._start_ns = self.clock.now_ns()
            self.running[key] = status.call_id
            if self.tty:
                self._draw()
            return
        self.running.pop(key, None)
        self.finished += 1
        if status.state != "kept":
            self.made += 1
        if status.state == "failed" or (status.metrics is not None and status.metrics.failed):
            self.failed += 1
        line = f"[{self.finished}/{self.total}] {key}: {describe(status)}"
        if not self.tty:
            eta = self.eta_s()
            tail = f" (ETA {format_duration(eta)})" if eta is not None and self.finished < self.total else ""
            print(line + tail, file=self.stream, flush=True)
            return
        if status.state == "failed" or (status.metrics is not None and status.metrics.failed):
            self._clear()
            print(line, file=self.stream, flush=True)
        self._draw()

    def bar(self) -> str:
        """The one-line bar: ``[#####.....] 12/40 30%  ETA 3m05s  2 failed  calling: a, b``."""
        done = self.finished / self.total if self.total else 1.0
        filled = round(BAR_WIDTH * done)
        eta = self.eta_s()
        parts = [
            "[" + "#" * filled + "." * (BAR_WIDTH - filled) + "]",
            f"{self.finished}/{self.total}",
            f"{100 * done:.0f}%",
            "ETA " + (format_duration(eta) if eta is not None else "--"),
        ]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.running:
            parts.append("calling: " + ", ".join(self.running.values()))
        return "  ".join(parts)

    def _draw(self) -> None:
        width = shutil.get_terminal_size((100, 20)).columns - 1
        self.stream.write("\r\x1b[2K" + self.bar()[:width])
        self.stream.flush()
        self._drawn = True

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self._drawn = False

    def close(self) -> None:
        """End the bar's line so what follows starts on a fresh one."""
        if self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
