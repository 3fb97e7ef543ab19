"""The time budget of one call: every solve gets what is left of it, and a spent budget stops the
call."""

from __future__ import annotations

import time

__all__ = ["TimeBudget"]


class TimeBudget:
    """Wall-clock seconds for one call (``seconds=None``: no limit), counted from construction.

    Parameters
    ----------
    seconds : the limit in seconds, or ``None``.
    start : the ``time.perf_counter()`` value the budget counts from (default: now).
    """

    __slots__ = ("seconds", "start")

    def __init__(self, seconds: float | None, start: float | None = None):
        self.seconds = seconds
        self.start = time.perf_counter() if start is None else start

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def left(self, floor: float | None = None) -> float | None:
        """Seconds left (``None`` without a limit), raised to ``floor`` when given (a solver needs a
        positive limit; one that runs out reports it)."""
        if self.seconds is None:
            return None
        rest = self.seconds - self.elapsed()
        return rest if floor is None else max(rest, floor)

    def expired(self, margin: float = 0.0) -> bool:
        """Whether the limit is spent, or less than ``margin`` seconds of it are left."""
        return self.seconds is not None and self.elapsed() >= self.seconds - margin

    def part(self, seconds: float | None) -> TimeBudget:
        """A budget for one stage of the call: ``seconds`` from now (``None``: no limit of its own),
        ending with this budget if that comes first."""
        rest = self.left()
        if seconds is None or rest is None:
            return TimeBudget(rest if seconds is None else seconds)
        return TimeBudget(min(seconds, max(rest, 0.0)))
