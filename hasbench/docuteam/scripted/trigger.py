"""Scripted stand-ins for the proactive trigger: reading an edit, picking agents, need scores.

- the edit reader counts changed words (fewer than three is trivial) and states a goal
  from the edited text;
- agent selection picks the agents whose profile shares most words with the edit (two
  to four);
- each agent scores each mode from cues in the edited text (open questions favour Idea,
  alternatives favour Discussion, a relevant block of eight words or more favours
  Evaluation unless it already gives its reason — an argued line, such as an applied
  agent message, needs less judging), damped to 0.2 next to an open discussion.
"""

from __future__ import annotations

from hasbench.docuteam import schemas as s
from hasbench.docuteam.document import word_changes
from hasbench.docuteam.scripted.reading import first_words
from hasbench.docuteam.words import OPEN_MARKERS, content_stems, gives_reason

ALTERNATIVE_MARKERS = (" or ", " vs ", " versus ", "instead", " but ", "either")
"""Cues that an edit weighs alternatives (they favour a Discussion)."""
TRIVIAL_WORDS = 3
"""An edit batch changing fewer words than this is trivial."""
SIMILAR_CAP = 0.2


def read_edit(data: s.ReadEditInput) -> s.ReadEditOutput:
    """Trivial below three changed words; otherwise a goal from the edited text."""
    changed = sum(word_changes(v.before or "", v.after or "") for v in data.edits)
    if changed < TRIVIAL_WORDS:
        return s.ReadEditOutput(trivial=True)
    view = max(data.edits, key=lambda v: word_changes(v.before or "", v.after or ""))
    text = view.after if view.after is not None else view.before or ""
    snippet = first_words(text, 20)
    if any(marker in text.lower() for marker in OPEN_MARKERS):
        goal = f"Settle the open point in '{snippet}'."
    else:
        goal = f"Turn '{snippet}' into a workable part of the plan."
    verb = {"insert": "added", "update": "rewrote", "delete": "removed"}[view.kind]
    interpretation = (
        f"The user {verb} the {view.block_type.replace('_', ' ')} '{snippet}'; "
        "they are refining the plan in the document."
    )
    return s.ReadEditOutput(trivial=False, goal=goal, interpretation=interpretation)


def _relevance(agent: s.PublicProfile, text: str) -> tuple[int, str]:
    """Shared content words of an agent's profile and a text, and the best expertise match."""
    words = content_stems(text)
    profile = content_stems(" ".join([agent.role, agent.stance, *agent.expertise]))
    matched = next((e for e in agent.expertise if content_stems(e) & words), "")
    return len(profile & words), matched


def select_agents(data: s.SelectInput) -> s.SelectOutput:
    """The agents sharing most words with the edit: at least two, at most four."""
    text = f"{data.goal} {data.interpretation}"
    scored = [(_relevance(a, text), index, a) for index, a in enumerate(data.agents)]
    scored.sort(key=lambda item: (-item[0][0], item[1]))
    relevant = sum(1 for (score, _), _, _ in scored if score > 0)
    count = max(2, min(4, relevant, len(data.agents)))
    chosen = []
    for (_, matched), _, agent in scored[:count]:
        reason = (
            f"{agent.name} knows {matched}, which this edit touches."
            if matched
            else f"{agent.name} brings the {agent.role.lower()} view to this change."
        )
        chosen.append(s.Selection(id=agent.id, reason=reason))
    return s.SelectOutput(agents=chosen)


def need(data: s.NeedInput) -> s.NeedOutput:
    """Mode scores from cues in the edited text and the agent's relevance; damped nearby."""
    after = " ".join(v.after or "" for v in data.edits)
    lowered = f" {after.lower()} "
    open_point = any(marker in lowered for marker in OPEN_MARKERS)
    alternatives = any(marker in lowered for marker in ALTERNATIVE_MARKERS)
    score, matched = _relevance(data.agent, f"{after} {data.goal}")
    relevant = score > 0
    idea = 0.9 if open_point else 0.35
    discussion = 0.85 if alternatives else 0.6 if relevant else 0.3
    substantial = relevant and len(after.split()) >= 8
    evaluation = (0.5 if gives_reason(after) else 0.8) if substantial else 0.3
    if data.nearby:
        idea, discussion, evaluation = (min(x, SIMILAR_CAP) for x in (idea, discussion, evaluation))
        reaction = "Already talking about this"
    elif open_point:
        reaction = f"{(matched or data.agent.expertise[0]).capitalize()} still open?"
    else:
        reaction = f"Check the {matched or data.agent.expertise[0]}"
    return s.NeedOutput(
        idea=idea, discussion=discussion, evaluation=evaluation, reaction=reaction[:40]
    )
