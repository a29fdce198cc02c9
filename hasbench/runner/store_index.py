"""The results store's index: what each record's table row reads, kept beside the records.

``<dir>/index.jsonl`` holds a header line, then one line per written record: its key, the
signature of its file (size, modification and change times in ns, inode) and its
*summary*, the parts of the record a results table reads (:func:`summarize`). Loading a
store reads a summary from here instead of decoding the record (a few KB of JSON each, most
of it evidence no table reads) when the record's file still has the signature written
beside it; any other record is read whole, checked, and its line appended, so the index can
be missing, cut short or out of date without changing what loads. Later lines win; a line
that cannot be read is ignored.

A run opens the index (:func:`open_index`) and appends a line for every record it writes
(:func:`add`); a folder without an index (a worker's scratch folder) gets none. Every write
to a record replaces its file or changes its size or times, so a record changed since its
line was written is read whole again and, when damaged, reported. What the signature cannot
see is a change that keeps the file's inode, size and both times, which only a write in the
same clock tick as the record's own, or a clock set back, can make.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hasbench.vocab import text_hash

INDEX = "index.jsonl"
"""The index's file name in the store."""

TOP_FIELDS = (
    "key", "task_id", "domain", "pattern", "setting", "backends", "seed", "error", "trace",
    "trace_bytes", "trace_sha256", "judge_scored",
)  # fmt: skip
"""The fields of a record its summary keeps whole."""

PART_FIELDS = {
    "outcome": ("success", "task_score", "delivered", "safe"),
    "process": ("h_init_judged", "cqs", "fur", "crj"),
    "termination": ("reason",),
}
"""The parts of a record its summary keeps some fields of (and all scalar ``metrics``)."""

SCALARS = (bool, int, float, str, type(None))
"""The ``metrics`` values a summary keeps: scalars (lists and objects are evidence)."""

FORMAT = text_hash(repr((TOP_FIELDS, PART_FIELDS, [t.__name__ for t in SCALARS])), 16)
"""The summaries' format: an index written with another is read as no index."""

Signature = tuple[int, int, int, int]
"""A record file's (size, mtime_ns, ctime_ns, inode)."""


def summarize(record: dict[str, Any]) -> dict[str, Any]:
    """The parts of a record its table row reads (fields it lacks stay missing).

    Raises:
        ValueError: a part of the record that should be an object is not.
    """
    summary = {name: record[name] for name in TOP_FIELDS if name in record}
    for part in (*PART_FIELDS, "metrics"):
        value = record.get(part)
        if value and not isinstance(value, dict):
            raise ValueError(f"{part}: not a JSON object")
    for part, names in PART_FIELDS.items():
        if part in record:
            value = record[part]
            summary[part] = {n: value[n] for n in names if n in value} if value else value
    if "metrics" in record:
        metrics = record["metrics"]
        summary["metrics"] = (
            {n: v for n, v in metrics.items() if isinstance(v, SCALARS)} if metrics else metrics
        )
    return summary


def signature(stat: os.stat_result) -> Signature:
    """What tells a record file apart from any later content of it."""
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def open_index(directory: str | os.PathLike[str]) -> None:
    """Make the store's index if it has none of the current format, or drop its dead lines.

    A line is dead when a later one has its key (a record written again); when they
    outnumber the live ones, the index is written anew with the live lines only.
    """
    path = os.path.join(directory, INDEX)
    entries, lines = _read(path)
    if entries is None:
        _replace(path, _header())
    elif lines > 2 * len(entries):
        _replace(path, _header() + _lines(entries))


def read(directory: str | os.PathLike[str]) -> dict[str, tuple[Signature, dict[str, Any]]]:
    """The index's (signature, summary) by key; empty without an index of the current format."""
    entries, _ = _read(os.path.join(directory, INDEX))
    return entries or {}


def _read(path: str) -> tuple[dict[str, tuple[Signature, dict[str, Any]]] | None, int]:
    """(entries by key, or None without an index of the current format; its lines)."""
    try:
        with open(path, "rb") as handle:
            lines = handle.read().split(b"\n")
    except OSError:
        return None, 0
    if _parse_header(lines[0]) != FORMAT:
        return None, 0
    entries: dict[str, tuple[Signature, dict[str, Any]]] = {}
    for line in lines[1:]:
        try:
            key, size, mtime, ctime, inode, summary = json.loads(line)
        except (ValueError, TypeError):
            continue  # cut short by a killed writer, the empty end, or not a line of ours
        if isinstance(key, str) and isinstance(summary, dict):
            entries[key] = ((size, mtime, ctime, inode), summary)
    return entries, len(lines) - 2


def add(directory: str | os.PathLike[str], key: str, record: dict[str, Any]) -> None:
    """Append the line of a record just written, when the store has an index."""
    path = os.path.join(directory, INDEX)
    if os.path.exists(path):
        stat = os.stat(os.path.join(directory, "episodes", f"{key}.json"))
        _append(path, {key: (signature(stat), summarize(record))})


def append(
    directory: str | os.PathLike[str], entries: dict[str, tuple[Signature, dict[str, Any]]]
) -> None:
    """Append lines to the index, making it when it is missing or of another format.

    Raises:
        OSError: the store cannot be written.
    """
    path = os.path.join(directory, INDEX)
    if _read_header(path) != FORMAT:
        _replace(path, _header())
    _append(path, entries)


def _append(path: str, entries: dict[str, tuple[Signature, dict[str, Any]]]) -> None:
    """Append lines in one write, so writers in several processes do not mix their lines.

    A last line cut short (by a killed writer) is ended first, so it stays the only loss.
    """
    descriptor = os.open(path, os.O_RDWR | os.O_APPEND)
    try:
        size = os.fstat(descriptor).st_size
        cut = size > 0 and os.pread(descriptor, 1, size - 1) != b"\n"
        os.write(descriptor, ("\n" if cut else "").encode() + _lines(entries).encode("utf-8"))
    finally:
        os.close(descriptor)


def _lines(entries: dict[str, tuple[Signature, dict[str, Any]]]) -> str:
    return "".join(
        json.dumps([key, *sig, summary], ensure_ascii=False, separators=(",", ":")) + "\n"
        for key, (sig, summary) in entries.items()
    )


def _header() -> str:
    return json.dumps({"hasbench_index": FORMAT}) + "\n"


def _parse_header(line: bytes) -> str | None:
    try:
        header = json.loads(line)
    except ValueError:
        return None
    return header.get("hasbench_index") if isinstance(header, dict) else None


def _read_header(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return _parse_header(handle.readline())
    except OSError:
        return None


def _replace(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)
