"""What each participant of an episode is shown, and the state it is built from.

An agent's :class:`~hasbench.participants.base.AgentView` is fixed at the start: its
profile, the task, the domain policy, the tools it holds (domain tools and the channel
tools of the channels it may use), its peers and the people it may reach. Before every
action it gets an :class:`~hasbench.participants.base.AgentObservation`: that view plus
its own conversation. A human's :class:`~hasbench.participants.base.HumanView` is built
afresh from its :class:`HumanState` for every request, since goals change (revisions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hasbench.channels import CHANNEL_TOOLS, control_tool
from hasbench.participants.base import (
    ActionResult,
    AgentObservation,
    AgentPolicy,
    AgentView,
    AnswerKey,
    Contact,
    HumanView,
    Incoming,
    UserPolicy,
)
from hasbench.personas import Persona, get_persona
from hasbench.scenario import GoalRevision, UserSpec
from hasbench.simulator.setup import EpisodeSetup
from hasbench.tools import ToolSpec
from hasbench.trace import Trace


@dataclass
class HumanState:
    """A human's private state in the episode (its view is built from it).

    Attributes:
        spec: the human as the task defines it.
        persona: how it behaves.
        goal: its current goal (changed by revisions).
        known_info: the facts it holds now.
        revisions: its goal revisions still to come, in turn order.
        tools: the tools it may run itself.
        policy: who plays it.
        person: whether a real person plays it (a ``PlayedByPerson`` policy).
        untold_revision: the last revision not yet told to an agent.
        asks: how many requests reached it.
    """

    spec: UserSpec
    persona: Persona
    goal: str
    known_info: dict[str, Any]
    revisions: list[GoalRevision]
    tools: tuple[ToolSpec, ...] = ()
    policy: UserPolicy | None = None
    person: bool = False
    untold_revision: GoalRevision | None = None
    asks: int = 0

    def view(self, history: str = "") -> HumanView:
        """What this human knows now."""
        return HumanView(
            user_id=self.spec.user_id,
            role=self.spec.role,
            goal=self.goal,
            task_instructions=self.spec.task_instructions,
            known_info=dict(self.known_info),
            unknown_info=tuple(self.spec.unknown_info),
            persona=self.persona,
            untold_revision=self.untold_revision,
            asks=self.asks,
            history=history,
            tools=self.tools,
            responsibilities=tuple(self.spec.responsibilities),
        )

    def facts_in(self, text: str) -> dict[str, Any]:
        """The facts this human holds that a text of theirs states."""
        return {k: v for k, v in self.known_info.items() if str(v).lower() in text.lower()}


@dataclass
class AgentState:
    """An agent's state in the episode.

    Attributes:
        view: what it may know for the whole episode.
        memory: notes of what people told it (shared by the team under shared memory).
        policy: who plays it.
        inbox: what was delivered to it since its last action.
        last: the result of its last action.
        rounds: its domain tool calls in a row (see ``max_tool_rounds``).
    """

    view: AgentView
    memory: list[str]
    policy: AgentPolicy | None = None
    inbox: list[Incoming] = field(default_factory=list)
    last: ActionResult | None = None
    rounds: int = 0

    def observe(self, step: int, delegator: str | None) -> AgentObservation:
        """What the agent sees before it acts: its view and its own conversation."""
        return AgentObservation(
            view=self.view,
            step=step,
            delegator=delegator,
            inbox=tuple(self.inbox),
            memory=tuple(self.memory),
            last_result=self.last,
        )


def human_states(setup: EpisodeSetup) -> dict[str, HumanState]:
    """Each human's state at the start, by id (its policy is set afterwards)."""
    return {
        u.user_id: HumanState(
            spec=u,
            persona=get_persona(setup.setting.persona or u.persona),
            goal=u.goal,
            known_info=dict(u.known_info),
            revisions=sorted(u.goal_revisions, key=lambda r: r.at_turn),
            tools=tuple(setup.tool_specs[t] for t in u.tools if t in setup.tool_specs),
        )
        for u in setup.scenario.users
    }


def agent_view(setup: EpisodeSetup, agent_id: str) -> AgentView:
    """What an agent may know: its profile, the task, its tools and its contacts."""
    graph, environment = setup.graph, setup.environment
    enabled = setup.setting.enabled_channels()
    reachable: set[str] = set()
    for human in graph.humans():
        reachable |= graph.channels_between(agent_id, human)
    channels = frozenset(enabled & reachable)
    tools = [spec for spec in environment.tools("agent") if graph.may_call(agent_id, spec.name)]
    people = _people(setup, agent_id, enabled)
    # request_control is typed for the agent's own writes and what people can carry out
    actions = {spec.name: spec for spec in tools if spec.kind == "write"}
    for person in people:
        actions.update({n: setup.tool_specs[n] for n in person.tools if n in setup.tool_specs})
    tools += [
        control_tool(list(actions.values())) if ch == "control" else CHANNEL_TOOLS[ch]
        for ch in sorted(channels)
    ]
    domain_tools = [spec.name for spec in environment.tools("agent")]
    peers = [
        _contact(
            setup,
            a,
            tools=tuple(t for t in domain_tools if graph.may_call(a, t)),
            reaches=tuple(_people(setup, a, enabled)),
        )
        for a in graph.neighbors(agent_id)
        if a in graph.agents()
    ]
    policy = setup.setting.policy
    return AgentView(
        agent_id=agent_id,
        domain=setup.scenario.domain,
        profile=setup.scenario.agent(agent_id).profile,
        task=setup.scenario.task,
        policy=environment.policy,
        tools=tuple(tools),
        channels=channels,
        peers=tuple(peers),
        people=tuple(people),
        coordination_mode=graph.mode,
        team_size=len(graph.agents()),
        collaboration=policy.collaboration,
        cfc_protocol=policy.cfc_protocol,
    )


def _people(setup: EpisodeSetup, agent_id: str, enabled: frozenset[str]) -> list[Contact]:
    """The humans an agent is shown, with the enabled channels over which it reaches them."""
    graph = setup.graph
    people = []
    for human in graph.humans():
        shared = sorted(graph.channels_between(agent_id, human) & enabled)
        if setup.setting.policy.show_users and shared:
            tools_for = graph.participant(human).tools if "control" in shared else []
            people.append(_contact(setup, human, tuple(shared), tuple(tools_for)))
    return people


def _contact(
    setup: EpisodeSetup,
    pid: str,
    channels: tuple[str, ...] = (),
    tools: tuple[str, ...] = (),
    reaches: tuple[Contact, ...] = (),
) -> Contact:
    p = setup.graph.participant(pid)
    other_side = pid in setup.scenario.counterparties
    return Contact(
        pid, p.kind, p.role, tuple(p.responsibilities), channels, tools, reaches, other_side
    )


def answer_key(setup: EpisodeSetup) -> AnswerKey:
    """The whole task, for backends registered as reading the answer key (the oracle)."""
    return AnswerKey(setup.scenario, setup.setting, setup.graph, setup.tool_specs)


def digest(trace: Trace, limit: int = 12) -> str:
    """A short text of the latest messages and tool calls (a human's sense of the history)."""
    lines = []
    for event in trace.events[-limit * 3 :]:
        if event.type == "message":
            lines.append(f"{event.actor} to {event.target}: {event.payload.text}")
        elif event.type == "tool_call":
            lines.append(f"{event.actor} called {event.payload.name}")
        elif event.type == "finish":
            lines.append(f"{event.actor} finished: {event.payload.deliverable}")
    return "\n".join(lines[-limit:]) or "(nothing yet)"
