"""Scenario schema for HAS-Bench task YAML (HAS paper App. B.3.2): models, loading, checks.

A domain file is a YAML list of tasks. Each task is parsed into a :class:`Scenario`.
Every model forbids unknown keys, so a typo is an error rather than a silently dropped
field. Structural rules that span several fields (dangling participants, edge labels vs
coordination mode, leaks, ...) live in :func:`check_scenario`; :func:`load_tasks`
runs both and raises :class:`ScenarioError` listing every :class:`Problem` found, and
:func:`validate_file` returns the problems instead (:func:`read_tasks` gives both).
A problem prints as ``file: task_id: field.path: message``.
"""

from __future__ import annotations

import difflib
import inspect
import re
from dataclasses import dataclass, replace
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import networkx as nx
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from hasbench.paths import resolve
from hasbench.registry import domain_names, get_domain
from hasbench.vocab import (
    INTERVENTION_DECISIONS,
    PROTECTED_RISK,
    RISK_ORDER,
    Channel,
    content_hash,
)

Pattern = Literal["A", "B", "C", "D", "E", "F"]
CoordinationMode = Literal["star", "chain", "tree", "graph"]
RewardDimension = Literal["ENV", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTIONS"]

PATTERN_NAMES: dict[str, str] = {
    "A": "Information Asymmetry",
    "B": "Latent Constraint",
    "C": "Safety-Critical Authorization",
    "D": "Multi-Stakeholder Specification",
    "E": "Iterative Verification",
    "F": "Dynamic Goal Revision",
}

AGENT_RELATION: dict[str, str] = {
    "star": "delegates",
    "chain": "handoff",
    "tree": "parent",
    "graph": "collaborates",
}
"""The label of agent-agent edges in each coordination mode.

star: the hub delegates to (and supervises) every other agent; chain: each agent hands
off to the next; tree: ``[a, b, "parent"]`` makes ``a`` the parent of ``b``; graph:
agents collaborate freely.
"""
HUMAN_RELATIONS: frozenset[str] = frozenset(
    {"supervises", "informs", "reviews", "authorizes", "operates"}
)
"""Labels of edges that touch a human; allowed in every coordination mode."""
MODE_LABELS: dict[str, frozenset[str]] = {
    mode: frozenset({label}) | HUMAN_RELATIONS for mode, label in AGENT_RELATION.items()
}
"""Every edge label each coordination mode allows."""


COMPAT_MODES = {"tau2": "τ²-bench v0.1.3 behaviour, for imported retail/airline/telecom tasks"}
"""Compatibility modes an environment can run in (``environment.compat``)."""
COMPAT_DOMAINS = {"tau2": ("retail", "airline", "telecom")}


class StrictModel(BaseModel):
    """Base for every schema model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class Relationship(StrictModel):
    """A typed, directed edge of the HAS Graph; YAML form ``[source, target, label]``."""

    source: str
    target: str
    label: str

    @model_validator(mode="before")
    @classmethod
    def _from_triple(cls, value: Any) -> Any:
        if isinstance(value, list | tuple) and len(value) == 3:
            return {"source": value[0], "target": value[1], "label": value[2]}
        if isinstance(value, dict | Relationship):
            return value
        raise ValueError("expected [source, target, label]")


class EnvCall(StrictModel):
    """A call of an environment function on the agent-side or user-side toolkit."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class InitializationData(StrictModel):
    """Data deep-merged into the agent-side and user-side databases before an episode."""

    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class EnvironmentConfig(StrictModel):
    """Episode limits and the domain-specific environment inputs."""

    max_iterations: int = Field(ge=1)
    max_tool_rounds: int | None = Field(default=None, ge=1)
    """Consecutive tool calls an agent may make without a message in this task, when its
    reference solution needs more than the setting allows (the larger limit applies)."""
    interaction_budget: int | None = Field(default=None, ge=1)
    """C/F/C events this task's reference solution needs, when more than the setting's
    budget (the larger applies), e.g. a dozen device steps only the customer can take."""
    db_path: str | None = None
    policy_path: str | None = None
    user_db_path: str | None = None
    workspace_dir: str | None = None
    init_sql: str | None = None
    task_files: dict[str, str] | None = None
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvCall] = Field(default_factory=list)
    compat: str | None = None
    """Run the domain as a source benchmark does: ``"tau2"`` gives τ²-bench v0.1.3's
    checks, quirks and number formats (imported τ² tasks), and lets an ENV criterion with
    no gold actions mean "the database must stay unchanged"."""

    @field_validator("compat")
    @classmethod
    def _known_compat(cls, value: str | None) -> str | None:
        if value is not None and value not in COMPAT_MODES:
            known = ", ".join(f"{name!r} ({what})" for name, what in COMPAT_MODES.items())
            raise ValueError(f"unknown compatibility mode {value!r}; known: {known}")
        return value


