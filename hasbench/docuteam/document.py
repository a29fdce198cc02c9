"""A block-structured document with stable block ids and an edit history.

A :class:`Document` is an ordered list of typed :class:`Block` objects (heading,
paragraph, list item, table row, to-do). Every change is an :class:`EditOp` with the
text before and after, appended to the document's history, so the history replays the
document from its first state. Blocks keep their id for life; a deleted id is never
reused.

Markdown is the exchange format people read and write: one block per line, with the
block id kept in a trailing ``<!-- id -->`` comment so a saved file loads back with the
same ids (a file without comments gets fresh ids ``b1``, ``b2``, ...). JSON keeps
everything, history included.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

BlockType = Literal["heading", "paragraph", "list_item", "table_row", "todo"]
EditKind = Literal["insert", "update", "delete"]
EditSource = Literal["user", "application"]
"""Who changed the text: the user typing, or an applied discussion message."""

_ID_COMMENT = re.compile(r"\s*<!--\s*([A-Za-z0-9_.-]+)\s*-->\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_TODO = re.compile(r"^[-*]\s+\[([ xX])\]\s+(.*)$")
_LIST = re.compile(r"^[-*]\s+(.*)$")
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")
_NUMBERED_ID = re.compile(r"^b(\d+)$")


class DocumentError(ValueError):
    """A document operation or file that cannot be used; the message says where and why."""


class Block(BaseModel):
    """One block of a document.

    ``text`` is the block's content without Markdown markers; a table row's cells are
    joined with `` | ``. ``level`` is the heading level (1-6, 0 for other types) and
    ``checked`` the state of a to-do.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    type: BlockType
    text: str
    level: int = Field(default=0, ge=0, le=6)
    checked: bool = False

    def markdown(self) -> str:
        """The block as one Markdown line (without its id comment)."""
        if self.type == "heading":
            return f"{'#' * max(self.level, 1)} {self.text}"
        if self.type == "list_item":
            return f"- {self.text}"
        if self.type == "todo":
            return f"- [{'x' if self.checked else ' '}] {self.text}"
        if self.type == "table_row":
            return "| " + " | ".join(cell.strip() for cell in self.text.split("|")) + " |"
        return self.text


class EditOp(BaseModel):
    """One change of one block.

    ``before`` is None for an insert and ``after`` None for a delete. ``anchor`` is the
    id of the block an inserted block follows (None: at the start). ``application`` is
    the id of the application event when the edit applied a discussion message.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: EditKind
    block_id: str
    block_type: BlockType
    before: str | None = None
    after: str | None = None
    level: int = 0
    checked: bool = False
    anchor: str | None = None
    source: EditSource = "user"
    application: str | None = None


class EditView(BaseModel):
    """What a reader of recent edits sees: one block's net change with its neighbours."""

    model_config = ConfigDict(extra="forbid")

    block_id: str
    kind: EditKind
    block_type: BlockType
    before: str | None
    after: str | None
    context_before: list[Block]
    context_after: list[Block]


