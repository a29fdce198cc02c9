"""What the study asks people: the post-task questionnaire and the blind-rating rubric.

The questionnaire has the DocuTeam study's ten post-survey statements (App. B.2) and the
five NASA-TLX dimensions without physical demand (§5.1.5), all on 7 points; the raters
score each final plan on Novelty, Workability, Relevance and Specificity (1-5) (§5.1.5,
after Dean et al. 2006). Everything is in our words. Real participants answer them on
the served study's pages (:mod:`hasbench.serve.study`); simulated ones in
:mod:`hasbench.docuteam.simulation.survey`.
"""

from __future__ import annotations

ITEMS: dict[str, tuple[str, str]] = {
    "expanded_thinking": ("survey", "The agents offered useful views that widened my thinking."),
    "deepened_thinking": (
        "survey",
        "The agents offered useful views that took my thinking deeper.",
    ),
    "use_again": ("survey", "I would use a tool like this again to brainstorm or plan."),
    "confidence": ("survey", "I am confident in my final plan."),
    "satisfaction": ("survey", "I am satisfied with my final plan; it meets the task's goal."),
    "hard_to_engage": (
        "survey",
        "It was hard to stay mentally engaged; the interaction felt rough and unevenly paced.",
    ),
    "ai_aware_of_me": ("survey", "The agents seemed aware of what I was doing."),
    "aware_of_ai": ("survey", "I was aware of what the agents were doing."),
    "easy_to_apply": ("survey", "It was easy to bring the agents' ideas into my draft."),
    "tool_not_partner": (
        "survey",
        "The agents felt more like a tool than a partner I worked with.",
    ),
    "mental_demand": ("nasa_tlx", "How mentally demanding was the task? (1 very low, 7 very high)"),
    "temporal_demand": (
        "nasa_tlx",
        "How hurried or rushed was the pace of the task? (1 very low, 7 very high)",
    ),
    "performance": (
        "nasa_tlx",
        "How successful were you at what you were asked to do? (1 very low, 7 very high)",
    ),
    "effort": (
        "nasa_tlx",
        "How hard did you have to work for what you achieved? (1 very low, 7 very high)",
    ),
    "frustration": (
        "nasa_tlx",
        "How insecure, discouraged, irritated or stressed were you? (1 very low, 7 very high)",
    ),
}
"""Item id -> (measure group, statement in our words). Survey items: 1 = strongly
disagree, 7 = strongly agree."""

ANCHORS: dict[str, tuple[str, str]] = {
    "survey": ("Strongly disagree", "Strongly agree"),
    "nasa_tlx": ("Very low", "Very high"),
}
"""Measure group -> what 1 and 7 mean."""

RATING_SCALE = (1, 5)
RATING_DIMENSIONS: dict[str, str] = {
    "novelty": "How varied and original are the plan's ideas?",
    "workability": "Could this plan really be carried out as written?",
    "relevance": "How well does the plan meet the task's constraints and the attendees' wishes?",
    "specificity": "Does the plan give concrete alternatives and clear reasons for its choices?",
}
"""Blind-rating dimension -> the question a rater answers (1 = not at all, 5 = fully)."""