class AgentSpec(StrictModel):
    """An LLM agent node."""

    agent_id: str
    type: str = "BaseAgent"
    profile: str
    role: str | None = None
    responsibilities: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    """Domain tools this agent may call; ``None`` means every agent-side tool."""
    visibility: list[str] | None = None
    """Participants whose messages this agent may observe; ``None`` means its neighbours."""
    counterparty: bool = False
    """True for an agent outside the human-agent team, e.g. the other company's negotiator:
    no human of the task supervises it, its writes never need the team's authorization,
    and the team's safety and process metrics leave its actions out."""


class TriggerCondition(StrictModel):
    """When a spontaneous intervention fires."""

    type: Literal["at_turn", "after_tool", "on_keyword"]
    turn_number: int | None = None
    tool_name: str | None = None
    keyword: str | None = None


class TriggerRule(StrictModel):
    """One spontaneous (human-initiated) intervention rule."""

    rule_id: str
    condition: TriggerCondition
    action_type: Channel
    predefined_message: str | None = None
    decision: str | None = None
    """For control interventions: approve, deny, stop, modify, override or take_over."""
    tool: str | None = None
    """For modify, override and take_over: the action decided on (for take_over a tool the
    human holds)."""
    arguments: dict[str, Any] | None = None
    """For modify: the arguments changed in the agent's next call of ``tool``; for override
    and take_over: the arguments the action runs with."""


class SpontaneousConfig(StrictModel):
    """Proactive-user configuration, used under A4."""

    mode: Literal["predefined", "hybrid", "llm"]
    trigger_rules: list[TriggerRule]


class GoalRevision(StrictModel):
    """A change of the user's goal during the episode (pattern F)."""

    at_turn: int = Field(ge=1)
    goal: str
    known_info: dict[str, Any] = Field(default_factory=dict)


class UserSpec(StrictModel):
    """A human participant node, played by a user simulator or a real person."""

    user_id: str
    type: str = "SimulatedUser"
    role: str | None = None
    responsibilities: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    persona: str | None = None
    goal: str
    task_instructions: str = ""
    known_info: dict[str, Any] = Field(default_factory=dict)
    unknown_info: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    """User-side tools this human can execute (e.g. device actions in Telecom)."""
    spontaneous_config: SpontaneousConfig | None = None
    goal_revisions: list[GoalRevision] = Field(default_factory=list)


class MemoryConfig(StrictModel):
    """Whether agents keep private memories or share one."""

    type: Literal["default", "shared"] = "default"


class GoldAction(StrictModel):
    """One step of the reference solution."""

    action_id: str
    requestor: str
    """The participant id that performs the action (an agent, or a user for user-side tools)."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None
    protected: bool = False
    """True when the action needs human authorization (pattern C)."""
    depends_on: list[str] = Field(default_factory=list)
    """Human-held facts (``user_id.key`` of a known_info or goal-revision entry) that decide
    this action's arguments even where no argument quotes them, e.g. the variant a customer
    will accept (pattern B)."""


class EnvAssertion(StrictModel):
    """A boolean check run on the environment after the episode."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True
    message: str | None = None


class EvaluationCriteria(StrictModel):
    """How an episode is scored; ``reward_basis`` names the dimensions that must pass."""

    actions: list[GoldAction] = Field(default_factory=list)
    env_assertions: list[EnvAssertion] = Field(default_factory=list)
    communicate_info: list[str] = Field(default_factory=list)
    nl_assertions: list[str] = Field(default_factory=list)
    reward_basis: list[RewardDimension] = Field(min_length=1)


class Scenario(StrictModel):
    """One HAS-Bench task."""

    task_id: str
    source_task_id: str | None = None
    adaptation_pattern: Pattern
    coordination_mode: CoordinationMode
    task: str
    """The task statement the lead agent receives."""
    relationships: list[Relationship] = Field(default_factory=list)
    environment: EnvironmentConfig
    agents: list[AgentSpec] = Field(min_length=1)
    users: list[UserSpec] = Field(default_factory=list)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    evaluation_criteria: EvaluationCriteria
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form annotations (difficulty, tags, provenance notes)."""

    @property
    def domain(self) -> str:
        """The domain, taken from the task id prefix."""
        return self.task_id.split("_", 1)[0]

    @property
    def participant_ids(self) -> list[str]:
        """Agent ids then user ids, in declaration order."""
        return [a.agent_id for a in self.agents] + [u.user_id for u in self.users]

    def agent(self, agent_id: str) -> AgentSpec:
        """Return the agent with this id."""
        return next(a for a in self.agents if a.agent_id == agent_id)

    def user(self, user_id: str) -> UserSpec:
        """Return the user with this id."""
        return next(u for u in self.users if u.user_id == user_id)

    @property
    def counterparties(self) -> frozenset[str]:
        """Ids of the agents outside the human-agent team (``AgentSpec.counterparty``)."""
        return frozenset(a.agent_id for a in self.agents if a.counterparty)

    def protects(self, name: str, risk: str, actor: str | None = None) -> bool:
        """Whether a write needs human authorization in this task, whatever the setting.

        A write is protected when its risk is at or above
        :data:`~hasbench.vocab.PROTECTED_RISK` or a gold action of the task marks that tool
        ``protected``, unless ``actor`` (who makes it) is a counterparty: nobody of the team
        can authorize the other side's moves. Running a protected write without an
        authorizing control decision is a safety violation (Safety Rate, Action Safety Rate).
        """
        if risk == "none" or actor in self.counterparties:
            return False
        marked = any(a.protected and a.name == name for a in self.evaluation_criteria.actions)
        return marked or RISK_ORDER[risk] >= RISK_ORDER[PROTECTED_RISK]

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of this task (first 16 hex digits).

        Fields left at their defaults are not part of it, so adding an optional field to
        the schema changes no task's hash (nor the random draws seeded by it).
        """
        return content_hash(self.model_dump(mode="json", exclude_defaults=True), 16)


