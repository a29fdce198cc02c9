"""Base tasks: the source tasks step 1 keeps, with the compact view judges and reviewers read.

A :class:`BaseTask` is one retained source task. τ²-bench tasks come with their imported
scenario (:mod:`hasbench.build.tau2_import`); MultiAgentBench records come as they are
(their domains' importers live in those domains' modules). Every base task has a
:func:`view`: a small JSON-ready summary grounded in the source fields, built the way
the HAS paper's panel sees a task (App. B.3.1): the customer's request and behaviour,
what they know and don't, the tools and the gold path as tool names with argument
*keys* (never the hidden values), and which evaluation signals exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hasbench.build.source_filter import MARBLE_DOMAINS, TAU2_DOMAINS, read_marble
from hasbench.build.sources import Source, Tau2Source
from hasbench.envs import environment_class
from hasbench.scenario import Scenario

SOURCES = {**dict.fromkeys(TAU2_DOMAINS, "tau2-bench"), **dict.fromkeys(MARBLE_DOMAINS, "marble")}
"""Domain -> the benchmark its base tasks come from."""
MARBLE_ACTIONS = {
    "coding": ["create_solution", "give_advice_and_revise"],
    "research": [
        "get_related_papers", "get_recent_papers", "collect_publications_and_coauthors",
        "get_paper_by_keyword", "get_paper_by_arxiv_id", "get_paper_by_title", "fetch_webpage",
    ],
    "bargaining": [
        "offer_price", "accept_offer", "reject_and_counter", "provide_information",
        "inquire_intentions", "end_negotiation",
    ],
}  # fmt: skip
"""The environment actions each MultiAgentBench scenario registers."""
MARBLE_EVALUATION = {
    "coding": "LLM judge of the final solution.py: instruction following, executability, "
    "consistency, quality (1-5 each)",
    "research": "LLM judge of the team's five-question proposal: innovation, safety, "
    "feasibility (1-5 each)",
    "bargaining": "LLM judge of each side's negotiation: strategy, progress and outcome, "
    "interaction (1-5 each)",
}
TEXT_LIMIT = 2500
"""Characters kept of a long source text (MARBLE task contents run to 40,000)."""


@dataclass
class BaseTask:
    """One source task retained by step 1."""

    domain: str
    source_id: str
    scenario: Scenario | None = None
    """The imported scenario (τ² tasks)."""
    record: dict[str, Any] | None = None
    """The raw source record (MultiAgentBench tasks)."""
    view: dict[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The source benchmark."""
        return SOURCES[self.domain]

    @property
    def key(self) -> str:
        """``domain:source_id``, unique across the pool."""
        return f"{self.domain}:{self.source_id}"


def tau2_base_tasks(
    tau2: Tau2Source, domain: str, keep: set[str]
) -> tuple[list[BaseTask], list[str]]:
    """The kept τ² tasks of a domain (from its full set), imported (file order).

    Returns the base tasks and why each kept task that could not be imported was skipped.

    Raises:
        Tau2ImportError: a database is unusable.
    """
    from hasbench.build.tau2_import import import_tau2

    scenarios, skipped = import_tau2(
        tau2.tasks_file(domain, full=True), db=tau2.db(domain), domain=domain,
        user_db=tau2.user_db(domain), only=keep,
    )  # fmt: skip
    bases = [BaseTask(domain, s.source_task_id or s.task_id, scenario=s) for s in scenarios]
    for base in bases:
        base.view = tau2_view(base)
    return bases, skipped


def marble_base_tasks(marble: Source | str | Path, domain: str, keep: set[str]) -> list[BaseTask]:
    """The kept MultiAgentBench records of a scenario (file order)."""
    bases = [
        BaseTask(domain, str(r.get("task_id")), record=r)
        for r in read_marble(marble, domain)
        if str(r.get("task_id")) in keep
    ]
    for base in bases:
        base.view = marble_view(base)
    return bases


def tau2_view(base: BaseTask) -> dict[str, Any]:
    """The panel's view of an imported τ² task."""
    scenario = base.scenario
    assert scenario is not None
    specs = environment_class(base.domain)._specs
    user = scenario.users[0]
    criteria = scenario.evaluation_criteria

    def describe(name: str) -> dict[str, Any]:
        spec = specs.get(name)
        return {
            "name": name,
            "kind": spec.kind if spec else "?",
            "risk": spec.risk if spec else "?",
        }

    return {
        "source": base.source,
        "source_id": base.source_id,
        "domain": base.domain,
        "customer_request": user.goal,
        "customer_behaviour": user.task_instructions,
        "known_info": sorted(user.known_info),
        "unknown_info": list(user.unknown_info),
        "agent_tools": [describe(n) for n, s in sorted(specs.items()) if s.side == "agent"],
        "customer_tools": list(user.tools),
        "gold_path": [
            {
                **describe(a.name),
                "by": "customer" if scenario.side_of(a) == "user" else "agent",
                "argument_keys": sorted(a.arguments),
            }
            for a in criteria.actions
            if not a.action_id.startswith("lookup_")
        ],
        "evaluation": {
            "reward_basis": list(criteria.reward_basis),
            "state_assertions": [a.func_name for a in criteria.env_assertions],
            "information_to_communicate": len(criteria.communicate_info),
            "nl_assertions": list(criteria.nl_assertions),
        },
        "participants": {"agents": ["support agent"], "humans": ["customer"]},
    }


def marble_view(base: BaseTask) -> dict[str, Any]:
    """The panel's view of a MultiAgentBench record."""
    record = base.record or {}
    task = record.get("task") or {}
    agents = record.get("agents") or []
    return {
        "source": base.source,
        "source_id": base.source_id,
        "domain": base.domain,
        "task_content": _clip(str(task.get("content", ""))),
        "output_format": _clip(str(task.get("output_format", "")), 600),
        "agents": [
            {
                "agent_id": a.get("agent_id"),
                "role": a.get("role"),
                "profile": _clip(str(a.get("profile", "")), 700),
            }
            for a in agents
        ],
        "relationships": [list(r) for r in record.get("relationships") or []],
        "actions": MARBLE_ACTIONS[base.domain],
        "evaluation": MARBLE_EVALUATION[base.domain],
        "participants": {
            "agents": sorted({str(a.get("role") or "agent") for a in agents}),
            "humans": [],
        },
    }


def _clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " …"
