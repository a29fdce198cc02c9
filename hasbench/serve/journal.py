"""Writing as things happen: JSON Lines files that are complete up to the last event.

A served application writes every record (a trace event, a survey answer, ...) to its
file the moment it exists, one line each, flushed at once: stopping the server, or the
server dying, loses nothing that was done. A file that lacks its closing record is what
:func:`next_path` skips and what the application reports at the next start as
incomplete.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO


class Journal:
    """An append-only JSON Lines file, each line flushed as it is written.

    Args:
        path: the file (its folder is made; an existing file is appended to).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = self.path.open("a", encoding="utf-8")

    def write(self, line: str) -> None:
        """Append one line (without its newline) and flush it to the operating system.

        Raises:
            ValueError: the journal is closed, or the line holds a newline.
        """
        if self._file is None:
            raise ValueError(f"{self.path}: the journal is closed")
        if "\n" in line:
            raise ValueError(f"{self.path}: a journal line cannot hold a newline")
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file (writing afterwards is an error)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def next_path(folder: str | Path, stem: str, suffix: str = ".jsonl") -> Path:
    """The first free ``<stem>-NNN<suffix>`` in ``folder`` (numbered from 001)."""
    folder = Path(folder)
    number = 1
    while (path := folder / f"{stem}-{number:03d}{suffix}").exists():
        number += 1
    return path
