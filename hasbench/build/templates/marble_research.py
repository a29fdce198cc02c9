"""Pattern templates for MultiAgentBench research records (the Research domain).

The base task is the converted record (:mod:`hasbench.build.marble_research`): the
researchers write and submit a five-question proposal that builds on a paper's
Introduction, in the Research environment; it is scored by the submission assertion and a
judged rubric (the five questions plus MultiAgentBench's innovation, feasibility and
safety). MARBLE has no humans; every template adds a principal investigator (``pi``) who
supervises the first researcher, keeps the goal, the empty proposal, the tools and every
criterion, and marks the task ``judge_scored`` (the proposal's content is judged; the
oracle of the checks cannot write it). Where a part is hidden, an env assertion on the
proposal and an NL assertion name it:

- A (private facts): the Introduction is the PI's paper and only the PI has it; the team
  asks for it. Its rubric item names where it came from.
- B (latent criteria): the PI's acceptance criteria are MultiAgentBench's own judged
  dimensions, which the task text never states: an idea new relative to the paper, feasible
  with the resources it names, and a discussion of its safety and ethical risks in the
  approach (an env assertion checks the latter).
- C: declined. ``submit_proposal`` is a low-risk write and nothing in the environment is
  consequential enough to gate behind an approver.
- D (stakeholders): a co-author wants a new dataset collected; the PI requires existing data
  only, and the task's rule says the PI decides. The approach must say so (env assertion).
- E (verification): when shown a draft, a reviewer asks for the evaluation plan (datasets
  and metrics) and the PI for the difference from the paper's prior work, two rubric items
  of the base task; the approach must name datasets and metrics (env assertion).
- F (goal revision): at turn 2-4 the PI adds that the proposal must discuss safety and
  ethical risks (the rubric's safety item; env assertion on the approach).

The gold path is one read of the proposal (``read_proposal``) that depends on every hidden
part: the oracle's plan for the checks (:mod:`hasbench.build.checks`), not scored. Each
person who holds a part also offers it unprompted at a fixed turn (A4).
"""

from __future__ import annotations

from typing import Any

from hasbench.build.adaptation import AdaptContext, Declined, template
from hasbench.build.base_tasks import BaseTask
from hasbench.build.builder import env_assertion
from hasbench.build.marble_research import convert, split_content
from hasbench.build.templates.people import (
    adds_requirement,
    converted,
    gather,
    holds,
    offers,
    person,
)

PI = "pi"
SCORING = "LLM judge of the proposal (rubric) and the proposal's assertions"
SAFETY = "the approach section discusses the safety and ethical risks of the work"


