"""The live progress line on stderr: case i/n, which case, elapsed, ETA.

On a terminal one line is rewritten in place (``\\r``) every second; otherwise (CI logs) one line is
printed as each case finishes.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, TextIO


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(max(seconds, 0)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def estimate_remaining(done_durations: list[float], total: int, current_elapsed: float) -> float | None:
    """Mean finished-case time times the cases left (the current one counts as partly done)."""
    if not done_durations:
        return None
    mean = sum(done_durations) / len(done_durations)
    left = total - len(done_durations)
    return max(mean * left - current_elapsed, 0.0)


class Progress:
    def __init__(self, total: int, *, stream: TextIO | None = None, live: bool | None = None, clock: Callable[[], float] = time.monotonic):
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self.started = clock()
        self.durations: list[float] = []
        self.index = 0
        self.label = ""
        self.case_started = self.started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._width = 0
        self._running = False

    def _line(self) -> str:
        now = self.clock()
        eta = estimate_remaining(self.durations, self.total, now - self.case_started)
        return (
            f"[{self.index}/{self.total}] {self.label}  "
            f"case {format_duration(now - self.case_started)}  elapsed {format_duration(now - self.started)}  eta {format_duration(eta)}"
        )

    def _redraw(self) -> None:
        with self._lock:
            line = self._line()
            self.stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
            self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            if self._running:
                self._redraw()

    def start_case(self, index: int, label: str) -> None:
        self.index, self.label, self.case_started = index, label, self.clock()
        self._running = True
        if self.live:
            self._redraw()
            if self._ticker is None:
                self._ticker = threading.Thread(target=self._tick, daemon=True)
                self._ticker.start()

    def finish_case(self, status: str) -> None:
        self._running = False
        duration = self.clock() - self.case_started
        self.durations.append(duration)
        eta = estimate_remaining(self.durations, self.total, 0.0)
        line = (
            f"[{self.index}/{self.total}] {self.label}: {status} in {duration:.1f}s  "
            f"elapsed {format_duration(self.clock() - self.started)}  eta {format_duration(eta)}"
        )
        with self._lock:
            if self.live:
                self.stream.write("\r" + line.ljust(self._width) + "\n")
                self._width = 0
            else:
                self.stream.write(line + "\n")
            self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
