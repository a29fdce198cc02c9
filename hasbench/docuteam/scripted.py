"""``scripted:docuteam``: deterministic stand-ins for every DocuTeam role.

They read the same structured inputs a model is shown (never a prompt) and follow the
same rules, so a session runs offline, fast and reproducibly:

- the moderator walks each mode's stages (everyone opens, everyone replies), answers a
  user who just wrote, asks the user once when the scope still holds an open point
  (``?`` or ``TBD``) after more than four agent turns, and otherwise converges;
- an agent takes the act its direction names and speaks two template sentences built
  from its role and expertise, rotating expertise so it does not repeat itself;
- the trigger counts changed words (fewer than three is trivial), picks the agents whose
  profile shares words with the edit, and scores each mode from cues in the edited text
  (open questions favour Idea, alternatives favour Discussion, a relevant substantial
  block favours Evaluation), damped to 0.2 next to an open discussion;
- summaries, bubbles and memories are assembled from the acts and authors of the
  messages; incorporation writes a message's key phrase in the target block's form.

These are stand-ins for models, labelled as such wherever results are reported.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable

from pydantic import BaseModel

from hasbench.docuteam import schemas as s
from hasbench.docuteam.agents import EntryRewrite, NewEntry
from hasbench.docuteam.document import Block, word_changes

OPEN_MARKERS = ("?", "tbd", "todo")
ALTERNATIVE_MARKERS = (" or ", " vs ", " versus ", "instead", " but ", "either")
TRIVIAL_WORDS = 3
"""An edit batch changing fewer words than this is trivial."""
SIMILAR_CAP = 0.2
_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or our so that the their "
    "this to was we were will with what which who how why when where you your can could "
    "should would about into than then them they there these those just also more most very "
    "plan user users block blocks section".split()
)
_LINKS = frozenset({"is", "around", "add", "about", "on", "for", "with", "from", "at", "to"})


def content_stems(text: str) -> set[str]:
    """Content words of ``text``, cut to five letters (a crude stem)."""
    words = re.findall(r"[a-z][a-z0-9-]+", text.lower())
    return {w[:5] for w in words if len(w) > 2 and w not in _STOP}


def _clean(text: str) -> str:
    """Text without sentence punctuation, so it can sit inside a sentence."""
    return " ".join(re.sub(r"[.!?;:]+", " ", text).split())


def _first_words(text: str, n: int) -> str:
    return " ".join(_clean(text).split()[:n])


def _first_sentence(text: str) -> str:
    parts = s.sentences(text)
    return parts[0] if parts else text


def _topic(scope: s.ScopeView) -> str:
    """A short name for what a scope is about."""
    if scope.whole_document or not scope.blocks:
        return "the plan"
    text = scope.blocks[0].text.split("|")[0]
    label, colon, _ = text.partition(":")
    if colon and len(label.split()) <= 4:
        return _clean(label)
    return _first_words(text, 5)


def _gist(text: str) -> str:
    """A message's key phrase: what follows the last linking word of its first sentence."""
    words = _clean(_first_sentence(text)).split()
    links = [i for i, w in enumerate(words) if w.lower() in _LINKS]
    tail = words[links[-1] + 1 :] if links and links[-1] < len(words) - 1 else words[-3:]
    return " ".join(tail[:4])


def _has_open_point(blocks: list[Block]) -> bool:
    return any(marker in block.text.lower() for block in blocks for marker in OPEN_MARKERS)


def _utterances(messages: list[s.Message]) -> list[s.Message]:
    return [m for m in messages if m.kind == "utterance"]


# --------------------------------------------------------------------------- discussion


def focus(data: s.FocusInput) -> s.FocusOutput:
    """Mode aim + topic + section, then the comment (the user's words or the edit goal)."""
    aims = {
        "idea": "Gather distinct options for",
        "discussion": "Weigh the trade-offs and settle priorities for",
        "evaluation": "Judge the strengths and gaps of",
    }
    where = f" in the {data.scope.section} section" if data.scope.section else ""
    text = f"{aims[data.mode]} {_topic(data.scope)}{where}."
    if data.comment.strip():
        comment = _first_sentence(data.comment.strip())
        text += f" {comment}" + ("" if comment[-1] in ".!?" else ".")
    return s.FocusOutput(focus=text[:400])


