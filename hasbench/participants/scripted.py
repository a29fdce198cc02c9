"""Scripted policies: deterministic reference agents and a scripted user.

They act on structured observations (tool outputs, channel response objects), never by
parsing prompts. ``scripted:oracle`` replays the task's gold actions but only with what a
team could legitimately know: identifiers must have been observed, and facts that only a
human holds must be asked for over a channel that reaches that human. With nobody to ask
or to authorize (A1), it acts autonomously: it guesses what it was not told and runs
protected actions unapproved (HAS paper Table 9), so under A1 it fails every task that
needs a human, and under A3 it solves them.
``scripted:agent?competence=..&ask=..&uptake=..&discipline=..`` is the same planner with
seeded imperfections; ``scripted:strong`` and ``scripted:weak`` are two presets.
``scripted:idle`` finishes at once. ``scripted:user`` answers from known_info by persona.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hasbench.channels import (
    ChannelRequest,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
)
from hasbench.participants.backends import agent_backend, parse_spec, user_backend
from hasbench.participants.base import (
    Action,
    ActionFacts,
    ActionResult,
    AgentObservation,
    AgentSeat,
    AnswerKey,
    CallTool,
    Finish,
    HumanSeat,
    HumanView,
    SendMessage,
    approval_reason,
    seen_about,
)
from hasbench.scenario import scalar_values

if TYPE_CHECKING:
    from hasbench.agency import Setting
    from hasbench.graph import HASGraph
    from hasbench.personas import Persona
    from hasbench.scenario import GoldAction, Scenario, TriggerRule
    from hasbench.tools import ToolSpec


@dataclass(frozen=True)
class PlanParams:
    """Imperfections of the scripted planning agent, each a probability in [0, 1].

    Attributes:
        competence: a gold action is carried out correctly (else skipped or garbled).
        ask: a needed human-held fact is asked for (else guessed).
        uptake: feedback corrections are used.
        discipline: approval is sought before an action that needs it.
    """

    competence: float = 1.0
    ask: float = 1.0
    uptake: float = 1.0
    discipline: float = 1.0


PRESETS: dict[str, PlanParams] = {
    "oracle": PlanParams(),
    "strong": PlanParams(competence=0.95, ask=0.9, uptake=0.9, discipline=0.95),
    "weak": PlanParams(competence=0.6, ask=0.4, uptake=0.4, discipline=0.5),
}


def parse_agent_spec(spec: str) -> PlanParams | None:
    """Parameters of a scripted planning agent spec; None for ``scripted:idle``.

    Raises:
        ValueError: an unknown scripted agent or parameter, or a value outside [0, 1].
    """
    name = spec.partition("?")[0].removeprefix("scripted:")
    if name not in ("idle", "agent", *PRESETS):
        known = ", ".join(f"scripted:{n}" for n in [*PRESETS, "idle", "agent?..."])
        raise ValueError(f"unknown scripted agent {spec!r} (known: {known})")
    read = parse_spec(spec, PlanParams.__dataclass_fields__ if name == "agent" else ())
    if name == "idle":
        return None
    if name in PRESETS:
        return PRESETS[name]
    return PlanParams(**read.probabilities(spec))


MAX_REASKS = 2
"""How many times the planner asks again for a fact a human withheld."""


# -- what a gold action needs from humans -------------------------------------------------


@dataclass(frozen=True)
class Need:
    """A fact held by a human that a gold action's arguments depend on."""

    user: str
    key: str
    revision_turn: int | None = None
    """Set when the fact only exists after a goal revision at this turn."""


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _depends_on(leaf: Any, fact: Any) -> bool:
    """Whether an argument value is, or (free text) contains, a human-held fact."""
    a, b = _number(leaf), _number(fact)
    if a is not None and b is not None:
        return a == b
    leaf_text, fact_text = str(leaf), str(fact)
    if leaf_text == fact_text:
        return True
    return " " in leaf_text and len(fact_text) >= 3 and fact_text.lower() in leaf_text.lower()


def human_needs(scenario: Scenario, arguments: dict[str, Any]) -> list[Need]:
    """Human-held facts (known_info, or revised known_info) the arguments depend on."""
    public = " ".join([scenario.task, *(a.profile for a in scenario.agents)]).lower()
    needs: list[Need] = []
    for leaf in scalar_values(arguments):
        if _stated_in(leaf, public):
            continue
        for user in scenario.users:
            sources = [(user.known_info, None)] + [
                (rev.known_info, rev.at_turn) for rev in user.goal_revisions
            ]
            for info, turn in sources:
                for key, fact in info.items():
                    if _depends_on(leaf, fact):
                        need = Need(user.user_id, key, turn)
                        if need not in needs:
                            needs.append(need)
    return needs


