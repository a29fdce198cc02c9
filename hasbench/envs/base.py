"""The environment contract shared by every domain.

An :class:`Environment` holds the domain state (plain JSON-compatible data in ``self.db``
and, for dual-control domains, ``self.user_db``) and exposes tools: methods marked with
:func:`tool`. A tool declares whether it reads or writes, which side may call it
(``agent`` or ``user``) and its risk level; parameters and their JSON schema come from
the type hints, each parameter's description from the docstring's ``Args:`` section.
:meth:`Environment.call` validates arguments, runs the tool and returns a
:class:`ToolResult`. A failing call returns a typed error and leaves the state exactly as
it was (writes are rolled back). Hidden helpers marked with :func:`assertion` check the
final state for evaluation and are never shown to participants.

Domains whose tools never change a record of ``db`` in place declare ``copy_on_write``:
a write takes its own copy of a record first (:meth:`Environment.writable`). Their
environments then start from a shared, immutable base (one per task content, see
:func:`hasbench.envs.make_environment`) and fork from it by copying only the tables;
snapshots for rollback do the same. The shared database they all come from is their
:class:`Origin`: its text is encoded once per process, the state hash re-encodes only the
records that differ from it, and domain checks can look only at those records
(:meth:`Environment.changed_records`).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import marshal
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from itertools import compress, count
from operator import is_not
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from hasbench.tools import ToolSpec, split_docstring
from hasbench.vocab import Risk, Side, ToolKind, canonical_json

if TYPE_CHECKING:
    from hasbench.scenario import Scenario
    from hasbench.trace import Trace

ErrorType = Literal[
    "unknown_tool", "invalid_arguments", "not_found", "precondition_failed",
    "permission_denied", "needs_authorization",
    # sandboxed code execution (coding): the limit a run exceeded
    "timeout", "cpu_limit", "memory_limit", "process_limit", "output_limit",
    "file_size_limit", "killed",
]  # fmt: skip


class ToolError(Exception):
    """A tool refused the call; the state is unchanged."""

    def __init__(self, error_type: ErrorType, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class EnvironmentDataError(ValueError):
    """A database file or initial state that cannot be loaded."""


@dataclass
class ToolResult:
    """The outcome of one tool call."""

    name: str
    output: Any = None
    error: bool = False
    error_type: str | None = None
    message: str | None = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    """For writes: the changed paths, each ``{"path", "before", "after"}``."""
    text: str | None = None
    """The result as the environment's compatibility mode renders it (``compat: tau2``:
    as τ²-bench's tools do), else None."""

    def content(self) -> str:
        """The result as the caller sees it (JSON text, or ``Error: ...``)."""
        if self.error:
            return f"Error: {self.message}"
        if self.text is not None:
            return self.text
        if isinstance(self.output, str):
            return self.output
        return json.dumps(self.output, sort_keys=True, default=str)


def tool(kind: ToolKind = "read", side: Side = "agent", risk: Risk = "none") -> Callable:
    """Mark an environment method as a tool.

    Args:
        kind: "read", "write" or "generic" (no state effect).
        side: which side may call it: "agent" or "user" (user-side device actions).
        risk: for writes, how consequential it is; settings decide from which level on a
            write needs human authorization.
    """
    if kind == "write" and risk == "none":
        raise ValueError("a write tool needs a risk level of low, medium or high")

    def mark(method: Callable) -> Callable:
        method.__tool__ = {"kind": kind, "side": side, "risk": risk}
        return method

    return mark


def assertion(method: Callable) -> Callable:
    """Mark a hidden helper that checks the final state and returns a bool."""
    method.__assertion__ = True
    return method


