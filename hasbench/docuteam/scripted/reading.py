"""How the scripted stand-ins read what they are shown: topics, options, ideas, substance.

Every function works on the text a model in the same seat is shown (blocks, messages,
memory entries, the task sheet), never on hidden structure:

- :func:`topic`: a short name for what a scope is about (a block's label, a table row's
  first cell, "the plan" for the whole document);
- :func:`options_in`: the options the user wrote into blocks (the alternatives after a
  block's label, open markers dropped);
- :func:`substance`: a message without its chat voice — each sentence loses its leading
  talk (talk words, function words, the speakers' names) and phrases such as "I would go
  with"; sentences left with no plan term are dropped, a sentence giving a reason is
  joined to the one before. No plan term of the message is lost;
- :func:`idea_of`: the idea a message puts forward (what its first sentence commits
  to, without the speaker's side remark "with ... in mind");
- :func:`user_choice`: what the user's latest answer or post asks for; an answer that
  states an idea said in the conversation (a quick reply, even one cut short) is resolved
  to that idea in full, and one that names an agent's idea ("Go with Sora's idea") to
  that agent's latest claim;
- :func:`memory_ideas`: what the user decided or prefers, from memory entries that
  concern a topic.
"""

from __future__ import annotations

import re

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import MemoryEntry
from hasbench.docuteam.document import Block
from hasbench.docuteam.words import (
    TALK_WORDS,
    alternatives,
    content_stems,
    plan_terms,
)

_TIME = re.compile(r"^\d{1,2}:\d{2}$")
_LABEL = re.compile(r"^([A-Za-z][^:|]*?):\s*(.*)$")
_INNER_TALK = re.compile(r"\b(?:I|we) (?:would|'d|will)(?: rather)?(?: go with| add)?\s+")
_PICK = re.compile(r"\b(?:would|'d) (?:rather )?(?:go with|see)\s+", re.IGNORECASE)
_SIDE_REMARK = re.compile(r",? with [^,]+ in mind\b.*$", re.IGNORECASE)
_QUICK_REPLY = re.compile(r"^go with (.+?)'s idea\b:?\s*(.*)$", re.IGNORECASE)
_USER_ENTRY = re.compile(
    r"\b(?:the )?user (?:prefers|chose|decided to|decided|wants|clarified that|agreed with)\s+",
    re.IGNORECASE,
)
_PLACEHOLDERS = frozenset({"tbd", "todo", "tba"})
_KEPT = frozenset({"because", "since", "rather", "instead"})
"""Talk words that start what a sentence says (a reason, an alternative): never stripped."""
_GLUE = frozenset(
    "a an the and so then that this it its is are was were be to of for with on about what "
    "how which we you they our your their have has would could should will can plan there "
    "also just very".split()
)
"""Function words that may sit in a chat voice ("I agree with Sora on ..."); others, such
as "at" or "more", may start the substance and stay."""
_REASON_START = re.compile(
    r"^(?:because|since|so that|in order to|which means|to avoid)\b", re.IGNORECASE
)


def clean(text: str) -> str:
    """Text without sentence punctuation, so it can sit inside a sentence."""
    return " ".join(re.sub(r"[.!?;]+|:(?!\d)", " ", text).split())


def first_words(text: str, n: int) -> str:
    """The first ``n`` words of a text, without sentence punctuation."""
    return " ".join(clean(text).split()[:n])


def shorten(text: str, limit: int) -> str:
    """A text cut at a word boundary to at most ``limit`` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") or text[:limit]


def unlabel(text: str) -> str:
    """A text without the short labels it starts with ("User preference: My priority: X" -> X)."""
    for _ in range(3):
        label, rest = split_label(text)
        if not label or not rest:
            break
        text = rest
    return text


def split_label(text: str) -> tuple[str, str]:
    """A block's short label and the rest ("Networking: TBD" -> ("Networking", "TBD")).

    A label starts with a letter and has at most four words; without one: ("", text).
    """
    match = _LABEL.match(text)
    if match and len(match.group(1).split()) <= 4:
        return match.group(1).strip(), match.group(2).strip()
    return "", text


def topic(scope: s.ScopeView) -> str:
    """A short name for what a scope is about."""
    if scope.whole_document or not scope.blocks:
        return "the plan"
    return topic_of(scope.blocks[0])


def topic_of(block: Block) -> str:
    """A short name for one block: its label, a table row's first cell, or its first words."""
    if block.type == "table_row":
        cell = block.text.split("|")[0].strip()
        if _TIME.match(cell):
            return f"the {cell} slot"
        return cell or "this row"
    label, _ = split_label(block.text)
    return label or first_words(block.text, 5)


def options_in(blocks: list[Block]) -> list[str]:
    """The options written in blocks: the alternatives after a label or a row's first cell.

    Only blocks (other than headings) that offer two options or more; open markers
    (``TBD``, ``?``) are dropped and options with no plan term are left out.
    """
    found = []
    for block in blocks:
        if block.type == "heading":
            continue
        if block.type == "table_row":
            text = " ".join(c.strip() for c in block.text.split("|")[1:])
        else:
            text = split_label(block.text)[1]
        offered = alternatives(text)
        if len(offered) < 2:
            continue
        for option in offered:
            words = [w for w in option.split() if w.strip(",.?!").lower() not in _PLACEHOLDERS]
            option = " ".join(words).strip(" ,.?!")
            if option and plan_terms(option) and option not in found:
                found.append(option)
    return found