def action_needs(scenario: Scenario, action: GoldAction) -> list[Need]:
    """What a gold action needs from humans: facts its arguments quote, plus its depends_on."""
    needs = human_needs(scenario, action.arguments)
    for fact in action.depends_on:
        user_id, _, key = fact.partition(".")
        user = scenario.user(user_id)
        turn = next((r.at_turn for r in user.goal_revisions if key in r.known_info), None)
        need = Need(user_id, key, None if key in user.known_info else turn)
        if need not in needs:
            needs.append(need)
    return needs


def _stated_in(value: Any, text: str) -> bool:
    """Whether a value appears in text as a whole token (so 3 is not found in HAT300)."""
    token = re.escape(str(value).lower())
    return re.search(rf"(?<![\w.]){token}(?![\w]|\.\d)", text) is not None


def _is_identifier(value: Any) -> bool:
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


# -- the planning agent -------------------------------------------------------------------


@dataclass
class TeamPlan:
    """State shared by the scripted agents of one episode.

    What the team has done and learned; facts move between agents in their messages.
    """

    gold: list[GoldAction]
    cursor: int = 0
    knowledge: str = ""
    learned: dict[tuple[str, str], Any] = field(default_factory=dict)
    asked: set[tuple[str, str]] = field(default_factory=set)
    reviewed: set[str] = field(default_factory=set)
    needs_approval: set[int] = field(default_factory=set)
    garbled: dict[int, str] = field(default_factory=dict)
    guessed: dict[tuple[str, str], bool] = field(default_factory=dict)
    refusals: dict[tuple[str, str], int] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    """The tool outputs the team saw, as text."""
    looked: set[str] = field(default_factory=set)
    """Reads made before an approval request (tool and arguments)."""


