"""Unified diffs: parse a patch, apply it to text files, and write one.

The accepted format is what ``diff -u`` and ``git diff`` print: per file a ``--- old`` and
a ``+++ new`` header (``a/``/``b/`` prefixes and ``/dev/null`` for created or deleted
files; ``diff --git``, ``index`` and mode lines are skipped), then hunks
``@@ -start,count +start,count @@``. Hunk line counts are checked strictly. A hunk applies
where its context and removed lines match the file exactly, preferably at the stated line,
else at the nearest place they match; a blank line inside a hunk counts as a blank
context line (a common way editors mangle patches).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SKIPPED = ("diff --git ", "index ", "new file mode", "deleted file mode", "old mode", "new mode",
            "similarity index", "rename from", "rename to", "Binary files")  # fmt: skip
NO_NEWLINE = "\\ No newline at end of file"


class PatchError(ValueError):
    """A patch that cannot be parsed or applied; the message says where."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        """"invalid" (cannot be parsed) or "mismatch" (does not fit the files)."""


@dataclass
class Hunk:
    """One ``@@`` block: the lines it expects and the lines it puts instead."""

    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    old_eof_newline: bool = True
    new_eof_newline: bool = True


@dataclass
class FilePatch:
    """The hunks of one file; ``old_path``/``new_path`` are None for /dev/null."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The file the patch is about."""
        return self.new_path or self.old_path or ""


def parse_patch(text: str) -> list[FilePatch]:
    """The file patches of a unified diff.

    Raises:
        PatchError: kind "invalid", with the line number of the problem.
    """
    lines = text.splitlines()
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- "):
            if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
                raise PatchError("invalid", f"line {i + 1}: '---' header without a '+++' line")
            current = FilePatch(_header_path(line[4:]), _header_path(lines[i + 1][4:]))
            if current.old_path is None and current.new_path is None:
                raise PatchError("invalid", f"line {i + 1}: both sides are /dev/null")
            patches.append(current)
            i += 2
            while i < len(lines) and lines[i].startswith("@@"):
                i = _parse_hunk(lines, i, current)
            if not current.hunks:
                raise PatchError("invalid", f"line {i + 1}: no hunk for {current.path}")
            continue
        if line.startswith(_SKIPPED) or not line.strip():
            i += 1
            continue
        raise PatchError("invalid", f"line {i + 1}: unexpected text outside a hunk: {line[:60]!r}")
    if not patches:
        raise PatchError("invalid", "no file changes found (expected '--- a/...' and '+++ b/...')")
    return patches


def _header_path(raw: str) -> str | None:
    path = raw.split("\t")[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def _parse_hunk(lines: list[str], i: int, patch: FilePatch) -> int:
    match = _HUNK.match(lines[i])
    if match is None:
        raise PatchError("invalid", f"line {i + 1}: malformed hunk header {lines[i][:60]!r}")
    old_count = int(match.group(2) or "1")
    new_count = int(match.group(4) or "1")
    hunk = Hunk(old_start=int(match.group(1)))
    i += 1
    last = ""
    while len(hunk.old) < old_count or len(hunk.new) < new_count:
        if i >= len(lines):
            raise PatchError("invalid", f"hunk at line {i}: ends before its counted lines")
        line = lines[i]
        tag, body = (line[0], line[1:]) if line else (" ", "")
        if line == NO_NEWLINE:
            _mark_no_newline(hunk, last)
        elif tag == " ":
            hunk.old.append(body)
            hunk.new.append(body)
        elif tag == "-":
            hunk.old.append(body)
        elif tag == "+":
            hunk.new.append(body)
        else:
            raise PatchError("invalid", f"line {i + 1}: not a hunk line: {line[:60]!r}")
        last = tag
        i += 1
        if len(hunk.old) > old_count or len(hunk.new) > new_count:
            raise PatchError("invalid", f"line {i}: hunk has more lines than its header says")
    if i < len(lines) and lines[i] == NO_NEWLINE:
        _mark_no_newline(hunk, last)
        i += 1
    patch.hunks.append(hunk)
    return i


def _mark_no_newline(hunk: Hunk, tag: str) -> None:
    if tag in ("-", " "):
        hunk.old_eof_newline = False
    if tag in ("+", " "):
        hunk.new_eof_newline = False


def apply_file_patch(original: str | None, patch: FilePatch) -> str | None:
    """The new text of one file (None: the patch deletes it).

    Raises:
        PatchError: kind "mismatch" when a hunk does not fit the file.
    """
    if original is None and patch.old_path is not None:
        raise PatchError("mismatch", f"{patch.path}: no such file to patch")
    lines = (original or "").splitlines()
    ends_with_newline = original is None or original.endswith("\n") or original == ""
    offset = 0
    for number, hunk in enumerate(patch.hunks, start=1):
        where = _locate(lines, hunk.old, hunk.old_start - 1 + offset)
        if where is None:
            first = hunk.old[0] if hunk.old else ""
            raise PatchError(
                "mismatch",
                f"{patch.path}: hunk {number} (@@ -{hunk.old_start}) does not match the file "
                f"(its first expected line is {first!r})",
            )
        lines[where : where + len(hunk.old)] = hunk.new
        offset += len(hunk.new) - len(hunk.old)
        if where + len(hunk.new) == len(lines):
            ends_with_newline = hunk.new_eof_newline
    if patch.new_path is None:
        if lines:
            raise PatchError("mismatch", f"{patch.path}: deleting patch leaves lines behind")
        return None
    text = "\n".join(lines)
    return text + "\n" if lines and ends_with_newline else text


def _locate(lines: list[str], block: list[str], hint: int) -> int | None:
    """The start of ``block`` in ``lines`` nearest to ``hint``, or None."""
    if not block:
        return min(max(hint, 0), len(lines))
    size = len(block)
    starts = [i for i in range(len(lines) - size + 1) if lines[i : i + size] == block]
    return min(starts, key=lambda i: (abs(i - hint), i)) if starts else None


def unified_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """A ``git diff``-style patch from one set of text files to another (sorted by path)."""
    changed = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
    return "".join(_file_diff(path, before.get(path), after.get(path)) for path in changed)


@lru_cache(maxsize=1024)
def _file_diff(path: str, old: str | None, new: str | None) -> str:
    """One file's part of :func:`unified_diff` (cached: a task's episodes make the same edits)."""
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = (new or "").splitlines(keepends=True)
    diff = difflib.unified_diff(
        old_lines,
        new_lines,
        "/dev/null" if old is None else f"a/{path}",
        "/dev/null" if new is None else f"b/{path}",
        n=3,
    )
    return "".join(
        line if line.endswith("\n") else line + "\n" + NO_NEWLINE + "\n" for line in diff
    )
