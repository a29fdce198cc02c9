"""What participants see and do: views, observations, actions and the policy interfaces.

The simulator never hands a participant the episode. Each agent gets an
:class:`AgentView` (what it may know for the whole episode: its profile, the task text,
the domain policy, its tools, the peers and people it may reach) and, before every
action, an :class:`AgentObservation` (that view plus its own conversation: inbox, memory,
the last result). It returns one action: a tool call (a domain tool or a virtual channel
tool), a message to a neighbour agent, a finish with a deliverable, or — for a model whose
output could not be used — a :class:`Malformed` record that the simulator turns into a
typed error event. A human's behaviour is a :class:`UserPolicy` that gets a
:class:`HumanView` (its own goal, instructions, known facts and persona) with every
request. Model calls and error reports go through a :class:`Gateway` bound to the
participant. Only a backend registered as reading the answer key (the oracle) is also
given the :class:`AnswerKey`. A user policy through which a real person plays a human is
a :class:`PlayedByPerson`: the trace names that human, and what the person contributes
unprompted (:class:`Initiative`) is delivered at the start of each turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from hasbench.channels import (
    ChannelRequest,
    ChannelResponse,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
)
from hasbench.tools import ToolSpec
from hasbench.vocab import FinishOutcome

if TYPE_CHECKING:
    import numpy as np

    from hasbench.agency import Setting
    from hasbench.graph import HASGraph
    from hasbench.llm import ModelResponse
    from hasbench.personas import Persona
    from hasbench.scenario import GoalRevision, Scenario, TriggerRule


@dataclass(frozen=True)
class CallTool:
    """Call a domain tool or a virtual channel tool."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class SendMessage:
    """Send a message to a neighbour (hand off, delegate, report, update a human)."""

    target: str
    text: str
    call_id: str | None = None


@dataclass(frozen=True)
class Finish:
    """Deliver the result; for a delegated agent this reports back to its delegator.

    ``outcome`` says whether this is the result (``done``) or why there is none: the agent
    could not do the task (``unable``), or an offline stand-in cannot read what the task
    asks (``needs_language_understanding``). Only ``done`` can count as delivered.
    """

    deliverable: str
    call_id: str | None = None
    outcome: FinishOutcome = "done"


@dataclass(frozen=True)
class Malformed:
    """Output that is not a usable action (error_type as in the trace conventions)."""

    error_type: str
    message: str
    call_id: str | None = None


Action = CallTool | SendMessage | Finish | Malformed


@dataclass
class ActionResult:
    """What came back from the previous action.

    ``text`` is what the acting agent reads (a model gets it as the tool result, and the
    offline stand-ins read it the same way); the objects behind it are for the answer-key
    planner, which reads the task's structure anyway.

    Attributes:
        action: the action this answers.
        text: the result as text (tool output, a human's whole answer as
            :func:`hasbench.channels.answer_text` writes it, or ``Error: ...``).
        error_type: set when the action failed.
        request: the channel request, for channel tools.
        response: the human's answer or decision, when there was one.
        tool_output: the domain tool output, when one ran (also after an approval).
    """

    action: Action
    text: str
    error_type: str | None = None
    request: ChannelRequest | None = None
    response: ChannelResponse | None = None
    tool_output: Any = None


@dataclass(frozen=True)
class Incoming:
    """Something delivered to an agent between its actions."""

    sender: str
    kind: str
    """"message", "report" (a delegate's deliverable), or a channel name (human-initiated)."""
    text: str
    form: str | None = None
    request_id: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    """Facts of the sender's known_info the text states (human-initiated input; for the
    answer-key planner: agents that see only their view read ``text``)."""


