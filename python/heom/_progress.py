"""Progress of long calls: a bar redrawn in place on a terminal, plain lines every 10% otherwise."""
from __future__ import annotations

import math
import sys
import time


class Progress:
    """Called with how far a call has come (value from `start` to `end`); shows nothing for calls that
    end within `delay` seconds, or when disabled."""

    def __init__(self, label: str, start: float, end: float, enabled: bool = True, delay: float = 0.5,
                 stream=None):
        self.label = label
        self.start, self.end = float(start), float(end)
        self.enabled = bool(enabled)
        self.delay = delay
        self.stream = stream if stream is not None else sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.began = time.monotonic()
        self.shown = False
        self.next_line = 0.1

    def fraction(self, value: float) -> float:
        span = self.end - self.start
        return 1.0 if span <= 0 else min(1.0, max(0.0, (value - self.start) / span))

    def __call__(self, value, *_) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.began
        if elapsed < self.delay:
            return
        f = self.fraction(value)
        eta = elapsed * (1 - f) / f if f > 0 else float("nan")
        if self.tty:
            bar = "#" * int(30 * f) + " " * (30 - int(30 * f))
            self.stream.write(f"\r{self.label} [{bar}] {100 * f:5.1f}%  {elapsed:6.1f} s, {eta:6.1f} s left")
            self.stream.flush()
            self.shown = True
        elif f >= self.next_line:
            self.stream.write(f"{self.label}: {100 * f:.0f}% after {elapsed:.1f} s, about {eta:.1f} s left\n")
            self.stream.flush()
            self.next_line = (int(f * 10) + 1) / 10
            self.shown = True

    def close(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\n")
            self.stream.flush()


class CountProgress(Progress):
    """Progress counted in items (an ensemble's members): called with (finished, total)."""

    def __init__(self, label: str, total: int, enabled: bool = True, delay: float = 0.5):
        super().__init__(label, 0, total, enabled, delay)

    def __call__(self, finished, total=None, *_) -> None:
        super().__call__(finished)


class ResidualProgress(Progress):
    """Progress of an iterative solve, called with (iterations, residual): how far the residual has
    fallen from its first value towards `tolerance`, on a log scale."""

    def __init__(self, label: str, tolerance: float, enabled: bool = True, delay: float = 0.5, stream=None):
        super().__init__(label, 0.0, 1.0, enabled, delay, stream)
        self.base = label
        self.tolerance = float(tolerance)
        self.first = None

    def __call__(self, iterations, residual=None, *_) -> None:
        if residual is None or not residual > 0:
            return
        if self.first is None:
            self.first = residual
        fallen = math.log(self.first / residual) if residual < self.first else 0.0
        needed = math.log(self.first / self.tolerance) if self.tolerance < self.first else 0.0
        self.label = f"{self.base} (iteration {iterations}, residual {residual:.1e})"
        super().__call__(1.0 if needed <= 0 else fallen / needed)