def _directions(mode: s.Mode, topic: str, previous: str) -> tuple[str, str]:
    """The opening-round and reply-round directions of a mode."""
    opening = {
        "idea": f"CLAIM: propose one idea for {topic} that differs from what others offered.",
        "discussion": f"CLAIM: state your priority for {topic} from your perspective.",
        "evaluation": f"ISSUE: name the biggest risk or gap in {topic} from your perspective.",
    }[mode]
    reply = {
        "idea": f"SUPPORT: build on {previous}'s idea from your own angle.",
        "discussion": f"REBUT: challenge {previous}'s position where it clashes with yours.",
        "evaluation": f"CLAIM: suggest one concrete improvement for {topic}.",
    }[mode]
    return opening, reply


def moderator(data: s.ModeratorInput) -> s.ModeratorOutput:
    """Stages in order; answer the user; ask once about an open point; then converge."""
    ids = [a.id for a in data.agents]
    names = {a.id: a.name for a in data.agents}
    topic = _topic(data.scope)
    utterances = _utterances(data.messages)
    spoken = Counter(m.author for m in utterances)
    last = data.messages[-1] if data.messages else None
    previous = utterances[-1].author if utterances else None
    stages = s.STAGES[data.mode]
    key_points = [_gist(m.text) for m in utterances][-6:]
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
        direction = f"SUPPORT: answer the user briefly and bring the talk back to {topic}."
        return speak(agent, direction, state.stage or stages[1], "The user just wrote.")
    for round_number, stage in ((1, stages[0]), (2, stages[1])):
        waiting = [i for i in ids if spoken[i] < round_number]
        if waiting:
            agent = waiting[0]
            before = previous if previous and previous != agent else None
            other = names.get(before, "the last speaker") if before else "the last speaker"
            opening, reply = _directions(data.mode, topic, other)
            why = f"{names[agent]} has not spoken in round {round_number} yet."
            return speak(agent, opening if round_number == 1 else reply, stage, why)
    state.stage = stages[2]
    answered = any(m.kind == "answer" for m in data.messages)
    if (
        not data.asked_user
        and not answered
        and data.agent_turns > 4
        and _has_open_point(data.scope.blocks)
    ):
        claimants = list(dict.fromkeys(m.author for m in utterances if m.act == "CLAIM"))
        options = [f"Go with {names.get(a, a)}'s idea" for a in claimants[:2]]
        if len(options) == 2:
            state.progress_summary = "Both rounds are done; the open point needs the user."
            return s.ModeratorOutput(
                reasoning="The scope has an open point only the user can settle.",
                dialog_state=state,
                decision="ask_user",
                question_for_user=f"Which direction should {topic} take?",
                possible_answer_1=options[0],
                possible_answer_2=options[1],
            )
    state.progress_summary = "Every participant opened and replied; nothing new is left."
    return s.ModeratorOutput(
        reasoning="Both rounds are complete.", dialog_state=state, decision="converged"
    )


_UTTERANCES: dict[str, tuple[str, ...]] = {
    "CLAIM": (
        "For {topic}, my pick is an option built around {term}. "
        "As the {role} I cannot leave that to chance.",
        "My proposal for {topic} starts from {term}. It is what I would defend first.",
        "I would shape {topic} around {term}. Nothing else gives us as much for the effort.",
    ),
    "ISSUE": (
        "Nobody has settled what {topic} means for {term}. We should decide it before the rest.",
        "The open question on {topic} is {term}. Everything else depends on it.",
        "Before we go further on {topic}, look at {term}. That gap worries me most.",
    ),
    "SUPPORT": (
        "Building on what {other} said, I would add {term}. That makes {topic} easier to defend.",
        "{other} is right, and it works even better with {term}. I would keep that in {topic}.",
        "That idea from {other} fits well with {term}. It gives {topic} a solid base.",
    ),
    "REBUT": (
        "I disagree with {other}, because the real constraint is {term}. "
        "For {topic} I would not commit to that yet.",
        "That will not hold up once you look at {term}. {other} is underrating the risk.",
        "I see a problem with that plan when it comes to {term}. We need a safer version first.",
    ),
    "QUESTION": (
        "{other}, how does your point hold up on {term}? I need that answered before I back it.",
        "What happens to {term} under that plan, {other}? I cannot judge it without knowing.",
        "{other}, have you checked it against {term}? That decides whether I agree.",
    ),
    "USER": (
        "Good point, so the next piece to settle is {term}. That moves {topic} forward.",
        "Thanks, that helps us decide on {term}. Let us build the rest of {topic} on it.",
        "Noted, and it changes how I see {term}. We can narrow {topic} down from here.",
    ),
}