# -- problems ----------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a task file; prints as ``file: task_id: path: message``.

    ``task_id`` is ``tasks[i]`` when the task has no usable id; ``file``, ``task_id``
    and ``path`` are None when they do not apply (e.g. a YAML syntax error).
    """

    file: str | None
    task_id: str | None
    path: str | None
    message: str

    def __str__(self) -> str:
        parts = (self.file, self.task_id, self.path, self.message)
        return ": ".join(part for part in parts if part is not None)


class ScenarioError(ValueError):
    """Raised by :func:`load_tasks` when a task file has problems."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


# -- loading -----------------------------------------------------------------------


class _DuplicateKeyCheck:
    """Constructor mix-in that rejects duplicate mapping keys (YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [key.value for key, _ in node.value if isinstance(key, yaml.ScalarNode)]
        for index, (key_node, _) in enumerate(node.value):
            if isinstance(key_node, yaml.ScalarNode) and key_node.value in keys[:index]:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key_node.value!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)


class _TaskLoader(_DuplicateKeyCheck, yaml.SafeLoader):
    """Safe YAML loader that rejects duplicate keys and keeps dates as strings."""


class _FastTaskLoader(_DuplicateKeyCheck, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The same loader on libyaml's parser when available (about 30x faster)."""


_IMPLICIT_RESOLVERS = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_TaskLoader.yaml_implicit_resolvers = _IMPLICIT_RESOLVERS
_FastTaskLoader.yaml_implicit_resolvers = _IMPLICIT_RESOLVERS


def _at(mark: yaml.Mark | None) -> str:
    """`` at line L, column C`` (1-based) for a YAML mark, or nothing."""
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""


def _read_yaml(path: Path) -> tuple[Any, Problem | None]:
    """Parse a YAML file; return (data, None) or (None, the problem)."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, Problem(file, None, None, f"cannot read file: {reason}")
    try:
        return yaml.load(text, Loader=_FastTaskLoader), None
    except yaml.YAMLError:
        pass  # parse again with the pure-Python parser: its messages don't vary by install
    try:
        return yaml.load(text, Loader=_TaskLoader), None
    except yaml.MarkedYAMLError as exc:
        message = f"invalid YAML{_at(exc.problem_mark)}: {exc.problem or 'malformed YAML'}"
        if exc.context:
            message += f" ({exc.context}{_at(exc.context_mark)})"
        return None, Problem(file, None, None, message)
    except yaml.YAMLError as exc:
        return None, Problem(file, None, None, f"invalid YAML: {exc}")


def _type_name(value: Any) -> str:
    """A YAML-flavoured name for the type of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string"


def _task_label(raw: Any, index: int) -> str:
    """The task id to show in problems: the raw id if it is a scalar, else ``tasks[i]``."""
    if isinstance(raw, dict):
        task_id = raw.get("task_id")
        if isinstance(task_id, str | int) and not isinstance(task_id, bool) and str(task_id):
            return str(task_id)
    return f"tasks[{index}]"


def read_tasks(path: str | Path) -> tuple[list[Scenario], list[Problem]]:
    """Parse, validate and check every task of a file.

    Returns:
        The tasks that parsed (in file order) and every problem found; a task with a
        schema error is left out, and its cross-field checks are not run.
    """
    file = str(path)
    path = resolve(path)
    data, problem = _read_yaml(path)
    if problem is not None:
        return [], [problem]
    if not isinstance(data, list):
        got = "an empty file" if data is None else _type_name(data)
        return [], [Problem(file, None, None, f"expected a YAML list of tasks, got {got}")]
    scenarios: list[Scenario] = []
    problems: list[Problem] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(data):
        label = _task_label(raw, index)
        if not isinstance(raw, dict):
            message = f"expected a mapping (one task), got {_type_name(raw)}"
            problems.append(Problem(file, label, None, message))
            continue
        if label in first_index:
            message = f"duplicate task id (first defined at tasks[{first_index[label]}])"
            problems.append(Problem(file, label, "task_id", message))
        first_index.setdefault(label, index)
        try:
            scenario = Scenario.model_validate(raw)
        except ValidationError as exc:
            problems.extend(Problem(file, label, p, m) for p, m in _describe_errors(exc))
            continue
        scenarios.append(scenario)
        problems.extend(replace(p, file=file, task_id=label) for p in check_scenario(scenario))
    return scenarios, problems


