"""The turn loop: an episode set up, stepped turn by turn until it ends, and its trace.

Each :meth:`Episode.step` is one turn: first what humans do on their own
(:mod:`~hasbench.simulator.spontaneous`), then, under A5, the driving human's next
subtask (:mod:`~hasbench.simulator.scheduling`), then the active agent acts once
(:mod:`~hasbench.simulator.actions`). The ``max_iterations`` limit counts turns; a crash
in a turn ends the episode as ``episode_error`` with the exception named.
"""

from __future__ import annotations

from typing import Any

from hasbench.agency import Setting
from hasbench.envs.base import Environment
from hasbench.graph import HASGraph
from hasbench.participants.backends import make_agents, make_user
from hasbench.participants.base import (
    AgentSeat,
    AgentView,
    HumanSeat,
    HumanView,
    PlayedByPerson,
)
from hasbench.scenario import Scenario
from hasbench.simulator.actions import Actions
from hasbench.simulator.backends import Backends
from hasbench.simulator.context import EpisodeContext
from hasbench.simulator.control import Control
from hasbench.simulator.gateway import Models
from hasbench.simulator.record import Record
from hasbench.simulator.scheduling import Scheduler
from hasbench.simulator.setup import EpisodeSetup
from hasbench.simulator.spontaneous import SpontaneousInput
from hasbench.simulator.views import AgentState, HumanState, agent_view, answer_key, human_states
from hasbench.sync import run_sync
from hasbench.tools import ToolSpec
from hasbench.trace import Trace


class Episode:
    """One run of a scenario under a setting with given backends.

    Args:
        scenario: the task.
        setting: the human-participation setting.
        backends: who plays the agents and the humans.
        seed: seeds every random choice of the episode.
        client: the model client for LLM backends; one with the default response cache
            is made when needed and not given.

    Attributes:
        setup: the fixed facts of the episode (also as ``scenario``, ``setting``, ...).
        record: the trace being written and the turn counter.
        models: the model client its participants call through.
        humans: each human's state, by id.
        agents: each agent's state, by id.
        schedule: whose turn it is.
        control: authorizations and decisions on actions.
        spontaneous: humans' input of their own.
        actions: what agents' actions do.
    """

    def __init__(
        self,
        scenario: Scenario,
        setting: Setting | None = None,
        backends: Backends | None = None,
        seed: int = 0,
        client: Any | None = None,
    ) -> None:
        self.setup = EpisodeSetup.build(
            scenario, setting or Setting(), backends or Backends(), seed
        )
        self.max_iterations = (
            self.setup.setting.max_iterations or scenario.environment.max_iterations
        )
        self.record = Record(self.setup)
        self.models = Models(self.setup, self.record, client)
        self.humans = self._seat_humans()
        self.agents = self._seat_agents()
        context = EpisodeContext(self.setup, self.record, self.humans, self.agents)
        self.schedule = Scheduler(context)
        self.control = Control(context)
        self.spontaneous = SpontaneousInput(context, self.schedule, self.control)
        context.after_tool = self.spontaneous.after_tool
        self.actions = Actions(context, self.schedule, self.control, self.spontaneous)

    def _seat_humans(self) -> dict[str, HumanState]:
        """Each human's state with the policy of who plays it; the people named in the header."""
        humans = human_states(self.setup)
        rng = self.setup.rng(1)
        for user_id, human in humans.items():
            seat = HumanSeat(user_id, self.models.gateway(user_id), rng)
            human.policy = make_user(self.setup.backends.user, seat)
            human.person = isinstance(human.policy, PlayedByPerson)
        people = {
            user_id: human.policy.interface for user_id, human in humans.items() if human.person
        }
        self.record.trace.header.people = people or None
        return humans

    def _seat_agents(self) -> dict[str, AgentState]:
        """Each agent's state with its view and the policy that plays it."""
        shared: list[str] = []
        memory_shared = self.setup.scenario.memory.type == "shared"
        agents = {
            agent_id: AgentState(agent_view(self.setup, agent_id), shared if memory_shared else [])
            for agent_id in self.setup.graph.agents()
        }
        rng = self.setup.rng(0)
        seats = [
            AgentSeat(state.view, self.models.gateway(agent_id), rng)
            for agent_id, state in agents.items()
        ]
        policies = make_agents(self.setup.backends.agent, seats, lambda: answer_key(self.setup))
        for agent_id, state in agents.items():
            state.policy = policies[agent_id]
        return agents

    # -- what the episode is run on ----------------------------------------------------

    @property
    def scenario(self) -> Scenario:
        """The task."""
        return self.setup.scenario

    @property
    def setting(self) -> Setting:
        """The human-participation setting."""
        return self.setup.setting

    @property
    def backends(self) -> Backends:
        """Who plays the agents and the humans."""
        return self.setup.backends

    @property
    def environment(self) -> Environment:
        """The domain environment."""
        return self.setup.environment

    @property
    def tool_specs(self) -> dict[str, ToolSpec]:
        """Every tool of the environment, by name."""
        return self.setup.tool_specs

    @property
    def graph(self) -> HASGraph:
        """The HAS Graph."""
        return self.setup.graph

    @property
    def client(self) -> Any | None:
        """The model client (None until a model was called, unless one was given)."""
        return self.models.client

    # -- what participants see -----------------------------------------------------------

    def agent_view(self, agent_id: str) -> AgentView:
        """What an agent of this episode may know (the view its backend was given)."""
        return self.agents[agent_id].view

    def human_view(self, user_id: str) -> HumanView:
        """What a human of this episode knows now (the view its next request will carry)."""
        return self.humans[user_id].view()

    # -- the loop ------------------------------------------------------------------------

    @property
    def trace(self) -> Trace:
        """The trace written so far."""
        return self.record.trace

    @property
    def step_no(self) -> int:
        """The current turn (0 before the first)."""
        return self.record.step_no

    @property
    def ended(self) -> bool:
        """True once the episode has a termination."""
        return self.record.ended

    async def run(self) -> Trace:
        """Step until the episode ends; return the trace."""
        while await self.step():
            pass
        return self.trace

    async def step(self) -> bool:
        """Let the active agent act once; False once the episode has ended."""
        record = self.record
        if record.ended:
            return False
        if record.step_no >= self.max_iterations:
            record.terminate("max_iterations", f"{self.max_iterations} steps used")
            return False
        record.step_no += 1
        try:
            await self.spontaneous.before_turn()
            if self.schedule.subtask_due and not record.ended:
                await self.schedule.set_subtask()
            if not record.ended:
                await self._turn(self.schedule.active)
        except Exception as exc:  # noqa: BLE001 - any crash is recorded, not raised
            if not record.ended:
                record.terminate("episode_error", f"{type(exc).__name__}: {exc}")
        return not record.ended

    async def _turn(self, agent_id: str) -> None:
        """The agent observes, acts, and its action is carried out."""
        state = self.agents[agent_id]
        observation = state.observe(self.record.step_no, self.schedule.delegator.get(agent_id))
        action = await state.policy.act(observation)
        state.inbox = []
        state.last = await self.actions.perform(agent_id, action)


def run_episode(
    scenario: Scenario,
    setting: Setting | None = None,
    backends: Backends | None = None,
    seed: int = 0,
    client: Any | None = None,
) -> Trace:
    """Run one episode to the end and return its trace (also inside Jupyter's loop)."""
    return run_sync(Episode(scenario, setting, backends, seed, client).run())
