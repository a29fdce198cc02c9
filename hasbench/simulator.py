"""The episode: agents and humans acting over the HAS Graph, recorded as a trace.

An :class:`Episode` is agent-driven (HAS paper §4.1). Each :meth:`Episode.step` lets the
active agent act once: call a domain tool, call a virtual channel tool (the agent pauses,
the request is routed through the HAS Graph to a human, the answer is written to the
trace and into the agent's memory, the agent resumes), message a neighbour, or finish.
Humans act when a request reaches them, when a spontaneous trigger fires (A4), or when
control hands them an action. Scheduling follows the coordination mode: a message along
a ``delegates`` (star) or ``parent`` (tree) edge hands work down and the delegate's finish
reports back; a ``handoff`` (chain) passes the task on; in ``graph`` mode the addressee
of a message takes the next turn. Limits end the episode with a typed
:data:`~hasbench.trace.TerminationReason`. Everything random comes from generators seeded
by the episode seed, and the trace carries no wall-clock, so a rerun is byte-identical.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

import hasbench
from hasbench.agency import Setting
from hasbench.channels import (
    CHANNEL_TOOLS,
    TOOL_CHANNEL,
    Budget,
    ChannelController,
    ChannelRefused,
    ChannelRequest,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
    control_tool,
    parse_channel_call,
)
from hasbench.envs import make_environment
from hasbench.envs.base import ToolResult
from hasbench.graph import HASGraph
from hasbench.llm import Endpoint, LLMClient, ModelError, ResponseCache, provider_of
from hasbench.participants.backends import make_agents, make_user
from hasbench.participants.base import (
    Action,
    ActionFacts,
    ActionResult,
    AgentObservation,
    AgentPolicy,
    AgentSeat,
    AgentView,
    AnswerKey,
    CallTool,
    Contact,
    Finish,
    HumanSeat,
    HumanView,
    Incoming,
    Malformed,
    PlayedByPerson,
    SendMessage,
    UserPolicy,
)
from hasbench.personas import Persona, get_persona
from hasbench.prompts import prompt_hashes
from hasbench.scenario import GoalRevision, Scenario, TriggerRule, UserSpec
from hasbench.sync import run_sync
from hasbench.tools import ToolSpec
from hasbench.trace import (
    ErrorPayload,
    FinishPayload,
    GoalRevisionPayload,
    MessagePayload,
    ModelCallPayload,
    ModelErrorPayload,
    Payload,
    Termination,
    TerminationReason,
    ToolCallPayload,
    ToolResultPayload,
    Trace,
    TraceHeader,
    Usage,
)
from hasbench.vocab import AGENT_RUNS, APPROVAL, EXECUTE, HUMAN_RUNS, SUBTASK

DELEGATING_LABELS = frozenset({"delegates", "parent"})


Role = Literal["agent", "user", "judge"]


class Backends(BaseModel):
    """Which model or scripted policy plays each role (litellm strings or ``scripted:*``).

    ``endpoints`` says, per role, where its model is served and how it is called (see
    :class:`~hasbench.llm.Endpoint`); a role not listed uses its provider's own endpoint.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(default="scripted:oracle", min_length=1)
    user: str = Field(default="scripted:user", min_length=1)
    judge: str = Field(default="rule", min_length=1)
    endpoints: dict[Role, Endpoint] = Field(default_factory=dict)

    def endpoint(self, role: str) -> Endpoint | None:
        """The endpoint of a role's model (None: the provider's own)."""
        return self.endpoints.get(role)

    def models(self) -> dict[str, str]:
        """Role -> backend string."""
        return {"agent": self.agent, "user": self.user, "judge": self.judge}

    def endpoint_identities(self) -> dict[str, dict[str, Any]]:
        """Role -> what determines its endpoint's answers, for roles not on the default.

        A role without an endpoint whose provider's server is set in the environment
        (``OPENAI_API_BASE``, ...) is listed with it.
        """
        found = {
            role: (self.endpoints.get(role) or Endpoint()).identity(provider_of(model))
            for role, model in sorted(self.models().items())
        }
        return {role: identity for role, identity in found.items() if identity}

    def identity(self) -> dict[str, Any]:
        """What determines the backends' behaviour (part of an episode's key).

        The backend strings and, where set, each role's server and extra parameters; never
        a key, a key's variable or the retry policy.
        """
        found: dict[str, Any] = self.models()
        if endpoints := self.endpoint_identities():
            found["endpoints"] = endpoints
        return found


@dataclass
class _Human:
    """A human's private state in the episode (its view is built from it)."""

    spec: UserSpec
    persona: Persona
    goal: str
    known_info: dict[str, Any]
    revisions: list[GoalRevision]
    tools: tuple[ToolSpec, ...] = ()
    policy: UserPolicy | None = None
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
        )


