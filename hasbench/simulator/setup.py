"""What an episode runs on, fixed from its start: task, setting, backends, seed, world."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hasbench.agency import Setting
from hasbench.envs import make_environment
from hasbench.envs.base import Environment
from hasbench.graph import HASGraph
from hasbench.scenario import Scenario
from hasbench.simulator.backends import Backends
from hasbench.tools import ToolSpec


@dataclass(frozen=True)
class EpisodeSetup:
    """The fixed facts of one episode (the environment's state changes, the object not).

    ``scenario``, ``setting``, ``backends`` and ``seed`` are as given to
    :class:`~hasbench.simulator.Episode`.

    Attributes:
        environment: the domain environment built for the task.
        tool_specs: every tool of the environment, by name.
        graph: the HAS Graph of the task's participants and relations.
    """

    scenario: Scenario
    setting: Setting
    backends: Backends
    seed: int
    environment: Environment
    tool_specs: dict[str, ToolSpec]
    graph: HASGraph

    @classmethod
    def build(
        cls, scenario: Scenario, setting: Setting, backends: Backends, seed: int
    ) -> EpisodeSetup:
        """Build the environment and the graph of a task.

        Raises:
            ValueError: the seed is negative.
        """
        if seed < 0:
            raise ValueError(f"{scenario.task_id}: seed must be >= 0, got {seed}")
        environment = make_environment(scenario)
        tool_specs = {spec.name: spec for spec in environment.tools()}
        graph = HASGraph.from_scenario(
            scenario, {name: spec.side for name, spec in tool_specs.items()}
        )
        return cls(scenario, setting, backends, seed, environment, tool_specs, graph)

    def rng(self, stream: int) -> np.random.Generator:
        """A generator for one stream of randomness (0 agents, 1 humans) of this episode.

        Seeded by the seed, the stream and the task, so tasks run with the same seed still
        draw independently.
        """
        task_entropy = int(self.scenario.content_hash(), 16)
        return np.random.default_rng([self.seed, stream, task_entropy])
