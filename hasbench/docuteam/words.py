"""The words of plan text: content words, talk words, alternatives and reasons.

Shared by the scripted stand-ins (what a message proposes) and the rule rater (what a
plan states), so both read text the same way:

- *content words* (:func:`content_stems`): words of three letters or more that are not
  function words, cut to their first five letters (a crude stem: "groups" and "group"
  meet);
- *talk words* (:data:`TALK_WORDS`): words that say how someone speaks about an idea
  rather than what the plan does — pronouns, modal verbs, verbs of opinion and speech,
  light verbs, discourse nouns ("idea", "option", "point"), hedges and praise;
- *plan terms* (:func:`plan_terms`): content words that are not talk words, nor words
  naming the people in the conversation (passed as ``ignore``);
- *alternatives* (:func:`alternatives`): a text's options, split at ", or ", "; ",
  " instead of " and " versus "/" vs " (a bare " or " may join two words of one option,
  as in "rough or exhausting sports", so it does not split);
- *a reason* (:func:`gives_reason`): a text with a reason connective (because, since,
  so that, in order to, which means, to avoid), and a text's *proposal*
  (:func:`proposal`): what comes before its first one;
- *an open point* (:func:`is_open_text`): a text that still says TBD or TODO or asks a
  question.
"""

from __future__ import annotations

import re

FUNCTION_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or our so that the their "
    "this to was we were will with what which who how why when where you your can could "
    "should would about into than then them they there these those just also more most very "
    "plan user users block blocks section".split()
)
"""Words that are never content (grammar, and the words every plan talk uses)."""

TALK_WORDS = frozenset(
    """
    me my mine myself us ours yours him his her hers she he
    must might may shall cannot
    think thinks thought believe feel feels felt guess agree agrees agreed disagree
    suggest suggests proposal propose proposes pick picks prefer prefers like likes want
    wants say says said mean means sure right wrong true honestly
    idea ideas option options point points view views angle side thing things way ways
    kind sort bit lot something anything everything nothing someone anyone everyone nobody
    really just maybe perhaps probably actually still yet even already again quite
    good great better best nice fine solid strong
    thanks thank yes okay well hmm noted sounds
    make makes made do does doing did done get gets got give gives put go goes going went
    come comes let lets take takes took keep keeps add adds building build
    matters matter worth mind see need needs hold happens asked ask told
    because since rather instead
    """.split()
)
"""Talk words: they carry a speaker's stance, not the plan's content (see the module)."""

OPEN_MARKERS = ("?", "tbd", "todo")
"""What marks a point as still open."""
REASON_MARKERS = (
    " because ",
    " since ",
    " so that ",
    " in order to ",
    " which means ",
    " to avoid ",
)
_ALTERNATIVE = re.compile(r"[,?]\s+or\s+|\s+(?:instead of|versus|vs\.?)\s+|;\s+", re.IGNORECASE)
IDEA_WORDS = 12
"""Words kept of one request of a task sheet."""
_VERBS = re.compile(
    r"\b(?:want(?:s)? to|would like|prefer|asked for|ask for|hope to|should|want(?:s)?)\s+",
    re.IGNORECASE,
)
_BINDING = re.compile(r"\b(?:must|ha(?:ve|s) to|needs? to|should)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9-]+")
_NUMBER = re.compile(r"\d[\d,.:]*")


def _stem(word: str) -> str:
    return word[:5]


_TALK_STEMS = frozenset(_stem(w) for w in TALK_WORDS)


def content_stems(text: str) -> set[str]:
    """Content words of ``text``, cut to five letters (a crude stem)."""
    words = _WORD.findall(text.lower())
    return {_stem(w) for w in words if len(w) > 2 and w not in FUNCTION_WORDS}


def plan_terms(text: str, ignore: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The plan terms of ``text``: content stems that are not talk words nor in ``ignore``.

    Args:
        text: Any text.
        ignore: Stems to leave out (e.g. :func:`content_stems` of the names of the team).
    """
    return content_stems(text) - _TALK_STEMS - set(ignore)


def alternatives(text: str) -> list[str]:
    """The options a text offers (itself when it offers one), without empty parts."""
    parts = [p.strip(" ,.?!") for p in _ALTERNATIVE.split(text)]
    return [p for p in parts if p] or [text]


def proposal(text: str) -> str:
    """A text up to its first reason connective (the whole text when it gives no reason)."""
    lowered = f" {text.lower()} "
    cuts = [lowered.find(m) for m in REASON_MARKERS if lowered.find(m) >= 0]
    return text[: min(cuts)].rstrip(" ,") if cuts else text


def gives_reason(text: str) -> bool:
    """True when the text states a reason (a connective of :data:`REASON_MARKERS`)."""
    lowered = f" {' '.join(text.lower().split())} "
    return any(marker in lowered for marker in REASON_MARKERS)


def numbers(text: str) -> list[str]:
    """The numbers of a text (times and amounts included), in order."""
    return [n.rstrip(",.:") for n in _NUMBER.findall(text)]


def is_open_text(text: str) -> bool:
    """True when the text still holds an open point (one of :data:`OPEN_MARKERS`)."""
    lowered = text.lower()
    return any(marker in lowered for marker in OPEN_MARKERS)


def task_ideas(task: str) -> list[str]:
    """The requests of a task sheet (its ``-`` bullets), one per clause, in short words.

    A clause keeps what follows its first verb of wanting ("want to", "prefer", "would
    like", ...); a bullet with no such verb is kept whole; at most ``IDEA_WORDS`` words.
    """
    ideas = []
    for line in task.splitlines():
        if not line.lstrip().startswith("- "):
            continue
        clauses = [c.strip().rstrip(".") for c in re.split(r";|, others ", line.lstrip()[2:])]
        wanting = [(c, _VERBS.search(c)) for c in clauses]
        if any(match for _, match in wanting):
            phrases = [c[match.end() :] for c, match in wanting if match]
        else:
            phrases = [" ".join(clauses)]
        for phrase in phrases:
            words = phrase.split()[:IDEA_WORDS]
            if len(words) >= 2:
                ideas.append(" ".join(words).rstrip(","))
    return ideas


def task_constraints(task: str) -> list[str]:
    """The binding clauses of a task sheet's constraints sentence, in short words.

    The clauses of the line starting "Constraints:" that say what must happen (with
    "must", "have to", "has to", "need to" or "should"), at most 16 words each.
    """
    clauses = []
    for line in task.splitlines():
        if not line.strip().startswith("Constraints:"):
            continue
        text = line.strip()[len("Constraints:") :]
        for clause in re.split(r",\s+(?:and|so)\s+|;\s+|\.\s+", text):
            if _BINDING.search(clause):
                clauses.append(" ".join(clause.strip(" .").split()[:16]))
    return clauses
