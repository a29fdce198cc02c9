"""Backends by name: who plays the agents, the humans and the judge of an episode.

A backend string is matched against the registered names: ``scripted:oracle?...`` (the
part before ``?``) first matches an exact name, then the longest registered prefix
(such as ``human:``); anything else is a litellm model string played by the LLM-backed
participant. Backends register themselves in the module that defines them::

    @agent_backend("scripted:idle", label="does nothing")
    def idle_team(model, seats):
        return {seat.view.agent_id: IdleAgent() for seat in seats}

An agent backend registered with ``reads_answer_key=True`` is also given the task's
:class:`~hasbench.participants.base.AnswerKey`; no other backend is. What follows ``?`` in
a backend string (a preset, or ``key=value`` options) is read by :func:`parse_spec`, the
one reader every backend uses; a backend that takes options registers a ``check`` that
parses them, so :func:`backend_problems` can refuse a bad string before anything runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from hasbench.llm import Endpoint, LLMClient
    from hasbench.participants.base import (
        AgentPolicy,
        AgentSeat,
        AnswerKey,
        HumanSeat,
        UserPolicy,
    )
    from hasbench.participants.judges import Judge

B = TypeVar("B")
MODEL = ""
"""The registration key of the default: any litellm model string."""
_BUILTIN_MODULES = (
    "hasbench.participants.agents",
    "hasbench.participants.scripted",
    "hasbench.participants.standin",
    "hasbench.participants.users",
    "hasbench.participants.judges.rule",
    "hasbench.participants.judges.llm",
    "hasbench.participants.human",
)


@dataclass(frozen=True)
class Backend(Generic[B]):
    """One registered backend.

    Attributes:
        name: the name or prefix it answers to (``MODEL`` for litellm strings).
        build: what makes the participants.
        label: how tables and figures name it.
        prefix: True when ``name`` is a prefix (``human:``), False for an exact name.
        reads_answer_key: agent backends only: it is given the answer key.
        check: parses a backend string's options, raising ValueError on a bad one.
    """

    name: str
    build: B
    label: str
    prefix: bool = False
    reads_answer_key: bool = False
    check: Callable[[str], object] | None = None


class BackendRegistry(Generic[B]):
    """The backends of one role, by name."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._entries: dict[str, Backend[B]] = {}

    def register(self, entry: Backend[B]) -> None:
        """Add a backend; registering a name again replaces it."""
        self._entries[entry.name] = entry

    def names(self) -> list[str]:
        """Registered names, sorted (the litellm default is not listed)."""
        _load_builtins()
        return sorted(n for n in self._entries if n != MODEL)

    def resolve(self, spec: str) -> Backend[B]:
        """The backend a backend string selects.

        Raises:
            ValueError: a ``scripted:`` string that names no registered backend.
        """
        entry = self._find(spec)
        if entry is None:
            known = ", ".join(self.names())
            raise ValueError(f"unknown scripted {self.role} {spec!r} (known: {known})")
        return entry

    def problem(self, spec: str) -> str | None:
        """Why a backend string cannot play this role, or None; nothing is built or called.

        A registered name must take the options it is given; anything else must be a
        model string (:func:`hasbench.llm.model_problem`).
        """
        from hasbench.llm import did_you_mean, model_problem

        entry = self._find(spec)
        close = did_you_mean(spec.split("?", 1)[0], self.names())
        if entry is None:
            known = close or f" (known: {', '.join(self.names())})"
            return f"unknown scripted {self.role} {spec!r}{known}"
        if entry.name != MODEL:
            try:
                if entry.check is not None:
                    entry.check(spec)
            except ValueError as exc:
                return str(exc)
            return None
        problem = model_problem(spec)
        if problem is not None and close:  # a mistyped registered name, not a model
            return f"unknown {self.role} backend {spec!r}{close}"
        return problem

    def _find(self, spec: str) -> Backend[B] | None:
        _load_builtins()
        name = spec.split("?", 1)[0]
        if name in self._entries and not self._entries[name].prefix:
            return self._entries[name]
        prefixes = [e for e in self._entries.values() if e.prefix and spec.startswith(e.name)]
        if prefixes:
            return max(prefixes, key=lambda e: len(e.name))
        if spec.startswith("scripted:") or MODEL not in self._entries:
            return None
        return self._entries[MODEL]

    def label(self, spec: str) -> str:
        """How results name the backend of a string (the string for litellm models)."""
        entry = self.resolve(spec)
        return spec if entry.name == MODEL else f"{spec}: {entry.label}"


AgentBuild = Callable[..., dict[str, "AgentPolicy"]]
"""``build(model, seats)`` or, with the answer key, ``build(model, seats, answer_key)``."""
UserBuild = Callable[[str, "HumanSeat"], "UserPolicy"]
JudgeBuild = Callable[[str, "LLMClient | None", "Endpoint | None"], "Judge"]
"""``build(model, client, endpoint)``: the judge on a model, its client and its endpoint."""

AGENT_BACKENDS: BackendRegistry[AgentBuild] = BackendRegistry("agent")
USER_BACKENDS: BackendRegistry[UserBuild] = BackendRegistry("user")
JUDGE_BACKENDS: BackendRegistry[JudgeBuild] = BackendRegistry("judge")


