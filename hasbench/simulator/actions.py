"""What an agent's action does: a domain tool call, a request to a person, a message, a finish.

A domain tool call runs once the guard (:mod:`hasbench.simulator.control`) clears it; a
run of more than ``max_tool_rounds`` calls in a row ends the episode. A channel tool call
opens a request routed over the HAS Graph to a human; the agent waits for the answer,
which is written to the trace and into its memory (and a control decision is carried
out). A message goes to a neighbour; a finish delivers the result. Unusable output is an
error event, and too many of them end the episode.
"""

from __future__ import annotations

from hasbench.channels import (
    TOOL_CHANNEL,
    ChannelRefused,
    ChannelRequest,
    ControlDecision,
    answer_text,
    parse_channel_call,
)
from hasbench.participants.base import (
    Action,
    ActionFacts,
    ActionResult,
    CallTool,
    Finish,
    Incoming,
    Malformed,
    PlayedByPerson,
    SendMessage,
)
from hasbench.simulator.context import EpisodeContext
from hasbench.simulator.control import Control
from hasbench.simulator.scheduling import Scheduler
from hasbench.simulator.spontaneous import SpontaneousInput
from hasbench.tools import ToolSpec
from hasbench.trace import FinishPayload, MessagePayload
from hasbench.vocab import APPROVAL, EXECUTE


