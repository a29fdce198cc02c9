"""Cross-field checks of a parsed task: what the schema alone cannot say.

:func:`check_scenario` covers the task id, participants and relationships against the
coordination mode, counterparties, gold-action requestors, known_info leaks,
reward_basis, spontaneous trigger rules and, for registered domains, tool and assertion
names and gold arguments.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import networkx as nx
from pydantic import ValidationError

from hasbench.registry import domain_names, get_domain
from hasbench.scenario.problems import Problem, ScenarioError, describe_errors
from hasbench.scenario.schema import (
    AGENT_RELATION,
    COMPAT_DOMAINS,
    HUMAN_RELATIONS,
    Relationship,
    Scenario,
    TriggerRule,
    UserSpec,
)
from hasbench.vocab import INTERVENTION_DECISIONS

_TASK_ID = re.compile(r"(?P<domain>[a-z]+)_(?P<pattern>[A-Z])_(?P<number>\d{3,})")
"""A task id: domain, pattern and a number of three digits or more (telecom's full τ² set
has 2,285 tasks)."""
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


def checked_scenario(fields: dict[str, Any]) -> Scenario:
    """A scenario made from its fields (by a task generator or importer), validated and checked.

    Raises:
        ScenarioError: its first problem, as ``field.path: message``.
    """
    try:
        scenario = Scenario.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ScenarioError([Problem(None, None, where, err["msg"])]) from None
    problems = check_scenario(scenario)
    if problems:
        raise ScenarioError(problems[:1])
    return scenario


def _check_task_id(scn: Scenario) -> list[tuple[str, str]]:
    match = _TASK_ID.fullmatch(scn.task_id)
    if match is None:
        shape = "{domain}_{pattern}_{nnn} (three digits or more), e.g. retail_A_007"
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


def scalar_leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, leaf) for every scalar inside a nested mapping/list value."""
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in scalar_leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in scalar_leaves(v, f"{path}[{i}]")]
    return [(path, value)]


def scalar_values(value: Any) -> list[Any]:
    """Every scalar inside a nested mapping/list value (mappings' values, lists' items)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in scalar_values(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in scalar_values(item)]
    return [value]


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
        if action.requestor not in agents ^ users:  # undefined or duplicated: reported above
            continue
        side = scn.side_of(action)
        if message := tool_problem(action.name, side):
            problems.append((f"{where}.name", message))
            continue
        try:
            arg_models[action.name].model_validate(action.arguments)
        except ValidationError as exc:
            for path, message in describe_errors(exc, arg_models[action.name]):
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