def _is_talk(token: str, names: set[str]) -> bool:
    """True for a token a sentence's chat voice may start with (see :func:`strip_talk`)."""
    word = token.strip(',.!?;:"()').lower()
    if word.endswith("'s"):
        word = word[:-2]
    if word in _KEPT:
        return False
    return len(word) <= 1 or word in TALK_WORDS or word in _GLUE or word in names


def strip_talk(sentence: str, names: set[str] = frozenset()) -> str:
    """One sentence without its chat voice: phrases like "I would go with", then leading talk.

    Leading talk is a run of talk words, speakers' names and glue words ("with", "on",
    "the", ...); it ends at the first other word, or at a word that starts a reason or an
    alternative ("because", "rather").

    Args:
        sentence: The sentence.
        names: Lower-case names of the speakers (dropped where they lead the sentence).
    """
    text = _INNER_TALK.sub("", " ".join(sentence.split()))
    tokens = text.split()
    start = 0
    while start < len(tokens) and _is_talk(tokens[start], names):
        start += 1
    return " ".join(tokens[start:]).strip(" ,;")


def substance(text: str, names: set[str] = frozenset()) -> str:
    """What a message says without its chat voice (see the module docstring), one line."""
    parts: list[str] = []
    for sentence in s.sentences(text):
        question = sentence.rstrip().endswith("?")
        kept = strip_talk(sentence, names).rstrip(" .!?")
        if not plan_terms(kept):
            continue
        kept += "?" if question else ""
        if parts and _REASON_START.match(kept) and not parts[-1].endswith("?"):
            parts[-1] = f"{parts[-1]}, {kept}"
        else:
            parts.append(kept)
    return ". ".join(parts)


def idea_of(text: str, names: set[str] = frozenset()) -> str:
    """The idea a message puts forward: what its first sentence commits to.

    That is what follows the sentence's last "would go with" or "would rather see" (the
    speaker's own pick, after any option it turns down), else the sentence's substance;
    the side remark "with ... in mind" is dropped.
    """
    for sentence in s.sentences(text):
        picks = list(_PICK.finditer(sentence))
        kept = sentence[picks[-1].end() :] if picks else sentence
        kept = strip_talk(kept, names).rstrip(" .!?")
        if plan_terms(kept):
            return _SIDE_REMARK.sub("", kept).strip(" ,") or kept
    return clean(text)


def user_choice(messages: list[s.Message]) -> str | None:
    """What the user's latest message (an answer or a post) asks for, or None without one.

    A reply naming an agent's idea ("Go with Sora's idea") is resolved to that agent's
    latest claim (or the words after the reply's colon). Otherwise the message loses a
    short label ("My answer: ...") and its chat voice; when what is left starts an idea an
    agent put forward (a quick reply states one, perhaps cut to fit), that idea is returned
    whole, an agent's claim before another's reply that mentions it.
    """
    mine = [m for m in messages if m.author == "user"]
    if not mine:
        return None
    text = mine[-1].text.strip()
    quick = _QUICK_REPLY.match(text)
    if quick:
        name, rest = quick.group(1).strip().lower(), quick.group(2).strip()
        said = [m for m in messages if m.kind == "utterance" and m.author_name.lower() == name]
        claims = [m for m in said if m.act == "CLAIM"] or said
        if claims:
            return idea_of(claims[-1].text, speaker_names(messages))
        return rest.rstrip(". ") or None
    names = speaker_names(messages)
    kept = substance(unlabel(text), names)
    if not kept:
        return None
    start = kept.lower().rstrip(" .…")
    said = [m for m in reversed(messages) if m.kind == "utterance"]
    claims = [m for m in said if m.act in ("CLAIM", "ISSUE")]
    ideas = [idea_of(m.text, names) for m in claims + said]
    return next((i for i in ideas if i.lower().startswith(start)), kept)


def speaker_names(messages: list[s.Message]) -> set[str]:
    """The lower-case names of the agents who wrote in a conversation."""
    return {m.author_name.lower() for m in messages if m.author not in ("user", "moderator")}


def memory_ideas(entries: list[MemoryEntry], subject: str, about: str) -> list[str]:
    """What the user decided or prefers on a subject, from the agent's memory entries.

    An entry counts when it shares a plan term with ``subject`` (the topic) or two with
    ``about`` (the topic, focus and scope). Latest first; decisions ("chose", "decided")
    before preferences.
    """
    wanted, named = plan_terms(about), plan_terms(subject)
    found: list[tuple[int, str]] = []
    for entry in reversed(entries):
        content = entry.content
        if "user" not in content.lower() or entry.type == "agreement":
            continue
        content = content.split(" (asked:", 1)[0]
        match = _USER_ENTRY.search(content)
        idea = unlabel(content[match.end() :] if match else content)
        idea = strip_talk(idea).rstrip(" .")
        terms = plan_terms(entry.content)
        if idea and (terms & named or len(terms & wanted) >= 2):
            decided = any(w in content.lower() for w in ("chose", "decided", "decision"))
            found.append((0 if decided else 1, idea))
    return [idea for _, idea in sorted(found, key=lambda pair: pair[0])]


def fresh(idea: str, said: set[str]) -> bool:
    """True when at least half of an idea's plan terms were not said yet."""
    terms = plan_terms(idea)
    return bool(terms) and len(terms - said) * 2 >= len(terms)


def overlap(text: str, profile: s.PublicProfile) -> int:
    """Content words a text shares with an agent's profile."""
    words = content_stems(" ".join([profile.role, profile.stance, *profile.expertise]))
    return len(content_stems(text) & words)
