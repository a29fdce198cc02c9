"""The participant boundary: no view reaches the answer key or another participant's facts."""

import dataclasses
import json
from collections.abc import Iterator, Mapping

import pytest
from pydantic import BaseModel

from hasbench.agency import Setting
from hasbench.envs.base import Environment
from hasbench.graph import HASGraph
from hasbench.paths import TASKS_DIR
from hasbench.scenario import (
    EvaluationCriteria,
    GoldAction,
    Scenario,
    UserSpec,
    leak_pattern,
    load_tasks,
    scalar_leaves,
)
from hasbench.simulator import Backends, Episode

TASKS = [task for path in sorted(TASKS_DIR.glob("*.yaml")) for task in load_tasks(path)]
FORBIDDEN = (Scenario, EvaluationCriteria, GoldAction, UserSpec, Environment, HASGraph, Episode)


def reachable(root: object) -> Iterator[object]:
    """Every object reachable from ``root`` through fields, items and attributes."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (bool, int, float, type)):
            if isinstance(obj, (int, float)) and not isinstance(obj, bool):
                yield obj
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, str):
            continue
        if isinstance(obj, Mapping):
            stack += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
        elif isinstance(obj, BaseModel):
            stack += [getattr(obj, name) for name in type(obj).model_fields]
        elif dataclasses.is_dataclass(obj):
            stack += [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        elif hasattr(obj, "__dict__"):
            stack += list(vars(obj).values())


def texts(root: object) -> list[str]:
    return [str(o) for o in reachable(root) if isinstance(o, (str, int, float))]


def answer_key_values(scn: Scenario) -> list[object]:
    """Values only the evaluation criteria hold."""
    criteria = scn.evaluation_criteria
    values = [leaf for a in criteria.actions for _, leaf in scalar_leaves(a.arguments, "")]
    values += [leaf for a in criteria.env_assertions for _, leaf in scalar_leaves(a.arguments, "")]
    return values + list(criteria.communicate_info) + list(criteria.nl_assertions)


def user_facts(user: UserSpec) -> list[object]:
    facts = [leaf for _, leaf in scalar_leaves(user.known_info, "")]
    for revision in user.goal_revisions:
        facts += [leaf for _, leaf in scalar_leaves(revision.known_info, "")]
    return facts


def secrets(values: list[object], public: str) -> list[tuple[object, object]]:
    """(value, pattern) for each value that is not stated in the public text."""
    found = []
    for value in values:
        pattern = leak_pattern(value)
        if pattern is not None and not pattern.search(public):
            found.append((value, pattern))
    return found


def assert_nothing_leaks(view: object, hidden: list[tuple[object, object]], who: str) -> None:
    for obj in reachable(view):
        assert not isinstance(obj, FORBIDDEN), f"{who} reaches a {type(obj).__name__}"
    body = "\n".join(texts(view))
    for value, pattern in hidden:
        assert not pattern.search(body), f"{who} can reach the hidden value {value!r}"


def public_text(scn: Scenario, episode: Episode) -> str:
    """What every agent is told before the episode: the task, profiles, policy, tools."""
    parts = [scn.task, episode.environment.policy]
    for agent in scn.agents:
        parts += [agent.profile, agent.role or "", *agent.responsibilities, *agent.capabilities]
    parts += [json.dumps(spec.parameters) for spec in episode.environment.tools()]
    parts += [spec.description for spec in episode.environment.tools()]
    return "\n".join(parts)


@pytest.mark.parametrize("scn", TASKS, ids=lambda s: s.task_id)
def test_no_view_reaches_the_answer_key_or_anothers_private_facts(scn):
    episode = Episode(scn, Setting(agency="A3"), Backends(agent="scripted:idle"))
    public = public_text(scn, episode)
    everyone = [fact for user in scn.users for fact in user_facts(user)]
    agent_hidden = secrets(answer_key_values(scn) + everyone, public)
    for agent in scn.agents:
        assert_nothing_leaks(episode.agent_view(agent.agent_id), agent_hidden, agent.agent_id)
    for user in scn.users:
        own = "\n".join([user.goal, user.task_instructions, *map(str, user_facts(user))])
        others = [f for u in scn.users if u is not user for f in user_facts(u)]
        hidden = secrets(answer_key_values(scn) + others, own + "\n" + public)
        assert_nothing_leaks(episode.human_view(user.user_id), hidden, user.user_id)


def test_the_walk_finds_a_planted_secret():
    """The check can fail: a view that carried the scenario or a fact would be caught."""
    scn = next(t for t in TASKS if t.task_id == "mock_A_001")
    episode = Episode(scn, Setting(agency="A3"), Backends(agent="scripted:idle"))
    view = episode.agent_view("agent_0")
    leaky = dataclasses.replace(view, profile=view.profile + " " + scn.users[0].known_info["email"])
    hidden = secrets(user_facts(scn.users[0]), public_text(scn, episode))
    with pytest.raises(AssertionError, match="hidden value"):
        assert_nothing_leaks(leaky, hidden, "agent_0")
    with pytest.raises(AssertionError, match="reaches a Scenario"):
        assert_nothing_leaks(dataclasses.replace(view, peers=(scn,)), [], "agent_0")


def test_only_the_oracle_backend_reads_the_answer_key():
    from hasbench.participants.backends import AGENT_BACKENDS

    readers = {
        name for name in AGENT_BACKENDS.names() if AGENT_BACKENDS.resolve(name).reads_answer_key
    }
    assert "scripted:oracle" in readers and "scripted:idle" not in readers
    assert not AGENT_BACKENDS.resolve("openai/gpt-4.1-mini").reads_answer_key
    assert "reads the answer key" in AGENT_BACKENDS.label("scripted:oracle")


def test_participants_never_touch_the_episode():
    from hasbench.paths import REPO_ROOT

    for path in sorted((REPO_ROOT / "hasbench" / "participants").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "Episode" not in text and "hasbench.simulator" not in text, path.name


def test_an_agent_is_told_which_peer_is_the_other_side():
    """Across a negotiation the seller agent is a peer but not a teammate: the views and the
    model prompt say so, and the stand-in keeps its case to its own team."""
    from hasbench.participants.agents import _describe

    task = next(
        t for t in load_tasks(TASKS_DIR / "bargaining.yaml") if t.task_id == "bargaining_D_003"
    )
    episode = Episode(task, Setting(agency="A3"), Backends(agent="scripted:standin"))
    peers = {p.participant_id: p for p in episode.agent_view("agent_0").peers}
    assert peers["seller_agent"].counterparty and not peers["closer"].counterparty
    assert "the other side" in _describe(peers["seller_agent"])
    assert "the other side" not in _describe(peers["closer"])
    buyer = episode.agents["agent_0"].policy
    assert [p.participant_id for p in buyer.team] == ["closer"]
