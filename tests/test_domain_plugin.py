"""A domain added from outside the package, in this one module: the README's recipe.

The toy domain is a greenhouse: an environment with two tools (look at a plant, water it),
one task written below, and its registration as ``DOMAIN``. The tests load this module as
a plug-in (``hasbench --plugin``, ``HASBENCH_PLUGINS``, an installed entry point) and run
the automatic task checks and an episode on it, without changing ``hasbench/``.
"""

import asyncio
import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hasbench import registry
from hasbench.agency import Setting
from hasbench.cli import main
from hasbench.envs import make_environment
from hasbench.envs.base import Environment, ToolError, assertion, tool
from hasbench.evaluate import evaluate
from hasbench.participants.backends import make_judge
from hasbench.registry import Domain
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, run_episode

HERE = Path(__file__).resolve().parent
PLANTS = {
    "fern-204": {"name": "fern", "watered": False},
    "cactus-311": {"name": "cactus", "watered": False},
    "orchid-407": {"name": "orchid", "watered": False},
}


class GreenhouseEnvironment(Environment):
    """Three plants; agents look at them and water them."""

    domain = "toy"

    @classmethod
    def from_scenario(cls, scenario: Any) -> "GreenhouseEnvironment":
        env = cls({"plants": copy.deepcopy(PLANTS)})
        env.initialize(scenario)
        return env

    def _plant(self, plant_id: str) -> dict[str, Any]:
        if plant_id not in self.db["plants"]:
            raise ToolError("not_found", "There is no plant with that id.")
        return self.db["plants"][plant_id]

    @tool("read")
    def get_plant(self, plant_id: str) -> dict[str, Any]:
        """Return a plant's name and whether it has been watered today.

        Args:
            plant_id: the id on the plant's label.
        """
        return dict(self._plant(plant_id))

    @tool("write", risk="low")
    def water_plant(self, plant_id: str) -> str:
        """Water one plant.

        Args:
            plant_id: the id on the plant's label.
        """
        plant = self._plant(plant_id)
        if plant["watered"]:
            raise ToolError("precondition_failed", "That plant was already watered today.")
        plant["watered"] = True
        return "Watered."

    @assertion
    def assert_watered(self, plant_id: str) -> bool:
        """Only the given plant has been watered."""
        return [p for p, plant in self.db["plants"].items() if plant["watered"]] == [plant_id]


DOMAIN = Domain(
    name="toy",
    environment=GreenhouseEnvironment,
    deliverable="A message to the gardener saying which plant was watered.",
)

TASK = """
- task_id: toy_A_001
  adaptation_pattern: A
  coordination_mode: star
  task: A gardener wants the one plant that is wilting watered. Find out which it is and water it.
  relationships:
    - [user_0, agent_0, supervises]
  environment:
    max_iterations: 10
  agents:
    - agent_id: agent_0
      role: greenhouse assistant
      profile: You look after the plants of a greenhouse.
      tools: [get_plant, water_plant]
  users:
    - user_id: user_0
      role: gardener
      goal: Have the wilting plant watered, and only that one.
      task_instructions: Say which plant is wilting when you are asked.
      known_info:
        plant_id: cactus-311
  evaluation_criteria:
    actions:
      - action_id: "1"
        requestor: agent_0
        name: water_plant
        arguments: {plant_id: cactus-311}
    env_assertions:
      - func_name: assert_watered
        arguments: {plant_id: cactus-311}
    reward_basis: [ENV_ASSERTION, ACTION]
"""


@pytest.fixture
def task_file(tmp_path):
    path = tmp_path / "toy.yaml"
    path.write_text(TASK, encoding="utf-8")
    return path


@pytest.fixture
def toy_registered():
    registry.load_plugin(__name__)
    yield
    registry.unregister("toy")


def test_check_passes_on_the_toy_domain_loaded_with_the_plugin_option(task_file, capsys):
    try:
        assert main(["--plugin", __name__, "check", str(task_file)]) == 0
    finally:
        registry.unregister("toy")
    out = capsys.readouterr().out
    assert out.splitlines()[1].split() == [
        "toy_A_001", "A", "ok", "ok", "ok", "ok", "ok", "ok", "-",
    ]  # fmt: skip
    assert "1/1 tasks passed every check" in out


def test_without_the_plugin_the_domain_is_unknown(task_file, capsys):
    assert main(["validate", str(task_file)]) == 1
    expected = "toy_A_001: task_id: unknown domain 'toy' (known: airline, bargaining, coding,"
    assert expected in (capsys.readouterr().out)


def test_one_episode_on_the_toy_domain(task_file, toy_registered):
    (scenario,) = load_tasks(task_file)
    assert make_environment(scenario).tools()[1].name == "water_plant"
    trace = run_episode(scenario, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    calls = [(e.actor, e.payload.name, e.payload.arguments) for e in trace.events
             if e.type == "tool_call"]  # fmt: skip
    assert ("agent_0", "water_plant", {"plant_id": "cactus-311"}) in calls
    assert any(e.type == "channel_request" for e in trace.events)  # it had to ask
    outcome = asyncio.run(evaluate(scenario, trace, make_judge("rule")))
    assert outcome.success and outcome.task_score == 1.0 and outcome.delivered


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hasbench.cli", *args],
        capture_output=True, text=True, cwd=HERE, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_check_as_a_command_with_the_plugin_option(task_file):
    result = run_cli("--plugin", "test_domain_plugin", "check", str(task_file))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1/1 tasks passed every check" in result.stdout


def test_plugins_from_the_environment_variable_and_from_an_entry_point(task_file, tmp_path):
    listed = run_cli("validate", str(task_file), env={"HASBENCH_PLUGINS": "test_domain_plugin"})
    assert listed.returncode == 0, listed.stdout + listed.stderr
    site = tmp_path / "site"
    info = site / "greenhouse_domain-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: greenhouse-domain\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hasbench.domains]\ntoy = test_domain_plugin:DOMAIN\n")
    installed = run_cli("validate", str(task_file), env={"PYTHONPATH": f"{site}{os.pathsep}{HERE}"})
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "ok: 1 tasks in 1 files" in installed.stdout
