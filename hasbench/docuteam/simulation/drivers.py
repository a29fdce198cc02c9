"""What can make each measure differ between the conditions in a simulated study.

In a simulated study a difference between DocuTeam and Baseline has two kinds of
sources. The *condition*: what the engine offers in each (agent-started discussions,
anchoring and adapted applications exist only in DocuTeam). And the *stand-in rules*
of the scripted parts that meet the condition: the participant
(:mod:`.user`, rules 1-6), the engine (``scripted:docuteam``, :mod:`hasbench.docuteam.scripted`),
the rule rater (:mod:`.rating`) and the scripted respondent (:mod:`.survey`). A reader
of the offline results needs to know which rule can produce or amplify each difference:
that difference says what the rules do, not what people would do.

:data:`DRIVERS` lists them per measure, and :func:`stand_in_rules` turns them into the
table every simulated study's report carries (``stand_in_rules.csv/.md/.tex``), one
row per rule, next to the measure's DocuTeam - Baseline difference. Rules of a part
played by a model are left out (that part's behaviour is the model's); the condition's
rows are always there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pandas as pd

if TYPE_CHECKING:
    from hasbench.docuteam.study.analysis import StudyAnalysis

Part = Literal["condition", "participant", "engine", "rater", "respondent"]
PARTS: tuple[Part, ...] = ("condition", "participant", "engine", "rater", "respondent")


@dataclass(frozen=True)
class Driver:
    """One source of a measure's difference: the part, its rule, and how it acts."""

    part: Part
    rule: str
    effect: str


_AGENT_STARTED = Driver(
    "condition",
    "agents start discussions only in DocuTeam",
    "every term counting agent discussions is 0 in Baseline by construction",
)
_TRIGGER = Driver(
    "engine",
    "trigger need scores (scripted/trigger.py)",
    "an open marker scores Idea 0.9, alternatives Discussion 0.85, a relevant block of eight "
    "words or more Evaluation 0.8; an applied message carries its whole proposal and reason, "
    "so in DocuTeam an application can open a further Evaluation discussion on its line",
)
_APPLY = Driver(
    "participant",
    "rule 2 (apply)",
    "applies up to 1 + round(2t) messages from each paused discussion, so the number of "
    "discussions (more in DocuTeam, see the trigger) sets how many messages it applies",
)
_ADAPT = Driver(
    "condition",
    "DocuTeam adapts an applied message, Baseline pastes it",
    "the adapted text drops the chat voice and keeps every plan term (scripted/"
    "incorporation.py); the pasted text keeps both",
)
_PROPOSALS = Driver(
    "engine",
    "agents' proposals (scripted/discussion.py)",
    "an agent proposes the user's wishes from memory, the user's options in the scope, then "
    "the task sheet's constraints and requests, with one expertise term as its angle and its "
    "stance as its reason; anchored DocuTeam scopes offer the options of one block, a Baseline "
    "scope those of the whole plan",
)
_STEPS_FIRST = Driver(
    "participant",
    "rule order 1-6",
    "answering, applying and steering (rules 1-3) come before its own edits and discussions "
    "(rules 4-6), so discussions the agents start use up steps it would otherwise spend on "
    "its own work",
)

