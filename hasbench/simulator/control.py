"""Control: who runs an action, with whose authority.

Three kinds of decision meet here. The guard authorizes an agent's write: a setting's
level asks for a human's approval of risky or protected writes, a human's unasked deny
vetoes the next one, an unasked approve authorizes it, an unasked modify changes its
arguments. A human's decision on an agent's control request is carried out: the action
runs (by the agent, or by the human for ``execute`` and ``take_over``), or not, or the
episode stops. And a human's unasked override or take-over runs an action at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hasbench.channels import ChannelRequest, ControlDecision
from hasbench.simulator.context import EpisodeContext
from hasbench.tools import ToolSpec
from hasbench.vocab import AGENT_RUNS, APPROVAL, EXECUTE, HUMAN_RUNS


@dataclass(frozen=True)
class Amendment:
    """A human's unasked modify: new arguments for the agent's next call of a tool."""

    tool: str
    arguments: dict[str, Any]
    request_id: str


@dataclass(frozen=True)
class Clearance:
    """How an agent's domain tool call goes ahead.

    Attributes:
        arguments: the arguments it runs with (a human's modify merged in).
        authorization: the id of the human's request that authorizes it, if any.
        refusal: (error type, message) when the guard refuses it.
    """

    arguments: dict[str, Any]
    authorization: str | None = None
    refusal: tuple[str, str] | None = None


class Control:
    """Authorizations and decisions on actions.

    Attributes:
        protected: names of the task's protected gold actions.
        vetoed: agents whose next write a human vetoed unasked (deny).
        preapproved: agent -> the unasked approval that authorizes its next protected write.
        amended: agent -> a human's unasked modify of its next call of a tool.
    """

    def __init__(self, context: EpisodeContext) -> None:
        self._context = context
        actions = context.setup.scenario.evaluation_criteria.actions
        self.protected = frozenset(g.name for g in actions if g.protected)
        self.vetoed: set[str] = set()
        self.preapproved: dict[str, str] = {}
        self.amended: dict[str, Amendment] = {}

    def clear(self, agent_id: str, spec: ToolSpec, arguments: dict[str, Any]) -> Clearance:
        """Authorize (or refuse) an agent's call of a domain tool it holds.

        An unasked modify of this tool changes the arguments and authorizes the call. A
        write uses up an unasked veto or, when protected, an unasked approval; under the
        guard it is refused when vetoed, or when the level asks for approval over control
        and no human gave it.
        """
        setting, scenario = self._context.setup.setting, self._context.setup.scenario
        authorization = refusal = None
        amended = self.amended.get(agent_id)
        if amended is not None and amended.tool == spec.name:
            del self.amended[agent_id]
            arguments, authorization = {**arguments, **amended.arguments}, amended.request_id
        if spec.kind != "write":
            return Clearance(arguments, authorization)
        vetoed = agent_id in self.vetoed
        self.vetoed.discard(agent_id)
        if authorization is None and scenario.protects(spec.name, spec.risk, agent_id):
            authorization = self.preapproved.pop(agent_id, None)
        if setting.guard and vetoed:
            refusal = ("vetoed", "a human vetoed this action")
        elif (
            setting.guard
            and authorization is None
            and "control" in self._context.agents[agent_id].view.channels
            and setting.needs_authorization(spec.risk, spec.name in self.protected)
        ):
            refusal = (
                "needs_authorization",
                f"{spec.name} needs a human's approval: use request_control first",
            )
        return Clearance(arguments, authorization, refusal)

    async def resolve(
        self,
        agent_id: str,
        human: str,
        request: ChannelRequest,
        spec: ToolSpec,
        decision: ControlDecision,
        text: str,
    ) -> tuple[Any, str]:
        """Carry out a human's decision on an agent's control request.

        The action runs by whom the decision says, or not; ``stop`` ends the episode.

        Returns:
            The action's output (None if it did not run or failed) and ``text`` with the
            result appended.
        """
        if decision.decision == "stop":
            self._context.record.terminate(
                "user_stop", f"{human} stopped the episode ({request.request_id})"
            )
            return None, text
        by_human = request.form == EXECUTE or decision.decision in HUMAN_RUNS
        allowed = HUMAN_RUNS | (AGENT_RUNS if request.form == APPROVAL else set())
        if decision.decision == "take_over" and decision.tool is not None:
            spec = self._context.setup.tool_specs.get(decision.tool, spec)
        if decision.decision not in allowed or (
            by_human and not self._context.setup.graph.may_call(human, spec.name)
        ):
            return None, text + " (not carried out)"
        actor = human if by_human else agent_id
        arguments = request.action.arguments if request.action else {}
        if decision.decision == "modify" and decision.arguments is not None:
            arguments = {**arguments, **decision.arguments}
        elif decision.arguments is not None:
            arguments = decision.arguments
        result = await self._context.run_tool(actor, spec, arguments, request.request_id)
        return (None if result.error else result.output), f"{text}\nResult: {result.content()}"

    def take_unasked(self, user_id: str, agent_id: str, form: str, request_id: str) -> None:
        """Note a human's unasked control input delivered to an agent.

        ``stop`` ends the episode, ``deny`` vetoes the agent's next write and ``approve``
        authorizes its next protected one.
        """
        if form == "stop":
            self._context.record.terminate(
                "user_stop", f"{user_id} stopped the episode ({request_id})"
            )
        elif form == "deny":
            self.vetoed.add(agent_id)
        elif form == "approve":
            self.preapproved[agent_id] = request_id

    async def decide_unasked(
        self,
        user_id: str,
        agent_id: str,
        decision: str,
        tool: str,
        arguments: dict[str, Any],
        request_id: str,
    ) -> None:
        """Carry out a human's unasked modify, override or take-over of an action.

        ``modify`` changes the arguments of the agent's next call of ``tool`` (and authorizes
        it); ``override`` has the agent run ``tool`` with the human's arguments now;
        ``take_over`` has the human run it with a tool of their own. Either is authorized by
        the human's request; one the actor may not call is not carried out.
        """
        spec = self._context.setup.tool_specs.get(tool)
        if decision == "modify":
            self.amended[agent_id] = Amendment(tool, arguments, request_id)
            return
        actor = user_id if decision == "take_over" else agent_id
        memory = self._context.agents[agent_id].memory
        if spec is None or not self._context.setup.graph.may_call(actor, tool):
            memory.append(f"{user_id} ({request_id}): {decision} of {tool} (not carried out)")
            return
        result = await self._context.run_tool(actor, spec, arguments, request_id)
        memory.append(f"{user_id} ({request_id}): {decision} of {tool}. Result: {result.content()}")