class PlanAgent:
    """The scripted planning agent (the oracle when every parameter is 1).

    Args:
        agent_id: the agent it plays.
        scenario: the task (its gold actions are the plan).
        setting: the human-participation setting.
        graph: the HAS Graph.
        tool_specs: the domain's tool specs by name.
        params: imperfections.
        team: the plan state shared with the other agents of the episode.
        rng: the seeded generator of the agents.
    """

    def __init__(
        self,
        agent_id: str,
        scenario: Scenario,
        setting: Setting,
        graph: HASGraph,
        tool_specs: dict[str, ToolSpec],
        params: PlanParams,
        team: TeamPlan,
        rng: np.random.Generator,
    ) -> None:
        self.me = agent_id
        self.scenario = scenario
        self.setting = setting
        self.graph = graph
        self.specs = tool_specs
        self.params = params
        self.team = team
        self.rng = rng
        self._needs = [action_needs(scenario, g) for g in team.gold]
        self._expect: tuple[str, int] | None = None

    def _chance(self, p: float) -> bool:
        return p >= 1.0 or (p > 0.0 and self.rng.random() < p)

    async def act(self, obs: AgentObservation) -> Action:
        """Next step of the plan for this agent."""
        if obs.last_result is not None:
            self._absorb(obs.last_result)
        for incoming in obs.inbox:  # unsolicited human input: used like feedback
            if incoming.facts and self._chance(self.params.uptake):
                for key, value in incoming.facts.items():
                    self.team.learned[(incoming.sender, key)] = value
                    self.team.knowledge += f"\n{value}"
        self._expect = None
        team = self.team
        while team.cursor < len(team.gold):
            index = team.cursor
            gold = team.gold[index]
            for ahead in range(index, len(team.gold)):
                action = self._gather(ahead, obs)
                if action is not None:
                    return action
            if gold.requestor != self.me and gold.requestor in self.graph.agents():
                return self._pass_to(gold.requestor, obs)
            arguments = self._arguments(index)
            if arguments is None:
                team.cursor += 1
                continue
            if gold.requestor != self.me:  # a user-side action: ask its owner to run it
                if self._reaches(gold.requestor, "control", obs):
                    self._expect = ("execute", index)
                    return self._control(gold.name, arguments, "execute", gold.requestor)
                team.cursor += 1
                continue
            action = self._perform(index, gold, arguments, obs)
            if action is not None:
                return action
        return self._wrap_up(obs)

    # -- plan steps ------------------------------------------------------------------

    def _perform(
        self, index: int, gold: GoldAction, arguments: dict[str, Any], obs: AgentObservation
    ) -> Action | None:
        spec = self.specs.get(gold.name)
        risk = spec.risk if spec is not None else "none"
        gated = self.setting.needs_authorization(risk, gold.protected)
        wants_approval = gold.protected or gated or index in self.team.needs_approval
        if wants_approval:
            if self._reaches(None, "control", obs):
                if (look := self._look_up(arguments, obs)) is not None:
                    return look
                if index in self.team.needs_approval or self._chance(self.params.discipline):
                    self._expect = ("approval", index)
                    return self._control(gold.name, arguments, "approval", None)
        self._expect = ("call", index)
        return CallTool(gold.name, arguments)

    def _look_up(self, arguments: dict[str, Any], obs: AgentObservation) -> CallTool | None:
        """A read of what an action acts on, once, before asking a person to approve it.

        As a model would, the agent looks at the record (a read tool of its own whose
        required arguments the action carries) so that the approval request can say what
        it found, such as the balance a refund or a closure depends on. Nothing is read
        when the team has already seen such a text.
        """
        if seen_about(arguments, self.team.outputs) is not None:
            return None
        for tool in obs.view.tools:
            properties = set(tool.parameters.get("properties", {}))
            required = set(tool.parameters.get("required", properties))
            if tool.kind != "read" or not required or not required <= set(arguments):
                continue
            read = {key: arguments[key] for key in sorted(properties & set(arguments))}
            key = f"{tool.name} {json.dumps(read, sort_keys=True)}"
            if key not in self.team.looked:
                self.team.looked.add(key)
                return CallTool(tool.name, read)
        return None

    def _gather(self, index: int, obs: AgentObservation) -> Action | None:
        """A channel request (or a wait) for a human-held fact a gold action needs."""
        team = self.team
        for need in self._needs[index]:
            pair = (need.user, need.key)
            if pair in team.learned or team.guessed.get(pair):
                continue
            can_ask = self._reaches(need.user, "clarification", obs)
            can_review = need.user not in team.reviewed and self._reaches(
                need.user, "feedback", obs
            )
            if need.revision_turn is not None:
                if obs.step < need.revision_turn:
                    if (can_ask or can_review) and self.graph.may_message(self.me, need.user):
                        return SendMessage(need.user, "Working on your request; more soon.")
                    continue
                if can_review:
                    return self._review(index, need.user)
            if not (can_ask or can_review):
                if not self._team_reaches(need.user):
                    team.guessed[pair] = True  # nobody can ask: act on a guess
                continue
            if pair in team.asked:
                continue
            if not self._chance(self.params.ask):
                team.guessed[pair] = True
                continue
            if can_ask:
                topics = self._open_topics(need.user, obs.step)
                team.asked.update((need.user, t) for t in topics)
                self._expect = ("ask", index)
                question = "Could you tell me your " + ", ".join(
                    t.replace("_", " ") for t in topics
                )
                return CallTool(
                    "ask_clarification",
                    {"question": question + "?", "topics": topics, "target": need.user},
                )
            return self._review(index, need.user)
        return None

    def _open_topics(self, user: str, step: int) -> list[str]:
        """Every fact of ``user`` the rest of the plan needs and nobody asked for yet."""
        topics: list[str] = []
        for needs in self._needs[self.team.cursor :]:
            for need in needs:
                if need.user != user or (user, need.key) in self.team.asked:
                    continue
                if need.revision_turn is not None and need.revision_turn > step:
                    continue
                if (user, need.key) not in self.team.learned and need.key not in topics:
                    topics.append(need.key)
        return topics

    def _review(self, index: int, user: str) -> Action:
        self.team.reviewed.add(user)
        self._expect = ("review", index)
        gold = self.team.gold[index]
        arguments = self._known_arguments(gold.arguments)
        for need in self._needs[index]:
            if (need.user, need.key) not in self.team.learned:
                fact = str(_fact(self.scenario, need.user, need.key))
                for name, value in arguments.items():
                    if _depends_on(value, fact):
                        arguments[name] = str(value).replace(fact, f"<{need.key}?>")
        known = self.team.knowledge.lower()
        for name, value in arguments.items():
            if _is_identifier(value) and value.lower() not in known:
                arguments[name] = f"<{name}?>"
        draft = f"Planned next step: {gold.name} " + json.dumps(arguments, sort_keys=True)
        return CallTool(
            "request_feedback",
            {"artifact": draft, "question": "Is this what you want?", "target": user},
        )

    def _arguments(self, index: int) -> dict[str, Any] | None:
        """The arguments the team can fill in now; None when it cannot do the action."""
        gold = self.team.gold[index]
        for need in self._needs[index]:
            if (need.user, need.key) not in self.team.learned and not self.team.guessed.get(
                (need.user, need.key)
            ):
                return None
        spec = self.specs.get(gold.name)
        enums = spec.enum_values() if spec else set()
        known = self.team.knowledge.lower()
        for leaf in scalar_values(gold.arguments):
            if _is_identifier(leaf) and leaf not in enums and str(leaf).lower() not in known:
                if not any(_depends_on(leaf, v) for v in self.team.learned.values()):
                    return None  # never observed: the team cannot know it
        arguments = self._known_arguments(gold.arguments)
        if any(self._guessed_blind(need, gold.arguments) for need in self._needs[index]):
            arguments = {name: _garble(value) for name, value in arguments.items()}
        if index not in self.team.garbled:
            self.team.garbled[index] = (
                ""
                if self._chance(self.params.competence)
                else str(self.rng.choice(["skip", "garble"]))
            )
        fault = self.team.garbled[index]
        if fault == "skip":
            return None
        if fault == "garble" and arguments:
            key = sorted(arguments)[0]
            arguments[key] = _garble(arguments[key])
        return arguments

    def _guessed_blind(self, need: Need, arguments: dict[str, Any]) -> bool:
        """A guessed fact that decides the action without being quoted in its arguments."""
        pair = (need.user, need.key)
        if not self.team.guessed.get(pair) or pair in self.team.learned:
            return False
        fact = _fact(self.scenario, need.user, need.key)
        return not any(_depends_on(leaf, fact) for leaf in scalar_values(arguments))

    def _known_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Gold arguments with guessed (never learned) facts replaced by wrong values."""
        result = json.loads(json.dumps(arguments))
        for (user, key), guessed in self.team.guessed.items():
            if not guessed or (user, key) in self.team.learned:
                continue
            fact = _fact(self.scenario, user, key)
            for name, value in list(result.items()):
                if _depends_on(value, fact):
                    result[name] = _garble(value)
        return result

    def _pass_to(self, other: str, obs: AgentObservation) -> Action:
        gold = self.team.gold[self.team.cursor]
        facts = "; ".join(f"{k}={v}" for (_, k), v in sorted(self.team.learned.items()))
        text = f"Next step is yours: {gold.name}. Known facts: {facts or 'none'}."
        peers = [p.participant_id for p in obs.view.peers]
        if other in peers:
            return SendMessage(other, text)
        if obs.delegator is not None:
            return Finish(text)
        hop = _next_hop(self.graph, self.me, other, peers)
        return SendMessage(hop, text) if hop else Finish(text)

    def _wrap_up(self, obs: AgentObservation) -> Action:
        info = [
            c
            for c in self.scenario.evaluation_criteria.communicate_info
            if not human_needs(self.scenario, {"c": c})
            or all(
                (n.user, n.key) in self.team.learned for n in human_needs(self.scenario, {"c": c})
            )
        ]
        parts = ["Done."]
        if info and self._chance(self.params.competence):
            parts.append("Key information: " + "; ".join(info) + ".")
        if self.team.done:
            parts.append("Recorded changes: " + "; ".join(self.team.done) + ".")
        return Finish(" ".join(parts))

    # -- results ---------------------------------------------------------------------

    def _absorb(self, result: ActionResult) -> None:
        team = self.team
        expect = self._expect
        if result.tool_output is not None or (
            isinstance(result.action, CallTool) and result.error_type is None
        ):
            team.knowledge += "\n" + result.text
            if result.tool_output is not None:
                team.outputs.append(result.text)
        if expect is None:
            return
        kind, index = expect
        gold = team.gold[index]
        response = result.response
        if kind == "call":
            if result.error_type == "needs_authorization":
                team.needs_approval.add(index)
                return
            if result.error_type is None:
                self._record_done(gold.name, result.action)
            team.cursor += 1
        elif kind in ("approval", "execute"):
            if isinstance(response, ControlDecision) and response.decision in (
                "approve", "modify", "override", "execute", "take_over",
            ):  # fmt: skip
                self._record_done(gold.name, result.action)
            team.cursor += 1
        elif kind == "ask" and isinstance(response, ClarificationResponse):
            user = result.request.target if result.request else None
            for key, value in response.info.items():
                team.learned[(user, key)] = value
                team.knowledge += f"\n{value}"
            for key in result.request.topics if result.request else []:
                pair = (user, key)
                if pair not in team.learned and team.refusals.get(pair, 0) < MAX_REASKS:
                    team.refusals[pair] = team.refusals.get(pair, 0) + 1
                    team.asked.discard(pair)  # withheld: ask once more later
        elif kind == "review" and isinstance(response, FeedbackResponse):
            user = result.request.target if result.request else None
            if response.edits and self._chance(self.params.uptake):
                for key, value in response.edits.items():
                    team.learned[(user, key)] = value
                    team.knowledge += f"\n{value}"

    def _record_done(self, name: str, action: Action) -> None:
        spec = self.specs.get(name)
        if isinstance(action, CallTool) and spec is not None and spec.kind == "write":
            arguments = action.arguments.get("arguments", action.arguments)
            self.team.done.append(f"{name} {json.dumps(arguments, sort_keys=True)}")

    # -- helpers ---------------------------------------------------------------------

    def _reaches(self, user: str | None, channel: str, obs: AgentObservation) -> bool:
        if channel not in obs.view.channels:
            return False
        humans = [user] if user is not None else self.graph.humans()
        return any(channel in self.graph.channels_between(self.me, h) for h in humans)

    def _team_reaches(self, user: str) -> bool:
        """Whether any agent can ask ``user`` over clarification or feedback."""
        channels = self.setting.enabled_channels() & {"clarification", "feedback"}
        return any(
            channels & self.graph.channels_between(agent, user) for agent in self.graph.agents()
        )

    def _control(
        self, name: str, arguments: dict[str, Any], mode: str, target: str | None
    ) -> CallTool:
        args: dict[str, Any] = {"tool_name": name, "arguments": arguments, "mode": mode}
        if target is not None:
            args["target"] = target
        if mode == "approval":
            args["reason"] = approval_reason(name, arguments, self.team.outputs)
        else:
            args["reason"] = f"Please carry out {name} for this task."
        return CallTool("request_control", args)


class IdleAgent:
    """Does nothing and finishes at once (no task may pass with it)."""

    async def act(self, obs: AgentObservation) -> Action:
        """Finish with an empty deliverable."""
        return Finish("")


@agent_backend("scripted:oracle", label="oracle (reads the answer key)", reads_answer_key=True,
               check=parse_agent_spec)  # fmt: skip
@agent_backend("scripted:strong", label="planner preset (reads the answer key)",
               reads_answer_key=True, check=parse_agent_spec)  # fmt: skip
@agent_backend("scripted:weak", label="planner preset (reads the answer key)",
               reads_answer_key=True, check=parse_agent_spec)  # fmt: skip
@agent_backend("scripted:agent", label="planner (reads the answer key)", reads_answer_key=True,
               check=parse_agent_spec)  # fmt: skip
def planning_team(model: str, seats: list[AgentSeat], key: AnswerKey) -> dict[str, PlanAgent]:
    """The gold-action planner (the oracle, or its parametric imperfect variants)."""
    params = parse_agent_spec(model)
    scenario = key.scenario
    knowledge = " ".join([scenario.task, *(a.profile for a in scenario.agents)])
    knowledge += " " + seats[0].view.policy
    team = TeamPlan(gold=list(scenario.evaluation_criteria.actions), knowledge=knowledge)
    return {
        seat.view.agent_id: PlanAgent(
            seat.view.agent_id,
            scenario,
            key.setting,
            key.graph,
            dict(key.tool_specs),
            params,
            team,
            seat.rng,
        )  # fmt: skip
        for seat in seats
    }


@agent_backend("scripted:idle", label="does nothing", check=parse_agent_spec)
def idle_team(model: str, seats: list[AgentSeat]) -> dict[str, IdleAgent]:
    """Every agent finishes at once."""
    return {seat.view.agent_id: IdleAgent() for seat in seats}


def _garble(value: Any) -> Any:
    if isinstance(value, list):
        return [_garble(item) for item in value]
    if isinstance(value, dict):
        return {key: _garble(item) for key, item in value.items()}
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "-x"
    return value


def _fact(scenario: Scenario, user_id: str, key: str) -> Any:
    user = scenario.user(user_id)
    if key in user.known_info:
        return user.known_info[key]
    for revision in user.goal_revisions:
        if key in revision.known_info:
            return revision.known_info[key]
    return None


def _next_hop(graph: HASGraph, start: str, goal: str, allowed: list[str]) -> str | None:
    """The neighbour of ``start`` on a shortest agent path to ``goal``."""
    import networkx as nx

    agents = nx.Graph()
    for source, target, _ in graph.edges():
        if source in graph.agents() and target in graph.agents():
            agents.add_edge(source, target)
    try:
        path = nx.shortest_path(agents, start, goal)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return allowed[0] if allowed else None
    return path[1] if len(path) > 1 and path[1] in allowed else (allowed[0] if allowed else None)


# -- the scripted user ------------------------------------------------------------------


class ScriptedUser:
    """A human that answers from known_info according to its persona.

    Patience sets how many requests it answers before refusing more questions and
    reviews; cooperativeness how likely it withholds an asked-for fact, and whether it
    volunteers one more fact unasked (a forthcoming persona); risk tolerance and
    assertiveness drive control decisions. It tells a goal revision when next asked.

    Args:
        rng: the seeded generator of the humans.
        guarded: play a more guarded human: patience, cooperativeness and risk tolerance of
            the persona in effect are halved (the ``scripted:user-guarded`` profile).
        forthcoming: play a more forthcoming human: those three dimensions move halfway to
            1 (the ``scripted:user-forthcoming`` profile).

    Raises:
        ValueError: both guarded and forthcoming.
    """

    def __init__(
        self, rng: np.random.Generator, guarded: bool = False, forthcoming: bool = False
    ) -> None:
        if guarded and forthcoming:
            raise ValueError("a scripted user is guarded or forthcoming, not both")
        self.rng = rng
        self.guarded = guarded
        self.forthcoming = forthcoming
        self.told: set[str] = set()
        """Known facts this human has told so far."""

    def _persona(self, view: HumanView) -> Persona:
        """The persona in effect, moved as this profile says (guarded, forthcoming)."""
        persona = view.persona
        if not (self.guarded or self.forthcoming):
            return persona
        moved = ("patience", "cooperativeness", "risk_tolerance")
        if self.guarded:
            return persona.model_copy(update={d: getattr(persona, d) / 2 for d in moved})
        return persona.model_copy(update={d: (1 + getattr(persona, d)) / 2 for d in moved})

    async def clarify(self, view: HumanView, request: ChannelRequest) -> ClarificationResponse:
        """Answer the asked-for facts from known_info; restate the goal if none is known."""
        persona = self._persona(view)
        if _out_of_patience(view, persona):
            return ClarificationResponse(
                content="I have answered enough questions already.", refused=True
            )
        info: dict[str, Any] = {}
        lines: list[str] = []
        if view.untold_revision is not None:
            lines.append(f"Note that my goal has changed: {view.untold_revision.goal}")
            info.update(view.untold_revision.known_info)
        unknown: list[str] = []
        for key in _asked_keys(view, request):
            if key in view.known_info:
                withhold = max(0.0, 0.5 - persona.cooperativeness) * 2
                if withhold > 0 and self.rng.random() < withhold:
                    lines.append(f"I'd rather not say what my {key.replace('_', ' ')} is.")
                    continue
                info[key] = view.known_info[key]
            else:
                unknown.append(key)
        volunteered = self._volunteer(view, persona, request, info)
        terse = persona.patience < 0.34  # one "label: value" line per fact
        for key, value in info.items():
            label, said = key.replace("_", " "), _spoken(value)
            lines.append(f"{label}: {said}" if terse else f"My {label} is {said}.")
        wants = [k for k in unknown if _WANT_WORDS & set(re.findall(r"[a-z]+", k.lower()))]
        lines += [f"I don't know the {k.replace('_', ' ')}." for k in unknown if k not in wants]
        if wants or (unknown and not info):  # asked what it wants, or about nothing it holds
            lines.append(f"What I want is this: {view.goal}")
        if volunteered is not None:
            key, value = volunteered
            lines.append(f"Also, in case it helps: my {key.replace('_', ' ')} is {_spoken(value)}.")
            info[key] = value
        self.told.update(info)
        if not lines:
            lines.append("I'm not sure what you need from me; please ask about something specific.")
        return ClarificationResponse(content=("\n" if terse else " ").join(lines), info=info)

    def _volunteer(
        self, view: HumanView, persona: Persona, request: ChannelRequest, info: dict[str, Any]
    ) -> tuple[str, Any] | None:
        """A known fact a forthcoming human (cooperativeness 0.67+) adds unasked, if any.

        It is the first of its facts that it has not told yet, that the answer does not
        already give, and that the question does not mention.
        """
        if persona.cooperativeness < 0.67:
            return None
        text = request.content.lower()
        for key, value in view.known_info.items():
            mentioned = key.lower() in text or key.replace("_", " ").lower() in text
            if key not in self.told and key not in info and not mentioned:
                return key, value
        return None

    async def review(self, view: HumanView, request: ChannelRequest) -> FeedbackResponse:
        """Point out a goal change and known facts the artifact lacks.

        A cooperative reviewer names the missing facts the artifact refers to (e.g. a
        ``<case_number?>`` gap) or its own goal asks for (a goal that wants "the case
        number"); an assertive one names every missing fact.
        """
        persona = self._persona(view)
        if _out_of_patience(view, persona) and view.untold_revision is None:
            return FeedbackResponse(content="I have no time for another review.", labels=["skip"])
        edits: dict[str, Any] = {}
        notes: list[str] = []
        if view.untold_revision is not None:
            notes.append(f"My goal has changed: {view.untold_revision.goal}")
            edits.update(view.untold_revision.known_info)
        text = request.content.lower()
        wants = f"{view.goal} {view.task_instructions}".lower()
        for key, value in view.known_info.items():
            if _states(text, value) or key in edits:
                continue
            label = key.replace("_", " ").lower()
            relevant = key.lower() in text or label in text or label in wants
            if (relevant and persona.cooperativeness >= 0.34) or persona.assertiveness >= 0.67:
                edits[key] = value
        for key, value in edits.items():
            if key not in (view.untold_revision.known_info if view.untold_revision else {}):
                notes.append(f"It should use my {key.replace('_', ' ')}: {value}.")
        if not notes:
            rating = 4 if persona.assertiveness >= 0.67 else 5
            return FeedbackResponse(
                content="That looks right to me.", rating=rating, labels=["accept"]
            )
        rating = 1 if persona.assertiveness >= 0.67 else 2
        return FeedbackResponse(
            content=" ".join(notes), rating=rating, labels=["revise"], edits=edits or None
        )

    async def decide(
        self, view: HumanView, request: ChannelRequest, facts: ActionFacts
    ) -> ControlDecision:
        """Decide on an action by persona; execute a user-side action when asked.

        Arguments that contradict the human's known facts: a very assertive human
        (assertiveness 0.8+) overrides them with its own full set, an assertive one (0.5+)
        modifies just the wrong ones, anyone else denies. An action riskier than it
        tolerates (:meth:`_dares`): it takes the action over when it holds a human-side tool
        for it and is cooperative (0.5+), stops the whole episode when it is very cautious
        (below 0.1) and assertive (0.5+) about a high-risk action, else denies. Otherwise it
        approves.
        """
        persona = self._persona(view)
        action = request.action
        arguments = dict(action.arguments) if action else {}
        conflicts = {
            k: view.known_info[k]
            for k, v in arguments.items()
            if k in view.known_info and not _depends_on(v, view.known_info[k])
        }
        if request.form == "execute":
            if persona.cooperativeness < 0.34 and self.rng.random() < 0.5:
                return ControlDecision(decision="deny", content="I'd rather not do that myself.")
            return ControlDecision(decision="execute", content="Done, I did it.")
        if conflicts:
            if persona.assertiveness >= 0.8:
                return ControlDecision(
                    decision="override",
                    content="No. Run it exactly like this, with my details.",
                    arguments={**arguments, **conflicts},
                )
            if persona.assertiveness >= 0.5:
                return ControlDecision(
                    decision="modify", content="Not like that; use my details.", arguments=conflicts
                )
            return ControlDecision(decision="deny", content="That does not match what I want.")
        if not self._dares(persona.risk_tolerance, facts.risk):
            own = _own_tool(view, action.name if action else "", arguments)
            if own is not None and persona.cooperativeness >= 0.5:
                return ControlDecision(
                    decision="take_over",
                    content="I'd rather do this myself.",
                    tool=own[0],
                    arguments=own[1],
                )
            if (
                facts.risk == "high"
                and persona.risk_tolerance < 0.1
                and persona.assertiveness >= 0.5
            ):
                return ControlDecision(decision="stop", content="Stop. I don't want any of this.")
            return ControlDecision(decision="deny", content="That is too risky for me.")
        return ControlDecision(decision="approve", content="Yes, go ahead.")

    def _dares(self, tolerance: float, risk: str) -> bool:
        """Whether it lets an action of this risk go ahead, by its risk tolerance.

        A high-risk action never below 0.25 and always from 0.5 on; a medium-risk one never
        below 0.05 and always from 0.3 on; in between, with a chance that grows linearly
        with the tolerance. Anything less risky always.
        """
        floor = DARE_FLOORS.get(risk)
        if floor is None or tolerance >= floor + DARE_BAND:
            return True
        if tolerance < floor:
            return False
        return float(self.rng.random()) < (tolerance - floor) / DARE_BAND

    async def next_subtask(self, view: HumanView, given: int) -> str | None:
        """The next part of its goal, one sentence per round, then a request to wrap up.

        The first subtask also tells what the human knows (a driving human hands over the
        details it expects the agent to need).
        """
        parts = [p for p in re.split(r"(?<=[.!?])\s+", view.goal.strip()) if p]
        if given < len(parts):
            text = f"Next, please do this: {parts[given]}"
            if given == 0 and view.known_info:
                facts = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in view.known_info.items())
                text += f" You may need these details: {facts}."
            return text
        if given == len(parts):
            return "That is all. Please tell me what you did and finish."
        return None

    async def intervene(self, view: HumanView, rule: TriggerRule, agent_id: str) -> str:
        """A spontaneous message: a fact, a reminder of the goal, or a caution."""
        if rule.action_type == "clarification" and view.known_info:
            key = sorted(view.known_info)[0]
            return f"For your information, my {key.replace('_', ' ')} is {view.known_info[key]}."
        if rule.action_type == "feedback":
            return f"Please check your work against what I want: {view.goal}"
        return "Please hold on before changing anything important."


def _spoken(value: Any) -> str:
    """A fact's value as a person says it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _own_tool(
    view: HumanView, action: str, arguments: dict[str, Any]
) -> tuple[str, dict[str, Any]] | None:
    """A human-side tool of the human for the same thing as ``action``, with its arguments.

    The tool's name shares a word of four or more letters with the action's name (the
    customer's ``toggle_roaming`` for the agent's ``enable_roaming``); its required
    parameters are filled from the action's arguments or the human's known facts.
    """
    words = {w for w in action.split("_") if len(w) >= 4}
    for spec in view.tools:
        if not words & {w for w in spec.name.split("_") if len(w) >= 4}:
            continue
        params = spec.parameters.get("properties", {})
        values = {**view.known_info, **arguments}
        filled = {name: values[name] for name in params if name in values}
        if all(name in filled for name in spec.parameters.get("required", [])):
            return spec.name, filled
    return None