class Environment:
    """Base class: a domain state plus tools, assertions and a state hash."""

    domain: ClassVar[str] = ""
    _tool_methods: ClassVar[dict[str, Callable]]
    _arg_models: ClassVar[dict[str, type[BaseModel]]]
    _specs: ClassVar[dict[str, ToolSpec]]

    policy: str = ""
    """The domain policy text given to agents."""
    compat: str | None = None
    """``"tau2"``: behave as τ²-bench v0.1.3 where the domain is deliberately stricter
    (set from ``environment.compat`` before the task is initialized)."""
    copy_on_write: ClassVar[bool] = False
    """True when the domain's code never changes a record of ``db`` (an item of one of its
    tables) in place but takes a private copy with :meth:`writable` first, while
    :attr:`writing` is set (inside write tools, setup helpers and :meth:`after_call`)."""

    def __init__(self, db: dict[str, Any], user_db: dict[str, Any] | None = None) -> None:
        self.db = db
        self.user_db = user_db
        self.writing = False
        """True while a write tool or setup helper runs (copy-on-write domains copy records
        they hand out)."""
        self._own: dict[int, Any] = {}
        self._base: _Base | None = None
        self.origin: Origin | None = None
        """The shared database ``db`` was forked from (copy-on-write domains set it, see
        :func:`shared_origin`); records still identical to its records hold its values."""

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> Environment:
        """Build the environment for a scenario: load the base state, then initialize it.

        Subclasses load their database (``scenario.environment.db_path`` or their
        generated default) and call :meth:`initialize`.
        """
        raise NotImplementedError(f"{cls.__name__} must implement from_scenario")

    def initialize(self, scenario: Scenario) -> None:
        """Apply ``initialization_data`` (deep merge) then ``initialization_actions``."""
        env = scenario.environment
        if env.initialization_data is not None:
            if env.initialization_data.agent_data:
                self.db = deep_merge(
                    self.db, env.initialization_data.agent_data, self.copy_on_write
                )
            if env.initialization_data.user_data:
                if self.user_db is None:
                    raise EnvironmentDataError(
                        f"{scenario.task_id}: environment.initialization_data.user_data: "
                        f"domain {self.domain!r} has no user-side state"
                    )
                self.user_db = deep_merge(self.user_db, env.initialization_data.user_data)
        for index, action in enumerate(env.initialization_actions):
            side: Side = "agent" if action.env_type == "assistant" else "user"
            result = self.call_any(action.func_name, action.arguments, side)
            if result.error:
                raise EnvironmentDataError(
                    f"{scenario.task_id}: environment.initialization_actions[{index}]: "
                    f"{action.func_name}: {result.message}"
                )

    def call_any(self, name: str, arguments: dict[str, Any], side: Side) -> ToolResult:
        """Run a tool or a hidden setup helper (a public method) by name; used for setup."""
        if name in self._specs:
            return self.call(name, arguments, side)
        method = getattr(self, name, None)
        if method is None or name.startswith("_") or not callable(method):
            return _error(name, "unknown_tool", f"Function '{name}' not found.")
        before = self.snapshot()
        with self.write_access():
            try:
                output = method(**arguments)
            except (ToolError, TypeError, KeyError, ValueError) as exc:
                self.restore(before)
                return _error(name, "precondition_failed", str(exc))
            self.after_call(None)
        return ToolResult(name=name, output=_jsonable(output))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._tool_methods, cls._arg_models, cls._specs = {}, {}, {}
        for name, method in inspect.getmembers(cls, predicate=inspect.isfunction):
            meta = getattr(method, "__tool__", None)
            if meta is None:
                continue
            model = _arguments_model(name, method)
            description, arguments = split_docstring(inspect.getdoc(method) or "")
            parameters = _clean_schema(model.model_json_schema())
            for argument, text in arguments.items():
                if argument in parameters["properties"] and text:
                    parameters["properties"][argument]["description"] = text
            cls._tool_methods[name] = method
            cls._arg_models[name] = model
            cls._specs[name] = ToolSpec(
                name=name, description=description, parameters=parameters, **meta
            )

    # -- tools ---------------------------------------------------------------------

    def hidden_tools(self) -> frozenset[str]:
        """Tools of the class this instance does not offer (e.g. in a compatibility mode)."""
        return frozenset()

    def tools(self, side: Side | None = None) -> list[ToolSpec]:
        """Tool specs, optionally only those of one side, sorted by name."""
        hidden = self.hidden_tools()
        return sorted(
            (
                s
                for s in self._specs.values()
                if (side is None or s.side == side) and s.name not in hidden
            ),
            key=lambda s: s.name,
        )

    def tool_spec(self, name: str) -> ToolSpec | None:
        """The spec of one tool, or None if there is no such tool."""
        return None if name in self.hidden_tools() else self._specs.get(name)

    def call(self, name: str, arguments: dict[str, Any], side: Side = "agent") -> ToolResult:
        """Run a tool; errors come back as a typed :class:`ToolResult`, state unchanged."""
        spec = self.tool_spec(name)
        if spec is None:
            return _error(name, "unknown_tool", f"Tool '{name}' not found.")
        if spec.side != side:
            return _error(name, "permission_denied", f"Tool '{name}' is a {spec.side}-side tool.")
        try:
            args = self._arg_models[name].model_validate(arguments)
        except ValidationError as exc:
            return _error(name, "invalid_arguments", _describe(exc))
        if spec.kind != "write":
            try:
                output = self._tool_methods[name](self, **dict(args))
            except ToolError as exc:
                return _error(name, exc.error_type, exc.message)
            self.after_call(spec)
            return ToolResult(
                name=name, output=_jsonable(output), text=self.compat_text(name, output)
            )
        before = self.snapshot()
        with self.write_access():
            try:
                output = self._tool_methods[name](self, **dict(args))
            except ToolError as exc:
                self.restore(before)
                return _error(name, exc.error_type, exc.message)
            self.after_call(spec)
        diff = fast_copy(state_diff(before, self.state()))
        text = self.compat_text(name, output)
        return ToolResult(name=name, output=_jsonable(output), diff=diff, text=text)

    def compat_text(self, name: str, output: Any) -> str | None:
        """How the compatibility mode renders a tool's result, or None (the default text).

        Under ``compat: tau2`` a result reads as τ²-bench's does (:mod:`hasbench.envs.tau2`):
        records keep their fields in τ²'s order and a plain mapping's numbers become
        strings; a domain whose tools say things differently renders its own texts.
        """
        if self.compat != "tau2":
            return None
        from hasbench.envs.tau2 import tau2_text

        return tau2_text(self, name, output)

    def tau2_result(self, name: str, output: Any) -> Any:
        """What τ²'s tool returns for this result: by default records stay records."""
        from hasbench.envs.tau2 import records

        return records(output)

    @contextmanager
    def write_access(self) -> Iterator[None]:
        """Set :attr:`writing` for the duration (a write tool, a setup helper)."""
        outer, self.writing = self.writing, True
        try:
            yield
        finally:
            self.writing = outer

    def after_call(self, spec: ToolSpec | None) -> None:
        """Hook run after every successful call (e.g. Telecom syncs device and network)."""

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

    def writable(self, table: str, key: Any) -> Any:
        """The record ``db[table][key]`` (a key or a list index) as a copy a tool may change.

        The copy replaces the shared record in this environment's table; later calls in
        the same write get the same copy.
        """
        record = self.db[table][key]
        if id(record) in self._own:
            return record
        record = fast_copy(record)
        self.db[table][key] = record
        self._own[id(record)] = record
        return record

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
        self._own = {}
        self._base = _Base(db=self.db, user_db=fast_copy(self.user_db), origin=self.origin)

    def fork(self) -> Environment:
        """A new environment in this (frozen) environment's state, sharing its records."""
        if self._base is None or self._base.db is not self.db:
            raise TypeError("only a frozen environment can be forked (call freeze() first)")
        twin = copy.copy(self)
        twin.db, twin.user_db = shared_tables(self.db), fast_copy(self.user_db)
        twin.writing, twin._own = False, {}
        return twin

    # -- evaluation hooks ------------------------------------------------------------

    def describe(self) -> dict[str, str]:
        """How this environment runs, for the trace header (e.g. the coding sandbox mode).

        By default its compatibility mode when it has one (``compat: tau2``: τ²-bench's
        rules and words), else nothing: the domain's own rules.
        """
        return {"compat": self.compat} if self.compat else {}

    def evaluation_details(self, scenario: Scenario) -> dict[str, Any]:
        """Evidence and outcome numbers of the final state, kept in the evaluation details.

        None by default; e.g. the hidden tests' verdict lines (Coding) or a deal price and
        surplus shares (Bargaining, under ``measures``).
        """
        return {}

    def judge_artifact(self, initial: Environment) -> str | None:
        """The final work product an NL-assertion judge reads besides the transcript.

        For example the code change; None (the default) when the transcript says it all.
        """
        return None

    # -- assertions ----------------------------------------------------------------

    def safety_violations(self, scenario: Scenario, initial: Environment) -> list[str]:
        """Domain safety checks on the final state; each violation is one line of text.

        Args:
            scenario: the task (its gold actions say which changes were asked for).
            initial: a fresh environment in the task's initial state, for comparison.

        Subclasses override this with their domain's rules (e.g. a refund paid to a
        method the customer does not own). The base environment has none.
        """
        return []

    def delivered(self) -> bool | None:
        """Whether the final state holds the task's deliverable; None: the domain has no rule.

        Domains whose deliverable is state (a submitted code change, proposal or deal)
        override this; otherwise delivery is judged from the trace (the agent finished with
        a non-blank result).
        """
        return None

    @classmethod
    def audit_trace(cls, trace: Trace, scenario: Scenario) -> list[str]:
        """Domain rules of the action-safety audit: one line per unsafe act in the trace.

        The base environment adds none; e.g. Bargaining flags a private value disclosed to
        the other side.
        """
        return []

    def run_assertion(self, func_name: str, arguments: dict[str, Any]) -> bool:
        """Run a hidden assertion helper by name; raises KeyError if there is none."""
        method = getattr(type(self), func_name, None)
        if method is None or not getattr(method, "__assertion__", False):
            raise KeyError(f"{self.domain}: no assertion named {func_name!r}")
        result = method(self, **arguments)
        if not isinstance(result, bool):
            raise TypeError(f"{self.domain}: assertion {func_name!r} returned {result!r}")
        return result


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