def _variant(agent_id: str, count: int) -> int:
    """A stable phrasing offset per agent, so agents do not all sound alike."""
    return zlib.crc32(agent_id.encode("utf-8")) % count


def utterance(data: s.UtteranceInput) -> s.UtteranceOutput:
    """The act the direction names, in two sentences from the agent's expertise."""
    head = data.direction.split(":", 1)[0].strip().upper()
    default: s.Act = {"idea": "CLAIM", "discussion": "CLAIM", "evaluation": "ISSUE"}[data.mode]
    act: s.Act = head if head in s.ACTS else default  # type: ignore[assignment]
    said = _utterances(data.messages)
    others = [m for m in said if m.author != data.agent.id]
    other = others[-1].author_name if others else "the others"
    last = data.messages[-1] if data.messages else None
    phrasings = _UTTERANCES["USER" if last is not None and last.author == "user" else act]
    own = sum(m.author == data.agent.id for m in said)
    expertise = data.agent.expertise
    earlier = [m.text for m in data.messages] + data.elsewhere
    topic = _topic(data.scope)
    terms = [expertise[(own + t) % len(expertise)] for t in range(len(expertise))]
    terms = [t for t in terms if t.lower() != topic.lower()] or terms
    said_before = " ".join(earlier).lower()
    terms.sort(key=lambda term: term.lower() in said_before)  # fresh terms first
    first = _variant(data.agent.id, len(phrasings))
    candidates = [
        phrasings[(first + p) % len(phrasings)].format(
            topic=topic, term=term, other=other, role=data.agent.role.lower()
        )
        for term in terms
        for p in range(len(phrasings))
    ]
    text = next((c for c in candidates if s.repeats(c, earlier) is None), candidates[0])
    return s.UtteranceOutput(act=act, utterance=text)


def memory_discussion(data: s.DiscussionMemoryInput) -> s.DiscussionMemoryOutput:
    """A summary entry per topic (rewritten when one exists) and the agreements made."""
    topic = _first_words(data.focus, 8)
    turns = len(_utterances(data.messages))
    prefix = f"Talked about '{topic}' ({data.mode} mode)"
    summary = f"{prefix}: {turns} agent turns"
    existing = [e for e in data.entries if e.type == "summary" and e.content.startswith(prefix)]
    update = [EntryRewrite(id=existing[0].id, content=summary)] if existing else []
    add = [] if existing else [NewEntry(type="summary", content=summary)]
    mine = [m for m in data.messages if m.author == data.agent.id and m.act == "SUPPORT"]
    agreed = set()
    for message in mine:
        index = data.messages.index(message)
        before = [
            m for m in data.messages[:index] if m.kind == "utterance" and m.author != data.agent.id
        ]
        if before and before[-1].author_name not in agreed:
            agreed.add(before[-1].author_name)
            content = f"Agreed with {before[-1].author_name} on {_gist(before[-1].text)}"
            if not any(e.content == content for e in data.entries):
                add.append(NewEntry(type="agreement", content=content))
    return s.DiscussionMemoryOutput(add=add, update=update)


_GREETINGS = {"hi", "hello", "hey", "thanks", "thank", "ok", "okay", "cool", "nice"}


def memory_user(data: s.UserMemoryInput) -> s.UserMemoryOutput:
    """The user's answer, preference, decision or clarification, quoted; greetings dropped."""
    last = data.messages[-1]
    words = re.findall(r"[a-z']+", last.text.lower())
    if len(words) < 3 or set(words) <= _GREETINGS:
        return s.UserMemoryOutput(add=[])
    quoted = " ".join(last.text.split())[:180]
    previous = data.messages[-2] if len(data.messages) > 1 else None
    if last.kind == "answer" and previous is not None and previous.author == "moderator":
        content = f"Asked '{_clean(previous.text)}', the user chose: {quoted}"
        return s.UserMemoryOutput(add=[NewEntry(type="summary", content=content[:240])])
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