DARE_FLOORS = {"high": 0.25, "medium": 0.05}
"""The risk tolerance below which a scripted human never lets an action of that risk go."""
DARE_BAND = 0.25
"""Above its floor, the width of the band in which a human's consent grows with tolerance."""
_WANT_WORDS = {"request", "goal", "want", "wish"}
"""Words of a question topic that ask what a person wants (answered with their goal)."""


def _out_of_patience(view: HumanView, persona: Persona) -> bool:
    """Patience sets how many requests a human answers: 1 at patience 0, 5 at patience 1."""
    return view.asks > 1 + round(persona.patience * 4)


def _asked_keys(view: HumanView, request: ChannelRequest) -> list[str]:
    """known_info / unknown_info keys the request asks about (topics, else named in text).

    A topic asks about a key when one's words contain the other's ("email" asks about
    ``payer_email``, "zip code" about ``zip``); a topic matching no key stays as asked, so
    the answer can say it is not known.
    """
    candidates = list(view.known_info) + list(view.unknown_info)
    if request.topics:
        asked = [k for k in candidates if any(_about(t, k) for t in request.topics)]
        unmatched = [t for t in request.topics if not any(_about(t, k) for k in candidates)]
        return asked + unmatched
    text = request.content.lower()
    return [k for k in candidates if k.lower() in text or k.replace("_", " ").lower() in text]


