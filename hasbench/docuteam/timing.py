"""Time in a DocuTeam session: the session clock and the debounce of edits."""

from __future__ import annotations

import time

from hasbench.docuteam.document import EditOp


class SystemClock:
    """Seconds since the session started, from the monotonic clock."""

    def __init__(self) -> None:
        self._start = time.monotonic()

    def now(self) -> float:
        """Seconds elapsed."""
        return time.monotonic() - self._start


class ManualClock:
    """A clock that moves only when told to (scripted and simulated sessions)."""

    def __init__(self, start: float = 0.0) -> None:
        self.t = start

    def now(self) -> float:
        """The current time."""
        return self.t

    def advance(self, seconds: float) -> float:
        """Move the clock forward; returns the new time."""
        if seconds < 0:
            raise ValueError("a clock cannot go back")
        self.t += seconds
        return self.t


class EditBatcher:
    """Collects edits until none has arrived for ``debounce`` seconds."""

    def __init__(self, debounce: float) -> None:
        self.debounce = debounce
        self.pending: list[EditOp] = []
        self.last_at: float | None = None

    def add(self, op: EditOp, at: float) -> None:
        """Add an edit made at time ``at``."""
        self.pending.append(op)
        self.last_at = at

    def due(self, now: float) -> bool:
        """True when there are edits and the last is at least ``debounce`` old."""
        return bool(self.pending) and now - (self.last_at or 0.0) >= self.debounce

    def take(self) -> list[EditOp]:
        """Remove and return the pending edits."""
        batch, self.pending, self.last_at = self.pending, [], None
        return batch