def load_tasks(path: str | Path) -> list[Scenario]:
    """Load and check a task file.

    Args:
        path: A YAML file holding a list of tasks.

    Returns:
        The scenarios in file order.

    Raises:
        ScenarioError: If the file has any problem; ``.problems`` lists them all.
    """
    scenarios, problems = read_tasks(path)
    if problems:
        raise ScenarioError(problems)
    return scenarios


def load_task(path: str | Path, task_id: str) -> Scenario:
    """Load one task of a task file by its id.

    Raises:
        ScenarioError: the file has a problem.
        KeyError: the file has no such task (the message lists the ids it has).
    """
    tasks = {task.task_id: task for task in load_tasks(path)}
    if task_id not in tasks:
        raise KeyError(f"{path}: no task {task_id!r} (tasks: {', '.join(sorted(tasks))})")
    return tasks[task_id]


def validate_file(path: str | Path) -> list[Problem]:
    """Every problem of a task file (empty if the file is valid)."""
    return read_tasks(path)[1]


# -- pydantic errors -> field paths and short messages ------------------------------


def _field_path(loc: tuple[str | int, ...]) -> str:
    """``('users', 0, 'known_info')`` -> ``users[0].known_info``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _unwrap(annotation: Any) -> Any:
    """Drop ``None`` from an optional annotation."""
    if get_origin(annotation) in (Union, UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def _model_at(loc: tuple[str | int, ...], root: type[BaseModel]) -> type[BaseModel] | None:
    """The model under ``root`` that holds the field at ``loc`` (None if not a model)."""
    current: Any = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int):
            args = get_args(current)
            if get_origin(current) is not list or not args:
                return None
            current = args[0]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            if part not in current.model_fields:
                return None
            current = current.model_fields[part].annotation
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _message(error: dict[str, Any], root: type[BaseModel]) -> str:
    """A short human message for one pydantic error of a ``root`` model."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    got = _type_name(value)
    if kind == "missing":
        return "missing required field"
    if kind == "extra_forbidden":
        model = _model_at(error["loc"][:-1], root)
        key = str(error["loc"][-1])
        close = difflib.get_close_matches(key, list(model.model_fields), n=1) if model else []
        return f"unknown field (did you mean {close[0]!r}?)" if close else "unknown field"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {got}"
    if kind == "list_type":
        return f"expected a list, got {got}"
    if kind == "string_type":
        hint = " (put it in quotes)" if isinstance(value, int | float) else ""
        return f"expected a string, got {got}{hint}"
    if kind in ("float_type", "float_parsing"):
        return f"expected a number, got {value!r}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"expected an integer, got {value!r}"
    if kind in ("bool_type", "bool_parsing"):
        return f"expected true or false, got {value!r}"
    if kind == "literal_error":
        return f"expected one of {ctx['expected']}, got {value!r}"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}, got {value!r}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"][0].lower() + error["msg"][1:]


def _describe_errors(
    exc: ValidationError, root: type[BaseModel] = Scenario
) -> list[tuple[str, str]]:
    """(field path, message) for each error of validating a ``root`` model, in order."""
    described = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        if loc and loc[-1] == "[key]":  # a mapping key of the wrong type
            path = f"{_field_path(loc[:-2])}.{loc[-2]}"
            described.append((path, f"keys must be strings, got {_type_name(loc[-2])}"))
        else:
            described.append((_field_path(loc), _message(error, root)))
    return described


# -- cross-field checks --------------------------------------------------------------

_TASK_ID = re.compile(r"(?P<domain>[a-z]+)_(?P<pattern>[A-Z])_(?P<number>\d{3})")
_NUMBER = re.compile(r"[-+]?\d+(\.\d+)?")
_REWARD_SOURCE = {
    "ENV": "actions",
    "ENV_ASSERTION": "env_assertions",
    "ACTION": "actions",
    "COMMUNICATE": "communicate_info",
    "NL_ASSERTIONS": "nl_assertions",
}


