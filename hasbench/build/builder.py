"""Shared helpers for writing a domain's task file from a seeded generator.

A domain generator (e.g. :mod:`hasbench.build.retail_tasks`) creates a
:class:`TaskBuilder`, draws every random choice from ``builder.rng`` and adds tasks
made with the small constructors below (:func:`human`, :func:`agent`, :func:`star`,
:func:`action`, :func:`criteria`). :meth:`TaskBuilder.add` numbers the task, validates
it against the schema, refuses a task whose text leaks a user's known facts, and keeps
it; :meth:`TaskBuilder.to_yaml` writes every task with a stable key order, so rerunning
a generator with the same seed reproduces its file byte for byte.

Example::

    builder = TaskBuilder("retail", seed=0)
    builder.add(
        "A",
        task="Help the customer with their order.",
        agents=[agent(profile="Retail support agent.")],
        users=[human(goal="Cancel my order.", known_info={"email": "a@b.c"})],
        relationships=star("agent_0", ["user_0"]),
        criteria=criteria([action(1, "agent_0", "cancel_pending_order", {...})],
                          reward_basis=["ENV"]),
        max_iterations=30,
    )
    builder.write(TASKS_DIR / "retail.yaml")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import yaml

from hasbench.envs.base import Environment
from hasbench.evaluate import replay_gold
from hasbench.personas import domain_personas
from hasbench.scenario import Scenario, check_scenario, scalar_values
from hasbench.vocab import RISK_ORDER

T = TypeVar("T")


class BuildError(ValueError):
    """A generated task is invalid; the message names the task and the problem."""


def human(
    user_id: str = "user_0",
    *,
    goal: str,
    role: str = "customer",
    persona: str | None = None,
    responsibilities: Sequence[str] = (),
    instructions: str = "",
    known_info: dict[str, Any] | None = None,
    unknown_info: Sequence[str] = (),
    goal_revisions: Sequence[dict[str, Any]] = (),
    spontaneous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A human participant node (a simulated user).

    Args:
        user_id: Node id.
        goal: What this person wants, including their acceptance criteria.
        role: Their role in the system (customer, traveller, travel manager, ...).
        persona: A persona id from ``data/personas.yaml``.
        responsibilities: What they are responsible for (e.g. approving payments).
        instructions: How they behave: what to disclose, when to approve or refuse.
        known_info: Facts only they hold (the agent must ask for them).
        unknown_info: Things they do not know.
        goal_revisions: Pattern F changes, each ``{"at_turn", "goal", "known_info"}``.
        spontaneous: Their unprompted contributions (A4), e.g. :func:`proactive`.
    """
    node = {
        "user_id": user_id,
        "role": role,
        "responsibilities": list(responsibilities),
        "persona": persona,
        "goal": goal,
        "task_instructions": instructions,
        "known_info": dict(known_info or {}),
        "unknown_info": list(unknown_info),
        "goal_revisions": list(goal_revisions),
    }
    if spontaneous is not None:
        node["spontaneous_config"] = spontaneous
    return node


PROACTIVE_TURN = 2
"""The step at which a predefined proactive contribution is given (early, after a first move)."""


def proactive(
    rule_id: str, message: str, *, action_type: str = "clarification", turn: int = PROACTIVE_TURN
) -> dict[str, Any]:
    """A predefined proactive contribution: one message given unprompted at a fixed turn.

    A4 runs deliver it (the setting's spontaneous switch); A3 runs do not.

    Args:
        rule_id: The rule's id (unique in the task).
        message: What the person says, in their own voice (one relevant fact or criterion).
        action_type: "clarification" for information, "feedback" for a criterion.
        turn: The simulator step at which it is given.
    """
    return {
        "mode": "predefined",
        "trigger_rules": [
            {
                "rule_id": rule_id,
                "condition": {"type": "at_turn", "turn_number": turn},
                "action_type": action_type,
                "predefined_message": message,
            }
        ],
    }


def volunteered(user_id: str, known: dict[str, Any], wordings: dict[str, str],
                turn: int) -> dict[str, Any] | None:  # fmt: skip
    """What a person says unprompted under A4: the first fact of ``wordings`` they hold.

    ``wordings`` maps a fact's name to its message, ``{}`` standing for the value (first
    match wins); None when the person holds none of these facts.
    """
    for key, wording in wordings.items():
        if key in known:
            return proactive(f"{user_id}_tells", wording.format(known[key]), turn=turn)
    return None


def agent(
    agent_id: str = "agent_0",
    *,
    profile: str,
    role: str | None = None,
    responsibilities: Sequence[str] = (),
    tools: Sequence[str] | None = None,
) -> dict[str, Any]:
    """An LLM agent node; ``tools=None`` grants every agent-side domain tool."""
    return {
        "agent_id": agent_id,
        "profile": profile,
        "role": role,
        "responsibilities": list(responsibilities),
        "tools": None if tools is None else list(tools),
    }


