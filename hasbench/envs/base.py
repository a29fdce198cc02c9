"""The environment contract: what a domain provides and what every environment offers.

An :class:`Environment` holds the domain state (plain JSON-compatible data in ``self.db``
and, for dual-control domains, ``self.user_db``) and exposes tools: methods marked with
:func:`tool`. A tool declares whether it reads or writes, which side may call it
(``agent`` or ``user``) and its risk level; parameters and their JSON schema come from
the type hints, each parameter's description from the docstring's ``Args:`` section.
:meth:`Environment.call` validates arguments, runs the tool and returns a
:class:`ToolResult`. A failing call returns a typed error and leaves the state exactly as
it was (writes are rolled back). Hidden helpers marked with :func:`assertion` check the
final state for evaluation and are never shown to participants.

A domain provides :meth:`Environment.from_scenario` (load the initial state, then
:meth:`Environment.initialize`), its tools and assertions, and where it has rules on the
final state :meth:`Environment.safety_violations` (and the other evaluation hooks below).
Domains whose tools never change a record of ``db`` in place declare ``copy_on_write``
and change records through :meth:`~hasbench.envs.state.EnvironmentState.writable`; how
snapshots, shared bases and the state hash work is in :mod:`hasbench.envs.state`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import BaseModel, ConfigDict, ValidationError, WithJsonSchema, create_model
from typing_extensions import is_typeddict

from hasbench.envs.state import EnvironmentState, deep_merge
from hasbench.envs.tau2 import tau2_text
from hasbench.paths import POLICIES_DIR, TASKS_DIR
from hasbench.registry import Domain
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
    # coding: a file that could take over an interpreter or a test run
    "takeover_file",
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


class Environment(EnvironmentState):
    """Base class of every domain: its state, tools, assertions and evaluation hooks."""

    domain: ClassVar[str] = ""
    _tool_methods: ClassVar[dict[str, Callable]]
    _arg_models: ClassVar[dict[str, type[BaseModel]]]
    _plain_parameters: ClassVar[dict[str, tuple[dict[str, Any], dict[str, Any]] | None]]
    _specs: ClassVar[dict[str, ToolSpec]]

    policy: str = ""
    """The domain policy text given to agents."""
    compat: str | None = None
    """``"tau2"``: behave as τ²-bench v0.1.3 where the domain is deliberately stricter
    (set from ``environment.compat`` before the task is initialized)."""

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
        started = self.begin_write()
        try:
            output = method(**arguments)
        except (ToolError, TypeError, KeyError, ValueError) as exc:
            self.rollback(started)
            return _error(name, "precondition_failed", str(exc))
        self.after_call(None)
        self.end_write(started)
        return ToolResult(name=name, output=_jsonable(output))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._tool_methods, cls._arg_models, cls._specs = {}, {}, {}
        cls._plain_parameters = {}
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
            cls._plain_parameters[name] = _plain_parameters(model)
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
        args = _plain_arguments(self._plain_parameters[name], arguments)
        if args is None:  # anything but plain values of the declared types: validated
            try:
                model = self._arg_models[name].__pydantic_validator__.validate_python(arguments)
            except ValidationError as exc:
                return _error(name, "invalid_arguments", _describe(exc))
            args = model.__dict__
        if spec.kind != "write":
            try:
                output = self._tool_methods[name](self, **args)
            except ToolError as exc:
                return _error(name, exc.error_type, exc.message)
            self.after_call(spec)
            return ToolResult(
                name=name, output=_jsonable(output), text=self.compat_text(name, output)
            )
        started = self.begin_write()
        try:
            output = self._tool_methods[name](self, **args)
        except ToolError as exc:
            self.rollback(started)
            return _error(name, exc.error_type, exc.message)
        self.after_call(spec)
        diff = self.end_write(started)
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
        return tau2_text(output)

    def after_call(self, spec: ToolSpec | None) -> None:
        """Hook run after every successful call (e.g. Telecom syncs device and network)."""

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


def _arguments_model(name: str, method: Callable) -> type[BaseModel]:
    hints = get_type_hints(method, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(method).parameters.values())[1:]:
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid", strict=True)
    return create_model(f"{name}_arguments", __config__=config, **fields)


_PLAIN_TYPES = frozenset({str, int, float, bool})
_TEXTS = list[str]
_MAPPING = dict[str, Any]
_EXACT_INT = 2**53
"""Whole numbers up to this size are exact as floats (validation turns them into floats)."""


def _plain_parameters(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A tool's parameters, when each is a text, number, boolean, choice, list or mapping.

    Their kinds: the type for a text, number or boolean, ``list`` for a list of texts,
    ``dict`` for a mapping with text keys, the set of texts allowed for a choice of texts
    (a ``Literal``), and the field names for a list of records whose fields are all
    required texts (a ``TypedDict``); and the defaults of the optional ones. None when any
    parameter is anything else or constrained.
    """
    types, defaults = {}, {}
    for name, info in model.model_fields.items():
        kind = _plain_kind(info.annotation)
        if kind is None or info.default_factory is not None:
            return None
        if not all(isinstance(m, WithJsonSchema) for m in info.metadata):  # a constraint
            return None
        types[name] = kind
        if not info.is_required():
            if type(info.default) not in _PLAIN_TYPES | {type(None)}:
                return None
            defaults[name] = info.default
    return types, defaults