def check_scenario(scn: Scenario) -> list[Problem]:
    """Cross-field problems of a parsed scenario (``file`` and ``task_id`` left None).

    Covers the task id, participants and relationships against the coordination mode,
    counterparties (agents outside the team), gold-action requestors, known_info leaks,
    reward_basis, spontaneous trigger rules and, for domains with a registered
    environment, tool/assertion names and gold arguments.
    """
    problems: list[tuple[str, str]] = []
    for check in (
        _check_task_id,
        _check_texts,
        _check_participants,
        _check_relationships,
        _check_counterparties,
        _check_requestors,
        _check_info,
        _check_reward_basis,
        _check_spontaneous,
        _check_domain_names,
        _check_compat,
    ):
        problems.extend(check(scn))
    return [Problem(None, None, path, message) for path, message in problems]


def _check_task_id(scn: Scenario) -> list[tuple[str, str]]:
    match = _TASK_ID.fullmatch(scn.task_id)
    if match is None:
        shape = "{domain}_{pattern}_{nnn}, e.g. retail_A_007"
        return [("task_id", f"{scn.task_id!r} does not have the form {shape}")]
    problems = []
    known = domain_names()
    if match["domain"] not in known:
        problems.append(
            ("task_id", f"unknown domain {match['domain']!r} (known: {', '.join(known)})")
        )
    if match["pattern"] != scn.adaptation_pattern:
        problems.append(
            (
                "task_id",
                f"pattern letter {match['pattern']!r} differs from "
                f"adaptation_pattern {scn.adaptation_pattern!r}",
            )
        )
    return problems


def _check_texts(scn: Scenario) -> list[tuple[str, str]]:
    texts = [("task", scn.task)]
    texts += [(f"agents[{i}].profile", a.profile) for i, a in enumerate(scn.agents)]
    texts += [(f"users[{i}].goal", u.goal) for i, u in enumerate(scn.users)]
    return [(path, "must not be empty") for path, text in texts if not text.strip()]


def _check_participants(scn: Scenario) -> list[tuple[str, str]]:
    problems = []
    seen: set[str] = set()
    ids = [(f"agents[{i}].agent_id", a.agent_id) for i, a in enumerate(scn.agents)]
    ids += [(f"users[{i}].user_id", u.user_id) for i, u in enumerate(scn.users)]
    for path, pid in ids:
        if pid in seen:
            problems.append((path, f"duplicate participant id {pid!r}"))
        seen.add(pid)
    for i, agent in enumerate(scn.agents):
        for j, other in enumerate(agent.visibility or []):
            if other not in seen:
                problems.append(
                    (f"agents[{i}].visibility[{j}]", f"undefined participant {other!r}")
                )
    return problems


def _check_relationships(scn: Scenario) -> list[tuple[str, str]]:
    agents = [a.agent_id for a in scn.agents]
    humans = {u.user_id for u in scn.users}
    problems = []
    seen_edges: dict[tuple[str, str, str], int] = {}
    agent_edges: list[tuple[str, str]] = []
    linked: set[str] = set()
    for i, rel in enumerate(scn.relationships):
        where = f"relationships[{i}]"
        dangling = False
        for end in ("source", "target"):
            pid = getattr(rel, end)
            if pid not in humans and pid not in agents:
                problems.append((f"{where}.{end}", f"undefined participant {pid!r}"))
                dangling = True
        if dangling:
            continue
        key = (rel.source, rel.target, rel.label)
        if key in seen_edges:
            problems.append((where, f"duplicate of relationships[{seen_edges[key]}]"))
            continue
        seen_edges[key] = i
        if rel.source == rel.target:
            problems.append((where, f"{rel.source!r} is related to itself"))
            continue
        linked.update((rel.source, rel.target))
        problem = _edge_problem(rel, humans, scn.coordination_mode)
        if problem is None:
            if rel.source not in humans:
                agent_edges.append((rel.source, rel.target))
        else:
            field, message = problem
            problems.append((f"{where}{field}", message))
    for i, user in enumerate(scn.users):
        if user.user_id not in linked:
            problems.append((f"users[{i}]", f"{user.user_id!r} is in no relationship"))
    if len(agents) > 1:
        shape = structure_problems(scn.coordination_mode, agents, agent_edges)
        problems += [("relationships", message) for message in shape]
    return problems


def _edge_problem(rel: Relationship, humans: set[str], mode: str) -> tuple[str, str] | None:
    """(field suffix, message) if an edge's direction or label is wrong, else None."""
    if rel.source in humans and rel.target in humans:
        return "", "an edge between two humans is not supported"
    if rel.target in humans:
        return "", "edges with a human run from the human to the agent"
    if rel.source in humans:
        if rel.label in HUMAN_RELATIONS:
            return None
        allowed = ", ".join(sorted(HUMAN_RELATIONS))
        return ".label", f"{rel.label!r} does not fit an edge from a human (use {allowed})"
    if rel.label != AGENT_RELATION[mode]:
        return ".label", (
            f"{rel.label!r} does not fit coordination_mode {mode} "
            f"(agent-agent edges use {AGENT_RELATION[mode]!r})"
        )
    return None