@dataclass(frozen=True)
class Contact:
    """Someone a participant may reach, as it is told about them."""

    participant_id: str
    kind: Literal["agent", "human"]
    role: str | None
    responsibilities: tuple[str, ...]
    channels: tuple[str, ...] = ()
    """Channels over which it may reach this person (empty for agents)."""
    tools: tuple[str, ...] = ()
    """Tools this peer holds, or actions this person can carry out for it (humans reachable
    over control)."""
    reaches: tuple[Contact, ...] = ()
    """For a peer: the people it is shown, as it sees them (whom it can ask on one's behalf)."""
    counterparty: bool = False
    """For a peer: an agent of the other side (e.g. across a negotiation), not a teammate."""


@dataclass(frozen=True)
class AgentView:
    """What one agent may know for the whole episode.

    Attributes:
        agent_id: the agent.
        domain: the domain of the task (its tools and policy are that domain's).
        profile: its profile text.
        task: the task as shown to agents.
        policy: the domain policy text.
        tools: domain tools it holds, then the channel tools registered for it.
        channels: channels registered as tools for it.
        peers: agents it may message.
        people: humans it is shown (empty when the level hides users), with the channels
            over which it may reach them.
        coordination_mode: how the agent team is organised (star, chain, tree, graph).
        team_size: how many agents the team has.
        collaboration: the collaboration block of its agency level.
        cfc_protocol: whether it is given the channel guidelines.
    """

    agent_id: str
    domain: str
    profile: str
    task: str
    policy: str
    tools: tuple[ToolSpec, ...]
    channels: frozenset[str]
    peers: tuple[Contact, ...]
    people: tuple[Contact, ...]
    coordination_mode: str
    team_size: int
    collaboration: str
    cfc_protocol: bool


@dataclass(frozen=True)
class AgentObservation:
    """One agent's local view before it acts: its view plus its own conversation."""

    view: AgentView
    step: int
    delegator: str | None = None
    """The agent that delegated work to it and awaits its report, if any."""
    inbox: tuple[Incoming, ...] = ()
    memory: tuple[str, ...] = ()
    last_result: ActionResult | None = None


class AgentPolicy(Protocol):
    """An agent: a model or a scripted policy."""

    async def act(self, observation: AgentObservation) -> Action:
        """Choose the next action."""
        ...


@dataclass(frozen=True)
class HumanView:
    """What a simulated human knows when it answers: its own state only.

    Attributes:
        user_id: the human.
        role: its role, if the task names one.
        goal: the current goal (after revisions that happened).
        task_instructions: how it should behave in the task.
        known_info: what it knows now (revisions merged in).
        unknown_info: what it does not know (names of facts).
        persona: the persona in effect.
        untold_revision: a goal revision of its own not yet told to any agent.
        asks: how many requests it has received so far (including this one).
        history: a short digest of the episode so far (for spontaneous input).
        tools: the human-side tools it holds (its own device or account), for carrying
            out or taking over an action itself.
        responsibilities: what it answers for in the task (e.g. approving refunds).
    """

    user_id: str
    role: str | None
    goal: str
    task_instructions: str
    known_info: Mapping[str, Any]
    unknown_info: tuple[str, ...]
    persona: Persona
    untold_revision: GoalRevision | None = None
    asks: int = 0
    history: str = ""
    tools: tuple[ToolSpec, ...] = ()
    responsibilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActionFacts:
    """Facts about the action of a control request that the responder may rely on."""

    risk: str
    kind: str
    side: str
    known: bool
    """False when the environment has no such tool."""


class UserPolicy(Protocol):
    """A human participant's behaviour: one responder per channel."""

    async def clarify(
        self, view: HumanView, request: ChannelRequest
    ) -> ClarificationResponse | None:
        """Answer a question; None if no usable answer could be produced."""
        ...

    async def review(self, view: HumanView, request: ChannelRequest) -> FeedbackResponse | None:
        """Review an artifact."""
        ...

    async def decide(
        self, view: HumanView, request: ChannelRequest, facts: ActionFacts
    ) -> ControlDecision | None:
        """Decide on an action (approve, deny, modify, stop, override, take_over; execute)."""
        ...

    async def next_subtask(self, view: HumanView, given: int) -> str | None:
        """The next subtask a driving human sets (A5) after ``given`` ones; None: no more."""
        ...

    async def intervene(self, view: HumanView, rule: TriggerRule, agent_id: str) -> str | None:
        """Write a spontaneous message for a trigger rule in llm mode."""
        ...