class Actions:
    """Carries out agents' actions.

    Attributes:
        max_tool_rounds: the most domain tool calls an agent may make in a row.
        errors: the agents' errors so far (the setting's ``error_limit`` ends the episode).
        expired: channel requests sent after the interaction budget ran out.
    """

    def __init__(
        self,
        context: EpisodeContext,
        schedule: Scheduler,
        control: Control,
        spontaneous: SpontaneousInput,
    ) -> None:
        self._context = context
        self._schedule = schedule
        self._control = control
        self._spontaneous = spontaneous
        environment = context.setup.scenario.environment
        self.max_tool_rounds = max(
            context.setup.setting.max_tool_rounds, environment.max_tool_rounds or 0
        )
        self.errors = 0
        self.expired = 0

    async def perform(self, agent_id: str, action: Action) -> ActionResult:
        """Carry out an agent's action; return what it sees of the outcome."""
        state = self._context.agents[agent_id]
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
            self._context.record.terminate(
                "max_tool_rounds", f"{agent_id} made more than {self.max_tool_rounds} calls"
            )
            return ActionResult(action, "Stopped: too many tool calls.", "max_tool_rounds")
        return await self._domain(agent_id, action)

    def _error(self, agent_id: str, action: Action, error_type: str, message: str) -> ActionResult:
        self._context.record.record_error(agent_id, error_type, message)
        self.errors += 1
        if self.errors >= self._context.setup.setting.error_limit:
            self._context.record.terminate(
                "too_many_errors", f"{self.errors} errors; last: {message}"
            )
        return ActionResult(action, f"Error: {message}", error_type)

    def _holds(self, agent_id: str, spec: ToolSpec) -> bool:
        """Whether an agent holds a tool (an agent-side tool the graph lets it call)."""
        return spec.side == "agent" and self._context.setup.graph.may_call(agent_id, spec.name)

    async def _message(self, agent_id: str, action: SendMessage) -> ActionResult:
        context, target = self._context, action.target
        if target not in context.humans and target not in context.agents:
            return self._error(agent_id, action, "routing_error", f"no participant {target!r}")
        if not context.setup.graph.may_message(agent_id, target):
            return self._error(
                agent_id, action, "routing_error", f"{agent_id} cannot message {target}"
            )
        context.record.record(
            type="message", actor=agent_id, target=target, payload=MessagePayload(text=action.text)
        )
        await self._spontaneous.fire("on_keyword", action.text)
        if target in context.agents:
            context.agents[target].inbox.append(Incoming(agent_id, "message", action.text))
        self._schedule.after_message(agent_id, target)
        return ActionResult(action, f"Message delivered to {target}.")

    def _finish(self, agent_id: str, action: Finish) -> ActionResult:
        boss = self._schedule.release(agent_id)
        self._context.record.record(
            type="finish",
            actor=agent_id,
            target=boss,
            payload=FinishPayload(
                deliverable=action.deliverable,
                outcome=None if action.outcome == "done" else action.outcome,
            ),
        )
        if boss is not None:
            self._context.agents[boss].inbox.append(
                Incoming(agent_id, "report", action.deliverable)
            )
        self._schedule.after_finish(agent_id, boss, action.outcome)
        return ActionResult(action, "Finished.")

    async def _domain(self, agent_id: str, call: CallTool) -> ActionResult:
        spec = self._context.setup.tool_specs.get(call.name)
        if spec is None:
            return self._error(agent_id, call, "unknown_tool", f"no tool named {call.name!r}")
        if not self._holds(agent_id, spec):
            return self._error(
                agent_id, call, "tool_not_permitted", f"{agent_id} does not hold {call.name}"
            )
        clearance = self._control.clear(agent_id, spec, call.arguments)
        result = await self._context.run_tool(
            agent_id, spec, clearance.arguments, clearance.authorization, clearance.refusal
        )
        return ActionResult(
            call,
            result.content(),
            result.error_type,
            tool_output=None if result.error else result.output,
        )

    async def _channel(self, agent_id: str, call: CallTool) -> ActionResult:
        """An agent's request to a person: opened, routed, answered (or not)."""
        try:
            request, spec = self._open(agent_id, call)
        except ChannelRefused as exc:
            return self._error(agent_id, call, exc.error_type, exc.message)
        except ValueError as exc:
            return self._error(agent_id, call, "invalid_arguments", f"{call.name}: {exc}")
        if request.status == "expired":
            self.expired += 1
            if self.expired > 1:
                self._context.record.terminate(
                    "budget_exhausted", "channel requests after the budget ran out"
                )
            return ActionResult(call, f"Not sent: {request.reason}.", "expired", request)
        return await self._ask(agent_id, call, request, spec)

    def _open(self, agent_id: str, call: CallTool) -> tuple[ChannelRequest, ToolSpec | None]:
        """Read a channel tool's call and open its request.

        Raises:
            ValueError: the arguments do not fit the tool.
            ChannelRefused: the agent asks approval of a tool it does not hold, or the
                channel refused the request.
        """
        parsed = parse_channel_call(call.name, call.arguments, self._context.setup.tool_specs)
        if parsed.form == APPROVAL and not self._holds(agent_id, parsed.tool):
            raise ChannelRefused(
                "tool_not_permitted", f"{agent_id} does not hold {parsed.tool.name}"
            )
        request = self._context.record.controllers[parsed.channel].open(
            sender=agent_id,
            content=parsed.content,
            form=parsed.form,
            target=parsed.target,
            topics=parsed.topics,
            action=parsed.action,
        )
        return request, parsed.tool

    async def _ask(
        self, agent_id: str, call: CallTool, request: ChannelRequest, spec: ToolSpec | None
    ) -> ActionResult:
        """The person gets the request and answers; the answer goes into the agent's memory."""
        context, channel, human = self._context, request.channel, request.target
        controller = context.record.controllers[channel]
        state = context.humans[human]
        if spec is not None and request.form == EXECUTE:
            if not context.setup.graph.may_call(human, spec.name):
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
        if context.record.ended:
            return ActionResult(call, "The episode ended.", "terminated", request)
        if response is None:
            who = (
                f"the person playing {human}"
                if isinstance(policy, PlayedByPerson)
                else "the user simulator"
            )
            controller.terminate(request, f"no usable answer from {who}")
            return ActionResult(call, f"{human} gave no usable answer.", "terminated", request)
        controller.answer(request, human, response)
        if channel != "control":
            state.untold_revision = None
        text = answer_text(human, request.request_id, response)
        output = None
        if isinstance(response, ControlDecision):
            output, text = await self._control.resolve(
                agent_id, human, request, spec, response, text
            )
        context.agents[agent_id].memory.append(text)
        return ActionResult(call, text, None, request, response, output)
