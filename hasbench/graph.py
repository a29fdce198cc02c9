"""The HAS Graph: humans and agents as participants joined by typed relations.

Nodes are :class:`Participant` objects (agents and humans share one model). Edges are
directed and labelled with a relation from :data:`RELATIONS`; the relation type says which
of the three human-interaction channels (clarification, feedback, control) the edge
carries, which kinds of participant it joins, and whether it allows delegation and free
messages. Agent-agent labels depend on the coordination mode (``MODE_LABELS`` in
:mod:`hasbench.scenario`): ``delegates`` (star, hub -> worker), ``handoff`` (chain,
earlier -> later), ``parent`` (tree, parent -> child) and ``collaborates`` (graph).

Channel requests are routed along these typed edges to a specific human
(:meth:`HASGraph.route`), never to a generic "human"; :meth:`HASGraph.may_call` enforces
tool permissions. Drawing a graph is :mod:`hasbench.graph_drawing`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from hasbench.scenario import MODE_LABELS, Scenario
from hasbench.scenario import structure_problems as mode_structure_problems
from hasbench.vocab import canonical_json

Kind = Literal["agent", "human"]
CHANNELS: tuple[str, ...] = ("clarification", "feedback", "control")
CHANNEL_ABBREVIATIONS: dict[str, str] = {"clarification": "C", "feedback": "F", "control": "Ctl"}
GRAPH_JSON_VERSION = 1


@dataclass(frozen=True)
class RelationType:
    """What an edge label means.

    Attributes:
        label: the edge label used in task files.
        source_kind: the kind of participant the edge starts at.
        target_kind: the kind of participant the edge ends at.
        channels: the human-interaction channels the edge carries.
        delegation: whether the source may hand work to the target.
        messages: whether the two ends may exchange free messages (besides channel
            requests).
        description: one line for people.
    """

    label: str
    source_kind: Kind
    target_kind: Kind
    channels: frozenset[str]
    delegation: bool
    messages: bool
    description: str


def _relation(
    label: str,
    source: Kind,
    target: Kind,
    channels: Iterable[str],
    *,
    delegation: bool,
    messages: bool,
    description: str,
) -> RelationType:
    return RelationType(
        label, source, target, frozenset(channels), delegation, messages, description
    )


RELATIONS: dict[str, RelationType] = {
    r.label: r
    for r in (
        _relation(
            "delegates", "agent", "agent", (), delegation=True, messages=True,
            description="a hub agent assigns sub-tasks to a worker agent (star)",
        ),
        _relation(
            "handoff", "agent", "agent", (), delegation=True, messages=True,
            description="an agent passes the task on to the next agent (chain)",
        ),
        _relation(
            "parent", "agent", "agent", (), delegation=True, messages=True,
            description="a parent agent directs a child agent (tree)",
        ),
        _relation(
            "collaborates", "agent", "agent", (), delegation=False, messages=True,
            description="peer agents work on the task together (graph)",
        ),
        _relation(
            "supervises", "human", "agent", CHANNELS, delegation=True, messages=True,
            description="the task owner: clarifies, gives feedback and controls actions",
        ),
        _relation(
            "informs", "human", "agent", ("clarification",), delegation=False, messages=False,
            description="a domain expert who answers questions about missing facts",
        ),
        _relation(
            "reviews", "human", "agent", ("feedback",), delegation=False, messages=False,
            description="a reviewer who judges the agent's intermediate or final output",
        ),
        _relation(
            "authorizes", "human", "agent", ("control",), delegation=False, messages=False,
            description="a safety reviewer who approves or denies protected actions",
        ),
        _relation(
            "operates", "human", "agent", ("control", "clarification"), delegation=False,
            messages=True,
            description="a human who executes user-side actions and reports what they see",
        ),
    )
}  # fmt: skip
"""Edge label -> relation type."""


class GraphError(ValueError):
    """A scenario whose participants and relations cannot form a HAS Graph."""


class RoutingError(LookupError):
    """No human reachable from the sender over the requested channel."""

    def __init__(self, sender: str, channel: str, message: str) -> None:
        super().__init__(message)
        self.sender = sender
        self.channel = channel


class Request(Protocol):
    """Anything that can be routed: a sender, a channel and an optional target."""

    sender: str
    channel: str
    target: str | None


class Participant(BaseModel):
    """A node of the HAS Graph: an LLM agent or a human.

    Attributes:
        id: the participant id from the task file.
        kind: "agent" or "human".
        role: a short role name (e.g. "task owner", "safety reviewer").
        responsibilities: what this participant is accountable for.
        capabilities: what this participant can do.
        tools: domain tools this participant may call; ``None`` (agents only) means every
            agent-side tool.
        visibility: participants whose messages it may observe; ``None`` means its
            neighbours.
        persona: persona id (humans).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: Kind
    role: str | None = None
    responsibilities: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    tools: list[str] | None = None
    visibility: list[str] | None = None
    persona: str | None = None


