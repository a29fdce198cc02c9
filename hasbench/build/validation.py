"""Step 4 of the construction pipeline: the structural (D1-D7) and worthiness (W1-W5) panels.

Each adapted task is reviewed by several independent reviewers per panel (HAS paper App.
B.4.2-B.4.3): models (any model string, prompts ``prompts/build/structural_review.txt``
and ``worthiness_review.txt``) or three deterministic rule reviewers with different
evidence. A rule reviewer rates only the dimensions its evidence covers and abstains on
the others; for a task with an imported base task every dimension is covered by at least
two of them (``rule:source`` abstains where the base task has no scenario yet):

- ``rule:static`` reads the task file: fields, topology, requestors and permissions
  (:func:`hasbench.scenario.check_scenario`), what each human holds and decides, the
  criteria, realism of the added roles and revision timing, complexity (gold steps; for a
  judge-scored task, whose gold path is only the oracle's plan, the judged requirements),
  and which channels the pattern needs.
- ``rule:episodes`` reads the automatic checks (oracle with and without humans, the idle
  agent, hidden facts, the protected path): whether the task runs, separates success
  from failure, needs its humans and is not passed by doing nothing.
- ``rule:source`` compares the task with its base task: goal, initial state, tools, gold
  path and basis kept; every added fact or person grounded in the source; no duplicate of
  the same source and pattern.

The automatic checks (:mod:`hasbench.build.checks`) gate the panels: a task failing one
is repaired where a :data:`PREFLIGHT` repair applies (a state assertion about a record the
task does not have) and checked again, and excluded with the failed checks as the reason
if it still fails; only tasks that pass every check (or wait for a judge) are reviewed.
Per dimension the label is the strict majority of the reviewers who rated it; without
one, the median label (ties toward the worse). Structural overall: FAIL if any dimension
fails, else WARN if any warns, else PASS. Worthiness overall (the paper's rule): EXCLUDE
if any dimension fails; CONDITIONAL if W3 warns or two or more dimensions warn; else
INCLUDE. A structural FAIL or a CONDITIONAL goes through a bounded repair-and-review loop:
the repairs of :data:`REPAIRS` address the concerns any reviewer raised, then both panels
review again (at most ``max_rounds`` times); what is still FAIL or CONDITIONAL, or has no
applicable repair, is excluded. A failed model reviewer makes the task's validation an
error, never a verdict.
Every review (labels, issues, raw output) is kept as evidence.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from hasbench.build.checks import TaskCheck, passes
from hasbench.build.panel_model import PanelModel, json_answer
from hasbench.prompts import render
from hasbench.scenario import HUMAN_RELATIONS, Scenario, check_scenario, held_facts

if TYPE_CHECKING:
    from hasbench.build.base_tasks import BaseTask
    from hasbench.llm import LLMClient

STRUCTURAL = ("D1", "D2", "D3", "D4", "D5", "D6", "D7")
WORTHINESS = ("W1", "W2", "W3", "W4", "W5")
BINARY = {"D1", "D2", "D4", "D7"}
"""Dimensions rated only PASS or FAIL."""
LABELS = ("PASS", "WARN", "FAIL")
RULE_REVIEWERS = ("rule:static", "rule:episodes", "rule:source")
PANEL_DIMENSIONS = {"structural": STRUCTURAL, "worthiness": WORTHINESS}
PANEL_PROMPTS = {"structural": "build/structural_review", "worthiness": "build/worthiness_review"}
PLAUSIBLE_ROLES = {
    "customer", "traveller", "subscriber", "account holder", "household member",
    "travel companion", "family member",
    "requester", "maintainer", "code reviewer", "end-user representative",
    "principal investigator", "co-author", "reviewer",
}  # fmt: skip
"""Roles of the people the τ², coding and research templates add."""
PATTERN_CHANNELS = {
    "A": {"clarification"}, "B": {"clarification", "feedback"}, "C": {"control"},
    "D": {"clarification"}, "E": {"feedback"}, "F": {"clarification", "feedback"},
}  # fmt: skip
"""The channel through which each pattern's human part reaches the agent."""
EDGE_CHANNELS = {
    "supervises": {"clarification", "feedback", "control"}, "informs": {"clarification"},
    "reviews": {"feedback"}, "authorizes": {"control"}, "operates": {"control", "clarification"},
}  # fmt: skip
Panel = Literal["structural", "worthiness"]