def _decorator(registry: BackendRegistry[Any], name: str, **options: Any) -> Callable[[Any], Any]:
    def register(build: Any) -> Any:
        label = options.pop("label", None) or (build.__doc__ or name).strip().splitlines()[0]
        registry.register(Backend(name=name, build=build, label=label, **options))
        return build

    return register


def agent_backend(
    name: str,
    *,
    label: str | None = None,
    prefix: bool = False,
    reads_answer_key: bool = False,
    check: Callable[[str], object] | None = None,
) -> Callable[[AgentBuild], AgentBuild]:
    """Register a function that builds one policy per agent seat of an episode."""
    return _decorator(
        AGENT_BACKENDS, name, label=label, prefix=prefix, reads_answer_key=reads_answer_key,
        check=check,
    )  # fmt: skip


def user_backend(
    name: str,
    *,
    label: str | None = None,
    prefix: bool = False,
    check: Callable[[str], object] | None = None,
) -> Callable[[UserBuild], UserBuild]:
    """Register a function that builds the policy playing one human seat."""
    return _decorator(USER_BACKENDS, name, label=label, prefix=prefix, check=check)


def judge_backend(
    name: str, *, label: str | None = None, prefix: bool = False
) -> Callable[[JudgeBuild], JudgeBuild]:
    """Register a function that builds a judge."""
    return _decorator(JUDGE_BACKENDS, name, label=label, prefix=prefix)


@dataclass(frozen=True)
class BackendSpec:
    """A backend string read: ``name``, ``name?preset`` or ``name?key=value&key=value``.

    Attributes:
        name: the part before ``?``.
        preset: a bare word after ``?`` naming a preset, if any.
        options: the ``key=value`` options, as text.
    """

    name: str
    preset: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)

    def probabilities(self, spec: str) -> dict[str, float]:
        """The options as probabilities in [0, 1].

        Raises:
            ValueError: a value that is not a number, or outside [0, 1] (naming ``spec``).
        """
        values: dict[str, float] = {}
        for key, raw in self.options.items():
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"{spec}: {key}={raw!r} is not a number") from None
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{spec}: {key}={value} is outside [0, 1]")
            values[key] = value
        return values


def parse_spec(
    spec: str, options: Collection[str] = (), presets: Collection[str] = ()
) -> BackendSpec:
    """Read a backend string's name and what follows ``?``: one preset, or options.

    Args:
        spec: the backend string.
        options: the option names it may carry.
        presets: the preset names it may carry instead of options.

    Raises:
        ValueError: an unknown preset or option, an option without ``=``, or one given
            twice (the message names ``spec``).
    """
    name, _, query = spec.partition("?")
    if not query:
        return BackendSpec(name)
    if query in presets:
        return BackendSpec(name, preset=query)
    values: dict[str, str] = {}
    for part in query.split("&"):
        key, equals, value = part.partition("=")
        if not equals:
            known = ", ".join(presets) or "none"
            raise ValueError(f"{spec}: {part!r} is neither key=value nor a preset ({known})")
        if key in values:
            raise ValueError(f"{spec}: option {key!r} is given twice")
        values[key] = value
    unknown = sorted(set(values) - set(options))
    if unknown:
        raise ValueError(f"{spec}: unknown option(s) {unknown}; known: {', '.join(options)}")
    return BackendSpec(name, options=values)


ROLE_BACKENDS: dict[str, BackendRegistry[Any]] = {
    "agent": AGENT_BACKENDS, "user": USER_BACKENDS, "judge": JUDGE_BACKENDS,
}  # fmt: skip


def backend_problems(models: dict[str, str]) -> dict[str, str]:
    """Role -> why its backend string cannot play it, for the roles that have a problem.

    Args:
        models: role (agent, user, judge) -> backend string.
    """
    found = {role: ROLE_BACKENDS[role].problem(spec) for role, spec in models.items()}
    return {role: problem for role, problem in found.items() if problem is not None}


def make_agents(
    spec: str, seats: Sequence[AgentSeat], answer_key: Callable[[], AnswerKey]
) -> dict[str, AgentPolicy]:
    """One policy per agent seat; ``answer_key`` is called only for backends that read it."""
    entry = AGENT_BACKENDS.resolve(spec)
    if entry.reads_answer_key:
        return entry.build(spec, list(seats), answer_key())
    return entry.build(spec, list(seats))


def make_user(spec: str, seat: HumanSeat) -> UserPolicy:
    """The policy that plays one human seat."""
    return USER_BACKENDS.resolve(spec).build(spec, seat)


def make_judge(
    model: str, client: LLMClient | None = None, endpoint: Endpoint | None = None
) -> Judge:
    """The judge a backend string names: ``"rule"``, or an LLM rubric judge on a model.

    Args:
        model: a registered judge name or a model string understood by :mod:`hasbench.llm`.
        client: The LLM client to use (default: a client with the workbench cache).
        endpoint: Where the judge model is served (default: its provider's own endpoint).
    """
    return JUDGE_BACKENDS.resolve(model).build(model, client, endpoint)


_loaded = False


def _load_builtins() -> None:
    """Import the modules whose backends register themselves."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _BUILTIN_MODULES:
            importlib.import_module(module)