@dataclass
class _Agent:
    view: AgentView
    memory: list[str]
    policy: AgentPolicy | None = None
    inbox: list[Incoming] = field(default_factory=list)
    last: ActionResult | None = None
    rounds: int = 0


class _Gateway:
    """A participant's door to models and to error records of the episode."""

    def __init__(self, episode: Episode, actor: str) -> None:
        self._episode = episode
        self._actor = actor

    async def complete(
        self,
        role: str,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Any:
        """One model call on the participant's behalf (see :class:`Gateway`)."""
        return await self._episode._complete(
            self._actor, role, model, messages, tools, response_format
        )

    def report_error(self, error_type: str, message: str) -> None:
        """Record unusable output of the participant."""
        self._episode._record_error(self._actor, error_type, message)


class Episode:
    """One run of a scenario under a setting with given backends.

    Args:
        scenario: the task.
        setting: the human-participation setting.
        backends: who plays the agents and the humans.
        seed: seeds every random choice of the episode.
        client: the model client for LLM backends; one with the default response cache
            is made when needed and not given.
    """

    def __init__(
        self,
        scenario: Scenario,
        setting: Setting | None = None,
        backends: Backends | None = None,
        seed: int = 0,
        client: Any | None = None,
    ) -> None:
        if seed < 0:
            raise ValueError(f"{scenario.task_id}: seed must be >= 0, got {seed}")
        self.scenario = scenario
        self.setting = setting or Setting()
        self.backends = backends or Backends()
        self.seed = seed
        self.environment = make_environment(scenario)
        self.tool_specs: dict[str, ToolSpec] = {s.name: s for s in self.environment.tools()}
        self.graph = HASGraph.from_scenario(
            scenario, {name: spec.side for name, spec in self.tool_specs.items()}
        )
        self.protected = frozenset(
            g.name for g in scenario.evaluation_criteria.actions if g.protected
        )
        self.max_iterations = self.setting.max_iterations or scenario.environment.max_iterations
        self.max_tool_rounds = max(
            self.setting.max_tool_rounds, scenario.environment.max_tool_rounds or 0
        )
        self.step_no = 0
        self.errors = 0
        self._calls = 0
        self._expired = 0
        self.trace = Trace(header=self._header())
        self.budget = Budget(
            max(self.setting.interaction_budget, scenario.environment.interaction_budget or 0)
        )
        enabled = self.setting.enabled_channels()
        self.controllers = {
            ch: ChannelController(ch, ch in enabled, self.graph, self.budget, self._record)
            for ch in ("clarification", "feedback", "control")
        }
        self.humans = {
            u.user_id: _Human(
                spec=u,
                persona=get_persona(self.setting.persona or u.persona),
                goal=u.goal,
                known_info=dict(u.known_info),
                revisions=sorted(u.goal_revisions, key=lambda r: r.at_turn),
                tools=tuple(self.tool_specs[t] for t in u.tools if t in self.tool_specs),
            )
            for u in scenario.users
        }
        self.triggers: list[tuple[str, TriggerRule, str]] = []
        if self.setting.spontaneous_enabled():
            for u in scenario.users:
                if u.spontaneous_config is not None:
                    for rule in u.spontaneous_config.trigger_rules:
                        self.triggers.append((u.user_id, rule, u.spontaneous_config.mode))
        self.lead = self.graph.lead()
        self.active = self.lead
        self.driver = self._driver() if self.setting.policy.human_driven else None
        self.subtasks = 0
        self.subtask_due = self.driver is not None
        self.lead_done = False
        self.delegator: dict[str, str] = {}
        self.finished: set[str] = set()
        self.vetoed: set[str] = set()
        """Agents whose next write a human vetoed unasked (deny)."""
        self.preapproved: dict[str, str] = {}
        self.amended: dict[str, tuple[str, dict[str, Any], str]] = {}
        """Agent -> the human-initiated approval that authorizes its next protected write."""
        self.client = client
        human_rng = self.rng(1)
        for user_id, human in self.humans.items():
            seat = HumanSeat(user_id, _Gateway(self, user_id), human_rng)
            human.policy = make_user(self.backends.user, seat)
        people = {
            user_id: human.policy.interface
            for user_id, human in self.humans.items()
            if isinstance(human.policy, PlayedByPerson)
        }
        self.trace.header.people = people or None
        shared: list[str] = []
        self.agents: dict[str, _Agent] = {
            agent_id: _Agent(
                self._agent_view(agent_id, enabled),
                shared if scenario.memory.type == "shared" else [],
            )
            for agent_id in self.graph.agents()
        }
        agent_rng = self.rng(0)
        seats = [
            AgentSeat(state.view, _Gateway(self, agent_id), agent_rng)
            for agent_id, state in self.agents.items()
        ]
        policies = make_agents(self.backends.agent, seats, self._answer_key)
        for agent_id, state in self.agents.items():
            state.policy = policies[agent_id]

    # -- setup helpers ---------------------------------------------------------------

    def _header(self) -> TraceHeader:
        participants = {
            pid: self.graph.participant(pid).kind for pid in self.scenario.participant_ids
        }
        return TraceHeader(
            scenario_id=self.scenario.task_id,
            scenario_hash=self.scenario.content_hash(),
            domain=self.scenario.domain,
            pattern=self.scenario.adaptation_pattern,
            setting=self.setting.model_dump(mode="json"),
            backends=self.backends.models(),
            endpoints=self.backends.endpoint_identities() or None,
            seed=self.seed,
            package_version=hasbench.__version__,
            prompt_hashes=prompt_hashes(),
            library_versions=library_versions(),
            participants=participants,
            counterparties=sorted(self.scenario.counterparties) or None,
            environment=self.environment.describe(),
        )

    def _driver(self) -> str | None:
        """The human who sets the lead's subtasks (A5), or None when the lead reaches nobody.

        It is the first human the lead agent reaches over control or feedback.
        """
        enabled = self.setting.enabled_channels() & {"control", "feedback"}
        for human in self.graph.humans():
            if enabled & self.graph.channels_between(self.lead, human):
                return human
        return None

    def _agent_view(self, agent_id: str, enabled: frozenset[str]) -> AgentView:
        """What an agent may know: its profile, the task, its tools and its contacts."""
        graph, policy = self.graph, self.setting.policy
        reachable: set[str] = set()
        for human in graph.humans():
            reachable |= graph.channels_between(agent_id, human)
        channels = frozenset(enabled & reachable)
        tools = [
            spec for spec in self.environment.tools("agent") if graph.may_call(agent_id, spec.name)
        ]
        people = self._people(agent_id, enabled)
        # request_control is typed for the agent's own writes and what people can carry out
        actions = {spec.name: spec for spec in tools if spec.kind == "write"}
        for person in people:
            actions.update({n: self.tool_specs[n] for n in person.tools if n in self.tool_specs})
        tools += [
            control_tool(list(actions.values())) if ch == "control" else CHANNEL_TOOLS[ch]
            for ch in sorted(channels)
        ]
        domain_tools = [spec.name for spec in self.environment.tools("agent")]
        peers = [
            self._contact(
                a,
                tools=tuple(t for t in domain_tools if graph.may_call(a, t)),
                reaches=tuple(self._people(a, enabled)),
            )
            for a in graph.neighbors(agent_id)
            if a in graph.agents()
        ]
        return AgentView(
            agent_id=agent_id,
            domain=self.scenario.domain,
            profile=self.scenario.agent(agent_id).profile,
            task=self.scenario.task,
            policy=self.environment.policy,
            tools=tuple(tools),
            channels=channels,
            peers=tuple(peers),
            people=tuple(people),
            coordination_mode=graph.mode,
            team_size=len(graph.agents()),
            collaboration=policy.collaboration,
            cfc_protocol=policy.cfc_protocol,
        )

    def _people(self, agent_id: str, enabled: frozenset[str]) -> list[Contact]:
        """The humans an agent is shown, with the enabled channels over which it reaches them."""
        graph = self.graph
        people = []
        for human in graph.humans():
            shared = sorted(graph.channels_between(agent_id, human) & enabled)
            if self.setting.policy.show_users and shared:
                tools_for = graph.participant(human).tools if "control" in shared else []
                people.append(self._contact(human, tuple(shared), tuple(tools_for)))
        return people

    def _contact(
        self,
        pid: str,
        channels: tuple[str, ...] = (),
        tools: tuple[str, ...] = (),
        reaches: tuple[Contact, ...] = (),
    ) -> Contact:
        p = self.graph.participant(pid)
        other_side = pid in self.scenario.counterparties
        return Contact(
            pid, p.kind, p.role, tuple(p.responsibilities), channels, tools, reaches, other_side
        )

    def agent_view(self, agent_id: str) -> AgentView:
        """What an agent of this episode may know (the view its backend was given)."""
        return self.agents[agent_id].view

    def human_view(self, user_id: str) -> HumanView:
        """What a human of this episode knows now (the view its next request will carry)."""
        return self.humans[user_id].view()

    def _answer_key(self) -> AnswerKey:
        """The whole task, for backends registered as reading the answer key (the oracle)."""
        return AnswerKey(self.scenario, self.setting, self.graph, self.tool_specs)

    def rng(self, stream: int) -> np.random.Generator:
        """A generator for one stream of randomness (0 agents, 1 humans) of this episode.

        Seeded by the seed, the stream and the task, so tasks run with the same seed still
        draw independently.
        """
        task_entropy = int(self.scenario.content_hash(), 16)
        return np.random.default_rng([self.seed, stream, task_entropy])

    def human_steps(self) -> int:
        """Events by humans that count as human steps (trace convention)."""
        kinds = {"message", "tool_call", "channel_request", "channel_response"}
        return sum(1 for e in self.trace.events if e.actor in self.humans and e.type in kinds)

    # -- recording -------------------------------------------------------------------

    def _record(
        self,
        *,
        type: str,
        actor: str,
        target: str | None = None,
        channel: str | None = None,
        initiator: str | None = None,
        payload: Payload,
        usage: Usage | None = None,
    ) -> None:
        self.trace.append(
            step=self.step_no,
            actor=actor,
            type=type,
            target=target,
            channel=channel,
            initiator=initiator,
            payload=payload,
            usage=usage,
        )

    def _record_error(self, actor: str, error_type: str, message: str) -> None:
        """Record a human's unusable output (not counted against the agents' error limit)."""
        self._record(
            type="error", actor=actor, payload=ErrorPayload(error_type=error_type, message=message)
        )

    async def _complete(
        self,
        actor: str,
        role: str,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Any:
        """One model call on behalf of a participant, recorded as a ``model_call`` event.

        A call that fails for good is an infrastructure failure, not the participant's
        doing: it is recorded as a ``model_error`` event and ends the episode (termination
        ``model_error``), and the error is raised on to unwind the participant.

        Raises:
            ModelError: the call failed for good.
        """
        if self.client is None:
            self.client = LLMClient(cache=ResponseCache.default())
        try:
            response = await self.client.complete(
                model, messages, tools, temperature=0.0, response_format=response_format,
                seed=self.seed, endpoint=self.backends.endpoint(role),
            )  # fmt: skip
        except ModelError as exc:
            if not self.ended:
                payload = ModelErrorPayload(
                    model=model, role=role, kind=exc.kind, message=exc.message
                )
                self._record(type="model_error", actor=actor, payload=payload)
                self._terminate("model_error", f"{role} model {model}: {exc}")
            raise
        self._record(
            type="model_call",
            actor=actor,
            payload=ModelCallPayload(
                model=model,
                role=role,
                cached=response.cached,
                cost=response.cost,
                attempts=response.attempts,
            ),
            usage=response.usage,
        )
        return response

    # -- the loop --------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        """True once the episode has a termination."""
        return self.trace.termination is not None

    async def run(self) -> Trace:
        """Step until the episode ends; return the trace."""
        while await self.step():
            pass
        return self.trace

    async def step(self) -> bool:
        """Let the active agent act once; False once the episode has ended."""
        if self.ended:
            return False
        if self.step_no >= self.max_iterations:
            self._terminate("max_iterations", f"{self.max_iterations} steps used")
            return False
        self.step_no += 1
        try:
            self._revise_goals()
            await self._fire("at_turn", self.step_no)
            await self._initiatives()
            if self.subtask_due and not self.ended:
                await self._set_subtask()
            if not self.ended:
                agent_id = self.active
                state = self.agents[agent_id]
                action = await state.policy.act(self._observe(agent_id))
                state.inbox = []
                state.last = await self._perform(agent_id, action)
        except Exception as exc:  # noqa: BLE001 - any crash is recorded, not raised
            if not self.ended:
                self._terminate("episode_error", f"{type(exc).__name__}: {exc}")
        return not self.ended

    def _observe(self, agent_id: str) -> AgentObservation:
        state = self.agents[agent_id]
        return AgentObservation(
            view=state.view,
            step=self.step_no,
            delegator=self.delegator.get(agent_id),
            inbox=tuple(state.inbox),
            memory=tuple(state.memory),
            last_result=state.last,
        )

    def _terminate(self, reason: TerminationReason, detail: str | None = None) -> None:
        for controller in self.controllers.values():
            for request in controller.open_requests():
                controller.terminate(request, f"episode ended: {reason}")
        self.trace.termination = Termination(
            reason=reason,
            step=self.step_no,
            detail=detail,
            final_state_hash=self.environment.state_hash(),
        )

    # -- actions ---------------------------------------------------------------------

    async def _perform(self, agent_id: str, action: Action) -> ActionResult:
        state = self.agents[agent_id]
        if isinstance(action, Malformed):
            return self._error(agent_id, action, action.error_type, action.message)
        if isinstance(action, SendMessage):
            state.rounds = 0
            return await self._message(agent_id, action)
        if isinstance(action, Finish):
            state.rounds = 0
            return self._finish(agent_id, action)
        if action.name in TOOL_CHANNEL:  # a request to a person is talking, not a solo call
            state.rounds = 0
            return await self._channel(agent_id, action)
        state.rounds += 1
        if state.rounds > self.max_tool_rounds:
            self._terminate(
                "max_tool_rounds", f"{agent_id} made more than {self.max_tool_rounds} calls"
            )
            return ActionResult(action, "Stopped: too many tool calls.", "max_tool_rounds")
        return await self._domain(agent_id, action)

    def _error(self, agent_id: str, action: Action, error_type: str, message: str) -> ActionResult:
        self._record(
            type="error",
            actor=agent_id,
            payload=ErrorPayload(error_type=error_type, message=message),
        )
        self.errors += 1
        if self.errors >= self.setting.error_limit:
            self._terminate("too_many_errors", f"{self.errors} errors; last: {message}")
        return ActionResult(action, f"Error: {message}", error_type)

    async def _message(self, agent_id: str, action: SendMessage) -> ActionResult:
        target = action.target
        if target not in self.humans and target not in self.agents:
            return self._error(agent_id, action, "routing_error", f"no participant {target!r}")
        if not self.graph.may_message(agent_id, target):
            return self._error(
                agent_id, action, "routing_error", f"{agent_id} cannot message {target}"
            )
        self._record(
            type="message", actor=agent_id, target=target, payload=MessagePayload(text=action.text)
        )
        if agent_id == self.lead and target == self.driver:
            self.subtask_due = True  # reported back: the driving human sets the next subtask
        await self._fire("on_keyword", action.text)
        if target in self.agents:
            self.agents[target].inbox.append(Incoming(agent_id, "message", action.text))
            if self.graph.mode != "graph" and self.graph.graph.has_edge(agent_id, target):
                labels = set(self.graph.graph[agent_id][target])
                if labels & DELEGATING_LABELS:
                    self.delegator[target] = agent_id
            if self.delegator.get(agent_id) == target:
                del self.delegator[agent_id]
            self.active = target
        return ActionResult(action, f"Message delivered to {target}.")

    def _finish(self, agent_id: str, action: Finish) -> ActionResult:
        boss = self.delegator.pop(agent_id, None)
        self._record(
            type="finish",
            actor=agent_id,
            target=boss,
            payload=FinishPayload(deliverable=action.deliverable),
        )
        if boss is not None:
            self.agents[boss].inbox.append(Incoming(agent_id, "report", action.deliverable))
            self.active = boss
        elif self.graph.mode == "graph" and agent_id != self.lead:
            self.finished.add(agent_id)
            order = [a for a in self.graph.agents() if a not in self.finished]
            self.active = self.lead if self.lead in order else order[0]
        elif self.driver is not None:
            self.subtask_due = self.lead_done = True  # the driving human decides what is next
        else:
            self._terminate("agent_done")
        return ActionResult(action, "Finished.")

    async def _domain(self, agent_id: str, call: CallTool) -> ActionResult:
        spec = self.tool_specs.get(call.name)
        if spec is None:
            return self._error(agent_id, call, "unknown_tool", f"no tool named {call.name!r}")
        if spec.side != "agent" or not self.graph.may_call(agent_id, call.name):
            return self._error(
                agent_id, call, "tool_not_permitted", f"{agent_id} does not hold {call.name}"
            )
        refusal = authorization = None
        arguments = call.arguments
        amended = self.amended.get(agent_id)
        if amended is not None and amended[0] == call.name:  # a human's unasked modify
            del self.amended[agent_id]
            arguments, authorization = {**arguments, **amended[1]}, amended[2]
        if spec.kind == "write":
            vetoed = agent_id in self.vetoed
            self.vetoed.discard(agent_id)
            if authorization is None and self.scenario.protects(spec.name, spec.risk, agent_id):
                authorization = self.preapproved.pop(agent_id, None)
            if self.setting.guard and vetoed:
                refusal = ("vetoed", "a human vetoed this action")
            elif (
                self.setting.guard
                and authorization is None
                and "control" in self.agents[agent_id].view.channels
                and self.setting.needs_authorization(spec.risk, call.name in self.protected)
            ):
                refusal = (
                    "needs_authorization",
                    f"{call.name} needs a human's approval: use request_control first",
                )
        result = await self._run_tool(agent_id, spec, arguments, authorization, refusal)
        return ActionResult(
            call,
            result.content(),
            result.error_type,
            tool_output=None if result.error else result.output,
        )

    async def _run_tool(
        self,
        actor: str,
        spec: ToolSpec,
        arguments: dict[str, Any],
        authorization: str | None,
        refusal: tuple[str, str] | None = None,
    ) -> ToolResult:
        """Execute (or refuse) a tool call by ``actor``, recording call and result."""
        self._calls += 1
        call_id = f"call-{self._calls:04d}"
        unauthorized = authorization is None and self.scenario.protects(spec.name, spec.risk, actor)
        self._record(
            type="tool_call",
            actor=actor,
            payload=ToolCallPayload(
                call_id=call_id,
                name=spec.name,
                arguments=arguments,
                side=spec.side,
                risk=spec.risk,
                authorization=authorization,
                unauthorized=unauthorized or None,
            ),
        )
        if refusal is not None:
            result = ToolResult(spec.name, error=True, error_type=refusal[0], message=refusal[1])
        else:
            result = self.environment.call(spec.name, arguments, spec.side)
        self._record(
            type="tool_result",
            actor=actor,
            payload=ToolResultPayload(
                call_id=call_id,
                name=spec.name,
                output=result.content(),
                error=result.error,
                error_type=result.error_type,
                diff=result.diff,
            ),
        )
        if not result.error:
            await self._fire("after_tool", spec.name)
        return result

    # -- channels --------------------------------------------------------------------

    async def _channel(self, agent_id: str, call: CallTool) -> ActionResult:
        channel = TOOL_CHANNEL[call.name]
        args = call.arguments
        try:
            opened = self._open(agent_id, channel, args)
        except ChannelRefused as exc:
            return self._error(agent_id, call, exc.error_type, exc.message)
        except ValueError as exc:
            return self._error(agent_id, call, "invalid_arguments", f"{call.name}: {exc}")
        request, spec = opened
        controller = self.controllers[channel]
        if request.status == "expired":
            self._expired += 1
            if self._expired > 1:
                self._terminate("budget_exhausted", "channel requests after the budget ran out")
            return ActionResult(call, f"Not sent: {request.reason}.", "expired", request)
        human = request.target
        state = self.humans[human]
        if channel == "control" and spec is not None and request.form == "execute":
            if not self.graph.may_call(human, spec.name):
                controller.terminate(request, f"{human} cannot perform {spec.name}")
                return ActionResult(
                    call, f"{human} cannot perform {spec.name}.", "terminated", request
                )
        controller.dispatch(request)
        state.asks += 1
        view, policy = state.view(), state.policy
        if channel == "clarification":
            response = await policy.clarify(view, request)
        elif channel == "feedback":
            response = await policy.review(view, request)
        else:
            facts = ActionFacts(risk=spec.risk, kind=spec.kind, side=spec.side, known=True)
            response = await policy.decide(view, request, facts)
        if self.ended:
            return ActionResult(call, "The episode ended.", "terminated", request)
        if response is None:
            controller.terminate(request, "no usable answer from the user simulator")
            return ActionResult(call, f"{human} gave no usable answer.", "terminated", request)
        controller.answer(request, human, response)
        if channel != "control":
            state.untold_revision = None
        memory = self.agents[agent_id].memory
        text = f"{human} ({request.request_id}): {_response_text(response)}"
        output = None
        if isinstance(response, ControlDecision):
            output, text = await self._resolve_control(
                agent_id, human, request, spec, response, text
            )
        memory.append(text)
        return ActionResult(call, text, None, request, response, output)

    def _open(
        self, agent_id: str, channel: str, args: dict[str, Any]
    ) -> tuple[ChannelRequest, ToolSpec | None]:
        """Read a channel tool's call and open the request."""
        parsed = parse_channel_call(CHANNEL_TOOLS[channel].name, args, self.tool_specs)
        spec = parsed.tool
        if parsed.form == "approval" and (
            spec.side != "agent" or not self.graph.may_call(agent_id, spec.name)
        ):
            raise ChannelRefused("tool_not_permitted", f"{agent_id} does not hold {spec.name}")
        request = self.controllers[channel].open(
            sender=agent_id,
            content=parsed.content,
            form=parsed.form,
            target=parsed.target,
            topics=parsed.topics,
            action=parsed.action,
        )
        return request, spec

    async def _resolve_control(
        self,
        agent_id: str,
        human: str,
        request: ChannelRequest,
        spec: ToolSpec,
        decision: ControlDecision,
        text: str,
    ) -> tuple[Any, str]:
        """Carry out a control decision: run the action (by whom it says), or not."""
        if decision.decision == "stop":
            self._terminate("user_stop", f"{human} stopped the episode ({request.request_id})")
            return None, text
        by_human = request.form == EXECUTE or decision.decision in HUMAN_RUNS
        allowed = HUMAN_RUNS | (AGENT_RUNS if request.form == APPROVAL else set())
        if decision.decision == "take_over" and decision.tool is not None:
            spec = self.tool_specs.get(decision.tool, spec)
        if decision.decision not in allowed or (
            by_human and not self.graph.may_call(human, spec.name)
        ):
            return None, text + " (not carried out)"
        actor = human if by_human else agent_id
        arguments = request.action.arguments if request.action else {}
        if decision.decision == "modify" and decision.arguments is not None:
            arguments = {**arguments, **decision.arguments}
        elif decision.arguments is not None:
            arguments = decision.arguments
        result = await self._run_tool(actor, spec, arguments, request.request_id)
        return (None if result.error else result.output), f"{text}\nResult: {result.content()}"

    # -- humans ----------------------------------------------------------------------

    def _revise_goals(self) -> None:
        for user_id, human in self.humans.items():
            while human.revisions and human.revisions[0].at_turn <= self.step_no:
                revision = human.revisions.pop(0)
                human.goal = revision.goal
                human.known_info.update(revision.known_info)
                human.untold_revision = revision
                self._record(
                    type="goal_revision",
                    actor=user_id,
                    payload=GoalRevisionPayload(goal=revision.goal),
                )
                self._tell_revision(user_id, human, revision)

    def _tell_revision(self, user_id: str, human: _Human, revision: GoalRevision) -> None:
        """A proactive simulated human (A4, A5) tells a change of plan when it happens.

        Without human initiative (A1-A3) the change waits until an agent next asks; a
        person playing a human says it themselves.
        """
        if (
            not self.setting.spontaneous_enabled()
            or isinstance(human.policy, PlayedByPerson)
            or "clarification" not in self.setting.enabled_channels()
            or not any(
                "clarification" in self.graph.channels_between(user_id, a)
                for a in self.graph.agents()
            )
        ):
            return
        facts = " ".join(
            f"My {key.replace('_', ' ')} is {value}." for key, value in revision.known_info.items()
        )
        self._deliver(
            user_id,
            "clarification",
            "inform",
            f"My plans have changed: {revision.goal} {facts}".strip(),
        )
        human.untold_revision = None

    async def _fire(self, kind: str, value: Any) -> None:
        """Run the spontaneous interventions whose condition ``kind`` matches ``value``."""
        if not self.triggers or self.ended:
            return
        due = []
        for entry in self.triggers:
            condition = entry[1].condition
            if condition.type != kind:
                continue
            if (
                (kind == "at_turn" and condition.turn_number == value)
                or (kind == "after_tool" and condition.tool_name == value)
                or (
                    kind == "on_keyword"
                    and condition.keyword
                    and condition.keyword.lower() in str(value).lower()
                )
            ):
                due.append(entry)
        for entry in due:
            self.triggers.remove(entry)
            await self._intervene(*entry)

    async def _intervene(self, user_id: str, rule: TriggerRule, mode: str) -> None:
        channel = rule.action_type
        human = self.humans[user_id]
        content = rule.predefined_message if mode != "llm" else None
        if content is None:
            agent_id = self._addressee(user_id, channel)
            content = await human.policy.intervene(human.view(self._digest()), rule, agent_id)
        if not content:
            return
        form = {"clarification": "inform", "feedback": "comment"}.get(
            channel, rule.decision or "deny"
        )
        request_id = self._deliver(user_id, channel, form, content)
        if request_id is not None and rule.tool is not None and not self.ended:
            await self._decide_unasked(user_id, form, rule.tool, rule.arguments or {}, request_id)

    async def _decide_unasked(
        self, user_id: str, decision: str, tool: str, arguments: dict[str, Any], request_id: str
    ) -> None:
        """Carry out a human's unasked modify, override or take-over of an action.

        ``modify`` changes the arguments of the agent's next call of ``tool`` (and authorizes
        it); ``override`` has the agent run ``tool`` with the human's arguments now;
        ``take_over`` has the human run it with a tool of their own. Either is authorized by
        the human's request; one the actor may not call is not carried out.
        """
        agent_id = self._addressee(user_id, "control")
        spec = self.tool_specs.get(tool)
        if decision == "modify":
            self.amended[agent_id] = (tool, arguments, request_id)
            return
        actor = user_id if decision == "take_over" else agent_id
        memory = self.agents[agent_id].memory
        if spec is None or not self.graph.may_call(actor, tool):
            memory.append(f"{user_id} ({request_id}): {decision} of {tool} (not carried out)")
            return
        result = await self._run_tool(actor, spec, arguments, request_id)
        memory.append(f"{user_id} ({request_id}): {decision} of {tool}. Result: {result.content()}")

    async def _initiatives(self) -> None:
        """Deliver what people playing humans contributed unprompted since the last turn."""
        for user_id, human in self.humans.items():
            if not isinstance(human.policy, PlayedByPerson) or self.ended:
                continue
            for item in await human.policy.initiatives(human.view(self._digest())):
                if not self.ended:  # after a stop nothing more is delivered
                    self._deliver(user_id, item.channel, item.form, item.content)

    def _addressee(self, user_id: str, channel: str) -> str:
        """The agent a human's unprompted input goes to: the active one if it can be reached."""
        candidates = [
            a for a in self.graph.agents() if channel in self.graph.channels_between(user_id, a)
        ]
        return self.active if self.active in candidates else (candidates or [self.lead])[0]

    def _deliver(self, user_id: str, channel: str, form: str, content: str) -> str | None:
        """Open a human-initiated request and hand it to the agent (a stop ends the episode).

        Returns the request's id, or None when the channel refused or expired it.
        """
        agent_id = self._addressee(user_id, channel)
        human = self.humans[user_id]
        controller = self.controllers[channel]
        try:
            request = controller.open(
                sender=user_id, content=content, form=form, target=agent_id, initiator="human"
            )
        except ChannelRefused:
            return None
        if request.status == "expired":
            return None
        controller.dispatch(request)
        state = self.agents[agent_id]
        facts = {k: v for k, v in human.known_info.items() if str(v).lower() in content.lower()}
        state.inbox.append(Incoming(user_id, channel, content, form, request.request_id, facts))
        state.memory.append(f"{user_id} ({request.request_id}, unprompted {channel}): {content}")
        if channel == "control" and form == "stop":
            self._terminate("user_stop", f"{user_id} stopped the episode ({request.request_id})")
        elif channel == "control" and form == "deny":
            self.vetoed.add(agent_id)
        elif channel == "control" and form == "approve":
            self.preapproved[agent_id] = request.request_id
        return request.request_id

    async def _set_subtask(self) -> None:
        """The driving human sets the lead agent's next subtask (A5), or ends the episode.

        With nothing more to ask after the lead finished, the episode ends as done.
        """
        self.subtask_due = False
        human = self.humans[self.driver]
        text = await human.policy.next_subtask(human.view(self._digest()), self.subtasks)
        if not text:
            if self.lead_done:
                self._terminate("agent_done")
            return
        self.subtasks += 1
        self.lead_done = False
        enabled = self.setting.enabled_channels()
        channel = "control" if "control" in enabled else "feedback"
        controller = self.controllers[channel]
        try:
            request = controller.open(
                sender=self.driver, content=text, form=SUBTASK, target=self.lead, initiator="human"
            )
        except ChannelRefused:
            return
        if request.status == "expired":
            return
        controller.dispatch(request)
        facts = {k: v for k, v in human.known_info.items() if str(v).lower() in text.lower()}
        state = self.agents[self.lead]
        state.inbox.append(Incoming(self.driver, channel, text, SUBTASK, request.request_id, facts))
        state.memory.append(f"{self.driver} ({request.request_id}, next subtask): {text}")

    def _digest(self, limit: int = 12) -> str:
        """A short text of the latest messages and tool calls, for spontaneous input."""
        lines = []
        for event in self.trace.events[-limit * 3 :]:
            if event.type == "message":
                lines.append(f"{event.actor} to {event.target}: {event.payload.text}")
            elif event.type == "tool_call":
                lines.append(f"{event.actor} called {event.payload.name}")
            elif event.type == "finish":
                lines.append(f"{event.actor} finished: {event.payload.deliverable}")
        return "\n".join(lines[-limit:]) or "(nothing yet)"


@cache
def library_versions() -> dict[str, str]:
    """Versions of Python and the libraries that shape a trace (for the header)."""
    versions = {"python": platform.python_version()}
    for lib in ("numpy", "pydantic", "networkx", "litellm"):
        try:
            versions[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            versions[lib] = "missing"
    return versions


def _response_text(response: Any) -> str:
    if isinstance(response, ClarificationResponse | FeedbackResponse):
        return response.content
    return f"{response.decision}. {response.content}".strip()


def run_episode(
    scenario: Scenario,
    setting: Setting | None = None,
    backends: Backends | None = None,
    seed: int = 0,
    client: Any | None = None,
) -> Trace:
    """Run one episode to the end and return its trace (also inside Jupyter's loop)."""
    return run_sync(Episode(scenario, setting, backends, seed, client).run())
