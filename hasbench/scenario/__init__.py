"""Scenario schema for HAS-Bench task YAML (HAS paper App. B.3.2): models, loading, checks.

A domain file is a YAML list of tasks. Each task is parsed into a :class:`Scenario`.
Every model forbids unknown keys, so a typo is an error rather than a silently dropped
field. Structural rules that span several fields (dangling participants, edge labels vs
coordination mode, leaks, ...) live in :func:`check_scenario`; :func:`load_tasks`
runs both and raises :class:`ScenarioError` listing every :class:`Problem` found, and
:func:`validate_file` returns the problems instead (:func:`read_tasks` gives both).
A problem prints as ``file: task_id: field.path: message``.

The package's rooms:

- :mod:`~hasbench.scenario.schema`: the models, the coordination modes' edge labels and
  the compatibility modes;
- :mod:`~hasbench.scenario.problems`: :class:`Problem`, :class:`ScenarioError`, and
  pydantic's errors as field paths with short messages;
- :mod:`~hasbench.scenario.checks`: the cross-field checks;
- :mod:`~hasbench.scenario.loading`: reading a task file (YAML, schema, checks).

Import the public names from here (``from hasbench.scenario import Scenario,
load_tasks``).
"""

from hasbench.scenario.checks import (
    check_scenario,
    checked_scenario,
    held_facts,
    leak_pattern,
    scalar_leaves,
    scalar_values,
    structure_problems,
)
from hasbench.scenario.loading import load_task, load_tasks, read_tasks, validate_file
from hasbench.scenario.problems import Problem, ScenarioError
from hasbench.scenario.schema import (
    AGENT_RELATION,
    COMPAT_DOMAINS,
    COMPAT_MODES,
    HUMAN_RELATIONS,
    MODE_LABELS,
    PATTERN_NAMES,
    AgentSpec,
    CoordinationMode,
    EnvAssertion,
    EnvCall,
    EnvironmentConfig,
    EvaluationCriteria,
    GoalRevision,
    GoldAction,
    InitializationData,
    MemoryConfig,
    Pattern,
    Relationship,
    RewardDimension,
    Scenario,
    SpontaneousConfig,
    StrictModel,
    TriggerCondition,
    TriggerRule,
    UserSpec,
)

__all__ = [
    "AGENT_RELATION",
    "COMPAT_DOMAINS",
    "COMPAT_MODES",
    "HUMAN_RELATIONS",
    "MODE_LABELS",
    "PATTERN_NAMES",
    "AgentSpec",
    "CoordinationMode",
    "EnvAssertion",
    "EnvCall",
    "EnvironmentConfig",
    "EvaluationCriteria",
    "GoalRevision",
    "GoldAction",
    "InitializationData",
    "MemoryConfig",
    "Pattern",
    "Problem",
    "Relationship",
    "RewardDimension",
    "Scenario",
    "ScenarioError",
    "SpontaneousConfig",
    "StrictModel",
    "TriggerCondition",
    "TriggerRule",
    "UserSpec",
    "check_scenario",
    "checked_scenario",
    "held_facts",
    "leak_pattern",
    "load_task",
    "load_tasks",
    "read_tasks",
    "scalar_leaves",
    "scalar_values",
    "structure_problems",
    "validate_file",
]
