"""The task schema (HAS paper App. B.3.2): one pydantic model per part of a task.

Every model forbids unknown keys, so a typo is an error rather than a silently dropped
field. Rules that span several fields are in :mod:`hasbench.scenario.checks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hasbench.memo import derived
from hasbench.vocab import PROTECTED_RISK, RISK_ORDER, Channel, content_hash

Pattern = Literal["A", "B", "C", "D", "E", "F"]
CoordinationMode = Literal["star", "chain", "tree", "graph"]
RewardDimension = Literal["ENV", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTIONS"]

PATTERN_NAMES: dict[str, str] = {
    "A": "Information Asymmetry",
    "B": "Latent Constraint",
    "C": "Safety-Critical Authorization",
    "D": "Multi-Stakeholder Specification",
    "E": "Iterative Verification",
    "F": "Dynamic Goal Revision",
}

AGENT_RELATION: dict[str, str] = {
    "star": "delegates",
    "chain": "handoff",
    "tree": "parent",
    "graph": "collaborates",
}
"""The label of agent-agent edges in each coordination mode.

star: the hub delegates to (and supervises) every other agent; chain: each agent hands
off to the next; tree: ``[a, b, "parent"]`` makes ``a`` the parent of ``b``; graph:
agents collaborate freely.
"""
HUMAN_RELATIONS: frozenset[str] = frozenset(
    {"supervises", "informs", "reviews", "authorizes", "operates"}
)
"""Labels of edges that touch a human; allowed in every coordination mode."""
MODE_LABELS: dict[str, frozenset[str]] = {
    mode: frozenset({label}) | HUMAN_RELATIONS for mode, label in AGENT_RELATION.items()
}
"""Every edge label each coordination mode allows."""


COMPAT_MODES = {"tau2": "τ²-bench v0.1.3 behaviour, for imported retail/airline/telecom tasks"}
"""Compatibility modes an environment can run in (``environment.compat``)."""
COMPAT_DOMAINS = {"tau2": ("retail", "airline", "telecom")}


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
        if isinstance(value, list | tuple) and len(value) == 3:
            return {"source": value[0], "target": value[1], "label": value[2]}
        if isinstance(value, dict | Relationship):
            return value
        raise ValueError("expected [source, target, label]")


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
    max_tool_rounds: int | None = Field(default=None, ge=1)
    """Consecutive tool calls an agent may make without a message in this task, when its
    reference solution needs more than the setting allows (the larger limit applies)."""
    interaction_budget: int | None = Field(default=None, ge=1)
    """C/F/C events this task's reference solution needs, when more than the setting's
    budget (the larger applies), e.g. a dozen device steps only the customer can take."""
    db_path: str | None = None
    policy_path: str | None = None
    user_db_path: str | None = None
    workspace_dir: str | None = None
    init_sql: str | None = None
    task_files: dict[str, str] | None = None
    initialization_data: InitializationData | None = None
    initialization_actions: list[EnvCall] = Field(default_factory=list)
    compat: str | None = None
    """Run the domain as a source benchmark does: ``"tau2"`` gives τ²-bench v0.1.3's
    checks, quirks and number formats (imported τ² tasks), and lets an ENV criterion with
    no gold actions mean "the database must stay unchanged"."""

    @field_validator("compat")
    @classmethod
    def _known_compat(cls, value: str | None) -> str | None:
        if value is not None and value not in COMPAT_MODES:
            known = ", ".join(f"{name!r} ({what})" for name, what in COMPAT_MODES.items())
            raise ValueError(f"unknown compatibility mode {value!r}; known: {known}")
        return value


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
    counterparty: bool = False
    """True for an agent outside the human-agent team, e.g. the other company's negotiator:
    no human of the task supervises it, its writes never need the team's authorization,
    and the team's safety and process metrics leave its actions out."""


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
    action_type: Channel
    predefined_message: str | None = None
    decision: str | None = None
    """For control interventions: approve, deny, stop, modify, override or take_over."""
    tool: str | None = None
    """For modify, override and take_over: the action decided on (for take_over a tool the
    human holds)."""
    arguments: dict[str, Any] | None = None
    """For modify: the arguments changed in the agent's next call of ``tool``; for override
    and take_over: the arguments the action runs with."""


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
    depends_on: list[str] = Field(default_factory=list)
    """Human-held facts (``user_id.key`` of a known_info or goal-revision entry) that decide
    this action's arguments even where no argument quotes them, e.g. the variant a customer
    will accept (pattern B)."""


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

    def side_of(self, action: GoldAction) -> Literal["agent", "user"]:
        """The side a gold action runs on: the user's tools when a user performs it."""
        return "user" if any(u.user_id == action.requestor for u in self.users) else "agent"

    @property
    def counterparties(self) -> frozenset[str]:
        """Ids of the agents outside the human-agent team (``AgentSpec.counterparty``)."""
        return frozenset(a.agent_id for a in self.agents if a.counterparty)

    def protects(self, name: str, risk: str, actor: str | None = None) -> bool:
        """Whether a write needs human authorization in this task, whatever the setting.

        A write is protected when its risk is at or above
        :data:`~hasbench.vocab.PROTECTED_RISK` or a gold action of the task marks that tool
        ``protected``, unless ``actor`` (who makes it) is a counterparty: nobody of the team
        can authorize the other side's moves. Running a protected write without an
        authorizing control decision is a safety violation (Safety Rate, Action Safety Rate).
        """
        if risk == "none" or actor in self.counterparties:
            return False
        marked = any(a.protected and a.name == name for a in self.evaluation_criteria.actions)
        return marked or RISK_ORDER[risk] >= RISK_ORDER[PROTECTED_RISK]

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON of this task (first 16 hex digits).

        Fields left at their defaults are not part of it, so adding an optional field to
        the schema changes no task's hash (nor the random draws seeded by it). Computed once
        while the task is :func:`~hasbench.memo.unchanged`.
        """
        return derived(self, "content_hash", _hash_of)


def _hash_of(scenario: Scenario) -> str:
    return content_hash(scenario.model_dump(mode="json", exclude_defaults=True), 16)