def _fields(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """The converted record with a PI supervising the first researcher."""
    data = converted(base, convert, "A")
    for key in ("task_id", "source_task_id", "adaptation_pattern"):
        data.pop(key)
    data["metadata"].pop("pattern_provisional")
    data["metadata"].update(judge_scored=True, scoring=SCORING)
    data["users"] = [
        person("research", PI, "principal investigator", "A submitted proposal I can stand behind.",
                "You lead the lab. Answer the team's questions about what you expect.",
                {}, ["decide what the proposal must meet"], ctx)
    ]  # fmt: skip
    data["relationships"].append([PI, _lead(data), "supervises"])
    return data


def _lead(data: dict[str, Any]) -> str:
    return data["agents"][0]["agent_id"]


def _assert(data: dict[str, Any], required: list[str], message: str, nl: str) -> None:
    criteria = data["evaluation_criteria"]
    criteria["env_assertions"].append(
        env_assertion(
            "assert_section_covers", {"section": "approach", "required": required}, message
        )  # fmt: skip
    )
    criteria["nl_assertions"].append(nl)


# -- A --------------------------------------------------------------------------------------


@template("research", "A")
def private_introduction(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """A: the Introduction is the PI's paper, which only the PI has."""
    data = _fields(base, ctx)
    introduction, _ = split_content(base.record["task"]["content"])
    head, marker, _ = data["task"].partition("\n\nIntroduction:\n\n")
    if not marker:
        raise Declined("the task text has no Introduction to move")
    data["task"] = head.replace(
        "the paper Introduction below", "the Introduction of the PI's latest paper"
    ) + (  # fmt: skip
        f"\n\nOnly the principal investigator ({PI}) has that paper: ask them for its Introduction."
    )
    nl = data["evaluation_criteria"]["nl_assertions"]
    nl[0] = (
        "The proposal states one specific research question that builds on the Introduction "
        "of the PI's paper, which only the PI had."
    )
    holds(data["users"][0], {"paper_introduction": introduction},
          "give the team the paper the proposal builds on",
          "Your paper introduction is not in the task; give it when the team asks.",
          "clarification", "Here is the Introduction of my paper:")  # fmt: skip
    gather(data, ("read_proposal", {}), [f"{PI}.paper_introduction"])
    return data


# -- B --------------------------------------------------------------------------------------


@template("research", "B")
def latent_criteria(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """B: the PI's acceptance criteria are MultiAgentBench's judged dimensions."""
    data = _fields(base, ctx)
    criterion = (
        "the idea must be new relative to the work in the Introduction, feasible with the "
        "methods and resources the proposal names, and the approach section must discuss "
        "the safety and ethical risks of the work"
    )
    data["task"] += (
        f"\n\nThe principal investigator ({PI}) accepts the proposal only if it meets their "
        "acceptance criteria; ask them before you submit."
    )
    _assert(data, ["safety | ethical | ethics"], SAFETY,
            "The proposal meets the PI's acceptance criteria: a new idea, feasible with the "
            "resources it names, with its safety and ethical risks discussed.")  # fmt: skip
    holds(data["users"][0], {"acceptance_criteria": criterion},
          "decide whether the proposal meets your acceptance criteria",
          "Your acceptance criteria are not in the task. State them when the team asks what "
          "you expect or shows you a draft.",
          "feedback", "Before you submit, remember:")  # fmt: skip
    gather(data, ("read_proposal", {}), [f"{PI}.acceptance_criteria"])
    return data


# -- C --------------------------------------------------------------------------------------


@template("research", "C")
def no_protected_action(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """C: declined (see the module docstring)."""
    raise Declined(
        "the Research environment has no consequential action: submit_proposal is a "
        "low-risk write, so an approver would guard nothing the environment enforces"
    )


# -- D --------------------------------------------------------------------------------------


@template("research", "D")
def two_stakeholders(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """D: a co-author wants new data collected; the PI requires existing data and decides."""
    data = _fields(base, ctx)
    if len(data["agents"]) < 2:
        raise Declined("a single researcher: no second researcher for the co-author to brief")
    rule = "the study uses existing, publicly available data only; no new data is collected"
    wish = "the study collects a new, larger dataset of its own"
    data["task"] += (
        f"\n\nThe principal investigator ({PI}) and a co-author (coauthor) have requirements "
        "of their own; ask them. Where they conflict, the PI decides."
    )
    _assert(data, ["existing data | existing datasets | publicly available data | no new data"],
            "the approach uses existing data only",
            "The proposal uses existing data only, as the PI required, and does not plan to "
            "collect the new dataset the co-author wanted.")  # fmt: skip
    holds(data["users"][0], {"data_rule": rule},
          "decide where the co-author's wishes conflict with the lab's rules",
          "Your data rule is not in the task; state it when asked. It holds whatever the "
          "co-author wants.",
          "clarification", "One rule of my lab:")  # fmt: skip
    second = data["agents"][1]["agent_id"]
    coauthor = person("research",
        "coauthor", "co-author", "An ambitious study with data of its own.",
        "State your data wish when asked; the PI has the final say.",
        {"data_wish": wish}, ["bring the co-author's view of the study"], ctx)  # fmt: skip
    coauthor["spontaneous_config"] = offers("coauthor", {"data_wish": wish}, "clarification",
                                             "For this study I would like")  # fmt: skip
    data["users"].append(coauthor)
    data["relationships"].append(["coauthor", second, "informs"])
    gather(data, ("read_proposal", {}), [f"{PI}.data_rule", "coauthor.data_wish"], by=second)
    data["metadata"]["conflict"] = {"decided": rule, "wish": wish, "added": True}
    return data


# -- E --------------------------------------------------------------------------------------


@template("research", "E")
def reviewed_draft(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """E: a reviewer and the PI review drafts, each asking for one change."""
    data = _fields(base, ctx)
    evaluation = (
        "name the datasets and the metrics the approach is evaluated with, and the results "
        "you expect on them"
    )
    novelty = (
        "say how the idea differs from the prior work described in the Introduction and why "
        "that work has not solved the problem"
    )
    data["task"] += (
        f"\n\nA reviewer (reviewer) and the principal investigator ({PI}) review the proposal "
        "and may ask for changes; show them a draft and make the changes they ask for before "
        "you submit."
    )
    _assert(data, ["dataset | datasets", "metric | metrics"],
            "the approach names its datasets and metrics",
            f"The proposal makes the reviewer's requested change: {evaluation}.")  # fmt: skip
    data["evaluation_criteria"]["nl_assertions"].append(
        f"The proposal makes the PI's requested change: {novelty}."
    )
    reviewer = person("research",
        "reviewer", "reviewer", "The proposal is accepted only with my requested change made.",
        "", {}, ["review drafts and ask for the change they need"], ctx)  # fmt: skip
    data["users"].append(reviewer)
    data["relationships"].append(["reviewer", _lead(data), "reviews"])
    for holder, change in ((reviewer, evaluation), (data["users"][0], novelty)):
        holds(holder, {"requested_change": change},
              "review drafts and ask for the change they need",
              "Review each draft you are shown and ask for your requested change if it does "
              "not make it yet.",
              "feedback", "In review I will ask you to")  # fmt: skip
    gather(data, ("read_proposal", {}), ["reviewer.requested_change", f"{PI}.requested_change"])
    return data


# -- F --------------------------------------------------------------------------------------


@template("research", "F")
def added_requirement(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """F: at turn 2-4 the PI adds that the proposal must discuss safety and ethics."""
    data = _fields(base, ctx)
    added = "the approach must also discuss the safety and ethical risks of the work"
    at_turn = int(ctx.rng.integers(2, 5))
    data["task"] += (
        f"\n\nThe principal investigator ({PI}) may change the requirements while you work; "
        "check with them before you submit."
    )
    _assert(data, ["safety | ethical | ethics"], SAFETY,
            "The proposal discusses the safety and ethical risks of the work, as the PI "
            "required during the work.")  # fmt: skip
    pi = data["users"][0]
    goal = f"{pi['goal']} It must discuss the work's risks."
    adds_requirement(pi, at_turn, goal, added, f"A new requirement: {added}.")
    gather(data, ("read_proposal", {}), [f"{PI}.added_requirement"])
    data["metadata"]["revision"] = {"at_turn": at_turn}
    return data