DRIVERS: dict[tuple[str, str], tuple[Driver, ...]] = {
    ("blind_rating", "novelty"): (
        Driver(
            "rater",
            "novelty: ideas bringing a new plan term",
            "an agent's angle (an expertise term) is often the only new term, so the count "
            "follows how many different agents' messages were applied",
        ),
        _PROPOSALS,
        _APPLY,
        _TRIGGER,
    ),
    ("blind_rating", "workability"): (
        Driver("rater", "workability: 5 minus open points", "counts TBD, TODO and questions"),
        Driver(
            "participant",
            "rules 2 and 4",
            "rule 4 rewrites open lines as questions (still open); rule 2 replaces an open "
            "target when it applies, and in DocuTeam the target is the discussion's first "
            "block, often the open line the agents were anchored on",
        ),
    ),
    ("blind_rating", "relevance"): (
        Driver(
            "rater",
            "relevance: requests sharing two plan terms with a changed block",
            "agents and participant both quote the task sheet's requests, so any applied "
            "request addresses itself",
        ),
        _PROPOSALS,
        Driver("participant", "rules 4 and 6", "writes the task sheet's requests into the plan"),
    ),
    ("blind_rating", "specificity"): (
        Driver(
            "rater",
            "specificity: new numbers, distinct reasons, distinct option sets",
            "each agent's reason is its stance, so distinct reasons count the distinct agents "
            "whose messages were applied; stand-ins write almost no new numbers",
        ),
        Driver("participant", "rule 4", "writes 'X, or Y?' (two options) when e >= 0.5"),
        _APPLY,
    ),
    ("survey", "expanded_thinking"): (
        Driver("respondent", "expanded_thinking", "+1 when the agents started a discussion"),
        _AGENT_STARTED,
    ),
    ("survey", "deepened_thinking"): (
        Driver(
            "respondent",
            "deepened_thinking",
            "Discussion/Evaluation mode, posts and answers (participant rules 1, 3, 5)",
        ),
        _TRIGGER,
    ),
    ("survey", "use_again"): (
        Driver("respondent", "use_again", "+1 with two applied messages or more"),
        _APPLY,
    ),
    ("survey", "confidence"): (
        Driver("respondent", "confidence", "open points closed during the session"),
    ),
    ("survey", "satisfaction"): (
        Driver("respondent", "satisfaction", "two applied messages or more; open points closed"),
        _APPLY,
    ),
    ("survey", "hard_to_engage"): (
        Driver("respondent", "hard_to_engage", "+1 with two agent discussions or more"),
        _AGENT_STARTED,
    ),
    ("survey", "ai_aware_of_me"): (
        Driver(
            "respondent",
            "ai_aware_of_me",
            "min(2, agent discussions) + 1 when the agents reacted to an edit",
        ),
        _AGENT_STARTED,
    ),
    ("survey", "aware_of_ai"): (
        Driver("respondent", "aware_of_ai", "+1 when at least half the discussions are anchored"),
        Driver("condition", "only DocuTeam discussions are anchored", "0 anchored in Baseline"),
    ),
    ("survey", "easy_to_apply"): (
        Driver("respondent", "easy_to_apply", "applied messages; +1 when most were adapted"),
        _ADAPT,
        _APPLY,
    ),
    ("survey", "tool_not_partner"): (
        Driver("respondent", "tool_not_partner", "- min(2, agent discussions)"),
        _AGENT_STARTED,
    ),
    ("nasa_tlx", "mental_demand"): (
        Driver("respondent", "mental_demand", "agent turns and discussions"),
        _TRIGGER,
    ),
    ("nasa_tlx", "temporal_demand"): (
        Driver("respondent", "temporal_demand", "+1 with two agent discussions or more"),
        _AGENT_STARTED,
    ),
    ("nasa_tlx", "performance"): (
        Driver("respondent", "performance", "+1 with two applied messages or more"),
        _APPLY,
    ),
    ("nasa_tlx", "effort"): (Driver("respondent", "effort", "own actions per step of the budget"),),
    ("nasa_tlx", "frustration"): (
        Driver("respondent", "frustration", "failed steps; a question left unanswered"),
    ),
    ("nasa_tlx", "overall"): (
        Driver("respondent", "the five TLX items", "their mean (see each item)"),
    ),
    ("interaction", "idea_mode"): (
        Driver("participant", "rule 5", "Idea mode when e < 0.4, the same in both conditions"),
        _STEPS_FIRST,
    ),
    ("interaction", "discussion_mode"): (
        Driver("participant", "rule 5", "Discussion mode when 0.4 <= e < 0.7, or at random above"),
        _STEPS_FIRST,
    ),
    ("interaction", "evaluation_mode"): (
        Driver("participant", "rule 5", "Evaluation at random when e >= 0.7"),
        _STEPS_FIRST,
    ),
    ("interaction", "steering_messages"): (
        Driver(
            "participant",
            "rule 3 (steer)",
            "posts with probability i(1.2 - t) into each paused discussion it has not steered; "
            "in DocuTeam with i >= 0.6 its first steering step adds an agent instead (not a "
            "message; Baseline does not offer it)",
        ),
        _AGENT_STARTED,
    ),
    ("interaction", "draft_word_changes"): (
        _ADAPT,
        _APPLY,
        Driver("participant", "rules 4 and 6", "rewrites open lines and adds request lines"),
    ),
    ("interaction", "messages_applied"): (_APPLY, _TRIGGER, _AGENT_STARTED),
    ("interaction", "user_discussions"): (
        Driver("participant", "rule 5", "starts at most 1 + round(2i) discussions"),
        _STEPS_FIRST,
    ),
    ("interaction", "agent_discussions"): (_AGENT_STARTED, _TRIGGER),
}
"""(measure group, measure) -> the sources that can make it differ between conditions."""


def scripted_parts(meta: dict[str, str]) -> set[Part]:
    """The parts a simulated study's metadata says were played by stand-ins."""
    parts: set[Part] = {"condition"}
    if meta.get("user") == "scripted":
        parts.add("participant")
    if meta.get("engine") == "scripted:docuteam":
        parts.add("engine")
    if "rule" in meta.get("raters", "").split():
        parts.add("rater")
    if meta.get("respondent") == "scripted":
        parts.add("respondent")
    return parts


def stand_in_rules(analysis: StudyAnalysis) -> pd.DataFrame:
    """Per measure of the analysis, the rules that can drive its difference (one row each).

    Columns: group, measure, the mean DocuTeam - Baseline difference, its stars, the part
    (condition, participant, engine, rater, respondent), the rule and how it acts. Parts
    played by a model are left out (:func:`scripted_parts`).
    """
    from hasbench.docuteam.study.data import GROUP_LABELS

    treat, control = analysis.data.conditions
    parts = scripted_parts(analysis.data.meta)
    rows = []
    for r in analysis.results.to_dict("records"):
        difference = r[f"{treat}_mean"] - r[f"{control}_mean"]
        for driver in DRIVERS.get((r["measure_group"], r["measure"]), ()):
            if driver.part not in parts:
                continue
            rows.append(
                {
                    "group": GROUP_LABELS.get(r["measure_group"], r["measure_group"]),
                    "measure": r["label"],
                    f"{treat} - {control}": f"{difference:+.2f}",
                    "sig": r["stars"],
                    "part": driver.part,
                    "rule": driver.rule,
                    "how it can differ": driver.effect,
                }
            )
    return pd.DataFrame(rows)