def _states(text: str, value: Any) -> bool:
    """Whether a (lower-case) text states a value as a whole: "mode" is not in "model"."""
    wanted = re.escape(str(value).lower())
    return re.search(rf"(?<![a-z0-9_]){wanted}(?![a-z0-9_])", text) is not None


def _about(topic: str, key: str) -> bool:
    """Whether a topic names a fact: the words of one include the words of the other.

    Words are compared by their stems, without filler words, so "how digits are grouped"
    asks about ``digit_grouping``.
    """
    words, key_words = _stems(topic), _stems(key)
    return bool(words) and bool(key_words) and (words <= key_words or key_words <= words)


_FILLER = frozenset(
    "a an the is are was be do does did how what which who whom when where why your my "
    "of for to in on at by with and or it its this that".split()
)


def _stems(text: str) -> set[str]:
    """The stems of a text's words, filler words left out ("grouped" and "grouping": group)."""
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _FILLER}


def _stem(word: str) -> str:
    """A word without its plural or verb ending (a light stemmer for matching topics)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 4:
            return word[: -len(ending)]
    return word


@user_backend("scripted:user", label="scripted user (answers from its known facts by persona)")
def scripted_user(model: str, seat: HumanSeat) -> ScriptedUser:
    """A human answering from its known facts according to its persona."""
    return ScriptedUser(seat.rng)


@user_backend(
    "scripted:user-guarded",
    label="scripted user, guarded profile (half the persona's patience, cooperativeness and "
    "risk tolerance)",
)
def guarded_user(model: str, seat: HumanSeat) -> ScriptedUser:
    """A more guarded scripted human: a second user-simulator profile."""
    return ScriptedUser(seat.rng, guarded=True)


@user_backend(
    "scripted:user-forthcoming",
    label="scripted user, forthcoming profile (the persona's patience, cooperativeness and "
    "risk tolerance halfway to 1)",
)
def forthcoming_user(model: str, seat: HumanSeat) -> ScriptedUser:
    """A more forthcoming scripted human: a third user-simulator profile."""
    return ScriptedUser(seat.rng, forthcoming=True)