class Review(BaseModel):
    """One reviewer's ratings of one task on one panel (None = abstained)."""

    reviewer: str
    panel: Panel
    labels: dict[str, str | None] = Field(default_factory=dict)
    issues: list[str] = Field(default_factory=list)
    error: str | None = None
    raw_output: str | None = None


class PanelVerdict(BaseModel):
    """The panel's labels per dimension, its overall verdict and the reviews behind them."""

    panel: Panel
    labels: dict[str, str]
    overall: str
    reviews: list[Review]


class Validation(BaseModel):
    """Step 4 for one task: each review round, the repairs between them, the verdict."""

    task_id: str
    verdict: Literal["INCLUDE", "EXCLUDE", "error"]
    reason: str = ""
    rounds: list[dict[str, Any]] = Field(default_factory=list)
    """Per round: ``structural`` and ``worthiness`` verdicts, and ``repairs`` applied after
    (the first round also the ``preflight_repairs`` of failed automatic checks)."""
    checks: dict[str, str] = Field(default_factory=dict)
    """The automatic checks of the final version of the task."""


@dataclass
class Evidence:
    """What rule reviewers may read about one task."""

    scenario: Scenario
    base: BaseTask | None = None
    check: TaskCheck | None = None
    """The automatic checks of this version of the task."""
    siblings: int = 1
    """Tasks in the pool with the same source task and pattern (this one included)."""


# -- combining --------------------------------------------------------------------------------


