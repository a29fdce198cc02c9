"""Who acts next: the active agent, delegation and hand-offs, the driving human's subtasks.

Scheduling follows the coordination mode: a message along a ``delegates`` (star) or
``parent`` (tree) edge hands work down and the delegate's finish reports back; a
``handoff`` (chain) passes the task on; in ``graph`` mode the addressee of a message takes
the next turn. Under human-driven collaboration (A5) a human sets the lead agent's
subtasks and decides when the task is done.
"""

from __future__ import annotations

from hasbench.simulator.context import EpisodeContext
from hasbench.trace import TerminationReason
from hasbench.vocab import SUBTASK, FinishOutcome

DELEGATING_LABELS = frozenset({"delegates", "parent"})
ENDINGS: dict[str, TerminationReason] = {
    "done": "agent_done",
    "unable": "agent_unable",
    "needs_language_understanding": "needs_language_understanding",
}
"""How the episode ends when the lead agent's finish ends it, by the finish's outcome."""


class Scheduler:
    """Whose turn it is, and who reports to whom.

    Attributes:
        lead: the agent that starts the task and answers for it.
        active: the agent whose turn it is.
        driver: the human who sets the lead's subtasks (A5), or None.
        subtask_due: whether the driver sets the next subtask before the next turn.
        subtasks: how many subtasks the driver has set.
        lead_done: whether the lead finished its current subtask.
        outcome: how the lead last finished (done, unable, ...).
        delegator: agent -> the agent it reports back to.
        finished: agents done in ``graph`` mode (the turn passes over them).
    """

    def __init__(self, context: EpisodeContext) -> None:
        self._context = context
        self.lead = context.setup.graph.lead()
        self.active = self.lead
        human_driven = context.setup.setting.policy.human_driven
        self.driver = self._driver() if human_driven else None
        self.subtask_due = self.driver is not None
        self.subtasks = 0
        self.lead_done = False
        self.delegator: dict[str, str] = {}
        self.finished: set[str] = set()
        self.outcome: FinishOutcome = "done"

    def _driver(self) -> str | None:
        """The human who sets the lead's subtasks (A5), or None when the lead reaches nobody.

        It is the first human the lead agent reaches over control or feedback.
        """
        graph = self._context.setup.graph
        enabled = self._context.setup.setting.enabled_channels() & {"control", "feedback"}
        for human in graph.humans():
            if enabled & graph.channels_between(self.lead, human):
                return human
        return None

    def addressee(self, user_id: str, channel: str) -> str:
        """The agent a human's unprompted input goes to: the active one if it can be reached."""
        graph = self._context.setup.graph
        candidates = [a for a in graph.agents() if channel in graph.channels_between(user_id, a)]
        return self.active if self.active in candidates else (candidates or [self.lead])[0]

    def after_message(self, sender: str, target: str) -> None:
        """A message was delivered: a delegation starts or ends, the addressee acts next.

        The lead's message to the driving human reports back: the driver sets the next
        subtask.
        """
        if sender == self.lead and target == self.driver:
            self.subtask_due = True
        if target not in self._context.agents:
            return
        graph = self._context.setup.graph
        if graph.mode != "graph" and graph.graph.has_edge(sender, target):
            if set(graph.graph[sender][target]) & DELEGATING_LABELS:
                self.delegator[target] = sender
        if self.delegator.get(sender) == target:
            del self.delegator[sender]
        self.active = target

    def release(self, agent_id: str) -> str | None:
        """End an agent's delegation as it finishes; return the agent it reports to."""
        return self.delegator.pop(agent_id, None)

    def after_finish(
        self, agent_id: str, boss: str | None, outcome: FinishOutcome = "done"
    ) -> None:
        """An agent finished: its delegator, the next agent, the driver or nobody goes on.

        With nobody to go on, the episode ends as the finish says (:data:`ENDINGS`).
        """
        graph = self._context.setup.graph
        if agent_id == self.lead:
            self.outcome = outcome
        if boss is not None:
            self.active = boss
        elif graph.mode == "graph" and agent_id != self.lead:
            self.finished.add(agent_id)
            order = [a for a in graph.agents() if a not in self.finished]
            self.active = self.lead if self.lead in order else order[0]
        elif self.driver is not None:
            self.subtask_due = self.lead_done = True  # the driving human decides what is next
        else:
            self._context.record.terminate(ENDINGS[outcome])

    async def set_subtask(self) -> None:
        """The driving human sets the lead agent's next subtask (A5), or ends the episode.

        With nothing more to ask after the lead finished, the episode ends as done.
        """
        self.subtask_due = False
        human = self._context.humans[self.driver]
        text = await human.policy.next_subtask(
            self._context.informed_view(self.driver), self.subtasks
        )
        if not text:
            if self.lead_done:
                self._context.record.terminate(ENDINGS[self.outcome])
            return
        self.subtasks += 1
        self.lead_done = False
        enabled = self._context.setup.setting.enabled_channels()
        channel = "control" if "control" in enabled else "feedback"
        self._context.hand_over(self.driver, channel, SUBTASK, text, self.lead, "next subtask")