def fast_copy(value: Any) -> Any:
    """A deep copy of plain JSON-like data (through marshal, much faster than deepcopy)."""
    return marshal.loads(marshal.dumps(value))


def state_diff(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """The changed paths between two JSON-like values, for people to read.

    Mappings are compared key by key and lists of equal length item by item (paths like
    ``db.lines[3].status``); anything else that differs is reported whole.
    """
    if before is after:  # shared (copy-on-write) parts are unchanged by definition
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[dict[str, Any]] = []
        if len(before) == len(after) and list(before) == list(after):  # a copy's keys
            keys = list(compress(before, map(is_not, before.values(), after.values())))
        else:
            keys = [k for k, v in before.items() if k not in after or after[k] is not v]
            keys += [k for k in after if k not in before]
        for key in sorted(keys, key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in before:
                changes.append({"path": sub, "before": None, "after": after[key]})
            elif key not in after:
                changes.append({"path": sub, "before": before[key], "after": None})
            elif before[key] != after[key]:
                changes.extend(state_diff(before[key], after[key], sub))
        return changes
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            change
            for index, (old, new) in enumerate(zip(before, after, strict=True))
            if old is not new and old != new
            for change in state_diff(old, new, f"{path}[{index}]")
        ]
    if before != after:
        return [{"path": path, "before": before, "after": after}]
    return []


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
        segments = text.segments
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


def _arguments_model(name: str, method: Callable) -> type[BaseModel]:
    hints = get_type_hints(method, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(method).parameters.values())[1:]:
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid", strict=True)
    return create_model(f"{name}_arguments", __config__=config, **fields)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    schema = dict(schema)
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _error(name: str, error_type: str, message: str) -> ToolResult:
    return ToolResult(name=name, error=True, error_type=error_type, message=message)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return json.loads(canonical_json(value)) if not isinstance(value, str) else str(value)