def _plain_kind(annotation: Any) -> Any:
    """A parameter's kind for :func:`_plain_arguments`, or None (validated)."""
    if annotation in _PLAIN_TYPES:
        return annotation
    if annotation == _TEXTS or annotation == _MAPPING:
        return list if annotation == _TEXTS else dict
    if get_origin(annotation) is Literal and all(type(a) is str for a in get_args(annotation)):
        return frozenset(get_args(annotation))
    if get_origin(annotation) is list and is_typeddict(record := get_args(annotation)[0]):
        fields = get_type_hints(record)
        if record.__required_keys__ == fields.keys() and set(fields.values()) == {str}:
            return tuple(fields)
    return None


def _plain_arguments(
    parameters: tuple[dict[str, Any], dict[str, Any]] | None, arguments: Any
) -> dict[str, Any] | None:
    """The arguments as validation returns them, without validating, where that is plain.

    That is when each is of exactly its parameter's type (:func:`_plain_parameters`; a
    whole number for a float, which becomes a float; a list of texts or a mapping with text
    keys, which is copied, its items shared; one of a choice's texts; a list of records
    with exactly their fields, each a text, copied with the fields in their declared
    order) and every required one is given; None for anything else, which the validator
    accepts or refuses.
    """
    if parameters is None or type(arguments) is not dict:
        return None
    types, defaults = parameters
    changed = None
    for key, value in arguments.items():
        kind = types.get(key)
        if kind is type(value) and kind is not list and kind is not dict:
            continue
        if kind is float and type(value) is int and -_EXACT_INT <= value <= _EXACT_INT:
            value = float(value)
        elif kind is list and type(value) is list and all(type(v) is str for v in value):
            value = list(value)
        elif kind is dict and type(value) is dict and all(type(k) is str for k in value):
            value = dict(value)
        elif type(kind) is frozenset and type(value) is str and value in kind:
            continue
        elif type(kind) is tuple and type(value) is list and all(map(_is_record(kind), value)):
            value = [{field: record[field] for field in kind} for record in value]
        else:
            return None
        changed = changed or dict(arguments)
        changed[key] = value
    arguments = changed or arguments
    if len(arguments) == len(types):
        return arguments
    missing = types.keys() - arguments.keys()
    if not missing <= defaults.keys():
        return None
    return {**{key: defaults[key] for key in missing}, **arguments}


def _is_record(fields: tuple[str, ...]) -> Callable[[Any], bool]:
    """Whether a value is a mapping with exactly these fields, each a text."""
    return lambda value: (
        type(value) is dict
        and len(value) == len(fields)
        and all(type(value.get(field)) is str for field in fields)
    )


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
    """What a tool returned as a private copy of JSON data, as its canonical JSON reads back.

    Plain data (dicts with text keys, lists, texts, numbers, booleans, None) is copied
    directly; anything else (models, tuples, other keys or objects) goes through its
    canonical JSON.
    """
    if isinstance(value, str):
        return str(value)
    try:
        if isinstance(value, dict) and type(value) is not dict:  # e.g. τ²'s words beside ours
            return _sorted_copy(value)
        return _plain_copy(value)
    except _NotPlain:
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json")
        return json.loads(canonical_json(value))


_LEAVES = frozenset({str, int, float, bool, type(None)})
_TEXT_KEYS = frozenset({str})


class _NotPlain(Exception):
    """Raised by :func:`_plain_copy` on anything but plain JSON data."""


def _plain_copy(value: Any) -> Any:
    """A copy of plain JSON data (as :func:`_jsonable` defines it); else :class:`_NotPlain`."""
    kind = type(value)
    if kind is dict:
        if not _TEXT_KEYS.issuperset(map(type, value)):
            raise _NotPlain
        return {k: v if type(v) in _LEAVES else _plain_copy(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _LEAVES else _plain_copy(v) for v in value]
    if kind in _LEAVES:
        return value
    raise _NotPlain


def _sorted_copy(value: Any) -> Any:
    """Plain JSON data copied as its canonical JSON reads back: every mapping's keys sorted.

    Mappings of any dict type are copied as plain dicts; anything else raises
    :class:`_NotPlain`.
    """
    if isinstance(value, dict):
        if not _TEXT_KEYS.issuperset(map(type, value)):
            raise _NotPlain
        return {k: _sorted_copy(value[k]) for k in sorted(value)}
    if type(value) is list:
        return [_sorted_copy(v) for v in value]
    if type(value) in _LEAVES:
        return value
    raise _NotPlain


def project_domain(
    name: str, environment: type, deliverable: str | None, **declared: Any
) -> Domain:
    """A domain of this project, its files found by its name.

    Its tasks are ``data/tasks/<name>.yaml``, its policy ``policies/<name>.md``, its
    generator ``hasbench.build.<name>_tasks:write`` and its stand-ins' playbook
    ``hasbench.participants.playbooks.<name>:<Name>Playbook``; ``declared`` gives the rest
    of the :class:`~hasbench.registry.Domain` (safety rules, sources).
    """
    return Domain(
        name=name,
        environment=environment,
        deliverable=deliverable,
        task_files=(TASKS_DIR / f"{name}.yaml",),
        policy=POLICIES_DIR / f"{name}.md",
        generator=f"hasbench.build.{name}_tasks:write",
        playbook=f"hasbench.participants.playbooks.{name}:{name.capitalize()}Playbook",
        **declared,
    )
