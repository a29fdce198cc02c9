"""How an environment's state is copied, restored, shared between episodes and hashed.

An environment's state is plain JSON-compatible data: ``db`` (agent side) and ``user_db``
(user side). :class:`EnvironmentState` holds it for :class:`hasbench.envs.base.Environment`
and takes the snapshots a failed write is rolled back to.

Domains whose code never changes a record of ``db`` in place declare ``copy_on_write``: a
write takes its own copy of a record first (:meth:`EnvironmentState.writable`) and adds
records with :meth:`EnvironmentState.add_record`; it changes ``user_db`` only through
:meth:`EnvironmentState.user_writable`, which copies just the containers it changes.
Their environments then start from a shared, immutable base (one per task content, see
:func:`hasbench.envs.make_environment`) and fork from it by copying only the tables. A
write tool's rollback and diff come from the records it replaced or added and the
containers it copied (:class:`WriteLog`), so a write costs what it changes, not the size
of the database. The shared database they all come from is their :class:`Origin`: its
text is encoded once per process, the state hash re-encodes only the records that differ
from it, and domain checks can look only at those records
(:meth:`EnvironmentState.changed_records`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cache
from itertools import compress, count
from operator import is_not
from typing import Any, ClassVar, Literal, Self

from hasbench.vocab import canonical_json


class EnvironmentState:
    """The state of an environment: snapshots, copy-on-write records, shared bases, hash."""

    copy_on_write: ClassVar[bool] = False
    """True when ``db`` maps table names to tables (dicts or lists of records) and the
    domain's code never changes a record in place but takes a private copy with
    :meth:`writable` first, while :attr:`writing` is set (inside write tools, setup helpers
    and ``after_call``), adds records only with :meth:`add_record`, and changes a part of
    ``user_db`` only through :meth:`user_writable`."""

    def __init__(self, db: dict[str, Any], user_db: dict[str, Any] | None = None) -> None:
        self.db = db
        self.user_db = user_db
        self.writing = False
        """True while a write tool or setup helper runs, from :meth:`begin_write` to
        :meth:`end_write` or :meth:`rollback` (copy-on-write domains copy records they
        hand out)."""
        self._own: dict[int, Any] = {}
        """Containers this write copied or added, by id: (the container, whether all it
        holds is its own too; else it was copied alone and its items are shared)."""
        self._base: _Base | None = None
        self.origin: Origin | None = None
        """The shared database ``db`` was forked from (copy-on-write domains set it, see
        :func:`shared_origin`); records still identical to its records hold its values."""
        self._log: WriteLog | None = None

    # -- state ---------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The live full state (agent-side and user-side); read it, don't change it."""
        return {"db": self.db, "user_db": self.user_db}

    def snapshot(self) -> dict[str, Any]:
        """A copy of the full state that later calls leave untouched.

        Deep, except in copy-on-write domains: there the tables are copied and the records
        shared (the next write copies the records it changes).
        """
        if not self.copy_on_write:
            return fast_copy(self.state())
        self._own = {}  # records copied from now on are private until the next snapshot
        return {"db": shared_tables(self.db), "user_db": fast_copy(self.user_db)}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Put back a state taken by :meth:`snapshot` (it stays reusable)."""
        if self.copy_on_write:
            self.db, self.user_db = shared_tables(snapshot["db"]), fast_copy(snapshot["user_db"])
        else:
            self.db, self.user_db = snapshot["db"], snapshot["user_db"]

    def writable(self, table: str, key: Any, *path: Any, shallow: bool = False) -> Any:
        """The record ``db[table][key]`` (a key or a list index) as a copy a tool may change.

        The copy replaces the shared record in this environment's table; later calls in
        the same write get the same copy. With a ``path`` (keys or indexes inside the
        record), or ``shallow`` for the record alone, only the containers along it are
        copied and the innermost one is returned: the tool may change its items, but not
        the containers they hold (those stay shared; a flight's seats on one date, not its
        other dates; an order's status, not its items).
        """
        records = self.db[table]
        record = records[key]
        own = self._own
        entry = own.get(id(record))
        if entry is not None and entry[1]:  # copied whole in this write
            for step in path:
                record = record[step]
            return record
        whole = not path and not shallow
        if whole or entry is None:  # the first change of this record
            private = records[key] = fast_copy(record) if whole else record.copy()
            own[id(private)] = (private, whole)
            if self._log is not None:
                self._log.replaced.append((table, key, record))
            if whole:
                return private
            record = private
        return self._own_path(record, path) if path else record

    def add_record(self, table: str, record: Any, key: Any = None) -> None:
        """Add a record to ``db[table]``: under ``key`` in a dict table, at the end of a list.

        Copy-on-write domains add records only this way (a write's log lists them).

        Raises:
            KeyError: the dict table already has ``key``.
        """
        records = self.db[table]
        if isinstance(records, list):
            key = len(records)
            records.append(record)
        elif key in records:
            raise KeyError(f"db[{table!r}] already has {key!r}")
        else:
            records[key] = record
        self._own[id(record)] = (record, True)
        if self._log is not None:
            self._log.replaced.append((table, key, _MISSING))
            self._log.added[table] = self._log.added.get(table, 0) + 1

    def user_writable(self, *path: Any) -> Any:
        """The container ``user_db[path[0]][path[1]]...`` as a copy the caller may change.

        Copy-on-write domains change ``user_db`` only through this: ``user_db`` and each
        container along the path are copied once (per write, or per change outside one)
        and put in place of the shared ones; their other items stay shared. The caller
        may set the returned container's items, not change the containers they hold.
        """
        container = self.user_db
        if id(container) not in self._own:
            container = self.user_db = container.copy()
            self._own[id(container)] = (container, False)
        return self._own_path(container, path)

    def _own_path(self, container: Any, path: tuple[Any, ...]) -> Any:
        """The innermost container along ``path`` in an owned one, each copied once."""
        own = self._own
        for step in path:
            inner = container[step]
            if id(inner) not in own:
                inner = container[step] = inner.copy()  # shallow
                own[id(inner)] = (inner, False)
            container = inner
        return container

    # -- writes ----------------------------------------------------------------------

    def begin_write(self) -> Any:
        """Start a write; :meth:`rollback` or :meth:`end_write` take what this returns.

        Copy-on-write domains log the records the write replaces or adds (a
        :class:`WriteLog`); other domains take a :meth:`snapshot`.
        """
        self.writing = True
        if not self.copy_on_write:
            return self.snapshot()
        self._own = {}  # records copied from now on are this write's
        self._log = WriteLog(self.user_db, _records(self.db), [], {})
        return self._log

    def rollback(self, started: Any) -> None:
        """Undo the write :meth:`begin_write` started: the state is exactly as before it."""
        self.writing = False
        if not self.copy_on_write:
            self.restore(started)
            return
        self._log, self._own = None, {}
        started.check(self.db)
        for table, key, record in reversed(started.replaced):
            if record is _MISSING:
                del self.db[table][key]
            else:
                self.db[table][key] = record
        self.user_db = started.user_db  # unchanged: the write changed copies

    def end_write(self, started: Any) -> list[dict[str, Any]]:
        """Finish the write :meth:`begin_write` started; its changes, as :func:`state_diff`."""
        self.writing = False
        if not self.copy_on_write:
            return private_changes(state_diff(started, self.state()))
        self._log, self._own = None, {}  # a later write copies this write's records again
        started.check(self.db)
        changes = started.changes(self.db)
        if self.user_db is not started.user_db:  # copied: compared where it was copied
            _add_changes(changes, started.user_db, self.user_db, "user_db")
        return changes

    def state_hash(self) -> str:
        """SHA-256 of the canonical JSON of the full state.

        With an :attr:`origin`, only the records that differ from it are encoded and the
        hash resumes from a checkpoint of the origin's text before the first difference; an
        environment its frozen base has not changed gives the base's hash.
        """
        base = self._base
        if base is not None and self.user_db == base.user_db and _same_tables(self.db, base.db):
            return base.hash()
        return _state_hash(self.state(), self.origin)

    def changed_records(self, table: str) -> list[Any]:
        """Keys (or list indexes) of ``db[table]`` whose record is not the origin's.

        Every key when there is no origin (or it lacks the table); keys the origin has and
        the table lost are not listed.
        """
        reference = self.origin.db.get(table) if self.origin is not None else None
        current = self.db[table]
        if reference is None or type(reference) is not type(current):
            return list(current) if isinstance(current, dict) else list(range(len(current)))
        return changed_keys(current, reference)

    # -- shared bases ----------------------------------------------------------------

    def freeze(self) -> None:
        """Make the current state the immutable base that :meth:`fork` starts from.

        Only copy-on-write domains can; the environment must not be changed afterwards
        (forks change their own tables).
        """
        if not self.copy_on_write:
            raise TypeError(f"{type(self).__name__} is not copy-on-write; it cannot be shared")
        self._own, self._log = {}, None
        self._base = _Base(db=self.db, user_db=fast_copy(self.user_db), origin=self.origin)

    def fork(self) -> Self:
        """A new environment in this (frozen) environment's state, sharing its records."""
        if self._base is None or self._base.db is not self.db:
            raise TypeError("only a frozen environment can be forked (call freeze() first)")
        twin = copy.copy(self)
        twin.db, twin.user_db = shared_tables(self.db), fast_copy(self.user_db)
        twin.writing, twin._own, twin._log = False, {}, None
        return twin


def deep_merge(
    base: dict[str, Any], update: dict[str, Any], share_base: bool = False
) -> dict[str, Any]:
    """Merge ``update`` into a copy of ``base``: dicts recursively, anything else replaced.

    ``base`` is left unchanged. With ``share_base`` (copy-on-write data) the parts of it
    that ``update`` does not reach are shared with the result instead of copied.
    """
    merged = dict(base) if share_base else copy.deepcopy(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value, share_base)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


_CONTAINERS = (dict, list, tuple)


def fast_copy(value: Any) -> Any:
    """A deep copy of plain JSON-like data, much faster than deepcopy.

    Dicts, lists and tuples are copied; their other items (strings, numbers, booleans,
    None: immutable) are shared.
    """
    kind = type(value)
    if kind is dict:
        return {k: v if type(v) not in _CONTAINERS else fast_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) not in _CONTAINERS else fast_copy(v) for v in value]
    if kind is tuple:
        return tuple(v if type(v) not in _CONTAINERS else fast_copy(v) for v in value)
    return value


def private_changes(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Changes from :func:`state_diff` that share no dict or list with the state."""
    return [
        fast_copy(c) if isinstance(c["before"], dict | list) or isinstance(c["after"], dict | list)
        else c
        for c in changes
    ]  # fmt: skip


def state_diff(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """The changed paths between two JSON-like values, for people to read.

    Mappings are compared key by key (in the order of their keys as text) and lists of
    equal length item by item (paths like ``db.lines[3].status``); anything else that
    differs is reported whole. Parts the two share are skipped unread.
    """
    changes: list[dict[str, Any]] = []
    if before is not after:
        _add_changes(changes, before, after, path)
    return changes


def _add_changes(changes: list[dict[str, Any]], before: Any, after: Any, path: str) -> None:
    """Append the changes from ``before`` to ``after`` (not the same object) at ``path``."""
    if isinstance(before, dict) and isinstance(after, dict):
        if len(after) <= RECORD_SIZE:  # a record: plain steps, cheapest from a cold cache
            keys, kept = [], 0
            for key, value in after.items():
                old = before.get(key, _MISSING)
                if old is not value:
                    keys.append(key)
                if old is not _MISSING:
                    kept += 1
            if kept != len(before):
                keys += [k for k in before if k not in after]  # removed
        elif len(after) == len(before) and (names := list(after)) == list(before):  # same order
            keys = list(compress(names, map(is_not, before.values(), after.values())))
        else:
            keys = [k for k, v in after.items() if before.get(k, _MISSING) is not v]
            if len(before) != len(after) or not all(map(before.__contains__, keys)):
                keys += [k for k in before if k not in after]  # removed
        if len(keys) > 1:
            keys.sort(key=str)
        prefix = f"{path}." if path else ""
        for key in keys:
            old, new = before.get(key, _MISSING), after.get(key, _MISSING)
            if old is _MISSING:
                changes.append({"path": f"{prefix}{key}", "before": None, "after": new})
            elif new is _MISSING:
                changes.append({"path": f"{prefix}{key}", "before": old, "after": None})
            elif old == new:  # a copy, unchanged
                continue
            elif isinstance(old, _DIFFED) and isinstance(new, _DIFFED):
                _add_changes(changes, old, new, f"{prefix}{key}")
            else:
                changes.append({"path": f"{prefix}{key}", "before": old, "after": new})
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        changed = (
            range(len(after))  # a short list: each item compared below
            if len(after) <= RECORD_SIZE
            else compress(count(), map(is_not, before, after))
        )
        for index in changed:
            old, new = before[index], after[index]
            if old is not new and old != new:
                _add_changes(changes, old, new, f"{path}[{index}]")
    elif before != after:
        changes.append({"path": path, "before": before, "after": after})


RECORD_SIZE = 32
"""Mappings and lists up to this size are compared in plain steps (record-sized: cheaper
when the code is not in the CPU caches), larger ones with C-level passes."""
_DIFFED = (dict, list)
"""What :func:`state_diff` compares part by part (lists only of the same length)."""


@dataclass(slots=True)
class WriteLog:
    """What a write in a copy-on-write environment changed: enough to undo or list it."""

    user_db: Any
    """The user-side state before the write (it changes copies: the rollback puts it back)."""
    records: int
    """The number of records in every table before the write."""
    replaced: list[tuple[str, Any, Any]] = field(default_factory=list)
    """(table, key, the record before) of each record replaced, in order; ``_MISSING``
    for a record added."""
    added: dict[str, int] = field(default_factory=dict)
    """Records added per table."""

    def check(self, db: dict[str, Any]) -> None:
        """Raise if a table changed size other than through :meth:`~EnvironmentState.add_record`."""
        added = 0
        for number in self.added.values():
            added += number
        if _records(db) != self.records + added:
            raise RuntimeError(
                "a table of db changed size during a write without add_record(); "
                "copy-on-write domains add records only through it"
            )

    def changes(self, db: dict[str, Any]) -> list[dict[str, Any]]:
        """The changed paths of ``db`` since the write began, from the logged records alone.

        Exactly as :func:`state_diff` of the whole state before and after lists them; they
        share records with ``db`` (no write changes a record in place after it ends).
        """
        changes: list[dict[str, Any]] = []
        if not self.replaced:  # a write of the user side only
            return changes
        if len(self.replaced) == 1 and not self.added:  # one record changed (most writes)
            table, key, record = self.replaced[0]
            now = db[table][key]
            if record is not now:
                where = f"db.{table}[{key}]" if isinstance(db[table], list) else f"db.{table}.{key}"
                _add_changes(changes, record, now, where)
            return changes
        before: dict[str, dict[Any, Any]] = {}
        for table, key, record in self.replaced:
            before.setdefault(table, {}).setdefault(key, record)
        for name in sorted(before):
            table, records = db[name], before[name]
            path = f"db.{name}"
            if isinstance(table, list) and self.added.get(name):  # another length: whole
                old = table[: len(table) - self.added[name]]
                for index, record in records.items():
                    if record is not _MISSING:
                        old[index] = record
                changes.append({"path": path, "before": old, "after": list(table)})
            elif isinstance(table, list):
                for index in sorted(records):
                    record, now = records[index], table[index]
                    if record is not now:
                        _add_changes(changes, record, now, f"{path}[{index}]")
            else:
                for key in sorted(records, key=str):
                    record, now = records[key], table[key]
                    if record is _MISSING:
                        changes.append({"path": f"{path}.{key}", "before": None, "after": now})
                    elif record is not now:
                        _add_changes(changes, record, now, f"{path}.{key}")
        return changes


def _records(db: dict[str, Any]) -> int:
    """The number of records in every table (plain steps: cheap from a cold cache)."""
    total = 0
    for table in db.values():
        total += len(table)
    return total


@dataclass
class _Base:
    """The immutable state a frozen environment and its forks share."""

    db: dict[str, Any]
    user_db: Any
    origin: Origin | None
    _hash: str | None = None

    def hash(self) -> str:
        """The state hash of the base (computed once, when first asked for)."""
        if self._hash is None:
            self._hash = _state_hash({"db": self.db, "user_db": self.user_db}, self.origin)
        return self._hash


def shared_tables(db: dict[str, Any]) -> dict[str, Any]:
    """A copy of a database's tables (dicts and lists) that shares their records.

    For copy-on-write domains: the copy can be changed through
    :meth:`Environment.writable` without touching ``db``.
    """
    return {
        name: dict(t) if isinstance(t, dict) else list(t) if isinstance(t, list) else t
        for name, t in db.items()
    }


def changed_keys(table: Any, reference: Any) -> list[Any]:
    """Keys (dict tables) or indexes (list tables) whose record is not ``reference``'s.

    Records are compared by identity, so in copy-on-write data this is every record a write
    replaced, plus the ones added; keys that ``reference`` has and ``table`` lacks are not
    listed. The keys come in ``table``'s order.
    """
    if table is reference:
        return []
    if isinstance(table, dict) and isinstance(reference, dict):
        if len(table) == len(reference) and list(table) == list(reference):
            return list(compress(table, map(is_not, table.values(), reference.values())))
        return [k for k, v in table.items() if reference.get(k, _MISSING) is not v]
    if isinstance(table, list) and isinstance(reference, list):
        shared = min(len(table), len(reference))
        changed = compress(range(shared), map(is_not, table[:shared], reference[:shared]))
        return [*changed, *range(shared, len(table))]
    kinds = f"{type(table).__name__} and {type(reference).__name__}"
    raise TypeError(f"tables of different kinds cannot be compared: {kinds}")


def _same_tables(db: dict[str, Any], base: dict[str, Any]) -> bool:
    """Whether every table of ``db`` holds exactly the records of the base's table."""
    if db.keys() != base.keys():
        return False
    for name, table in db.items():
        other = base[name]
        if table is other:
            continue
        if type(table) is not type(other) or len(table) != len(other):
            return False
        if isinstance(table, dict | list):
            if changed_keys(table, other):
                return False
        elif table != other:
            return False
    return True


_MISSING = object()


class Origin:
    """A shared database environments start from, and what is computed once about it.

    Copy-on-write environments replace the records they change, so every record still
    identical to the origin's holds the origin's value: the state hash re-encodes only
    the other records and resumes SHA-256 from a checkpoint of the origin's text before
    the first change; domain checks keep per-origin results in :meth:`remember`.
    """

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db
        self._memo: dict[Hashable, Any] = {}
        self._text: _DbText | None = None

    def __reduce__(self) -> tuple[type[Origin], tuple[dict[str, Any]]]:
        """Pickled as its database alone (SHA-256 states do not pickle; rebuilt lazily)."""
        return Origin, (self.db,)

    def remember(self, key: Hashable, compute: Callable[[dict[str, Any]], Any]) -> Any:
        """``compute(origin db)``, computed once per origin and key; don't change it."""
        if key not in self._memo:
            self._memo[key] = compute(self.db)
        return self._memo[key]

    def text(self) -> _DbText | None:
        """The origin's encoding (None: a database shape the encoding does not cover)."""
        if self._text is None and _keyed(self.db):
            self._text = _DbText(self.db)
        return self._text


ORIGINS_KEPT = 16
"""Origins kept per process (least recently used are dropped; environments keep theirs)."""
_ORIGINS: OrderedDict[int, Origin] = OrderedDict()


def shared_origin(db: dict[str, Any]) -> Origin:
    """The :class:`Origin` of a shared database (one per database object and process).

    The database must not change afterwards: environments share its records.
    """
    origin = _ORIGINS.get(id(db))
    if origin is None or origin.db is not db:
        origin = _ORIGINS[id(db)] = Origin(db)
        if len(_ORIGINS) > ORIGINS_KEPT:
            _ORIGINS.popitem(last=False)
    _ORIGINS.move_to_end(id(db))
    return origin


CHECKPOINT_BYTES = 1 << 14
"""Distance between the saved SHA-256 states of an origin's text."""
DIGESTS_KEPT = 256
"""State hashes kept per origin: the episodes of a task often end in the same state."""


@dataclass
class _TableLayout:
    """Where a table of the origin and each of its records sit in the origin's text."""

    table: Any
    body: tuple[int, int]
    """Start and end of the table's JSON text."""
    kind: Literal["dict", "list", "other"] = "other"
    """How the table is laid out: records by key, by position, or one value."""
    keys: list[str] = field(default_factory=list)
    """Dict tables: the sorted keys."""
    index: dict[str, int] = field(default_factory=dict)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    """Start and end of each record's piece (``"key":value`` or the item), in text order."""


class _DbText:
    """The canonical JSON of ``{"db": origin}`` with its layout and SHA-256 checkpoints."""

    def __init__(self, db: dict[str, Any]) -> None:
        parts: list[bytes] = []
        size = 0

        def add(piece: bytes) -> int:
            nonlocal size
            parts.append(piece)
            size += len(piece)
            return size

        add(b'{"db":{')
        self.tables: dict[str, _TableLayout] = {}
        for number, name in enumerate(sorted(db)):
            add((b"," if number else b"") + _key_bytes(name) + b":")
            table = db[name]
            layout = _TableLayout(table, (size, size))
            if _keyed(table) or isinstance(table, list):
                layout.kind = "dict" if isinstance(table, dict) else "list"
                if isinstance(table, dict):
                    layout.keys = sorted(table)
                    layout.index = {k: i for i, k in enumerate(layout.keys)}
                    pieces = (_piece(k, table[k]) for k in layout.keys)
                else:
                    pieces = (canonical_json(r).encode() for r in table)
                add(b"{" if isinstance(table, dict) else b"[")
                for i, piece in enumerate(pieces):
                    if i:
                        add(b",")
                    layout.starts.append(size)
                    layout.ends.append(add(piece))
                add(b"}" if isinstance(table, dict) else b"]")
            else:
                add(canonical_json(table).encode())
            layout.body = (layout.body[0], size)
            self.tables[name] = layout
        add(b"}")
        self.data = b"".join(parts)
        self.names = list(self.tables)
        self.digests: dict[tuple[tuple[int, int] | bytes, ...], str] = {}
        """Hashes of states by the segments of their text (they determine it), recent last."""
        self.checkpoints = []
        hasher = hashlib.sha256()
        for offset in range(0, len(self.data) + 1, CHECKPOINT_BYTES):
            self.checkpoints.append(hasher.copy())
            hasher.update(self.data[offset : offset + CHECKPOINT_BYTES])

    def hash(self, state: dict[str, Any]) -> str | None:
        """SHA-256 of ``canonical_json(state)`` from the changes (None: not covered here)."""
        if list(state) != ["db", "user_db"] or not _keyed(state["db"]):
            return None
        db = state["db"]
        if sorted(db) != self.names:
            return None
        text = _Segments()
        for name in self.names:
            self._table(db[name], self.tables[name], text)
        text.add_range(len(self.data) - 1, len(self.data))  # the db's closing brace
        text.add_bytes(b',"user_db":' + canonical_json(state["user_db"]).encode() + b"}")
        segments = tuple(text.segments)
        digest = self.digests.pop(segments, None)
        if digest is None:
            digest = self._digest(segments)
            if len(self.digests) >= DIGESTS_KEPT:
                del self.digests[next(iter(self.digests))]
        self.digests[segments] = digest  # the most recent last
        return digest

    def _digest(self, segments: tuple[tuple[int, int] | bytes, ...]) -> str:
        """SHA-256 of the text the segments make, from the checkpoint before the first change."""
        same = segments[0][1] if segments and isinstance(segments[0], tuple) else 0
        hasher = self.checkpoints[same // CHECKPOINT_BYTES].copy()
        data = memoryview(self.data)
        hasher.update(data[same - same % CHECKPOINT_BYTES : same])
        for segment in segments[1:] if same else segments:
            hasher.update(data[segment[0] : segment[1]] if isinstance(segment, tuple) else segment)
        return hasher.hexdigest()

    def _table(self, table: Any, layout: _TableLayout, text: _Segments) -> None:
        """Add the origin's text since the last table, then this table's body."""
        start, end = layout.body
        text.add_range(text.origin_end, start)
        text.origin_end = end
        if table is layout.table:
            text.add_range(start, end)
        elif layout.kind == "dict" and isinstance(table, dict):
            self._dict_table(table, layout, text)
        elif layout.kind == "list" and isinstance(table, list):
            self._list_table(table, layout, text)
        else:
            text.add_bytes(canonical_json(table).encode())

    def _dict_table(self, table: dict[str, Any], layout: _TableLayout, text: _Segments) -> None:
        origin, keys, index = layout.table, layout.keys, layout.index
        edits = changed_keys(table, origin)
        if not all(isinstance(k, str) for k in edits):
            text.add_bytes(canonical_json(table).encode())
            return
        if len(table) - sum(k not in index for k in edits) != len(origin):
            edits += [k for k in keys if k not in table]
        items: list[tuple[int, int] | bytes] = []
        done = 0  # origin pieces before this one are written or replaced
        for key in sorted(edits):
            position = index.get(key)
            at = bisect_left(keys, key) if position is None else position
            if at > done:
                items.append((done, at))
            if key in table:
                items.append(_piece(key, table[key]))
            done = at if position is None else at + 1
        if done < len(keys):
            items.append((done, len(keys)))
        _add_items(items, layout, text)

    def _list_table(self, table: list[Any], layout: _TableLayout, text: _Segments) -> None:
        origin = layout.table
        items: list[tuple[int, int] | bytes] = []
        if len(table) == len(origin):
            done = 0
            for position in changed_keys(table, origin):
                if position > done:
                    items.append((done, position))
                items.append(canonical_json(table[position]).encode())
                done = position + 1
            if done < len(origin):
                items.append((done, len(origin)))
        else:  # records inserted or removed: re-encode between the shared ends
            shortest = min(len(table), len(origin))
            head = next(compress(count(), map(is_not, table, origin)), shortest)
            tail = next(compress(count(), map(is_not, reversed(table), reversed(origin))), shortest)
            tail = min(tail, shortest - head)
            if head:
                items.append((0, head))
            items += [canonical_json(r).encode() for r in table[head : len(table) - tail]]
            if tail:
                items.append((len(origin) - tail, len(origin)))
        _add_items(items, layout, text)


class _Segments:
    """A text put together from ranges of the origin's text and new bytes."""

    def __init__(self) -> None:
        self.segments: list[tuple[int, int] | bytes] = []
        self.origin_end = 0
        """Where the origin's text of the last table added ends."""

    def add_range(self, start: int, end: int) -> None:
        last = self.segments[-1] if self.segments else None
        if isinstance(last, tuple) and last[1] == start:
            self.segments[-1] = (last[0], end)
        elif end > start:
            self.segments.append((start, end))

    def add_bytes(self, data: bytes) -> None:
        self.segments.append(data)


def _add_items(items: list[tuple[int, int] | bytes], layout: _TableLayout, text: _Segments) -> None:
    """A changed table's body: its items (runs of origin pieces, or new pieces) in brackets."""
    start, end = layout.body
    text.add_range(start, start + 1)
    previous: tuple[int, int] | bytes | None = None
    for item in items:
        if isinstance(previous, tuple) and previous[1] < len(layout.starts):
            comma = layout.ends[previous[1] - 1]  # the origin's comma after the run
            text.add_range(comma, comma + 1)
        elif previous is not None:
            text.add_bytes(b",")
        if isinstance(item, tuple):
            text.add_range(layout.starts[item[0]], layout.ends[item[1] - 1])
        else:
            text.add_bytes(item)
        previous = item
    text.add_range(end - 1, end)


def _state_hash(state: dict[str, Any], origin: Origin | None) -> str:
    """SHA-256 of ``canonical_json(state)``, from the origin's text where it covers the state."""
    text = origin.text() if origin is not None else None
    digest = text.hash(state) if text is not None else None
    return digest or hashlib.sha256(canonical_json(state).encode()).hexdigest()


def _keyed(table: Any) -> bool:
    return isinstance(table, dict) and all(isinstance(k, str) for k in table)


@cache
def _key_bytes(key: str) -> bytes:
    return json.dumps(key).encode()


def _piece(key: str, record: Any) -> bytes:
    return _key_bytes(key) + b":" + canonical_json(record).encode()
