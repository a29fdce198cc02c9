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
snapshots for rollback do the same, and the state hash re-encodes only the records that
changed (the base's records are encoded once per process).
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import marshal
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from itertools import compress
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

    def content(self) -> str:
        """The result as the caller sees it (JSON text, or ``Error: ...``)."""
        if self.error:
            return f"Error: {self.message}"
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
            return ToolResult(name=name, output=_jsonable(output))
        before = self.snapshot()
        with self.write_access():
            try:
                output = self._tool_methods[name](self, **dict(args))
            except ToolError as exc:
                self.restore(before)
                return _error(name, exc.error_type, exc.message)
            self.after_call(spec)
        diff = fast_copy(state_diff(before, self.state()))
        return ToolResult(name=name, output=_jsonable(output), diff=diff)

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

        In copy-on-write domains the text is put together from the cached encodings of
        the shared records, and an environment its base has not changed gives the base's
        hash.
        """
        if self._base is None:
            return hashlib.sha256(canonical_json(self.state()).encode()).hexdigest()
        if self.user_db == self._base.user_db and _same_tables(self.db, self._base.db):
            return self._base.hash()
        text = _encode_state(self.state(), self._base.db)
        return hashlib.sha256(text.encode()).hexdigest()

    # -- shared bases ----------------------------------------------------------------

    def freeze(self) -> None:
        """Make the current state the immutable base that :meth:`fork` starts from.

        Only copy-on-write domains can; the environment must not be changed afterwards
        (forks change their own tables).
        """
        if not self.copy_on_write:
            raise TypeError(f"{type(self).__name__} is not copy-on-write; it cannot be shared")
        for table in self.db.values():
            for record in _records(table):
                if isinstance(record, dict | list) and id(record) not in _RECORD_JSON:
                    _RECORD_JSON[id(record)] = (record, canonical_json(record))
        self._own = {}
        self._base = _Base(db=self.db, user_db=fast_copy(self.user_db))

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

        None by default.
        """
        return {}

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
    _hash: str | None = None

    def hash(self) -> str:
        """The state hash of the base (computed once, when first asked for)."""
        if self._hash is None:
            state = {"db": self.db, "user_db": self.user_db}
            self._hash = hashlib.sha256(_encode_state(state, self.db).encode()).hexdigest()
        return self._hash


_RECORD_JSON: dict[int, tuple[Any, str]] = {}
"""id -> (record, canonical JSON) for every record of a frozen base. Such records never
change (copy-on-write), and the entry keeps the record alive, so its id stays its own."""


def _records(table: Any) -> Any:
    if isinstance(table, dict):
        return table.values()
    return table if isinstance(table, list) else ()


def shared_tables(db: dict[str, Any]) -> dict[str, Any]:
    """A copy of a database's tables (dicts and lists) that shares their records.

    For copy-on-write domains: the copy can be changed through
    :meth:`Environment.writable` without touching ``db``.
    """
    return {
        name: dict(t) if isinstance(t, dict) else list(t) if isinstance(t, list) else t
        for name, t in db.items()
    }


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
        if isinstance(table, dict):
            if any(other.get(k, _MISSING) is not v for k, v in table.items()):
                return False
        elif isinstance(table, list):
            if any(a is not b for a, b in zip(table, other, strict=True)):
                return False
        elif table != other:
            return False
    return True


_MISSING = object()


def _encode_state(state: dict[str, Any], base_db: dict[str, Any] | None = None) -> str:
    """``canonical_json(state)``, reusing cached encodings of shared records and tables.

    ``base_db``: the frozen base the state was forked from; a table that still holds
    exactly the base table's records reuses that table's encoding.
    """
    parts = []
    for key in sorted(state):
        value = state[key]
        text = _encode_db(value, base_db or {}) if key == "db" else canonical_json(value)
        parts.append(f"{_json_key(key)}:{text}")
    return "{" + ",".join(parts) + "}"


def _encode_db(db: Any, base_db: dict[str, Any]) -> str:
    if not isinstance(db, dict) or not all(isinstance(k, str) for k in db):
        return canonical_json(db)
    tables = []
    for name in sorted(db):
        table, base = db[name], base_db.get(name, _MISSING)
        cached = _base_table(base) if base is not _MISSING else None
        text = _encode_table(table) if cached is None else _encode_changes(table, base, cached)
        tables.append(f"{_json_key(name)}:{text}")
    return "{" + ",".join(tables) + "}"


def _encode_table(table: Any) -> str:
    if isinstance(table, dict) and all(isinstance(k, str) for k in table):
        return "{" + ",".join(_pieces(table, sorted(table))) + "}"
    if isinstance(table, list):
        return "[" + ",".join(_encode_record(r) for r in table) + "]"
    return canonical_json(table)


def _pieces(table: dict[str, Any], keys: list[str]) -> list[str]:
    return [f"{_json_key(k)}:{_encode_record(table[k])}" for k in keys]


@dataclass
class _TableText:
    """A base table's encoding and its pieces (one per record, in output order)."""

    pieces: list[str]
    index: dict[str, int]
    """Dict tables: key -> position of its piece (list tables use the list index)."""
    text: str


def _encode_changes(table: Any, base: Any, cached: _TableText) -> str:
    """The encoding of ``table``, re-encoding only the records it does not share with base."""
    if isinstance(table, dict) and isinstance(base, dict) and table.keys() == base.keys():
        changed = [k for k, v in table.items() if base[k] is not v]
        if not changed:
            return cached.text
        pieces = list(cached.pieces)
        for key, piece in zip(changed, _pieces(table, changed), strict=True):
            pieces[cached.index[key]] = piece
        return "{" + ",".join(pieces) + "}"
    if isinstance(table, list) and isinstance(base, list) and len(table) == len(base):
        changed = [
            i for i, (new, old) in enumerate(zip(table, base, strict=True)) if new is not old
        ]
        if not changed:
            return cached.text
        pieces = list(cached.pieces)
        for i in changed:
            pieces[i] = _encode_record(table[i])
        return "[" + ",".join(pieces) + "]"
    return _encode_table(table)


def _base_table(table: Any) -> _TableText | None:
    """The cached encoding of a frozen base's table (None: not cacheable).

    Keyed by the identities of the table's records, so tables of different bases that hold
    the same shared records (e.g. a table no task changes) share one entry; the records are
    kept alive by ``_RECORD_JSON``, so their ids identify them.
    """
    if isinstance(table, dict) and all(isinstance(k, str) for k in table):
        key: Any = (dict, tuple(table), tuple(map(id, table.values())))
    elif isinstance(table, list):
        key = (list, tuple(map(id, table)))
    else:
        return None
    if not all(map(_RECORD_JSON.__contains__, key[-1])):
        return None
    cached = _TABLE_JSON.get(key)
    if cached is not None:
        _TABLE_JSON.move_to_end(key)
        return cached
    if isinstance(table, dict):
        keys = sorted(table)
        pieces = _pieces(table, keys)
        cached = _TableText(
            pieces, {k: i for i, k in enumerate(keys)}, "{" + ",".join(pieces) + "}"
        )
    else:
        pieces = [_encode_record(r) for r in table]
        cached = _TableText(pieces, {}, "[" + ",".join(pieces) + "]")
    _TABLE_JSON[key] = cached
    if len(_TABLE_JSON) > TABLE_TEXTS_KEPT:
        _TABLE_JSON.popitem(last=False)
    return cached


TABLE_TEXTS_KEPT = 16
"""Encoded base tables kept per process."""
_TABLE_JSON: OrderedDict[tuple[Any, ...], _TableText] = OrderedDict()


@cache
def _json_key(key: str) -> str:
    return json.dumps(key)


def _encode_record(record: Any) -> str:
    cached = _RECORD_JSON.get(id(record))
    return cached[1] if cached is not None and cached[0] is record else canonical_json(record)


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
    return json.loads(canonical_json(value)) if not isinstance(value, str) else value