def _check_counterparties(scn: Scenario) -> list[tuple[str, str]]:
    """A counterparty stays outside the team: no human edge, and the team keeps an agent."""
    outside = scn.counterparties
    if not outside:
        return []
    humans = {u.user_id for u in scn.users}
    problems = []
    if len(outside) == len(scn.agents):
        problems.append(("agents", "every agent is a counterparty; the team needs one agent"))
    for i, spec in enumerate(scn.agents):
        edges = [
            j
            for j, rel in enumerate(scn.relationships)
            if spec.counterparty
            and {rel.source, rel.target} & humans
            and spec.agent_id in (rel.source, rel.target)
        ]
        if edges:
            where = ", ".join(f"relationships[{j}]" for j in edges)
            message = f"an agent outside the team cannot be related to a human ({where})"
            problems.append((f"agents[{i}].counterparty", message))
    return problems


def structure_problems(mode: str, agents: list[str], edges: list[tuple[str, str]]) -> list[str]:
    """Violations of the agent-agent structure that a coordination mode requires."""
    graph = nx.DiGraph()
    graph.add_nodes_from(agents)
    graph.add_edges_from(edges)
    label = AGENT_RELATION[mode]
    if mode == "star":
        hubs = sorted({source for source, _ in edges})
        if not hubs:
            return [f"star mode needs one hub agent with {label!r} edges to the other agents"]
        if len(hubs) > 1:
            return [f"star mode needs exactly one hub agent, found {', '.join(hubs)}"]
        missing = [a for a in agents if a != hubs[0] and not graph.has_edge(hubs[0], a)]
        if missing:
            return [f"star hub {hubs[0]!r} has no {label!r} edge to {', '.join(missing)}"]
        return []
    if mode == "graph":
        if nx.is_weakly_connected(graph):
            return []
        groups = sorted(sorted(c) for c in nx.weakly_connected_components(graph))
        parts = " | ".join(", ".join(group) for group in groups)
        return [f"the {label!r} edges leave the agents in separate groups: {parts}"]
    try:
        cycle = [source for source, _ in nx.find_cycle(graph)]
    except nx.NetworkXNoCycle:
        cycle = []
    if cycle:
        loop = " -> ".join([*cycle, cycle[0]])
        return [f"{label!r} edges form a cycle ({loop})"]
    several_in = [a for a in agents if graph.in_degree(a) > 1]
    if mode == "tree":
        if several_in:
            return [f"{a!r} has several parents" for a in several_in]
        roots = [a for a in agents if graph.in_degree(a) == 0]
        if len(roots) > 1:
            return [f"tree has several roots: {', '.join(roots)}"]
        return []
    several_out = [a for a in agents if graph.out_degree(a) > 1]
    if several_out:
        reason = f"{', '.join(several_out)} hands off to several agents"
    elif several_in:
        reason = f"{', '.join(several_in)} receives several handoffs"
    elif not nx.is_weakly_connected(graph):
        reason = "the agents are not all on it"
    else:
        return []
    return [f"chain mode needs the {label!r} edges to form one path through all agents: {reason}"]


def held_facts(user: UserSpec) -> dict[str, Any]:
    """Every fact a user holds: known_info, then what goal revisions add."""
    facts = dict(user.known_info)
    for revision in user.goal_revisions:
        facts.update(revision.known_info)
    return facts


def _check_requestors(scn: Scenario) -> list[tuple[str, str]]:
    problems = []
    agents = {a.agent_id: (i, a) for i, a in enumerate(scn.agents)}
    users = {u.user_id: (i, u) for i, u in enumerate(scn.users)}
    seen: dict[str, int] = {}
    for i, action in enumerate(scn.evaluation_criteria.actions):
        where = f"evaluation_criteria.actions[{i}]"
        if action.action_id in seen:
            message = (
                f"duplicate action_id {action.action_id!r} (also actions[{seen[action.action_id]}])"
            )
            problems.append((f"{where}.action_id", message))
        seen.setdefault(action.action_id, i)
        who = action.requestor
        if who in agents:
            index, agent = agents[who]
            allowed, holder = agent.tools, f"agents[{index}].tools"
        elif who in users:
            index, user = users[who]
            allowed, holder = user.tools, f"users[{index}].tools"
        else:
            problems.append((f"{where}.requestor", f"undefined participant {who!r}"))
            continue
        if allowed is not None and action.name not in allowed:
            problems.append(
                (f"{where}.name", f"{who!r} may not call {action.name!r} (not in {holder})")
            )
        for j, name in enumerate(action.compare_args or []):
            if name not in action.arguments:
                message = f"{name!r} is not among the action's arguments"
                problems.append((f"{where}.compare_args[{j}]", message))
        for j, fact in enumerate(action.depends_on):
            user_id, _, key = fact.partition(".")
            if user_id not in users:
                message = f"{fact!r} does not start with a defined user id"
                problems.append((f"{where}.depends_on[{j}]", message))
            elif key not in held_facts(users[user_id][1]):
                message = f"{user_id!r} holds no fact named {key!r}"
                problems.append((f"{where}.depends_on[{j}]", message))
    return problems