def majority(labels: Sequence[str]) -> str:
    """The strict-majority label; without one, the median (ties toward the worse)."""
    counts = Counter(labels)
    top, n = counts.most_common(1)[0]
    if n * 2 > len(labels):
        return top
    ordered = sorted(labels, key=LABELS.index)
    return ordered[len(ordered) // 2]


def combine(panel: Panel, reviews: Sequence[Review]) -> PanelVerdict:
    """Majority per dimension and the panel's overall verdict."""
    labels = {}
    for dim in PANEL_DIMENSIONS[panel]:
        given = [r.labels[dim] for r in reviews if r.labels.get(dim)]
        labels[dim] = majority(given) if given else "WARN"  # nobody could rate it
    values = list(labels.values())
    if panel == "structural":
        overall = "FAIL" if "FAIL" in values else "WARN" if "WARN" in values else "PASS"
    elif "FAIL" in values:
        overall = "EXCLUDE"
    elif labels["W3"] == "WARN" or values.count("WARN") >= 2:
        overall = "CONDITIONAL"
    else:
        overall = "INCLUDE"
    return PanelVerdict(panel=panel, labels=labels, overall=overall, reviews=list(reviews))


# -- rule reviewers ---------------------------------------------------------------------------


class _Rated:
    """Collects one rule reviewer's labels and the issue behind every WARN or FAIL."""

    def __init__(self) -> None:
        self.labels: dict[str, str | None] = {}
        self.issues: list[str] = []

    def rate(self, dim: str, label: str, issue: str = "") -> None:
        if dim in BINARY and label == "WARN":
            label = "PASS"
        self.labels[dim] = label
        if label != "PASS":
            self.issues.append(f"{dim}: {issue}")


def _problem_paths(scenario: Scenario) -> list[str]:
    return [f"{p.path}: {p.message}" for p in check_scenario(scenario)]


def _edges(scenario: Scenario) -> dict[str, set[str]]:
    """Human id -> channels its edges carry."""
    found: dict[str, set[str]] = {u.user_id: set() for u in scenario.users}
    for rel in scenario.relationships:
        if rel.source in found:
            found[rel.source] |= EDGE_CHANNELS.get(rel.label, set())
    return found


def static_review(panel: Panel, ev: Evidence) -> Review:
    """``rule:static``: reads the task file only (see the module docstring)."""
    s, out = ev.scenario, _Rated()
    problems = _problem_paths(s)
    hit = lambda *keys: [p for p in problems if p.startswith(keys)]  # noqa: E731
    if panel == "structural":
        schema = hit("evaluation_criteria.reward_basis", "task_id", "users[", "agents[")
        out.rate("D1", "FAIL" if schema else "PASS", "; ".join(schema))
        topo = hit("relationships")
        out.rate("D2", "FAIL" if topo else "PASS", "; ".join(topo))
        profiles = [a.profile for a in s.agents]
        same = len(set(profiles)) < len(profiles)
        out.rate("D3", "WARN" if same else "PASS", "several agents share one profile")
        requestors = hit("evaluation_criteria.actions")
        out.rate("D4", "FAIL" if requestors else "PASS", "; ".join(requestors))
        label, issue = _user_design(s)
        out.rate("D5", label, issue)
        criteria = s.evaluation_criteria
        vague = [a for a in criteria.nl_assertions if len(a.split()) < 5]
        only_words = set(criteria.reward_basis) <= {"COMMUNICATE", "NL_ASSERTIONS"}
        out.rate(
            "D6",
            "WARN" if vague or only_words else "PASS",
            "scored only on what is said" if only_words else "vague assertions",
        )
        leaks = [p for p in problems if "leaks into" in p or "depends_on" in p]
        out.rate("D7", "FAIL" if leaks else "PASS", "; ".join(leaks))
    else:
        roles = [u.role for u in s.users if u.role and u.role not in PLAUSIBLE_ROLES]
        late = [
            r.at_turn
            for u in s.users
            for r in u.goal_revisions
            if r.at_turn > s.environment.max_iterations // 2
        ]
        out.rate(
            "W1", "WARN" if roles or late else "PASS", f"unusual roles {roles} or late revision"
        )
        steps = len(s.evaluation_criteria.actions)
        if s.metadata.get("judge_scored"):  # the gold path is only the oracle's plan
            judged = len(s.evaluation_criteria.nl_assertions)
            out.rate("W2", "PASS" if judged >= 2 else "WARN", f"{judged} judged requirements")
        else:
            out.rate(
                "W2",
                "PASS" if steps >= 2 else "WARN" if steps else "FAIL",
                f"{steps} gold steps",
            )
        out.rate("W3", *_necessity(s))
        unused = _unused_edges(s)
        out.rate("W4", "WARN" if unused else "PASS", f"edges carrying nothing used: {unused}")
        channels = set().union(*_edges(s).values()) if s.users else set()
        need = PATTERN_CHANNELS[s.adaptation_pattern]
        out.rate(
            "W5",
            "PASS" if need & channels else "FAIL",
            f"pattern {s.adaptation_pattern} needs {sorted(need)}, edges carry {sorted(channels)}",
        )
    return Review(reviewer="rule:static", panel=panel, labels=out.labels, issues=out.issues)


def _user_design(s: Scenario) -> tuple[str, str]:
    from hasbench.participants.scripted import action_needs

    needed = {(n.user, n.key) for a in s.evaluation_criteria.actions for n in action_needs(s, a)}
    protected = any(a.protected for a in s.evaluation_criteria.actions)
    for user in s.users:
        acts = any(a.requestor == user.user_id for a in s.evaluation_criteria.actions)
        holds = any(u == user.user_id for u, _ in needed)
        decides = protected and "control" in _edges(s)[user.user_id]
        if not (acts or holds or decides or user.goal_revisions or held_facts(user)):
            return "FAIL", f"{user.user_id} holds, decides and does nothing"
        if set(user.unknown_info) & set(user.known_info):
            return "FAIL", f"{user.user_id} both knows and does not know something"
        if not user.task_instructions.strip() or len(user.goal.split()) < 5:
            return "WARN", f"{user.user_id} has no behaviour instructions or a terse goal"
    return "PASS", ""


def _necessity(s: Scenario) -> tuple[str, str]:
    from hasbench.participants.scripted import action_needs

    needs = [n for a in s.evaluation_criteria.actions for n in action_needs(s, a)]
    humans = {u.user_id for u in s.users}
    acts = any(a.requestor in humans for a in s.evaluation_criteria.actions)
    if s.adaptation_pattern == "C" and any(a.protected for a in s.evaluation_criteria.actions):
        return "PASS", ""
    if needs or acts:
        return "PASS", ""
    return "FAIL", "no gold step needs a human's fact, decision or action"


def _unused_edges(s: Scenario) -> list[str]:
    """Human edges whose channels nothing in the task uses (beyond the main supervises)."""
    from hasbench.participants.scripted import action_needs

    used: dict[str, set[str]] = {u.user_id: set() for u in s.users}
    for action in s.evaluation_criteria.actions:
        for need in action_needs(s, action):
            used[need.user] |= {"clarification", "feedback"}
        if action.requestor in used:
            used[action.requestor].add("control")
        if action.protected:
            for user in used:
                used[user].add("control")
    for user in s.users:
        if user.goal_revisions:
            used[user.user_id] |= {"clarification", "feedback"}
    if s.adaptation_pattern == "E":
        for user in used:
            used[user].add("feedback")
    unused = []
    for rel in s.relationships:
        if rel.source in used and rel.label != "supervises":
            if not EDGE_CHANNELS.get(rel.label, set()) & used[rel.source]:
                unused.append(f"{rel.source}-{rel.label}")
    return unused


def episodes_review(panel: Panel, ev: Evidence) -> Review:
    """``rule:episodes``: reads the automatic checks (see the module docstring)."""
    out = _Rated()
    if ev.check is None:
        return Review(reviewer="rule:episodes", panel=panel, error="no automatic checks given")
    r = ev.check.results
    ok = lambda name: passes(r.get(name, "-"))  # noqa: E731
    if panel == "structural":
        out.rate("D1", "PASS" if ok("validates") else "FAIL", r.get("validates", ""))
        out.rate("D4", "PASS" if ok("environment") else "FAIL", r.get("environment", ""))
        out.rate(
            "D5",
            "PASS" if ok("oracle_fails_A1") else "FAIL",
            "the task is solved without its humans",
        )
        if not ok("oracle_A3"):
            out.rate("D6", "FAIL", r.get("oracle_A3", ""))
        else:  # criteria that give doing nothing a score do not separate success from failure
            out.rate("D6", "PASS" if ok("idle") else "FAIL", f"doing nothing scores: {r['idle']}")
        out.rate("D7", "PASS" if ok("facts_hidden_A1") else "FAIL", r.get("facts_hidden_A1", ""))
    else:
        idle = r.get("idle", "")
        out.rate("W2", "PASS" if ok("idle") else "FAIL", f"doing nothing scores: {idle}")
        protected = ok("protected_path") and r.get("protected_path") == "ok"
        alone = ok("oracle_fails_A1")
        out.rate(
            "W3",
            "PASS" if alone or protected else "FAIL",
            "an agent alone solves it the same way",
        )
        out.rate("W5", "PASS" if ok("oracle_A3") else "FAIL", r.get("oracle_A3", ""))
    return Review(reviewer="rule:episodes", panel=panel, labels=out.labels, issues=out.issues)


def source_review(panel: Panel, ev: Evidence) -> Review:
    """``rule:source``: compares the task with its base task (see the module docstring)."""
    out = _Rated()
    s, base = ev.scenario, ev.base
    if base is None or base.scenario is None:
        return Review(reviewer="rule:source", panel=panel, labels={}, issues=[])
    o = base.scenario
    kept_env = (
        s.environment.db_path == o.environment.db_path
        and s.environment.initialization_actions == o.environment.initialization_actions
        and s.environment.initialization_data == o.environment.initialization_data
        and s.environment.compat == o.environment.compat
    )
    gold = [(a.name, a.arguments) for a in o.evaluation_criteria.actions]
    kept_gold = [(a.name, a.arguments) for a in s.evaluation_criteria.actions][: len(gold)] == gold
    kept_basis = s.evaluation_criteria.reward_basis == o.evaluation_criteria.reward_basis
    source_text = " ".join([o.users[0].goal, o.users[0].task_instructions]).lower()
    goals = " ".join(
        [u.goal for u in s.users] + [r.goal for u in s.users for r in u.goal_revisions]
    )
    kept_goal = o.users[0].goal.split(".")[0].lower() in goals.lower() or any(
        str(v).lower() in source_text for u in s.users for v in held_facts(u).values()
    )
    grounded = _grounded(s, o, source_text)
    if panel == "structural":
        out.rate("D2", "PASS" if kept_env else "FAIL", "the initial state differs from the source")
        out.rate(
            "D3",
            "PASS" if len(s.agents) == len(o.agents) else "WARN",
            "agents added without a source anchor",
        )
        out.rate("D5", "PASS" if kept_goal else "WARN", "the source goal is not recognizable")
        out.rate(
            "D6",
            "PASS" if kept_gold and kept_basis else "FAIL",
            "the gold path or reward basis differs from the source",
        )
        out.rate("D7", "PASS" if not grounded else "FAIL", f"ungrounded: {grounded}")
    else:
        out.rate("W1", "PASS" if not grounded else "WARN", f"ungrounded: {grounded}")
        extra = len(s.users) - len(o.users)
        out.rate("W4", "PASS" if extra <= 1 else "WARN", f"{extra} humans added")
        out.rate(
            "W5",
            "PASS" if ev.siblings <= 1 else "WARN",
            f"{ev.siblings} tasks share this source task and pattern",
        )
    return Review(reviewer="rule:source", panel=panel, labels=out.labels, issues=out.issues)


def _grounded(s: Scenario, o: Scenario, source_text: str) -> list[str]:
    """Facts of the adapted task that neither the source task nor its added lookups hold."""
    source_facts = {str(v) for v in held_facts(o.users[0]).values()}
    added = o.metadata.get("added_on_import", {}).get("facts", [])
    source_facts |= {f.split("=", 1)[1] for f in added}
    missing = []
    for user in s.users:
        for key, value in held_facts(user).items():
            text = str(value)
            if text in source_facts or key in ("decision", "wish", "added_request"):
                continue
            words = re.findall(r"\w+", text.lower())
            if words and sum(w in source_text for w in words) < len(words) / 2:
                missing.append(f"{user.user_id}.{key}")
    return missing


RULE_FUNCTIONS: dict[str, Callable[[Panel, Evidence], Review]] = {
    "rule:static": static_review,
    "rule:episodes": episodes_review,
    "rule:source": source_review,
}


class LLMReviewer(PanelModel):
    """A panel reviewer on a language model (temperature 0, cached)."""

    async def review(self, panel: Panel, ev: Evidence) -> Review:
        """Ask the model; a failed call or an off-format answer is recorded as the error."""
        from hasbench.build.builder import dump_tasks

        prompt = render(PANEL_PROMPTS[panel], scenario=dump_tasks([ev.scenario]))
        answer = await self.ask(prompt, lambda raw: parse_review(panel, raw))
        if answer.parsed is None:
            return Review(
                reviewer=self.name, panel=panel, error=answer.error, raw_output=answer.raw
            )
        labels, issues = answer.parsed
        return Review(
            reviewer=self.name, panel=panel, labels=labels, issues=issues, raw_output=answer.raw
        )


class RuleReviewer:
    """One of the deterministic reviewers of :data:`RULE_FUNCTIONS`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rule = RULE_FUNCTIONS[name]

    async def review(self, panel: Panel, ev: Evidence) -> Review:
        """Rate the dimensions the rule covers."""
        return self.rule(panel, ev)


def make_reviewer(spec: str, client: LLMClient | None = None) -> RuleReviewer | LLMReviewer:
    """A rule reviewer by name, else a model reviewer on the model string."""
    if spec in RULE_FUNCTIONS:
        return RuleReviewer(spec)
    if spec.startswith("rule:"):
        raise ValueError(f"unknown rule reviewer {spec!r}; known: {', '.join(RULE_FUNCTIONS)}")
    return LLMReviewer(spec, client)


def parse_review(panel: Panel, text: str) -> tuple[dict[str, str | None], list[str]]:
    """Labels per dimension and issues from a reviewer's JSON answer.

    Raises:
        ValueError: not a JSON object, a dimension missing, or a label not allowed for it.
    """
    data = json_answer(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    labels: dict[str, str | None] = {}
    for dim in PANEL_DIMENSIONS[panel]:
        label = data.get(dim)
        allowed = ("PASS", "FAIL") if dim in BINARY else LABELS
        if label not in allowed:
            raise ValueError(f"{dim}: expected one of {allowed}, got {label!r}")
        labels[dim] = label
    issues = data.get("issues" if panel == "structural" else "concerns") or []
    return labels, [str(i) for i in issues]


# -- repair -----------------------------------------------------------------------------------


def _raised(reviews: Sequence[Review], dim: str) -> bool:
    """Whether any reviewer rated the dimension below PASS."""
    return any(r.labels.get(dim) in ("WARN", "FAIL") for r in reviews)


def _repair_instructions(s: Scenario, reviews: Sequence[Review]) -> Scenario | None:
    """D5: a human without behaviour instructions gets the default disclosure policy."""
    if not _raised(reviews, "D5"):
        return None
    users = []
    changed = False
    for user in s.users:
        if not user.task_instructions.strip():
            text = "Answer what the agent asks about your request; do not volunteer more."
            user = user.model_copy(update={"task_instructions": text})
            changed = True
        users.append(user)
    return s.model_copy(update={"users": users}) if changed else None


def _repair_unused_edges(s: Scenario, reviews: Sequence[Review]) -> Scenario | None:
    """W4: drop edges from humans whose channels nothing in the task uses."""
    if not _raised(reviews, "W4"):
        return None
    unused = set(_unused_edges(s))
    if not unused:
        return None
    kept = [
        r
        for r in s.relationships
        if not (r.label in HUMAN_RELATIONS and f"{r.source}-{r.label}" in unused)
    ]
    return s.model_copy(update={"relationships": kept})


def _repair_vacuous_assertions(s: Scenario, check: TaskCheck) -> Scenario | None:
    """Idle scores: drop state assertions about a record the task does not have.

    Such an assertion (τ² checks "no overdue bill B1234321" in every service task, also
    where that bill was never created) holds before the episode and can never fail, so it
    separates nothing and only gives doing nothing a share of the score. It is dropped and
    the task's metadata says so; an assertion about a record that exists is never touched.
    """
    if passes(check.results.get("idle", "ok")):
        return None
    from hasbench.envs import make_environment
    from hasbench.vocab import canonical_json

    initial = make_environment(s)
    state = canonical_json(initial.state())
    criteria = s.evaluation_criteria
    vacuous = [
        a for a in criteria.env_assertions
        if initial.run_assertion(a.func_name, a.arguments) == a.assert_value
        and any(isinstance(v, str) and v and f'"{v}"' not in state for v in a.arguments.values())
    ]  # fmt: skip
    kept = [a for a in criteria.env_assertions if a not in vacuous]
    if not vacuous or (not kept and "ENV_ASSERTION" in criteria.reward_basis):
        return None
    dropped = [f"{a.func_name}({canonical_json(a.arguments)})" for a in vacuous]
    return s.model_copy(
        update={
            "evaluation_criteria": criteria.model_copy(update={"env_assertions": kept}),
            "metadata": {**s.metadata, "dropped_vacuous_assertions": dropped},
        }
    )


REPAIRS: dict[str, Callable[[Scenario, Sequence[Review]], Scenario | None]] = {
    "default_instructions": _repair_instructions,
    "drop_unused_edges": _repair_unused_edges,
}
"""Deterministic repairs of the concerns any reviewer raised, tried in order; each returns
the repaired task or None when its concern was not raised or nothing needs changing."""
CHECK_FAILURES = {
    "validates": "the task does not validate",
    "environment": "its environment cannot start",
    "oracle_A3": "the oracle does not solve it",
    "idle": "doing nothing scores",
    "oracle_fails_A1": "solved without a human",
    "facts_hidden_A1": "a fact a person holds is visible without them",
    "protected_path": "no protected gold action",
}
"""What a failed automatic check means, for exclusion reasons."""
PREFLIGHT: dict[str, Callable[[Scenario, TaskCheck], Scenario | None]] = {
    "drop_vacuous_assertions": _repair_vacuous_assertions,
}
"""Repairs of a failed automatic check, made before the panels review the task (App. B.4.1:
a scenario that fails the automatic checks is repaired first); each returns the repaired
task or None."""


# -- the loop ---------------------------------------------------------------------------------


async def review_panel(
    panel: Panel, reviewers: Sequence[RuleReviewer | LLMReviewer], ev: Evidence
) -> PanelVerdict | str:
    """The panel's verdict, or the error of a reviewer that failed."""
    reviews = await asyncio.gather(*(r.review(panel, ev) for r in reviewers))
    failed = [f"{r.reviewer}: {r.error}" for r in reviews if r.error]
    if failed:
        return "; ".join(failed)
    return combine(panel, reviews)


async def validate(
    ev: Evidence,
    structural: Sequence[RuleReviewer | LLMReviewer],
    worthiness: Sequence[RuleReviewer | LLMReviewer],
    recheck: Callable[[Scenario], TaskCheck],
    max_rounds: int = 2,
) -> tuple[Validation, Scenario]:
    """Review, repair and review again (at most ``max_rounds`` repairs); the final task.

    The automatic checks come first (App. B.4.1): a task that fails one gets the
    :data:`PREFLIGHT` repairs that apply and is checked again; a task that still fails is
    excluded with the failed checks as the reason, before any panel reads it.
    """
    rounds: list[dict[str, Any]] = []
    scenario, preflight = ev.scenario, []
    if ev.check is not None and not ev.check.passed:
        for name, repair in PREFLIGHT.items():
            fixed = repair(scenario, ev.check)
            if fixed is not None and not check_scenario(fixed):
                scenario, preflight = fixed, [*preflight, name]
        if preflight:
            ev = Evidence(scenario, ev.base, await asyncio.to_thread(recheck, scenario),
                          ev.siblings)  # fmt: skip

    def done(verdict: str, reason: str = "") -> tuple[Validation, Scenario]:
        checks = ev.check.results if ev.check is not None else {}
        result = Validation(task_id=scenario.task_id, verdict=verdict, reason=reason,
                            rounds=rounds, checks=checks)  # fmt: skip
        return result, scenario

    if ev.check is not None and not ev.check.passed:  # a hard gate before the panels
        rounds.append({"preflight_repairs": preflight})
        failed = [f"{name} ({CHECK_FAILURES.get(name, value)})"
                  for name, value in ev.check.results.items() if not passes(value)]  # fmt: skip
        return done("EXCLUDE", "automatic checks fail: " + ", ".join(failed))
    for round_no in range(max_rounds + 1):
        record: dict[str, Any] = {"preflight_repairs": preflight} if round_no == 0 else {}
        rounds.append(record)
        verdict = await review_panel("structural", structural, ev)
        if isinstance(verdict, str):
            return done("error", verdict)
        record["structural"] = verdict.model_dump()
        concerns = list(verdict.reviews)
        if verdict.overall != "FAIL":
            worth = await review_panel("worthiness", worthiness, ev)
            if isinstance(worth, str):
                return done("error", worth)
            record["worthiness"] = worth.model_dump()
            if worth.overall == "INCLUDE":
                return done("INCLUDE")
            if worth.overall == "EXCLUDE":
                return done("EXCLUDE", f"worthiness FAIL on {_failures(worth)}")
            concerns += worth.reviews
        if round_no == max_rounds:
            break
        repaired, applied = scenario, []
        for name, repair in REPAIRS.items():
            fixed = repair(repaired, concerns)
            if fixed is not None and not check_scenario(fixed):
                repaired, applied = fixed, [*applied, name]
        record["repairs"] = applied
        if not applied:
            break
        scenario = repaired
        checked = await asyncio.to_thread(recheck, scenario)  # checks run their own loop
        ev = Evidence(scenario, ev.base, checked, ev.siblings)
    last = rounds[-1]
    if "worthiness" in last:
        state = "still CONDITIONAL"
    else:
        state = f"structural FAIL on {_failures(PanelVerdict.model_validate(last['structural']))}"
    return done("EXCLUDE", f"{state} after {len(rounds) - 1} repair rounds")


def _failures(verdict: PanelVerdict) -> str:
    """The failed dimensions with what failed, e.g. ``D6 (doing nothing scores)``.

    What failed is the first issue a reviewer raised on the dimension, up to its details.
    """
    parts = []
    for dim, label in verdict.labels.items():
        if label != "FAIL":
            continue
        issues = [i for r in verdict.reviews if r.labels.get(dim) == "FAIL" for i in r.issues
                  if i.startswith(f"{dim}: ")]  # fmt: skip
        cause = re.split(r"[:(;]", issues[0].removeprefix(f"{dim}: "))[0].strip() if issues else ""
        parts.append(f"{dim} ({cause})" if cause else dim)
    return ", ".join(parts)
