"""What humans contribute unasked: triggered interventions, people's own input, new goals.

Before every turn a human's goal revisions that are due take effect (a proactive
simulated human tells the change at once, A4-A5), the spontaneous trigger rules of the
turn fire, and what people playing humans contributed since the last turn is delivered.
Trigger rules also fire after a tool ran (``after_tool``) and on a keyword in an agent's
message (``on_keyword``). Each input reaches the agent as a human-initiated request;
control input is also a decision (:mod:`hasbench.simulator.control`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hasbench.scenario import GoalRevision, TriggerRule
from hasbench.simulator.context import EpisodeContext
from hasbench.simulator.control import Control
from hasbench.simulator.scheduling import Scheduler
from hasbench.simulator.views import HumanState
from hasbench.trace import GoalRevisionPayload


@dataclass(frozen=True)
class Trigger:
    """A spontaneous trigger rule of a human, not yet fired."""

    user_id: str
    rule: TriggerRule
    mode: str
    """The human's spontaneous mode: ``llm`` words the message, else it is predefined."""

    def due(self, kind: str, value: Any) -> bool:
        """Whether the rule's condition of type ``kind`` matches ``value``."""
        condition = self.rule.condition
        if condition.type != kind:
            return False
        return (
            (kind == "at_turn" and condition.turn_number == value)
            or (kind == "after_tool" and condition.tool_name == value)
            or (
                kind == "on_keyword"
                and bool(condition.keyword)
                and condition.keyword.lower() in str(value).lower()
            )
        )


class SpontaneousInput:
    """Humans' input on their own initiative, and their changes of goal.

    Attributes:
        triggers: the trigger rules not yet fired (empty without spontaneous input).
    """

    def __init__(self, context: EpisodeContext, schedule: Scheduler, control: Control) -> None:
        self._context = context
        self._schedule = schedule
        self._control = control
        setting = context.setup.setting
        self.triggers: list[Trigger] = []
        if setting.spontaneous_enabled():
            for u in context.setup.scenario.users:
                if u.spontaneous_config is not None:
                    for rule in u.spontaneous_config.trigger_rules:
                        self.triggers.append(Trigger(u.user_id, rule, u.spontaneous_config.mode))

    async def before_turn(self) -> None:
        """Revise goals, fire the turn's triggers, deliver what people contributed."""
        self._revise_goals()
        await self.fire("at_turn", self._context.record.step_no)
        await self._initiatives()

    async def after_tool(self, name: str) -> None:
        """Fire the triggers that wait for a tool to have run."""
        await self.fire("after_tool", name)

    async def fire(self, kind: str, value: Any) -> None:
        """Run the spontaneous interventions whose condition ``kind`` matches ``value``."""
        if not self.triggers or self._context.record.ended:
            return
        due = [trigger for trigger in self.triggers if trigger.due(kind, value)]
        for trigger in due:
            self.triggers.remove(trigger)
            await self._intervene(trigger)

    async def _intervene(self, trigger: Trigger) -> None:
        user_id, rule = trigger.user_id, trigger.rule
        channel = rule.action_type
        human = self._context.humans[user_id]
        content = rule.predefined_message if trigger.mode != "llm" else None
        if content is None:
            agent_id = self._schedule.addressee(user_id, channel)
            content = await human.policy.intervene(
                self._context.informed_view(user_id), rule, agent_id
            )
        if not content:
            return
        form = {"clarification": "inform", "feedback": "comment"}.get(
            channel, rule.decision or "deny"
        )
        request_id = self._deliver(user_id, channel, form, content)
        if request_id is not None and rule.tool is not None and not self._context.record.ended:
            await self._control.decide_unasked(
                user_id,
                self._schedule.addressee(user_id, "control"),
                form,
                rule.tool,
                rule.arguments or {},
                request_id,
            )

    async def _initiatives(self) -> None:
        """Deliver what people playing humans contributed unprompted since the last turn."""
        record = self._context.record
        for user_id, human in self._context.humans.items():
            if not human.person or record.ended:
                continue
            for item in await human.policy.initiatives(self._context.informed_view(user_id)):
                if not record.ended:  # after a stop nothing more is delivered
                    self._deliver(user_id, item.channel, item.form, item.content)

    def _deliver(self, user_id: str, channel: str, form: str, content: str) -> str | None:
        """Hand a human's unprompted input to the agent it goes to (control input decides).

        Returns the request's id, or None when the channel refused or expired it.
        """
        agent_id = self._schedule.addressee(user_id, channel)
        request = self._context.hand_over(
            user_id, channel, form, content, agent_id, f"unprompted {channel}"
        )
        if request is None:
            return None
        if channel == "control":
            self._control.take_unasked(user_id, agent_id, form, request.request_id)
        return request.request_id

    def _revise_goals(self) -> None:
        """Put into effect the goal revisions due by this turn."""
        record = self._context.record
        for user_id, human in self._context.humans.items():
            while human.revisions and human.revisions[0].at_turn <= record.step_no:
                revision = human.revisions.pop(0)
                human.goal = revision.goal
                human.known_info.update(revision.known_info)
                human.untold_revision = revision
                record.record(
                    type="goal_revision",
                    actor=user_id,
                    payload=GoalRevisionPayload(goal=revision.goal),
                )
                self._tell_revision(user_id, human, revision)

    def _tell_revision(self, user_id: str, human: HumanState, revision: GoalRevision) -> None:
        """A proactive simulated human (A4, A5) tells a change of plan when it happens.

        Without human initiative (A1-A3) the change waits until an agent next asks; a
        person playing a human says it themselves.
        """
        setting, graph = self._context.setup.setting, self._context.setup.graph
        if (
            not setting.spontaneous_enabled()
            or human.person
            or "clarification" not in setting.enabled_channels()
            or not any(
                "clarification" in graph.channels_between(user_id, a) for a in graph.agents()
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