def scalar_leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(path, leaf) for every scalar inside a nested mapping/list value."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in scalar_leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in scalar_leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def leak_pattern(value: Any) -> re.Pattern[str] | None:
    """A whole-token regex for a meaningful known_info value, or None if too generic.

    Strings count from 3 characters (case-insensitive); numbers from 3 characters of
    text and never as part of a longer number (so 250 matches neither 1250 nor 250.5).
    """
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip()
    if len(text) < 3:
        return None
    numeric = _NUMBER.fullmatch(text) is not None
    start = (r"(?<![\w.])" if numeric else r"(?<!\w)") if re.match(r"\w", text[0]) else ""
    end = (r"(?!\w|\.\d)" if numeric else r"(?!\w)") if re.match(r"\w", text[-1]) else ""
    return re.compile(start + re.escape(text) + end, re.IGNORECASE)


def _agent_visible_texts(scn: Scenario) -> list[tuple[str, str]]:
    """(field path, text) of everything the agents read before the episode starts."""
    texts = [("task", scn.task)]
    for i, agent in enumerate(scn.agents):
        where = f"agents[{i}]"
        texts.append((f"{where}.profile", agent.profile))
        texts += [(f"{where}.role", agent.role)] if agent.role else []
        for field in ("responsibilities", "capabilities"):
            texts += [(f"{where}.{field}[{j}]", t) for j, t in enumerate(getattr(agent, field))]
    return texts


def _check_info(scn: Scenario) -> list[tuple[str, str]]:
    public = _agent_visible_texts(scn)
    problems = []
    for i, user in enumerate(scn.users):
        where = f"users[{i}]"
        private = scalar_leaves(user.known_info, f"{where}.known_info")
        for j, revision in enumerate(user.goal_revisions):
            private += scalar_leaves(revision.known_info, f"{where}.goal_revisions[{j}].known_info")
        for path, value in private:
            pattern = leak_pattern(value)
            if pattern is None:
                continue
            for field, text in public:
                if pattern.search(text):
                    problems.append((path, f"value {value!r} leaks into {field}"))
        for j, name in enumerate(user.unknown_info):
            if name in user.known_info:
                problems.append((f"{where}.unknown_info[{j}]", f"{name!r} is also in known_info"))
    return problems


def _check_reward_basis(scn: Scenario) -> list[tuple[str, str]]:
    criteria = scn.evaluation_criteria
    problems = []
    for i, dimension in enumerate(criteria.reward_basis):
        where = f"evaluation_criteria.reward_basis[{i}]"
        if dimension in criteria.reward_basis[:i]:
            problems.append((where, f"duplicate {dimension!r}"))
            continue
        source = _REWARD_SOURCE[dimension]
        if dimension == "ENV" and scn.environment.compat == "tau2":
            continue  # τ²-bench: no gold action means the database must stay unchanged
        if not getattr(criteria, source):
            problems.append((where, f"{dimension} needs a non-empty evaluation_criteria.{source}"))
    return problems


def _check_compat(scn: Scenario) -> list[tuple[str, str]]:
    compat = scn.environment.compat
    if compat is None or scn.domain in COMPAT_DOMAINS[compat]:
        return []
    domains = ", ".join(COMPAT_DOMAINS[compat])
    return [("environment.compat", f"{compat!r} is only for the domains {domains}")]


def _check_spontaneous(scn: Scenario) -> list[tuple[str, str]]:
    problems = []
    seen: dict[str, str] = {}
    for i, user in enumerate(scn.users):
        config = user.spontaneous_config
        if config is None:
            continue
        base = f"users[{i}].spontaneous_config"
        if not config.trigger_rules:
            problems.append((f"{base}.trigger_rules", "must not be empty"))
        for j, rule in enumerate(config.trigger_rules):
            where = f"{base}.trigger_rules[{j}]"
            if rule.rule_id in seen:
                message = f"duplicate rule_id {rule.rule_id!r} (also {seen[rule.rule_id]})"
                problems.append((f"{where}.rule_id", message))
            seen.setdefault(rule.rule_id, where)
            problems += [(f"{where}.{path}", m) for path, m in _rule_problems(rule, config.mode)]
    return problems


_CONDITION_FIELD = {"at_turn": "turn_number", "after_tool": "tool_name", "on_keyword": "keyword"}
"""The condition field each trigger type needs."""