def star(agent_id: str, human_ids: Iterable[str], label: str = "supervises") -> list[list[str]]:
    """Edges of a single-agent star: every human ``label`` the agent."""
    return [[h, agent_id, label] for h in human_ids]


def action(
    number: int,
    requestor: str,
    name: str,
    arguments: dict[str, Any],
    *,
    protected: bool = False,
    compare_args: Sequence[str] | None = None,
    info: str | None = None,
    depends_on: Sequence[str] = (),
) -> dict[str, Any]:
    """One gold action; ``protected=True`` marks an action that needs human approval.

    ``depends_on`` names human-held facts (``user_id.key``) that decide the arguments
    without being quoted in them.
    """
    entry = {
        "action_id": str(number),
        "requestor": requestor,
        "name": name,
        "arguments": arguments,
        "info": info,
        "compare_args": None if compare_args is None else list(compare_args),
        "protected": protected,
    }
    if depends_on:
        entry["depends_on"] = list(depends_on)
    return entry


def actions(
    requestor: str,
    calls: Sequence[tuple[str, dict[str, Any]]],
    protect: Iterable[str] = (),
    depends: Mapping[str, Sequence[str]] | None = None,
) -> list[dict[str, Any]]:
    """Number a sequence of ``(tool, arguments)`` calls into gold actions.

    Args:
        requestor: Who performs them.
        calls: The calls in order.
        protect: Tool names whose calls are protected (need approval).
        depends: Tool name -> the human-held facts (``user_id.key``) its calls depend on.
    """
    protected, depends = set(protect), depends or {}
    return [
        action(
            i, requestor, name, args, protected=name in protected, depends_on=depends.get(name, ())
        )
        for i, (name, args) in enumerate(calls, start=1)
    ]


def criteria(
    gold: Sequence[dict[str, Any]],
    *,
    reward_basis: Sequence[str],
    env_assertions: Sequence[dict[str, Any]] = (),
    communicate_info: Sequence[str] = (),
    nl_assertions: Sequence[str] = (),
) -> dict[str, Any]:
    """The evaluation criteria block."""
    return {
        "actions": list(gold),
        "env_assertions": list(env_assertions),
        "communicate_info": list(communicate_info),
        "nl_assertions": list(nl_assertions),
        "reward_basis": list(reward_basis),
    }


def env_assertion(
    func_name: str, arguments: dict[str, Any], message: str, expect: bool = True
) -> dict[str, Any]:
    """A hidden check on the final agent-side state."""
    return {
        "env_type": "assistant",
        "func_name": func_name,
        "arguments": arguments,
        "assert_value": expect,
        "message": message,
    }


def suitable_personas(
    personas: Sequence[Any],
    environment: type[Environment],
    calls: Sequence[tuple[str, dict[str, Any]]],
    known_info: dict[str, Any],
) -> list[str]:
    """Ids of the personas that can take part in a gold path.

    A persona must not refuse the riskiest write of the path outright (risk tolerance at
    least 0.25 for a high-risk and 0.1 for a medium-risk write), and when the agent has
    to ask for a fact the gold arguments use, it must not withhold asked-for facts
    (cooperativeness at least 0.5).

    Args:
        personas: :class:`hasbench.personas.Persona` objects of the domain.
        environment: The domain's environment class (for the tools' risk levels).
        calls: The gold ``(tool, arguments)`` calls.
        known_info: What the human holds.
    """
    specs = environment._specs
    risk = max((RISK_ORDER[specs[name].risk] for name, _ in calls if name in specs), default=0)
    floor = {3: 0.25, 2: 0.1}.get(risk, 0.0)
    values = {str(v) for v in known_info.values()}
    leaves = (str(leaf) for _, arguments in calls for leaf in scalar_values(arguments))
    asks = any(leaf in values for leaf in leaves)
    return [
        p.persona_id
        for p in personas
        if p.risk_tolerance >= floor and (not asks or p.cooperativeness >= 0.5)
    ]