@dataclass(frozen=True)
class Initiative:
    """A human's unprompted input: information, feedback, or a control act such as stop.

    Attributes:
        channel: the channel it travels on.
        form: what it is (``inform``, ``comment``, or a control decision like ``stop``).
        content: the words the agent reads.
    """

    channel: Literal["clarification", "feedback", "control"]
    form: str
    content: str


@runtime_checkable
class PlayedByPerson(Protocol):
    """A user policy through which a real person plays a human (``human:*`` backends).

    ``interface`` names how (``human:notebook``, ``human:terminal``); the trace header
    records it for the human. Before each turn the simulator collects what the person
    contributed on their own; the policy may wait there (e.g. to give the person time).
    """

    interface: str

    async def initiatives(self, view: HumanView) -> list[Initiative]:
        """The person's unprompted contributions since the last call."""
        ...


class Gateway(Protocol):
    """A participant's door to models and to the trace's error record."""

    async def complete(
        self,
        role: str,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ModelResponse:
        """One model call on the participant's behalf (recorded as a model_call event).

        Raises:
            ModelError: the call failed for good.
        """
        ...

    def report_error(self, error_type: str, message: str) -> None:
        """Record output of this participant that could not be used."""
        ...


@dataclass(frozen=True)
class AgentSeat:
    """What a backend gets to play one agent.

    The generator is the agents' seeded one, shared by the team.
    """

    view: AgentView
    gateway: Gateway
    rng: np.random.Generator


@dataclass(frozen=True)
class HumanSeat:
    """What a backend gets to play one human.

    The generator is the humans' seeded one, shared by every human of the episode.
    """

    user_id: str
    gateway: Gateway
    rng: np.random.Generator


@dataclass(frozen=True)
class AnswerKey:
    """The whole task, including its evaluation criteria and every private fact.

    Only agent backends registered with ``reads_answer_key=True`` (the oracle and the
    planners derived from it) receive it, so reading the answer key is visible where a
    backend is registered.
    """

    scenario: Scenario
    setting: Setting
    graph: HASGraph
    tool_specs: Mapping[str, ToolSpec]


def approval_reason(name: str, arguments: Mapping[str, Any], seen: Sequence[str]) -> str:
    """What a person asked to approve an action needs to decide, as an agent would write it.

    The action with its arguments, and what the agent last read about what it acts on
    (:func:`seen_about`): the identifying and numeric fields of that record, such as the
    balance a refund or a closure depends on, and none of its personal details.

    Args:
        name: the action's tool.
        arguments: its arguments.
        seen: the texts the agent read (tool outputs, messages, answers), oldest first.
    """
    shown = ", ".join(f"{key}={value}" for key, value in arguments.items())
    reason = f"I would like to run {name}({shown})."
    about = seen_about(arguments, seen)
    if about is None:
        return reason
    return f"{reason} What I found: {json.dumps(about)}"


def seen_about(arguments: Mapping[str, Any], seen: Sequence[str]) -> dict[str, Any] | None:
    """The latest record read that names a text value of the arguments, kept short.

    A record is a JSON object, alone or after ``Result:``; it is kept to the arguments'
    fields and its numbers, so no personal detail reaches the person asked.
    """
    values = [value for value in arguments.values() if isinstance(value, str) and value]
    for text in reversed(seen):
        record = _record(text)
        if record is None or not any(record.get(key) in values for key in arguments):
            continue
        return {
            key: value for key, value in record.items()
            if key in arguments or (isinstance(value, int | float) and not isinstance(value, bool))
        }  # fmt: skip
    return None


def _record(text: str) -> dict[str, Any] | None:
    """A JSON object the text is, or that follows ``Result:`` on its last line."""
    last = text.strip().splitlines()[-1] if text.strip() else ""
    for candidate in (text, last.removeprefix("Result:")):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
