"""Live progress of long work: a line in the notebook, a bar in the terminal.

:class:`Progress` counts finished items (episodes). In a notebook it shows one HTML line
that is updated in place, so the executed copy keeps the final state ("36 of 36 episodes
in 4.2 s") rather than a frozen bar; in a terminal it is a tqdm bar on stderr. When a
notebook runs under ``hasbench notebook`` (papermill), the kernel's output does not reach
the terminal, so each update is also appended to the file named by the environment
variable :data:`PROGRESS_FILE`, and :class:`Relay` (in the ``hasbench notebook`` process)
shows it there as it happens.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

PROGRESS_FILE = "HASBENCH_PROGRESS_FILE"
"""Environment variable: a file the kernel appends progress lines to (set by run_notebook)."""
INTERVAL = 0.25
"""Seconds between two redraws of a notebook line or a relayed update."""


def in_notebook() -> bool:
    """Whether this code runs in a Jupyter kernel (where HTML can be shown and updated)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def duration(seconds: float) -> str:
    """A duration for people: ``40 ms``, ``4.2 s``, ``42 s``, ``3 min 5 s``, ``1 h 20 min``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


class Progress:
    """Count finished items and show how far the work is, with the time it should still take.

    Args:
        total: items to do.
        description: what is being done (e.g. the experiment's name).
        unit: what an item is.
        enabled: False shows nothing (the count is still kept).
    """

    def __init__(
        self, total: int, description: str, unit: str = "episode", enabled: bool = True
    ) -> None:
        self.total, self.description, self.unit = total, description, unit
        self.done = 0
        self.started = time.monotonic()
        self._drawn = 0.0
        self._handle: Any = None
        self._bar: Any = None
        self._relay = os.environ.get(PROGRESS_FILE) if enabled else None
        if not enabled:
            return
        if in_notebook():
            from IPython.display import display

            self._handle = display(self._bundle(), raw=True, display_id=True)
        else:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=description, unit=unit, file=sys.stderr)
        self._send(final=False)

    def update(self, n: int = 1) -> None:
        """``n`` more items are done."""
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        now = time.monotonic()
        if now - self._drawn >= INTERVAL or self.done >= self.total:
            self._drawn = now
            self._draw()
            self._send(final=False)

    def write(self, text: str) -> None:
        """Show a message on stderr, above the bar (relayed under ``hasbench notebook``)."""
        if self._bar is not None:
            self._bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr)
        if self._relay is not None:
            announce(text)

    def close(self) -> None:
        """The work ended: show the final count and the time it took."""
        if self._bar is not None:
            self._bar.close()
        self._draw()
        self._send(final=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def text(self) -> str:
        """``rq1: 12 of 36 episodes, 3.1 s, about 6.2 s left`` (or ``... in 9.3 s`` at the end)."""
        elapsed = time.monotonic() - self.started
        head = f"{self.description}: {self.done} of {self.total} {self.unit}s"
        if self.done >= self.total:
            return f"{head} in {duration(elapsed)}"
        left = elapsed / self.done * (self.total - self.done) if self.done else None
        rest = f", about {duration(left)} left" if left is not None else ""
        return f"{head}, {duration(elapsed)}{rest}"

    def html(self) -> str:
        """The notebook line: a progress bar and :meth:`text`."""
        maximum = max(self.total, 1)
        return (
            f"<div class='hb-progress' style='font-family: sans-serif; font-size: 12px'>"
            f"<progress value='{min(self.done, maximum)}' max='{maximum}' "
            f"style='width: 220px; vertical-align: middle'></progress> {self.text()}</div>"
        )

    def _bundle(self) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.text()}

    def _draw(self) -> None:
        if self._handle is not None:
            self._handle.update(self._bundle(), raw=True)

    def _send(self, final: bool) -> None:
        if self._relay is None:
            return
        line = json.dumps({"description": self.description, "unit": self.unit,
                           "done": self.done, "total": self.total, "final": final})  # fmt: skip
        with open(self._relay, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def announce(text: str) -> None:
    """Show a line on the terminal running this notebook (under ``hasbench notebook``)."""
    path = os.environ.get(PROGRESS_FILE)
    if path is not None:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"message": text}) + "\n")


class Relay:
    """Shows on this terminal the progress a notebook kernel appends to a file.

    Used as a context manager around a papermill run: it sets :data:`PROGRESS_FILE` for
    the kernel it starts, and a background thread draws each piece of work as a tqdm bar
    until the run ends; cells are announced as they start (:meth:`cell`).

    Args:
        path: the file to relay (created empty).
        output: where to draw (stderr by default).
    """

    def __init__(self, path: Path, output: TextIO | None = None) -> None:
        self.path = path
        self.output = output if output is not None else sys.stderr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._bars: dict[str, Any] = {}
        self._previous: str | None = None
        self._offset = 0
        self._lock = threading.Lock()

    def __enter__(self) -> Relay:
        self.path.write_text("", encoding="utf-8")
        self._previous = os.environ.get(PROGRESS_FILE)
        os.environ[PROGRESS_FILE] = str(self.path)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for bar in self._bars.values():
            bar.close()
        if self._previous is None:
            os.environ.pop(PROGRESS_FILE, None)
        else:
            os.environ[PROGRESS_FILE] = self._previous
        self.path.unlink(missing_ok=True)

    def cell(self, number: int, total: int, source: str) -> None:
        """Announce that cell ``number`` of ``total`` starts (its first line)."""
        self._drain()  # what the previous cell reported comes first
        first = next((line for line in source.splitlines() if line.strip()), "")
        self.output.write(f"cell {number} of {total}: {first[:70]}\n")
        self.output.flush()

    def _follow(self) -> None:
        while True:
            stopping = self._stop.is_set()
            self._drain()
            if stopping:
                return
            self._stop.wait(INTERVAL)

    def _drain(self) -> None:
        """Show every complete line appended since the last call."""
        with self._lock, open(self.path, encoding="utf-8") as handle:
            handle.seek(self._offset)
            for line in handle:
                if line.endswith("\n"):
                    self._offset += len(line.encode("utf-8"))
                    self._show(json.loads(line))

    def _show(self, update: dict[str, Any]) -> None:
        from tqdm import tqdm

        if "message" in update:
            self.output.write(update["message"] + "\n")
            self.output.flush()
            return
        key = update["description"]
        bar = self._bars.get(key)
        if bar is None:
            bar = tqdm(total=update["total"], desc=key, unit=update["unit"], file=self.output)
            self._bars[key] = bar
        bar.update(update["done"] - bar.n)
        if update["final"]:
            bar.close()
            del self._bars[key]