class Document:
    """An ordered list of blocks with an edit history.

    Args:
        blocks: The blocks in order; ids must be unique.
        history: Edits made so far (oldest first).
        next_number: The number of the next fresh id ``b<n>``; by default one more than
            the largest numbered id in use.
    """

    def __init__(
        self,
        blocks: list[Block] | None = None,
        history: list[EditOp] | None = None,
        next_number: int | None = None,
    ) -> None:
        self.blocks: list[Block] = [block.model_copy() for block in blocks or []]
        seen: set[str] = set()
        for block in self.blocks:
            if block.id in seen:
                raise DocumentError(f"duplicate block id {block.id!r}")
            seen.add(block.id)
        self.history: list[EditOp] = list(history or [])
        numbers = [int(m.group(1)) for b in self.blocks if (m := _NUMBERED_ID.match(b.id))]
        numbers += [int(m.group(1)) for e in self.history if (m := _NUMBERED_ID.match(e.block_id))]
        self.next_number = max(next_number or 1, max(numbers, default=0) + 1)

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self.blocks)

    def copy(self) -> Document:
        """An independent copy (blocks and history)."""
        return Document(self.blocks, self.history, self.next_number)

    def ids(self) -> list[str]:
        """Block ids in document order."""
        return [block.id for block in self.blocks]

    def index(self, block_id: str) -> int:
        """Position of a block.

        Raises:
            DocumentError: no block has that id.
        """
        for position, block in enumerate(self.blocks):
            if block.id == block_id:
                return position
        raise DocumentError(f"no block {block_id!r} in the document")

    def block(self, block_id: str) -> Block:
        """The block with this id (see :meth:`index` for errors)."""
        return self.blocks[self.index(block_id)]

    def span(self, first: str, last: str | None = None) -> list[Block]:
        """The blocks from ``first`` to ``last`` inclusive (just ``first`` without ``last``).

        Raises:
            DocumentError: an unknown id, or ``last`` comes before ``first``.
        """
        start = self.index(first)
        end = self.index(last) if last is not None else start
        if end < start:
            raise DocumentError(f"block range {first!r}..{last!r} is reversed")
        return [block.model_copy() for block in self.blocks[start : end + 1]]

    def neighbours(self, block_id: str, n: int = 1) -> tuple[list[Block], list[Block]]:
        """Up to ``n`` blocks before and after a block."""
        position = self.index(block_id)
        before = self.blocks[max(0, position - n) : position]
        after = self.blocks[position + 1 : position + 1 + n]
        return [b.model_copy() for b in before], [b.model_copy() for b in after]

    def section_of(self, block_id: str) -> str:
        """Text of the nearest heading at or above a block ('' when there is none)."""
        for block in reversed(self.blocks[: self.index(block_id) + 1]):
            if block.type == "heading":
                return block.text
        return ""

    def block_history(self, block_id: str) -> list[EditOp]:
        """The edits of one block, oldest first: every text it had is in their ``before``."""
        return [op for op in self.history if op.block_id == block_id]

    def text(self) -> str:
        """All block texts, one per line (what word counts are taken over)."""
        return "\n".join(block.text for block in self.blocks)

    # ------------------------------------------------------------------ editing

    def _new_id(self) -> str:
        block_id = f"b{self.next_number}"
        self.next_number += 1
        return block_id

    def _record(self, **fields: object) -> EditOp:
        op = EditOp(id=f"e{len(self.history) + 1}", **fields)
        self.history.append(op)
        return op

    def insert(
        self,
        text: str,
        block_type: BlockType = "paragraph",
        after: str | None = None,
        *,
        level: int = 0,
        checked: bool = False,
        source: EditSource = "user",
        application: str | None = None,
    ) -> EditOp:
        """Insert a new block after the block ``after`` (at the start when None)."""
        position = 0 if after is None else self.index(after) + 1
        if block_type == "heading" and level == 0:
            level = 2
        block = Block(
            id=self._new_id(), type=block_type, text=_one_line(text), level=level, checked=checked
        )
        self.blocks.insert(position, block)
        return self._record(
            kind="insert",
            block_id=block.id,
            block_type=block_type,
            after=block.text,
            level=block.level,
            checked=checked,
            anchor=after,
            source=source,
            application=application,
        )

    def update(
        self,
        block_id: str,
        text: str,
        *,
        checked: bool | None = None,
        source: EditSource = "user",
        application: str | None = None,
    ) -> EditOp:
        """Replace a block's text (and a to-do's checked state)."""
        block = self.block(block_id)
        before = block.text
        block.text = _one_line(text)
        if checked is not None:
            block.checked = checked
        return self._record(
            kind="update",
            block_id=block_id,
            block_type=block.type,
            before=before,
            after=block.text,
            level=block.level,
            checked=block.checked,
            source=source,
            application=application,
        )

    def delete(self, block_id: str, *, source: EditSource = "user") -> EditOp:
        """Remove a block."""
        position = self.index(block_id)
        block = self.blocks.pop(position)
        return self._record(
            kind="delete",
            block_id=block_id,
            block_type=block.type,
            before=block.text,
            level=block.level,
            checked=block.checked,
            anchor=self.blocks[position - 1].id if position > 0 else None,
            source=source,
        )

    def replay(self, op: EditOp) -> None:
        """Apply a recorded edit to this document (e.g. one read back from a session log).

        Raises:
            DocumentError: the edit does not fit the document (unknown block, wrong text).
        """
        if op.kind == "insert":
            if any(block.id == op.block_id for block in self.blocks):
                raise DocumentError(f"edit {op.id}: block {op.block_id!r} already exists")
            position = 0 if op.anchor is None else self.index(op.anchor) + 1
            block = Block(
                id=op.block_id,
                type=op.block_type,
                text=op.after or "",
                level=op.level,
                checked=op.checked,
            )
            self.blocks.insert(position, block)
        else:
            block = self.block(op.block_id)
            if block.text != op.before:
                raise DocumentError(
                    f"edit {op.id}: block {op.block_id!r} reads {block.text!r}, "
                    f"the edit expects {op.before!r}"
                )
            if op.kind == "update":
                block.text = op.after or ""
                block.checked = op.checked
            else:
                self.blocks.remove(block)
        match = _NUMBERED_ID.match(op.block_id)
        if match:
            self.next_number = max(self.next_number, int(match.group(1)) + 1)
        self.history.append(op)

    def edit_views(self, ops: list[EditOp], context: int = 1) -> list[EditView]:
        """The net change per block of ``ops`` with ``context`` neighbours on each side.

        Several edits of one block collapse into one view (first ``before``, last
        ``after``); a block inserted and deleted again within ``ops`` is left out, and so
        is a block whose text ends where it started.
        """
        order: list[str] = []
        first: dict[str, EditOp] = {}
        last: dict[str, EditOp] = {}
        for op in ops:
            if op.block_id not in first:
                order.append(op.block_id)
                first[op.block_id] = op
            last[op.block_id] = op
        views = []
        for block_id in order:
            start, end = first[block_id], last[block_id]
            before = start.before if start.kind != "insert" else None
            after = end.after if end.kind != "delete" else None
            if before is None and after is None:
                continue
            if before == after:
                continue
            kind: EditKind = "insert" if before is None else "delete" if after is None else "update"
            if after is not None and block_id in self.ids():
                ctx_before, ctx_after = self.neighbours(block_id, context)
            else:
                ctx_before, ctx_after = self._around_deleted(end.anchor, context)
            views.append(
                EditView(
                    block_id=block_id,
                    kind=kind,
                    block_type=end.block_type,
                    before=before,
                    after=after,
                    context_before=ctx_before,
                    context_after=ctx_after,
                )
            )
        return views

    def _around_deleted(self, anchor: str | None, n: int) -> tuple[list[Block], list[Block]]:
        """Neighbours of the gap a deleted block left after ``anchor``."""
        if anchor is not None and anchor in self.ids():
            position = self.index(anchor) + 1
        else:
            position = 0
        before = self.blocks[max(0, position - n) : position]
        after = self.blocks[position : position + n]
        return [b.model_copy() for b in before], [b.model_copy() for b in after]

    # ------------------------------------------------------------------ files

    def to_markdown(self, ids: bool = True) -> str:
        """The document as Markdown, one block per line, ids in trailing comments.

        Consecutive table rows form one table; a separator line follows its first row.
        Blank lines separate blocks, except within a list and within a table.
        """
        lines: list[str] = []
        previous: Block | None = None
        for block in self.blocks:
            if previous is not None and not _same_group(previous, block):
                lines.append("")
            line = block.markdown()
            if ids:
                line += f" <!-- {block.id} -->"
            lines.append(line)
            if block.type == "table_row" and (previous is None or previous.type != "table_row"):
                lines.append("|" + "---|" * len(block.text.split("|")))
            previous = block
        return "\n".join(lines) + "\n"

    @classmethod
    def from_markdown(cls, text: str, source: str = "<markdown>") -> Document:
        """Parse Markdown into blocks (see :meth:`to_markdown` for the format).

        Headings (``#``), list items (``-`` or ``*``), to-dos (``- [ ]``), table rows
        (``| a | b |``, separator lines dropped) and paragraphs (any other non-blank
        line) are recognised; ids come from trailing ``<!-- id -->`` comments or are
        assigned in order.

        Raises:
            DocumentError: a repeated id, naming the source and line.
        """
        parsed: list[tuple[int, str | None, dict[str, object]]] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.rstrip()
            block_id = None
            match = _ID_COMMENT.search(line)
            if match:
                block_id = match.group(1)
                line = line[: match.start()].rstrip()
            stripped = line.strip()
            if not stripped or _TABLE_SEPARATOR.match(stripped):
                continue
            parsed.append((number, block_id, _parse_line(stripped)))
        used = {block_id for _, block_id, _ in parsed if block_id}
        numbers = [int(m.group(1)) for i in used if (m := _NUMBERED_ID.match(i))]
        next_number = max(numbers, default=0) + 1
        blocks, seen = [], set()
        for number, block_id, fields in parsed:
            if block_id is None:
                while f"b{next_number}" in used:
                    next_number += 1
                block_id = f"b{next_number}"
                next_number += 1
            if block_id in seen:
                raise DocumentError(f"{source}: line {number}: block id {block_id!r} repeats")
            seen.add(block_id)
            blocks.append(Block(id=block_id, **fields))
        return cls(blocks, next_number=next_number)

    def to_json(self) -> str:
        """The document with its history as JSON."""
        data = {
            "blocks": [block.model_dump() for block in self.blocks],
            "history": [op.model_dump() for op in self.history],
            "next_number": self.next_number,
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<json>") -> Document:
        """Read a document written by :meth:`to_json`.

        Raises:
            DocumentError: invalid JSON or fields, naming the source and the field.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DocumentError(f"{source}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("blocks"), list):
            raise DocumentError(f"{source}: expected an object with a 'blocks' list")
        unknown = sorted(set(data) - {"blocks", "history", "next_number"})
        if unknown:
            raise DocumentError(f"{source}: unknown field(s) {', '.join(unknown)}")
        blocks = [
            _validated(Block, item, f"{source}: blocks[{i}]")
            for i, item in enumerate(data["blocks"])
        ]
        history = [
            _validated(EditOp, item, f"{source}: history[{i}]")
            for i, item in enumerate(data.get("history") or [])
        ]
        try:
            return cls(blocks, history, data.get("next_number"))
        except DocumentError as exc:
            raise DocumentError(f"{source}: {exc}") from None

    def save(self, path: str | Path) -> Path:
        """Write the document; ``.json`` keeps the history, anything else is Markdown."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = self.to_json() if path.suffix == ".json" else self.to_markdown()
        path.write_text(text, encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Document:
        """Read a ``.json`` or Markdown document file.

        Raises:
            DocumentError: the file is missing or does not parse (naming the file).
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DocumentError(f"{path}: cannot read the document ({exc.strerror})") from None
        if path.suffix == ".json":
            return cls.from_json(text, str(path))
        return cls.from_markdown(text, str(path))


def _validated(model: type[BaseModel], item: object, where: str) -> BaseModel:
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise DocumentError(f"{where}.{field}: {error['msg']}") from None


def _same_group(previous: Block, block: Block) -> bool:
    """True when two adjacent blocks print without a blank line between them."""
    lists = ("list_item", "todo")
    if previous.type in lists and block.type in lists:
        return True
    return previous.type == block.type == "table_row"


def _one_line(text: str) -> str:
    """Block text is one line: newlines become spaces, outer space is dropped."""
    return " ".join(text.split())


def _parse_line(line: str) -> dict[str, object]:
    """The block fields of one non-blank Markdown line."""
    if match := _HEADING.match(line):
        return {"type": "heading", "text": match.group(2).strip(), "level": len(match.group(1))}
    if match := _TODO.match(line):
        return {"type": "todo", "text": match.group(2).strip(), "checked": match.group(1) != " "}
    if match := _LIST.match(line):
        return {"type": "list_item", "text": match.group(1).strip()}
    if line.startswith("|"):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        return {"type": "table_row", "text": " | ".join(cells)}
    return {"type": "paragraph", "text": line}


def word_changes(before: str, after: str) -> int:
    """Words added, removed or replaced between two texts (word-level diff).

    A replaced run counts the longer of its two sides, so rewording three words as
    three others is 3, and appending five words is 5.
    """
    old, new = before.split(), after.split()
    total = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "insert":
            total += j2 - j1
        elif tag == "delete":
            total += i2 - i1
        elif tag == "replace":
            total += max(i2 - i1, j2 - j1)
    return total


def render_blocks(blocks: list[Block]) -> str:
    """Blocks as prompt text: one ``[id] (type) text`` line each, or ``(none)``."""
    if not blocks:
        return "(none)"
    return "\n".join(f"[{block.id}] ({block.type}) {block.text}" for block in blocks)


def render_edits(views: list[EditView]) -> str:
    """Recent edits with their neighbouring blocks, as prompt text."""
    parts = []
    for view in views:
        verb = {"insert": "added", "update": "changed", "delete": "removed"}[view.kind]
        lines = [f"Block {view.block_id} ({view.block_type}) was {verb}."]
        lines.append(f"Before: {view.before if view.before is not None else '(did not exist)'}")
        lines.append(f"After: {view.after if view.after is not None else '(removed)'}")
        lines.append("Blocks just before it:\n" + render_blocks(view.context_before))
        lines.append("Blocks just after it:\n" + render_blocks(view.context_after))
        parts.append("\n".join(lines))
    return "\n\n".join(parts) if parts else "(no edits)"