def _rule_problems(rule: TriggerRule, mode: str) -> list[tuple[str, str]]:
    """Problems of one trigger rule, with paths relative to the rule."""
    problems = []
    cond = rule.condition
    for kind, field in _CONDITION_FIELD.items():
        if kind != cond.type and getattr(cond, field) is not None:
            problems.append((f"condition.{field}", f"not used by {cond.type}"))
    needed = _CONDITION_FIELD[cond.type]
    value = getattr(cond, needed)
    if cond.type == "at_turn" and (value is None or value < 1):
        problems.append(("condition.turn_number", "at_turn needs turn_number >= 1"))
    elif cond.type != "at_turn" and not (value or "").strip():
        problems.append((f"condition.{needed}", f"{cond.type} needs {needed}"))
    if mode == "predefined" and not (rule.predefined_message or "").strip():
        problems.append(("predefined_message", "mode predefined needs a predefined_message"))
    if rule.action_type == "control" and rule.decision not in INTERVENTION_DECISIONS:
        decisions = ", ".join(INTERVENTION_DECISIONS)
        message = f"control rules need a decision ({decisions}), got {rule.decision!r}"
        problems.append(("decision", message))
    elif rule.action_type != "control" and rule.decision is not None:
        problems.append(("decision", "only control rules take a decision"))
    acting = rule.action_type == "control" and rule.decision in _ACTING_DECISIONS
    for field in ("tool", "arguments"):
        if acting and getattr(rule, field) is None:
            problems.append((field, f"{rule.decision} needs the {field} it decides on"))
        elif not acting and getattr(rule, field) is not None:
            problems.append((field, "only modify, override and take_over rules take one"))
    return problems


_ACTING_DECISIONS = ("modify", "override", "take_over")
"""Unasked control decisions that name an action (its tool and arguments)."""


def _check_domain_names(scn: Scenario) -> list[tuple[str, str]]:
    """Tool, assertion and setup-function names (and gold arguments) vs the domain.

    Only for registered domains; the check reads the domain's environment class (its tool
    specs and argument models) and never builds an environment.
    """
    if scn.domain not in domain_names():
        return []
    env_class = get_domain(scn.domain).environment
    specs, arg_models = env_class._specs, env_class._arg_models
    domain = scn.domain

    def tool_problem(name: str, side: str) -> str | None:
        if name not in specs:
            return f"{domain} has no tool {name!r}"
        if specs[name].side != side:
            return f"{name!r} is a tool of the {specs[name].side} side, not the {side} side"
        return None

    held = [(f"agents[{i}].tools", a.tools or [], "agent") for i, a in enumerate(scn.agents)]
    held += [(f"users[{i}].tools", u.tools, "user") for i, u in enumerate(scn.users)]
    problems = []
    for where, names, side in held:
        for j, name in enumerate(names):
            if message := tool_problem(name, side):
                problems.append((f"{where}[{j}]", message))
    agents = {a.agent_id for a in scn.agents}
    users = {u.user_id for u in scn.users}
    for i, action in enumerate(scn.evaluation_criteria.actions):
        where = f"evaluation_criteria.actions[{i}]"
        if action.requestor not in agents | users:
            continue
        side = "agent" if action.requestor in agents else "user"
        if message := tool_problem(action.name, side):
            problems.append((f"{where}.name", message))
            continue
        try:
            arg_models[action.name].model_validate(action.arguments)
        except ValidationError as exc:
            for path, message in _describe_errors(exc, arg_models[action.name]):
                problems.append((f"{where}.arguments.{path}", message))
    for i, check in enumerate(scn.evaluation_criteria.env_assertions):
        where = f"evaluation_criteria.env_assertions[{i}]"
        method = getattr(env_class, check.func_name, None)
        if not getattr(method, "__assertion__", False):
            problems.append(
                (f"{where}.func_name", f"{domain} has no assertion {check.func_name!r}")
            )
            continue
        try:
            inspect.signature(method).bind(None, **check.arguments)
        except TypeError as exc:
            problems.append((f"{where}.arguments", str(exc)))
    for i, call in enumerate(scn.environment.initialization_actions):
        name = call.func_name
        if name.startswith("_") or not callable(getattr(env_class, name, None)):
            message = f"{domain} has no tool or setup function {name!r}"
            problems.append((f"environment.initialization_actions[{i}].func_name", message))
    for i, user in enumerate(scn.users):
        rules = user.spontaneous_config.trigger_rules if user.spontaneous_config else []
        for j, rule in enumerate(rules):
            name = rule.condition.tool_name
            if rule.condition.type == "after_tool" and name and name not in specs:
                path = f"users[{i}].spontaneous_config.trigger_rules[{j}].condition.tool_name"
                problems.append((path, f"{domain} has no tool {name!r}"))
            if rule.tool is not None and rule.tool not in specs:
                path = f"users[{i}].spontaneous_config.trigger_rules[{j}].tool"
                problems.append((path, f"{domain} has no tool {rule.tool!r}"))
    return problems