class HASGraph:
    """Participants and typed relations of one task, on a ``networkx.MultiDiGraph``.

    Attributes:
        graph: the underlying graph; node attribute ``participant``, edge key = label.
        mode: the coordination mode (star, chain, tree, graph).
        task_id: the task the graph was built from.
    """

    def __init__(
        self, participants: Iterable[Participant], edges: Iterable[tuple[str, str, str]],
        mode: str, task_id: str = "",
    ) -> None:  # fmt: skip
        """Build a graph; raises GraphError for unknown labels or participants.

        Args:
            participants: the nodes, agents and humans in declaration order.
            edges: ``(source, target, label)`` triples.
            mode: the coordination mode.
            task_id: the task id, used in messages and the drawing's title.
        """
        self.mode = mode
        self.task_id = task_id
        self.graph = nx.MultiDiGraph()
        for p in participants:
            if p.id in self.graph:
                raise GraphError(f"{task_id}: participant {p.id!r} is defined twice")
            self.graph.add_node(p.id, participant=p)
        for index, (source, target, label) in enumerate(edges):
            where = f"{task_id}: relationships[{index}]"
            if label not in RELATIONS:
                known = ", ".join(sorted(RELATIONS))
                raise GraphError(f"{where}: unknown relation {label!r} (known: {known})")
            for end in (source, target):
                if end not in self.graph:
                    raise GraphError(f"{where}: participant {end!r} is not defined")
            self.graph.add_edge(source, target, key=label, label=label)

    @classmethod
    def from_scenario(
        cls, scenario: Scenario, domain_tools: Mapping[str, str] | None = None
    ) -> HASGraph:
        """The HAS Graph of a task.

        Args:
            scenario: the task.
            domain_tools: tool name -> side ("agent" or "user") of the domain's tools. When
                given, an agent whose ``tools`` is unset holds every agent-side tool;
                otherwise such an agent is unrestricted.
        """
        agent_side = (
            sorted(name for name, side in domain_tools.items() if side == "agent")
            if domain_tools is not None
            else None
        )
        participants = [
            Participant(
                id=a.agent_id, kind="agent", role=a.role,
                responsibilities=list(a.responsibilities), capabilities=list(a.capabilities),
                tools=list(a.tools) if a.tools is not None else agent_side,
                visibility=a.visibility,
            )
            for a in scenario.agents
        ] + [
            Participant(
                id=u.user_id, kind="human", role=u.role,
                responsibilities=list(u.responsibilities), capabilities=list(u.capabilities),
                tools=list(u.tools), persona=u.persona,
            )
            for u in scenario.users
        ]  # fmt: skip
        edges = [(r.source, r.target, r.label) for r in scenario.relationships]
        return cls(participants, edges, scenario.coordination_mode, scenario.task_id)

    # -- participants --------------------------------------------------------------

    def participant(self, pid: str) -> Participant:
        """The participant with this id; raises KeyError naming it if there is none."""
        if pid not in self.graph:
            raise KeyError(f"{self.task_id}: no participant {pid!r}")
        return self.graph.nodes[pid]["participant"]

    def participants(self) -> list[Participant]:
        """All participants in declaration order."""
        return [data["participant"] for _, data in self.graph.nodes(data=True)]

    def agents(self) -> list[str]:
        """Agent ids in declaration order."""
        return [p.id for p in self.participants() if p.kind == "agent"]

    def humans(self) -> list[str]:
        """Human ids in declaration order."""
        return [p.id for p in self.participants() if p.kind == "human"]

    def edges(self) -> list[tuple[str, str, str]]:
        """``(source, target, label)`` triples in insertion order."""
        return [(s, t, label) for s, t, label in self.graph.edges(keys=True)]

    def neighbors(self, pid: str) -> list[str]:
        """Participants joined to ``pid`` by an edge in either direction, in declaration order."""
        self.participant(pid)
        adjacent = set(self.graph.successors(pid)) | set(self.graph.predecessors(pid))
        return [n for n in self.graph.nodes if n in adjacent and n != pid]

    def visible(self, pid: str) -> list[str]:
        """Participants whose messages ``pid`` may observe (its visibility or neighbours)."""
        p = self.participant(pid)
        return list(p.visibility) if p.visibility is not None else self.neighbors(pid)

    def labels_between(self, a: str, b: str) -> set[str]:
        """Labels of the edges joining ``a`` and ``b`` in either direction."""
        labels: set[str] = set()
        for source, target in ((a, b), (b, a)):
            if self.graph.has_edge(source, target):
                labels.update(self.graph[source][target])
        return labels

    def channels_between(self, a: str, b: str) -> set[str]:
        """Channels carried by the edges joining ``a`` and ``b`` in either direction."""
        channels: set[str] = set()
        for label in self.labels_between(a, b):
            channels |= RELATIONS[label].channels
        return channels

    def may_message(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` may exchange free messages (an edge allowing them)."""
        return any(RELATIONS[label].messages for label in self.labels_between(a, b))

    def may_call(self, pid: str, tool: str) -> bool:
        """Whether ``pid`` holds ``tool``.

        An agent holds its listed tools (or, when unrestricted, any tool); a human holds
        the user-side tools listed for it.
        """
        p = self.participant(pid)
        if p.tools is None:
            return p.kind == "agent"
        return tool in p.tools

    def lead(self) -> str:
        """The agent that receives the task first.

        The star hub, the chain head or the tree root; in graph mode (or a degenerate
        structure) the first agent supervised by a human, else the first agent.
        """
        agents = self.agents()
        sub = self.agent_subgraph()
        roots = [a for a in agents if sub.in_degree(a) == 0 and sub.out_degree(a) > 0]
        if self.mode != "graph" and len(roots) == 1:
            return roots[0]
        for agent in agents:
            if any("supervises" in self.labels_between(h, agent) for h in self.humans()):
                return agent
        return agents[0]

    # -- routing -------------------------------------------------------------------

    def route(self, request: Request) -> list[str]:
        """The human(s) a channel request from ``request.sender`` may reach.

        A human is reachable when an edge in either direction between it and the sender
        carries the request's channel. With ``request.target`` set, that human must be
        reachable and is the only one returned. A human-initiated request (the sender is
        a human) is routed the same way to the agents it may address.

        Raises:
            RoutingError: the channel is unknown, nobody is reachable, or the target is
                not one of the reachable participants.
        """
        sender, channel = request.sender, request.channel
        target = getattr(request, "target", None)
        if channel not in CHANNELS:
            raise RoutingError(sender, channel, f"unknown channel {channel!r}")
        if sender not in self.graph:
            raise RoutingError(sender, channel, f"unknown sender {sender!r}")
        human_sender = self.participant(sender).kind == "human"
        candidates = self.agents() if human_sender else self.humans()
        reachable = [p for p in candidates if channel in self.channels_between(sender, p)]
        if target is not None:
            if target in reachable:
                return [target]
            raise RoutingError(
                sender, channel, f"{target} cannot be reached from {sender} over {channel}"
            )
        if not reachable:
            kind = "agent" if human_sender else "human"
            raise RoutingError(sender, channel, f"no {kind} reachable from {sender} over {channel}")
        return reachable

    # -- structure -----------------------------------------------------------------

    def agent_subgraph(self) -> nx.DiGraph:
        """The agents and the agent-agent relations between them, as a plain digraph."""
        sub = nx.DiGraph()
        sub.add_nodes_from(self.agents())
        for source, target, label in self.edges():
            if RELATIONS[label].source_kind == "agent" and RELATIONS[label].target_kind == "agent":
                sub.add_edge(source, target)
        return sub

    def structure_problems(self, domain_tools: Mapping[str, str] | None = None) -> list[str]:
        """Problems with the graph's structure for its coordination mode ([] if none).

        Checks that every edge joins the kinds its relation expects, that agent-agent
        labels fit the mode, that the agents form the mode's shape (star: one hub;
        chain: one path; tree: one root and no cycle; graph: connected), that every human
        is related to an agent, and (with ``domain_tools``) that held tools exist on the
        right side. The shape rules are the schema's own (:mod:`hasbench.scenario`), so
        validation and the graph never disagree.
        """
        problems: list[str] = []
        allowed = MODE_LABELS.get(self.mode)
        if allowed is None:
            return [f"unknown coordination mode {self.mode!r}"]
        for source, target, label in self.edges():
            rel = RELATIONS[label]
            kinds = (self.participant(source).kind, self.participant(target).kind)
            if kinds != (rel.source_kind, rel.target_kind):
                problems.append(
                    f"{source} -> {target} {label!r}: joins {kinds[0]} -> {kinds[1]}, "
                    f"expected {rel.source_kind} -> {rel.target_kind}"
                )
            elif label not in allowed:
                problems.append(
                    f"{source} -> {target} {label!r}: not allowed in {self.mode} mode "
                    f"(allowed: {', '.join(sorted(allowed))})"
                )
        problems += self._shape_problems()
        for human in self.humans():
            if not any(self.participant(n).kind == "agent" for n in self.neighbors(human)):
                problems.append(f"{human}: not related to any agent")
        if domain_tools is not None:
            problems += self._tool_problems(domain_tools)
        return problems

    def _shape_problems(self) -> list[str]:
        if len(self.agents()) < 2:
            return []
        edges = list(self.agent_subgraph().edges())
        return mode_structure_problems(self.mode, self.agents(), edges)

    def _tool_problems(self, domain_tools: Mapping[str, str]) -> list[str]:
        problems = []
        for p in self.participants():
            side = "agent" if p.kind == "agent" else "user"
            for name in p.tools or []:
                if name not in domain_tools:
                    problems.append(f"{p.id}: tool {name!r} does not exist in this domain")
                elif domain_tools[name] != side:
                    problems.append(f"{p.id}: tool {name!r} is for the {domain_tools[name]} side")
        return problems

    # -- serialization -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible description of the graph."""
        return {
            "version": GRAPH_JSON_VERSION,
            "task_id": self.task_id,
            "mode": self.mode,
            "participants": [p.model_dump(mode="json") for p in self.participants()],
            "edges": [list(e) for e in self.edges()],
        }

    def to_json(self) -> str:
        """The graph as canonical JSON text (sorted keys)."""
        return canonical_json(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> HASGraph:
        """Rebuild a graph written by :meth:`to_json`; raises GraphError on bad input."""
        try:
            data = json.loads(text)
            participants = [Participant.model_validate(p) for p in data["participants"]]
            edges = [tuple(e) for e in data["edges"]]
            mode, task_id = data["mode"], data.get("task_id", "")
        except (ValueError, KeyError, TypeError) as exc:
            raise GraphError(f"not a HAS Graph JSON document: {exc}") from None
        if data.get("version") != GRAPH_JSON_VERSION:
            raise GraphError(
                f"HAS Graph JSON version {data.get('version')!r} is not {GRAPH_JSON_VERSION}"
            )
        if any(len(e) != 3 for e in edges):
            raise GraphError("not a HAS Graph JSON document: edges must be triples")
        return cls(participants, edges, mode, task_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HASGraph) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (
            f"HASGraph({self.task_id!r}, mode={self.mode!r}, agents={self.agents()}, "
            f"humans={self.humans()}, edges={len(self.edges())})"
        )
