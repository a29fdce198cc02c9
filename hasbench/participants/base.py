"""What participants see and do: observations, actions and the policy interfaces.

An agent policy gets an :class:`AgentObservation` (its local view, HAS paper §4.1) and
returns one action: a tool call (a domain tool or a virtual channel tool), a message to a
neighbour agent, a finish with a deliverable, or — for a model whose output could not be
used — a :class:`Malformed` record that the simulator turns into a typed error event.
A human's behaviour is a :class:`UserPolicy`: one responder per channel plus the writer
of spontaneous interventions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hasbench.channels import (
    ChannelRequest,
    ChannelResponse,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
)
from hasbench.envs.base import ToolSpec

if TYPE_CHECKING:
    from hasbench.personas import Persona
    from hasbench.scenario import GoalRevision, TriggerRule, UserSpec


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
    """Deliver the result; for a delegated agent this reports back to its delegator."""

    deliverable: str
    call_id: str | None = None


@dataclass(frozen=True)
class Malformed:
    """Output that is not a usable action (error_type as in the trace conventions)."""

    error_type: str
    message: str
    call_id: str | None = None


Action = CallTool | SendMessage | Finish | Malformed


@dataclass
class ActionResult:
    """What came back from the previous action, as the acting agent sees it.

    Attributes:
        action: the action this answers.
        text: the result as text (tool output, answer, or ``Error: ...``).
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
    """Facts of the sender's known_info the text states (human-initiated input)."""


@dataclass
class AgentObservation:
    """One agent's local view before it acts."""

    agent_id: str
    step: int
    task: str
    tools: list[ToolSpec]
    """Domain tools it holds, the channel tools registered for it, and its own actions."""
    channels: frozenset[str]
    """Channels registered as tools for this agent."""
    humans: list[str]
    """Humans it is shown (empty when the level hides users)."""
    agents: list[str]
    """Agents it may message."""
    delegator: str | None = None
    """The agent that delegated work to it and awaits its report, if any."""
    inbox: list[Incoming] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)
    last_result: ActionResult | None = None


class AgentPolicy(Protocol):
    """An agent: a model or a scripted policy."""

    async def act(self, observation: AgentObservation) -> Action:
        """Choose the next action."""
        ...


@dataclass
class HumanView:
    """What a human responder knows when it answers (its private state).

    Attributes:
        spec: the user node from the scenario.
        persona: the persona in effect.
        goal: the current goal (after revisions that happened).
        known_info: what the human knows now (revisions merged in).
        untold_revision: a goal revision not yet told to any agent.
        asks: how many requests this human has received so far (including this one).
        history: a short text digest of the episode so far (for spontaneous input).
    """

    spec: UserSpec
    persona: Persona
    goal: str
    known_info: dict[str, Any]
    untold_revision: GoalRevision | None = None
    asks: int = 0
    history: str = ""


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
        """Decide on an action (approve it, or execute it for the agent)."""
        ...

    async def intervene(self, view: HumanView, rule: TriggerRule, agent_id: str) -> str | None:
        """Write a spontaneous message for a trigger rule in llm mode."""
        ...
