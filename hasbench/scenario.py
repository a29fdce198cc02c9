"""Scenario schema for HAS-Bench task YAML (HAS paper App. B.3.2).

A domain file is a YAML list of tasks. Each task is parsed into a :class:`Scenario`.
Every model forbids unknown keys, so a typo is an error rather than a silently dropped
field. Structural rules that span several fields (dangling participants, edge labels vs
coordination mode, leaks, ...) live in :func:`check_scenario`; :func:`load_tasks`
runs both and raises :class:`ScenarioError` listing every :class:`Problem` found.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Pattern = Literal["A", "B", "C", "D", "E", "F"]
CoordinationMode = Literal["star", "chain", "tree", "graph"]
ChannelName = Literal["clarification", "feedback", "control"]
RewardDimension = Literal["ENV", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTIONS"]

PATTERN_NAMES: dict[str, str] = {
    "A": "Information Asymmetry",
    "B": "Latent Constraint",
    "C": "Safety-Critical Authorization",
    "D": "Multi-Stakeholder Specification",
    "E": "Iterative Verification",
    "F": "Dynamic Goal Revision",
}
DOMAINS = ("retail", "airline", "telecom", "coding", "research", "bargaining", "mock")


class StrictModel(BaseModel):
    """Base for every schema model: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class Relationship(StrictModel):
    """A typed, directed edge of the HAS Graph; YAML form ``[source, target, label]``."""

    source: str
    target: str
    label: str

    @model_validator(mode="before")
    @classmethod
    def _from_triple(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            if len(value) != 3:
                raise ValueError("expected [source, target, label]")
            return {"source": value[0], "target": value[1], "label": value[2]}
        return value


class EnvCall(StrictModel):
    """A call of an environment function on the agent-side or user-side toolkit."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class InitializationData(StrictModel):
    """Data deep-merged into the agent-side and user-side databases before an episode."""

    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class EnvironmentConfig(StrictModel):
    """Episode limits and the domain-specific environment inputs."""

    max_iterations: int = Field(ge=1)
    db_path: str | None = None
    policy_path: str | None = None
    user_db_path: str | None = None
    workspace_dir: str | None = None
    init_sql: str | None = None
    task_files: dict[str, str] | None = None
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvCall] = Field(default_factory=list)


class AgentSpec(StrictModel):
    """An LLM agent node."""

    agent_id: str
    type: str = "BaseAgent"
    profile: str
    role: str | None = None
    responsibilities: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    """Domain tools this agent may call; ``None`` means every agent-side tool."""
    visibility: list[str] | None = None
    """Participants whose messages this agent may observe; ``None`` means its neighbours."""


class TriggerCondition(StrictModel):
    """When a spontaneous intervention fires."""

    type: Literal["at_turn", "after_tool", "on_keyword"]
    turn_number: int | None = None
    tool_name: str | None = None
    keyword: str | None = None


class TriggerRule(StrictModel):
    """One spontaneous (human-initiated) intervention rule."""

    rule_id: str
    condition: TriggerCondition
    action_type: ChannelName
    predefined_message: str | None = None
    decision: str | None = None
    """For control interventions: approve, deny, stop, modify, override or take_over."""


class SpontaneousConfig(StrictModel):
    """Proactive-user configuration, used under A4."""

    mode: Literal["predefined", "hybrid", "llm"]
    trigger_rules: list[TriggerRule]


class GoalRevision(StrictModel):
    """A change of the user's goal during the episode (pattern F)."""

    at_turn: int = Field(ge=1)
    goal: str
    known_info: dict[str, Any] = Field(default_factory=dict)


class UserSpec(StrictModel):
    """A human participant node, played by a user simulator or a real person."""

    user_id: str
    type: str = "SimulatedUser"
    role: str | None = None
    responsibilities: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    persona: str | None = None
    goal: str
    task_instructions: str = ""
    known_info: dict[str, Any] = Field(default_factory=dict)
    unknown_info: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    """User-side tools this human can execute (e.g. device actions in Telecom)."""
    spontaneous_config: SpontaneousConfig | None = None
    goal_revisions: list[GoalRevision] = Field(default_factory=list)


class MemoryConfig(StrictModel):
    """Whether agents keep private memories or share one."""

    type: Literal["default", "shared"] = "default"


class GoldAction(StrictModel):
    """One step of the reference solution."""

    action_id: str
    requestor: str
    """The participant id that performs the action (an agent, or a user for user-side tools)."""
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None
    protected: bool = False
    """True when the action needs human authorization (pattern C)."""


class EnvAssertion(StrictModel):
    """A boolean check run on the environment after the episode."""

    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True
    message: str | None = None


class EvaluationCriteria(StrictModel):
    """How an episode is scored; ``reward_basis`` names the dimensions that must pass."""

    actions: list[GoldAction] = Field(default_factory=list)
    env_assertions: list[EnvAssertion] = Field(default_factory=list)
    communicate_info: list[str] = Field(default_factory=list)
    nl_assertions: list[str] = Field(default_factory=list)
    reward_basis: list[RewardDimension] = Field(min_length=1)


class Scenario(StrictModel):
    """One HAS-Bench task."""

    task_id: str
    source_task_id: str | None = None
    adaptation_pattern: Pattern
    coordination_mode: CoordinationMode
    task: str
    """The task statement the lead agent receives."""
    relationships: list[Relationship] = Field(default_factory=list)
    environment: EnvironmentConfig
    agents: list[AgentSpec] = Field(min_length=1)
    users: list[UserSpec] = Field(default_factory=list)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    evaluation_criteria: EvaluationCriteria
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form annotations (difficulty, tags, provenance notes)."""

    @property
    def domain(self) -> str:
        """The domain, taken from the task id prefix."""
        return self.task_id.split("_", 1)[0]

    @property
    def participant_ids(self) -> list[str]:
        """Agent ids then user ids, in declaration order."""
        return [a.agent_id for a in self.agents] + [u.user_id for u in self.users]

    def agent(self, agent_id: str) -> AgentSpec:
        """Return the agent with this id."""
        return next(a for a in self.agents if a.agent_id == agent_id)

    def user(self, user_id: str) -> UserSpec:
        """Return the user with this id."""
        return next(u for u in self.users if u.user_id == user_id)

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of this task (first 16 hex digits)."""
        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
