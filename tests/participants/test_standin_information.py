"""A stand-in knows what a model in its seat is told, and nothing else.

Each test episode is played by stand-ins that are shadowed: beside every stand-in, the
conversation an LLM agent in the same seat would send to its model is built from the same
observations (:class:`Conversation`, the LLM agent's own rendering). The stand-in itself is
handed the observations stripped of every structured object behind the texts (the human's
answer object, the request, the tool's raw output, the error type, the facts a human's
input was found to state), so it can only know what the texts say.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from functools import cache
from typing import Any

import pytest

from hasbench.agency import Setting
from hasbench.participants import standin
from hasbench.participants.agents import Conversation
from hasbench.participants.backends import agent_backend
from hasbench.participants.base import ActionResult, AgentObservation, AgentSeat
from hasbench.participants.standin import StandIn, parse_profile, playbook_for
from hasbench.paths import TASKS_DIR
from hasbench.scenario import Scenario, load_tasks
from hasbench.simulator import Backends, Episode

SHADOWED: dict[str, Shadowed] = {}
"""The shadowed stand-ins of the episode that ran last, by agent id."""


class Shadowed:
    """A stand-in, and the model conversation built beside it from the same observations.

    ``read`` collects every text the stand-in read (its playbook's texts, the answers and
    input lines it took apart) and ``facts`` every fact it took from them as stated.
    """

    def __init__(self, seat: AgentSeat, spec: str) -> None:
        self.standin = StandIn(seat, parse_profile(spec), playbook_for(seat.view.domain))
        self.model = Conversation(seat.view)
        self.read: list[str] = []
        self.facts: list[Any] = []
        read = self.standin.playbook.read

        def recording(case: Any, text: str, source: str) -> None:
            self.read.append(text)
            read(case, text, source)

        self.standin.playbook.read = recording

    async def act(self, obs: AgentObservation) -> Any:
        if obs.last_result is not None:
            self.model.result(obs.last_result)
        self.model.news(obs)
        ACTING[:] = [self]
        return await self.standin.act(stripped(obs))


ACTING: list[Shadowed] = []
"""The shadowed stand-in acting now."""


@pytest.fixture(autouse=True)
def reading_recorded(monkeypatch):
    """Record what the stand-in's reading functions are given and what they return."""

    def recorded(function):
        def wrapper(text):
            found = function(text)
            if not ACTING:  # a stand-in without a shadow
                return found
            ACTING[0].read.append(text)
            if isinstance(found, dict):  # stated facts
                ACTING[0].facts += list(found.values())
            elif found is not None and hasattr(found, "parts"):  # an answer's edits, arguments
                ACTING[0].facts += [found.part(name) for name in found.parts]
            return found

        return wrapper

    for name in ("read_answer", "read_input", "stated_facts"):
        monkeypatch.setattr(standin, name, recorded(getattr(standin, name)))


def stripped(obs: AgentObservation) -> AgentObservation:
    """The observation with only what is rendered as text (and the agent's own action)."""
    result = obs.last_result
    if result is not None:
        result = ActionResult(result.action, result.text)
    inbox = tuple(dataclasses.replace(i, facts={}) for i in obs.inbox)
    return dataclasses.replace(obs, last_result=result, inbox=inbox)


@agent_backend("test:shadowed-standin", label="a stand-in with a model's conversation beside it")
def shadowed_team(model: str, seats: list[AgentSeat]) -> dict[str, Shadowed]:
    SHADOWED.clear()
    spec = "scripted:standin" + model.removeprefix("test:shadowed-standin")
    SHADOWED.update({seat.view.agent_id: Shadowed(seat, spec) for seat in seats})
    return dict(SHADOWED)


def leaves(value: Any) -> list[Any]:
    """The scalar values inside a fact (a list's items, a mapping's values)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in leaves(item)]
    return [] if value is None or isinstance(value, bool) else [value]


def mentioned(value: Any, text: str) -> bool:
    """Whether a text states a value: a number as a number, words in any case and spacing."""
    if isinstance(value, int | float):
        return any(float(n) == value for n in re.findall(r"-?\d+(?:\.\d+)?", text))
    words = re.sub(r"[_\s]+", " ", str(value)).lower()
    return words in re.sub(r"[_\s]+", " ", text).lower()


@cache
def task(domain: str, task_id: str) -> Scenario:
    return next(t for t in load_tasks(TASKS_DIR / f"{domain}.yaml") if t.task_id == task_id)


def run(domain: str, task_id: str, agency: str, profile: str, shadowed: bool):
    ACTING.clear()
    prefix = "test:shadowed-standin" if shadowed else "scripted:standin"
    backends = Backends(agent=f"{prefix}?{profile}")
    return asyncio.run(Episode(task(domain, task_id), Setting(agency=agency), backends, 0).run())


CASES = [
    ("examples", "mock_F_001", "A3", "strong"),  # a changed goal, told in a review's edits
    ("examples", "mock_D_001", "A3", "weak"),  # two people, a relayed question
    ("retail", "retail_A_001", "A3", "strong"),  # the customer identifies themselves
    ("retail", "retail_A_032", "A3", "strong"),  # the customer overrides the arguments
    ("retail", "retail_F_005", "A4", "weak"),  # a change of plan told unasked
    ("airline", "airline_A_006", "A4", "weak"),  # the customer modifies an action
    ("telecom", "telecom_A_006", "A3", "strong"),  # steps the customer carries out
    ("research", "research_E_001", "A3", "strong"),  # drafts reviewed
    ("research", "research_D_001", "A3", "weak"),
    ("bargaining", "bargaining_D_001", "A3", "strong"),
    ("coding", "coding_A_001", "A3", "strong"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[1]}-{c[2]}-{c[3]}")
def test_a_stand_in_acts_alike_on_the_texts_alone_and_knows_only_what_the_model_reads(case):
    domain, task_id, agency, profile = case
    shadowed = run(domain, task_id, agency, profile, shadowed=True)
    plain = run(domain, task_id, agency, profile, shadowed=False)
    # the structured objects behind the texts change nothing it does
    assert [e.model_dump(exclude={"seq"}) for e in shadowed.events] == [
        e.model_dump(exclude={"seq"}) for e in plain.events
    ]
    for agent_id, seat in SHADOWED.items():
        told = seat.model.text()
        for text in seat.read:  # every text it read is in the model's messages
            assert text in told, (agent_id, text[:200])
        for fact in seat.facts:  # and every fact it took from them as stated
            for leaf in leaves(fact):
                assert mentioned(leaf, told), (agent_id, leaf)


def test_the_structured_parts_of_answers_are_in_the_text_a_model_reads():
    """A review's edits and a decision's arguments reach the model as lines of the answer;
    the stand-in uses them from there (the changed goal of mock_F_001 comes as edits, the
    overriding customer of retail_A_032 gives their own arguments)."""
    run("examples", "mock_F_001", "A3", "strong", shadowed=True)
    seat = SHADOWED["agent_0"]
    assert "\nEdits: {" in seat.model.text()
    case = seat.standin.case
    edits = [s for s, o in case.origin.items() if o == "user_0" and not s.startswith("reviewed_")]
    assert edits and all(f'"{slot}": ' in seat.model.text() for slot in edits)
    trace = run("retail", "retail_A_032", "A3", "strong", shadowed=True)
    decisions = [e.payload for e in trace.of_type("channel_response")
                 if getattr(e.payload, "decision", None) == "override"]  # fmt: skip
    assert decisions
    told = "\n".join(seat.model.text() for seat in SHADOWED.values())
    assert f"Arguments: {json.dumps(decisions[0].arguments, sort_keys=True)}" in told