class TaskBuilder:
    """Collects the tasks of one domain, numbered ``{domain}_{pattern}_{nnn}``.

    Attributes:
        domain: The domain name (task id prefix).
        rng: The only source of randomness for the generator.
        tasks: The validated tasks, in the order added.
    """

    def __init__(self, domain: str, seed: int = 0) -> None:
        self.domain = domain
        self.rng = np.random.default_rng(seed)
        self.tasks: list[Scenario] = []
        self._counts: dict[str, int] = {}

    def pick(self, items: Sequence[T]) -> T:
        """One element drawn uniformly with :attr:`rng`."""
        if not items:
            raise BuildError(f"{self.domain}: nothing to pick from")
        return items[int(self.rng.integers(len(items)))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct elements drawn with :attr:`rng`, in draw order."""
        if k > len(items):
            raise BuildError(f"{self.domain}: cannot draw {k} of {len(items)} items")
        return [items[int(i)] for i in self.rng.choice(len(items), size=k, replace=False)]

    def count(self, pattern: str) -> int:
        """How many tasks of a pattern have been added."""
        return self._counts.get(pattern, 0)

    def add(
        self,
        pattern: str,
        *,
        task: str,
        agents: list[dict[str, Any]],
        users: list[dict[str, Any]],
        relationships: list[list[str]],
        criteria: dict[str, Any],
        max_iterations: int,
        coordination_mode: str = "star",
        environment: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        source_task_id: str | None = None,
    ) -> Scenario:
        """Number, validate and keep one task; returns the parsed scenario.

        Raises:
            BuildError: if the task does not fit the schema or fails
                :func:`hasbench.scenario.check_scenario` (e.g. its text leaks a value of a
                user's ``known_info``).
        """
        number = self._counts.get(pattern, 0) + 1
        task_id = f"{self.domain}_{pattern}_{number:03d}"
        raw = {
            "task_id": task_id,
            "source_task_id": source_task_id,
            "adaptation_pattern": pattern,
            "coordination_mode": coordination_mode,
            "task": task,
            "relationships": relationships,
            "environment": {"max_iterations": max_iterations, **(environment or {})},
            "agents": agents,
            "users": users,
            "evaluation_criteria": criteria,
            "metadata": metadata or {},
        }
        try:
            scenario = Scenario.model_validate(raw)
        except ValueError as exc:
            raise BuildError(f"{task_id}: {exc}") from exc
        problems = check_scenario(scenario)
        if problems:
            details = "; ".join(f"{p.path}: {p.message}" for p in problems)
            raise BuildError(f"{task_id}: {details}")
        self._counts[pattern] = number
        self.tasks.append(scenario)
        return scenario

    def to_yaml(self) -> str:
        """All tasks as YAML with the schema's key order (defaults left out)."""
        return dump_tasks(self.tasks)

    def write(self, path: Path) -> Path:
        """Write :meth:`to_yaml` to ``path`` (directories created)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_yaml(), encoding="utf-8")
        return path


def difficulty(hardness: int) -> str:
    """A task's difficulty from its generator's hardness score: easy up to 1, medium up to 3."""
    return "easy" if hardness <= 1 else "medium" if hardness <= 3 else "hard"


class RecordGenerator:
    """A task generator over a domain's generated database: draws records no task used yet.

    Attributes:
        builder: the :class:`TaskBuilder` the tasks are added to.
        rng: its random generator.
        db: the domain's generated database.
        personas: the domain's personas (at least three).
        used: the ids of the records a task already uses.
    """

    def __init__(self, domain: str, seed: int, db: dict[str, Any]) -> None:
        self.builder = TaskBuilder(domain, seed)
        self.rng = self.builder.rng
        self.db = db
        self._records = {table: list(rows.values()) for table, rows in db.items()
                         if isinstance(rows, dict)}  # fmt: skip
        self.used: set[str] = set()
        self.personas = domain_personas(domain)
        if len(self.personas) < 3:
            raise BuildError(f"{domain}: data/personas.yaml must define three {domain} personas")

    def draw(
        self, table: str, id_key: str, accept: Callable[[dict[str, Any]], bool], missing: str
    ) -> dict[str, Any]:
        """A random unused record of ``table`` that ``accept`` approves, now marked used.

        Raises:
            BuildError: no record is left that fits (``missing`` says what).
        """
        records = self._records[table]
        for index in self.rng.permutation(len(records)):
            record = records[int(index)]
            if record[id_key] not in self.used and accept(record):
                self.used.add(record[id_key])
                return record
        raise BuildError(f"{self.builder.domain}: {missing}")


def in_rotation(pattern: str, count: int, templates: Sequence[Callable[[str], object]]) -> None:
    """Add ``count`` tasks of ``pattern``, the templates taking turns in their order."""
    for index in range(count):
        templates[index % len(templates)](pattern)


def require_gold(scenario: Scenario) -> Environment:
    """The environment after the gold actions (:func:`hasbench.evaluate.replay_gold`).

    Raises:
        BuildError: naming the first gold action that failed.
    """
    env, errors = replay_gold(scenario)
    if errors:
        raise BuildError(f"{scenario.task_id}: gold {errors[0]}")
    return env


def dump_tasks(tasks: Sequence[Scenario]) -> str:
    """YAML text of a task list; relationships written as ``[source, target, label]``."""
    documents = []
    for scenario in tasks:
        data = scenario.model_dump(mode="json", exclude_defaults=True)
        data["relationships"] = [_Flow(r.values()) for r in data.get("relationships", [])]
        documents.append(data)
    return yaml.dump(documents, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


class _Flow(list):
    """A list written in YAML flow style (``[a, b, c]``)."""


class _Dumper(yaml.SafeDumper):
    """Safe dumper with block scalars for multi-line text and flow-style triples."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_flow(dumper: yaml.SafeDumper, value: _Flow) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_Flow, _represent_flow)
