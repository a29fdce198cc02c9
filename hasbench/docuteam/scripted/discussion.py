"""Scripted stand-ins for the discussion roles: focus, moderator, agents, memory, summaries.

- the moderator walks each mode's stages (everyone opens, everyone replies), answers a
  user who just wrote, asks the user once when the scope still holds an open point
  (``?`` or ``TBD``) after more than four agent turns — two quick replies that state
  the two first claimants' ideas themselves ("Random tables of five during lunch"), so
  they read as answers without the thread — and otherwise converges;
- an agent takes the act its direction names and speaks two sentences: a proposal and
  its reason (its stance). What it proposes comes, in this order, from what the user
  decided or prefers on the topic (its memory), from the user's latest answer or post
  (a quick reply is resolved to the idea it names), from the options the user wrote in
  the scope, and from the task sheet's requests, the ones closest to its profile first
  and never one already said; it adds one of its expertise terms as its angle. An agent
  that joins after the user answered takes up the user's choice first, from its angle;
- summaries, bubbles and memories name the ideas (:func:`~.reading.idea_of`), the
  user's choice first once the user has chosen.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import EntryRewrite, NewEntry
from hasbench.docuteam.scripted.reading import (
    clean,
    fresh,
    idea_of,
    memory_ideas,
    options_in,
    overlap,
    shorten,
    speaker_names,
    topic,
    user_choice,
)
from hasbench.docuteam.words import is_open_text, plan_terms, task_constraints, task_ideas

OPTION_CHARS = 80
"""Longest quick-reply option (the moderator step's limit)."""
UTTERANCE_CHARS = 400
"""Longest utterance (the utterance step's limit)."""
PHRASE_CHARS = 120
"""Longest idea, choice or other's idea quoted inside an utterance."""


def _utterances(messages: list[s.Message]) -> list[s.Message]:
    return [m for m in messages if m.kind == "utterance"]


def _answered_by(messages: list[s.Message]) -> s.Message | None:
    """The agent message that took up the user's latest message, if one did."""
    users = [i for i, m in enumerate(messages) if m.author == "user"]
    if not users:
        return None
    after = [m for m in messages[users[-1] + 1 :] if m.kind == "utterance"]
    return after[0] if after else None


# --------------------------------------------------------------------------- focus


def focus(data: s.FocusInput) -> s.FocusOutput:
    """Mode aim + topic + section, then the comment (the user's words or the edit goal)."""
    aims = {
        "idea": "Gather distinct options for",
        "discussion": "Weigh the trade-offs and settle priorities for",
        "evaluation": "Judge the strengths and gaps of",
    }
    where = f" in the {data.scope.section} section" if data.scope.section else ""
    text = f"{aims[data.mode]} {topic(data.scope)}{where}."
    if data.comment.strip():
        parts = s.sentences(data.comment.strip())
        comment = parts[0] if parts else data.comment.strip()
        text += f" {comment}" + ("" if comment[-1] in ".!?" else ".")
    return s.FocusOutput(focus=text[:400])


# --------------------------------------------------------------------------- moderator


def _directions(mode: s.Mode, subject: str, previous: str) -> tuple[str, str]:
    """The opening-round and reply-round directions of a mode."""
    opening = {
        "idea": f"CLAIM: propose one idea for {subject} that differs from what others offered.",
        "discussion": f"CLAIM: state your priority for {subject} from your perspective.",
        "evaluation": f"ISSUE: name the biggest risk or gap in {subject} from your perspective.",
    }[mode]
    reply = {
        "idea": f"SUPPORT: build on {previous}'s idea from your own angle.",
        "discussion": f"REBUT: challenge {previous}'s position where it clashes with yours.",
        "evaluation": f"CLAIM: suggest one concrete improvement for {subject}.",
    }[mode]
    return opening, reply


def _options(claims: list[s.Message], names: set[str]) -> list[str]:
    """Quick replies that state the claimed ideas themselves, not who proposed them."""
    options = []
    for m in claims:
        idea = shorten(idea_of(m.text, names), OPTION_CHARS)
        options.append(idea[:1].upper() + idea[1:])
    return options


def moderator(data: s.ModeratorInput) -> s.ModeratorOutput:
    """Stages in order; answer the user; ask once about an open point; then converge."""
    ids = [a.id for a in data.agents]
    names = {a.id: a.name for a in data.agents}
    subject = topic(data.scope)
    utterances = _utterances(data.messages)
    spoken = Counter(m.author for m in utterances)
    last = data.messages[-1] if data.messages else None
    previous = utterances[-1].author if utterances else None
    stages = s.STAGES[data.mode]
    lowered = {n.lower() for n in names.values()}
    key_points = [shorten(idea_of(m.text, lowered), 150) for m in utterances][-6:]
    state = data.dialog_state.model_copy(
        update={"agents_spoken": [i for i in ids if spoken[i]], "key_points": key_points}
    )

    def speak(agent: str, direction: str, stage: str, why: str) -> s.ModeratorOutput:
        state.stage = stage
        state.progress_summary = f"{len(utterances)} agent turns; {names[agent]} speaks next."
        return s.ModeratorOutput(
            reasoning=why,
            dialog_state=state,
            decision="speak",
            next_speaker_id=agent,
            speaking_direction=direction,
        )

    if last is not None and last.author == "user":
        order = {m.author: index for index, m in enumerate(utterances)}
        agent = min(ids, key=lambda i: (order.get(i, -1), ids.index(i)))
        what = "the user's choice" if last.kind == "answer" else "what the user asked for"
        direction = f"SUPPORT: take up {what} and say how to make it work for {subject}."
        return speak(agent, direction, state.stage or stages[1], "The user just wrote.")
    for round_number, stage in ((1, stages[0]), (2, stages[1])):
        waiting = [i for i in ids if spoken[i] < round_number]
        if waiting:
            agent = waiting[0]
            before = previous if previous and previous != agent else None
            other = names.get(before, "the last speaker") if before else "the last speaker"
            opening, reply = _directions(data.mode, subject, other)
            why = f"{names[agent]} has not spoken in round {round_number} yet."
            return speak(agent, opening if round_number == 1 else reply, stage, why)
    state.stage = stages[2]
    answered = any(m.author == "user" for m in data.messages)
    open_point = any(is_open_text(b.text) for b in data.scope.blocks)
    if not data.asked_user and not answered and data.agent_turns > 4 and open_point:
        claims = []
        for m in utterances:
            if m.act == "CLAIM" and m.author not in {c.author for c in claims}:
                claims.append(m)
        options = _options(claims[:2], lowered)
        if len(options) == 2 and options[0].lower() != options[1].lower():
            state.progress_summary = "Both rounds are done; the open point needs the user."
            return s.ModeratorOutput(
                reasoning="The scope has an open point only the user can settle.",
                dialog_state=state,
                decision="ask_user",
                question_for_user=f"Which direction should {subject} take?",
                possible_answer_1=options[0],
                possible_answer_2=options[1],
            )
    state.progress_summary = "Every participant opened and replied; nothing new is left."
    return s.ModeratorOutput(
        reasoning="Both rounds are complete.", dialog_state=state, decision="converged"
    )


# --------------------------------------------------------------------------- agents

_PROPOSALS: dict[str, tuple[str, ...]] = {
    "CLAIM": (
        "I would go with {idea}{angle}.",
        "I would rather see {idea}{angle}.",
        "We should plan {idea}{angle}.",
    ),
    "ISSUE": (
        "We still have nothing on {idea}{angle}.",
        "We still need {idea}{angle}.",
    ),
    "SUPPORT": (
        "I agree with {other} on {their}, and I would add {idea}.",
        "{other} is right about {their}, and I would add {idea}.",
    ),
    "REBUT": (
        "Rather than {their}, I would go with {idea}{angle}.",
        "Instead of {their}, I would go with {idea}{angle}.",
    ),
    "QUESTION": (
        "{other}, how does {their} hold up on {idea}?",
        "{other}, what happens to {idea} under {their}?",
    ),
    "USER": (
        "Then we go with {choice}, and I would add {idea}.",
        "So we go with {choice}, and I would add {idea}.",
    ),
}
"""The first sentence of each act (``USER``: the reply to the user); the second gives
the reason (:data:`_REASONS`)."""
_REASONS = (
    "That matters to me because {reason}.",
    "I say so because {reason}.",
    "It is worth it because {reason}.",
)
_MEMORY_REASON = "It is what you asked for, and it matters because {reason}."


def _their_idea(others: list[s.Message], names: set[str], taken_up: s.Message | None = None) -> str:
    """The idea the last other speaker stands for.

    Its reply that took up the user's latest message (``taken_up``) if it wrote it, else
    its latest claim's, else its last message's.
    """
    author = others[-1].author
    own = [m for m in others if m.author == author]
    claims = [m for m in own if m.act in ("CLAIM", "ISSUE")]
    stands_for = taken_up if taken_up is not None and taken_up.author == author else None
    return shorten(idea_of((stands_for or (claims or own)[-1]).text, names), 120)


def _phrase(text: str) -> str:
    """A text as a phrase inside a sentence: its first sentence, unpunctuated, 120 characters."""
    parts = s.sentences(text)
    return shorten((parts[0] if parts else text).rstrip(" .!?"), PHRASE_CHARS)


def _variant(agent_id: str, count: int) -> int:
    """A stable phrasing offset per agent, so agents do not all sound alike."""
    return zlib.crc32(agent_id.encode("utf-8")) % count


def _reason(agent: s.PublicProfile) -> str:
    """The agent's stance as a reason clause."""
    stance = clean(agent.stance)
    return stance[:1].lower() + stance[1:]


def _ideas(data: s.UtteranceInput, said: set[str]) -> tuple[list[str], list[str]]:
    """What the agent may propose: the user's wishes from memory, then other ideas.

    Returns:
        (from memory, the rest): the rest is the user's options in the scope (closest to
        the agent's profile first), then the task sheet's constraints and requests
        (sharing most words with the scope and the profile first); none already said,
        none but the user's options already written in a block of the scope, and no
        request the agent itself proposed in another discussion.
    """
    about = " ".join([topic(data.scope), data.focus, *(b.text for b in data.scope.blocks)])
    blocks = [plan_terms(b.text) for b in data.scope.blocks]

    def new(idea: str, said: set[str]) -> bool:
        return fresh(idea, said) and not any(plan_terms(idea) <= terms for terms in blocks)

    remembered = [i for i in memory_ideas(data.memory, topic(data.scope), about) if new(i, said)]
    own = said | plan_terms(" ".join(data.elsewhere))
    options = [i for i in options_in(data.scope.blocks) if fresh(i, said)]
    options.sort(key=lambda i: -overlap(i, data.agent))
    wanted = plan_terms(about)
    requests = task_constraints(data.task) + task_ideas(data.task)
    requests = [i for i in dict.fromkeys(requests) if new(i, own) and i not in options]
    requests.sort(key=lambda i: -(len(plan_terms(i) & wanted) + overlap(i, data.agent)))
    return remembered, [i for i in options + requests if i not in remembered]


def _angles(data: s.UtteranceInput, said_before: str) -> list[str]:
    """The agent's expertise terms, its turn's own first, the ones not yet said before.

    A term that is the discussion's topic is no angle on it (unless it is the only one).
    """
    expertise = data.agent.expertise
    own = sum(m.author == data.agent.id for m in data.messages)
    terms = [expertise[(own + t) % len(expertise)] for t in range(len(expertise))]
    subject = topic(data.scope).lower()
    terms = [term for term in terms if term.lower() != subject] or terms
    terms.sort(key=lambda term: term.lower() in said_before)
    return terms


def utterance(data: s.UtteranceInput) -> s.UtteranceOutput:
    """The act the direction names: a proposal and its reason (see the module docstring)."""
    head = data.direction.split(":", 1)[0].strip().upper()
    default: s.Act = {"idea": "CLAIM", "discussion": "CLAIM", "evaluation": "ISSUE"}[data.mode]
    act: s.Act = head if head in s.ACTS else default  # type: ignore[assignment]
    said = _utterances(data.messages)
    names = speaker_names(data.messages) | {data.agent.name.lower()}
    others = [m for m in said if m.author != data.agent.id]
    last = data.messages[-1] if data.messages else None
    to_user = last is not None and last.author == "user"
    earlier = [m.text for m in data.messages] + data.elsewhere
    said_before = " ".join(earlier).lower()
    spoken = plan_terms(" ".join(m.text for m in data.messages))
    remembered, ideas = _ideas(data, spoken)
    angles = _angles(data, said_before)
    newcomer = not any(m.author == data.agent.id for m in said)
    answered = any(m.kind == "answer" for m in data.messages)
    choice = user_choice(data.messages) if to_user or (newcomer and answered) else None
    their = _their_idea(others, names, _answered_by(data.messages)) if others else topic(data.scope)
    kind = "USER" if choice else act
    if kind in ("SUPPORT", "USER"):
        base = choice or their
        additions = [a for a in angles if not plan_terms(a) <= plan_terms(base)]
        proposals = [(False, a) for a in additions + ideas] or [(False, angles[0])]
    elif kind == "QUESTION":
        proposals = [(False, a) for a in angles]
    else:
        proposals = [(True, i) for i in remembered] + [(False, i) for i in ideas]
        proposals = proposals or [(False, a) for a in angles]
    phrasings = _PROPOSALS[kind]
    first = _variant(data.agent.id, len(phrasings))
    reason = _reason(data.agent)
    candidates = []
    for from_memory, idea in proposals:
        angle = next((a for a in angles if not plan_terms(a) <= plan_terms(idea)), "")
        for p in range(len(phrasings)):
            proposal = phrasings[(first + p) % len(phrasings)].format(
                idea=_phrase(idea),
                angle=f", with {angle} in mind" if angle else "",
                other=others[-1].author_name if others else "the others",
                their=_phrase(their),
                choice=_phrase(choice or ""),
            )
            because = _MEMORY_REASON if from_memory else _REASONS[(first + p) % len(_REASONS)]
            candidates.append(f"{proposal} {because.format(reason=reason)}")
    fitting = [c for c in candidates if len(c) <= UTTERANCE_CHARS] or [
        shorten(c, UTTERANCE_CHARS - 1).rstrip(".") + "." for c in candidates
    ]
    text = next((c for c in fitting if s.repeats(c, earlier) is None), fitting[0])
    return s.UtteranceOutput(act=act, utterance=text)


# --------------------------------------------------------------------------- memory


def memory_discussion(data: s.DiscussionMemoryInput) -> s.DiscussionMemoryOutput:
    """A summary entry per topic (rewritten when one exists) and the agreements made."""
    subject = " ".join(clean(data.focus).split()[:8])
    turns = len(_utterances(data.messages))
    prefix = f"Talked about '{subject}' ({data.mode} mode)"
    summary = f"{prefix}: {turns} agent turns"
    reply = _answered_by(data.messages)
    names = speaker_names(data.messages)
    if reply is not None:
        settled = shorten(idea_of(reply.text, names), 240 - len(summary) - 16)
        summary += f"; settled on {settled}"
    existing = [e for e in data.entries if e.type == "summary" and e.content.startswith(prefix)]
    update = [EntryRewrite(id=existing[0].id, content=summary)] if existing else []
    add = [] if existing else [NewEntry(type="summary", content=summary)]
    agreed = set()
    for index, message in enumerate(data.messages):
        if message.author != data.agent.id or message.act != "SUPPORT" or index == 0:
            continue
        before = data.messages[index - 1]
        if before.kind != "utterance" or before.author_name in agreed:
            continue
        agreed.add(before.author_name)
        said = [m for m in data.messages[:index] if m.kind == "utterance"]
        idea = _their_idea([m for m in said if m.author == before.author], names)
        content = f"Agreed with {before.author_name} on {idea}"
        if not any(e.content == content for e in data.entries):
            add.append(NewEntry(type="agreement", content=content))
    return s.DiscussionMemoryOutput(add=add, update=update)


_GREETINGS = {"hi", "hello", "hey", "thanks", "thank", "ok", "okay", "cool", "nice"}


def memory_user(data: s.UserMemoryInput) -> s.UserMemoryOutput:
    """The user's answer (with the idea it picks), preference, decision or clarification."""
    last = data.messages[-1]
    words = re.findall(r"[a-z']+", last.text.lower())
    if len(words) < 3 or set(words) <= _GREETINGS:
        return s.UserMemoryOutput(add=[])
    quoted = " ".join(last.text.split())[:180]
    previous = data.messages[-2] if len(data.messages) > 1 else None
    if last.kind == "answer" and previous is not None and previous.author == "moderator":
        choice = user_choice(data.messages) or quoted
        content = f"The user chose {shorten(choice, 150)} (asked: {clean(previous.text)})"
        return s.UserMemoryOutput(add=[NewEntry(type="summary", content=shorten(content, 240))])
    lowered = f" {last.text.lower()} "
    if any(w in lowered for w in (" prefer", " rather ", " like ", " want ", " avoid ")):
        return s.UserMemoryOutput(
            add=[NewEntry(type="preference", content=f"User preference: {quoted}")]
        )
    if any(w in lowered for w in (" decide", " let's ", " go with ", " we will ", " choose ")):
        return s.UserMemoryOutput(
            add=[NewEntry(type="summary", content=f"User decision: {quoted}")]
        )
    return s.UserMemoryOutput(add=[NewEntry(type="summary", content=f"User clarified: {quoted}")])


# --------------------------------------------------------------------------- summaries


def _item(m: s.Message, names: set[str]) -> s.SummaryItem:
    return s.SummaryItem(text=shorten(idea_of(m.text, names), 160), message_id=m.id)


def summary(data: s.SummaryInput) -> s.Summary:
    """The mode's summary built from acts, the reply that took up the user's choice first."""
    said = _utterances(data.messages)
    roles = {a.id: a.role for a in data.agents}
    names = speaker_names(data.messages)
    chosen = _answered_by(data.messages)
    if data.mode == "idea":
        clusters: dict[str, list[s.SummaryItem]] = {}
        if chosen is not None:
            clusters["Chosen by the user"] = [_item(chosen, names)]
        for m in said:
            if m.act in ("CLAIM", "ISSUE", "SUPPORT") and m is not chosen:
                clusters.setdefault(roles.get(m.author, m.author), []).append(_item(m, names))
        groups = [s.IdeaCluster(label=label, items=items) for label, items in clusters.items()]
        overview = f"{sum(len(g.items) for g in groups)} ideas from {len(clusters)} perspectives"
        return s.IdeaSummary(clusters=groups, overview=overview)
    if data.mode == "discussion":
        consensus = [_item(chosen, names)] if chosen is not None else []
        consensus += [
            s.SummaryItem(
                text=shorten(f"{m.author_name}: {idea_of(m.text, names)}", 160), message_id=m.id
            )
            for m in said
            if m.act == "SUPPORT" and m is not chosen
        ]
        conflicts = []
        for index, m in enumerate(said):
            if m.act == "REBUT" and index > 0:
                target = said[index - 1]
                own = [x for x in said[:index] if x.author == target.author]
                idea = _their_idea(own, names)
                conflicts.append(
                    s.Conflict(
                        description=shorten(f"Follow {target.author_name} on {idea}?", 160),
                        sides=[f"{target.author_name} for it", f"{m.author_name} against it"],
                        message_id=m.id,
                    )
                )
        claims = [m for m in said if m.act == "CLAIM"]
        if not consensus and not conflicts and claims:
            consensus = [_item(claims[0], names)]
        return s.DiscussionSummary(consensus=consensus, conflicts=conflicts)
    evaluations = []
    for agent in data.speakers:
        own = [m for m in said if m.author == agent]
        if not own:
            continue
        judged = next((m for m in own if m.act == "ISSUE"), own[0])
        proposed = next((m for m in own if m.act == "CLAIM"), own[-1])
        evaluations.append(
            s.AgentEvaluation(
                agent_id=agent,
                evaluation=shorten(f"Missing: {idea_of(judged.text, names)}", 160),
                suggestion=shorten(idea_of(proposed.text, names), 160),
                message_id=judged.id,
            )
        )
    return s.EvaluationSummary(evaluations=evaluations)


def _join(items: list[str]) -> str:
    items = list(dict.fromkeys(i for i in items if i))
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def bubble(data: s.BubbleInput) -> s.BubbleOutput:
    """One sentence naming the user's choice, the ideas, the agreements and disputes."""
    said = _utterances(data.messages)
    names = speaker_names(data.messages)
    ideas = {
        act: [shorten(idea_of(m.text, names), 50) for m in said if m.act == act] for act in s.ACTS
    }
    chosen = _answered_by(data.messages)
    if chosen is not None:
        text = f"The user chose {shorten(idea_of(chosen.text, names), 120)}."
    elif data.mode == "idea" and ideas["CLAIM"]:
        text = f"Ideas so far include {_join(ideas['CLAIM'][-3:])}."
    elif data.mode == "discussion" and (ideas["SUPPORT"] or ideas["REBUT"]):
        agreed = _join(ideas["SUPPORT"][-2:]) or "nothing yet"
        disputed = _join(ideas["REBUT"][-2:]) or "nothing"
        text = f"Agreement on {agreed} while {disputed} is still disputed."
    elif data.mode == "evaluation" and ideas["CLAIM"]:
        text = f"Suggested improvements include {_join(ideas['CLAIM'][-3:])}."
    else:
        text = f"The agents have made {len(said)} points on this so far."
    return s.BubbleOutput(sentence=shorten(clean(text), 198) + ".")
