"""What every part of a running episode shares: its setup, its record, its participants.

:class:`EpisodeContext` also performs the two acts several parts need: running a tool
(recorded as a call and its result, then announced to the spontaneous triggers through
:attr:`EpisodeContext.after_tool`) and handing a human-initiated request to an agent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hasbench.channels import ChannelRefused, ChannelRequest
from hasbench.envs.base import ToolResult
from hasbench.participants.base import HumanView, Incoming
from hasbench.simulator.record import Record
from hasbench.simulator.setup import EpisodeSetup
from hasbench.simulator.views import AgentState, HumanState, digest
from hasbench.tools import ToolSpec
from hasbench.trace import ToolCallPayload, ToolResultPayload

AfterTool = Callable[[str], Awaitable[None]]
"""Called with a tool's name after it ran without error."""


class EpisodeContext:
    """The shared state of a running episode.

    Attributes:
        setup: the fixed facts (task, setting, backends, seed, environment, graph).
        record: the trace, the turn counter and the channel controllers.
        humans: each human's state, by id.
        agents: each agent's state, by id.
        after_tool: what runs after a tool ran without error (the spontaneous triggers).
    """

    def __init__(
        self,
        setup: EpisodeSetup,
        record: Record,
        humans: dict[str, HumanState],
        agents: dict[str, AgentState],
    ) -> None:
        self.setup = setup
        self.record = record
        self.humans = humans
        self.agents = agents
        self.after_tool: AfterTool | None = None
        self._calls = 0

    def informed_view(self, user_id: str) -> HumanView:
        """A human's view with a digest of the latest events (for input of their own)."""
        return self.humans[user_id].view(digest(self.record.trace))

    async def run_tool(
        self,
        actor: str,
        spec: ToolSpec,
        arguments: dict[str, Any],
        authorization: str | None,
        refusal: tuple[str, str] | None = None,
    ) -> ToolResult:
        """Execute (or refuse) a tool call by ``actor``, recording call and result.

        Args:
            actor: who runs it.
            spec: the tool.
            arguments: its arguments.
            authorization: the id of the human's request that authorizes it, if any.
            refusal: (error type, message) to refuse the call instead of running it.
        """
        self._calls += 1
        call_id = f"call-{self._calls:04d}"
        unauthorized = authorization is None and self.setup.scenario.protects(
            spec.name, spec.risk, actor
        )
        self.record.record(
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
            result = self.setup.environment.call(spec.name, arguments, spec.side)
        self.record.record(
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
        if not result.error and self.after_tool is not None:
            await self.after_tool(spec.name)
        return result

    def hand_over(
        self, user_id: str, channel: str, form: str, content: str, agent_id: str, note: str
    ) -> ChannelRequest | None:
        """Open a human-initiated request and deliver it to an agent's inbox and memory.

        Args:
            user_id: the human it comes from.
            channel: the channel it travels over.
            form: what it is (``inform``, ``comment``, a decision, ``subtask``).
            content: its text.
            agent_id: the agent it goes to.
            note: how the agent's memory labels it (e.g. ``unprompted feedback``).

        Returns:
            The request, or None when the channel refused or expired it.
        """
        controller = self.record.controllers[channel]
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
        facts = self.humans[user_id].facts_in(content)
        state.inbox.append(Incoming(user_id, channel, content, form, request.request_id, facts))
        state.memory.append(f"{user_id} ({request.request_id}, {note}): {content}")
        return request