def summary(data: s.SummaryInput) -> BaseModel:
    """The mode's summary built from acts: claims as ideas, supports and rebuttals as sides."""
    said = _utterances(data.messages)
    roles = {a.id: a.role for a in data.agents}
    if data.mode == "idea":
        clusters: dict[str, list[s.SummaryItem]] = {}
        for m in said:
            if m.act in ("CLAIM", "ISSUE", "SUPPORT"):
                item = s.SummaryItem(text=_gist(m.text), message_id=m.id)
                clusters.setdefault(roles.get(m.author, m.author), []).append(item)
        groups = [s.IdeaCluster(label=label, items=items) for label, items in clusters.items()]
        overview = f"{sum(len(g.items) for g in groups)} ideas from {len(clusters)} perspectives"
        return s.IdeaSummary(clusters=groups, overview=overview)
    if data.mode == "discussion":
        consensus = [
            s.SummaryItem(text=f"{m.author_name}: {_gist(m.text)}", message_id=m.id)
            for m in said
            if m.act == "SUPPORT"
        ]
        conflicts = []
        for index, m in enumerate(said):
            if m.act == "REBUT" and index > 0:
                target = said[index - 1]
                conflicts.append(
                    s.Conflict(
                        description=f"Follow {target.author_name} on {_gist(target.text)}?",
                        sides=[f"{target.author_name} for it", f"{m.author_name} against it"],
                        message_id=m.id,
                    )
                )
        claims = [m for m in said if m.act == "CLAIM"]
        if not consensus and not conflicts and claims:
            consensus = [
                s.SummaryItem(text=_first_words(claims[0].text, 12), message_id=claims[0].id)
            ]
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
                evaluation=_first_words(judged.text, 14),
                suggestion=_first_words(proposed.text, 14),
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
    """One sentence naming the ideas, the agreements and disputes, or the suggestions."""
    said = _utterances(data.messages)
    gists = {act: [_gist(m.text) for m in said if m.act == act] for act in s.ACTS}
    if data.mode == "idea" and gists["CLAIM"]:
        text = f"Ideas so far include {_join(gists['CLAIM'][-3:])}."
    elif data.mode == "discussion" and (gists["SUPPORT"] or gists["REBUT"]):
        agreed = _join(gists["SUPPORT"][-2:]) or "nothing yet"
        disputed = _join(gists["REBUT"][-2:]) or "nothing"
        text = f"Agreement on {agreed} while {disputed} is still disputed."
    elif data.mode == "evaluation" and gists["CLAIM"]:
        text = f"Suggested improvements include {_join(gists['CLAIM'][-3:])}."
    else:
        text = f"The agents have made {len(said)} points on this so far."
    return s.BubbleOutput(sentence=text[:200])


# --------------------------------------------------------------------------- trigger


def read_edit(data: s.ReadEditInput) -> s.ReadEditOutput:
    """Trivial below three changed words; otherwise a goal from the edited text."""
    changed = sum(word_changes(v.before or "", v.after or "") for v in data.edits)
    if changed < TRIVIAL_WORDS:
        return s.ReadEditOutput(trivial=True)
    view = max(data.edits, key=lambda v: word_changes(v.before or "", v.after or ""))
    text = view.after if view.after is not None else view.before or ""
    snippet = _first_words(text, 20)
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
    evaluation = 0.8 if relevant and len(after.split()) >= 8 else 0.3
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


# --------------------------------------------------------------------------- incorporation


def incorporate(data: s.IncorporateInput) -> s.IncorporateOutput:
    """The snippet's key phrase (a short snippet whole), in the target block's form."""
    short = len(data.snippet.split()) <= 8
    phrase = _clean(data.snippet) if short else _gist(data.snippet)
    target = data.target
    if target.type == "table_row":
        cells = [c.strip() for c in target.text.split("|")]
        first = cells[0] if data.placement == "replace" else ""
        rest = [""] * max(0, len(cells) - 2)
        return s.IncorporateOutput(text=" | ".join([first, phrase[:1].upper() + phrase[1:], *rest]))
    label, colon, _ = target.text.partition(":")
    if data.placement == "replace" and colon and len(label.split()) <= 4:
        text = f"{label.strip()}: {phrase}"
    else:
        text = phrase[:1].upper() + phrase[1:]
    neighbours = [b for b in (data.before, data.after) if b is not None and b.type == target.type]
    punctuated = target.type == "paragraph" or any(b.text.endswith(".") for b in neighbours)
    return s.IncorporateOutput(text=text + ("." if punctuated else ""))


SCRIPTED_STEPS: dict[str, Callable[[BaseModel], BaseModel]] = {
    "focus": focus,
    "moderator": moderator,
    "utterance": utterance,
    "memory_discussion": memory_discussion,
    "memory_user": memory_user,
    "summary": summary,
    "bubble": bubble,
    "read_edit": read_edit,
    "select_agents": select_agents,
    "need": need,
    "incorporate": incorporate,
}
