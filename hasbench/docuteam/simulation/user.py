"""A simulated participant working on a plan in a DocuTeam session.

At every step the participant gets a :class:`UserView` — what the widget shows a person:
the task sheet, the document, the agents, the discussions with their status, focus,
bubble, messages, summary and any question, the notices of the agents' reactions, how
its last action went and the steps it has left — and answers with one
:class:`UserAction`: edit or insert a block, start a discussion, post into one, answer a
question, add or remove an agent, set a focus, apply a message, stop a discussion, wait
(read and let the agents work), or finish. :func:`run_user` performs the action on the
session (the engine refuses what the condition does not offer, and the refusal is the
step's result), lets the session clock move on so that edits reach the agents, waits for
the discussions to pause, and writes one line per step to the participant's log.

Two players:

- :class:`ScriptedParticipant` (``scripted``) follows the rules below, drawn with a seeded
  generator and shaped by its persona's expertise (e), initiative (i) and trust (t).
  Its own ideas are the requests of the task sheet (the bullets of ``task.md``), in
  their own words. At each step it takes the first rule that applies:

  1. a discussion waits for its answer: the quick reply (option 1 or 2 at random) with
     probability t, else its own answer naming the request closest to the focus;
  2. a paused discussion has agent messages it has not applied, whose proposal (the
     words before a "because") is not already in one block of the plan (at most
     1 + round(2t) per discussion): with probability 0.3 + 0.7t it applies the message the summary
     links first (else the last agent message) — onto the discussion's first block, or
     in Baseline onto the block sharing most words with it — replacing the block when
     the block is still open (``TBD``, ``?``), after it otherwise;
  3. a paused discussion it has not steered: with probability i(1.2 - t) it posts its
     preference (the request closest to the focus); in DocuTeam with i >= 0.6 it first
     brings in the absent agent whose profile fits the focus best;
  4. an open block (``TBD``, ``?``) it has not yet rewritten: with probability
     0.35 + 0.6i it writes a request into it, as a question with an alternative when
     e >= 0.5 ("X, or Y?"), as a plain question otherwise ("X?");
  5. fewer than 1 + round(2i) discussions of its own: with probability 0.3 + 0.6i it
     starts one — Idea mode when e < 0.4, Discussion when e < 0.7, else Evaluation or
     Discussion at random — with the two agents (three when i >= 0.6) whose profiles
     share most words with the scope and its request; the scope is the block it last
     wrote, else the first open block (DocuTeam), or the whole document (Baseline);
  6. a request it has not written yet: with probability 0.2 + 0.6i it adds it as a new
     line after the block that shares most words with it, else it waits; with every
     request written it finishes.

- :class:`ModelParticipant` (any model string or ``local/<name>``) is shown the persona in
  words and the rendered view, and replies with one JSON action (asked again once, the
  problem stated, when the reply is unusable; after that the step is a recorded failure).

Neither sees anything a person at the widget would not: no scores, no prompts, no
future events.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from hasbench.docuteam import schemas as s
from hasbench.docuteam.discussion import Discussion, summary_entries
from hasbench.docuteam.document import Block
from hasbench.docuteam.failures import LossCounter
from hasbench.docuteam.session import Session
from hasbench.docuteam.simulation.personas import StudyPersona
from hasbench.docuteam.simulation.rating import is_open
from hasbench.docuteam.steps import ask_model, parse_reply
from hasbench.docuteam.words import content_stems, plan_terms, proposal, task_ideas
from hasbench.llm import LLMClient, ModelError, ModelResponse
from hasbench.prompts import prompt_hashes, render
from hasbench.vocab import canonical_json

SCRIPTED_USER = "scripted"
PROMPT_FOLDER = "docuteam_sim"
STEP_SECONDS = 30.0
"""Session-clock seconds one step of the participant takes (edits reach the agents)."""
VIEW_MESSAGES = 12
"""Latest messages of each discussion shown to the participant."""

ActionName = Literal[
    "edit",
    "insert",
    "start_discussion",
    "post",
    "answer",
    "add_agent",
    "remove_agent",
    "set_focus",
    "apply",
    "stop",
    "wait",
    "finish",
]
REQUIRED: dict[str, tuple[str, ...]] = {
    "edit": ("block_id", "text"),
    "insert": ("block_id", "text"),
    "start_discussion": ("mode", "agents"),
    "post": ("discussion", "text"),
    "answer": ("discussion",),
    "add_agent": ("discussion", "agent"),
    "remove_agent": ("discussion", "agent"),
    "set_focus": ("discussion", "text"),
    "apply": ("discussion", "message_id", "block_id"),
    "stop": ("discussion",),
    "wait": (),
    "finish": (),
}
"""The fields each action needs."""


# --------------------------------------------------------------------------- the view


class SummaryLine(s.Strict):
    """A line of a discussion's summary and the message it links to."""

    section: str
    text: str
    message_id: str


class DiscussionView(s.Strict):
    """A discussion as the participant sees it."""

    id: str
    mode: s.Mode
    scope: list[str] | None
    participants: list[str]
    initiator: Literal["user", "agents"]
    status: str
    focus: str
    bubble: str
    question: str | None = None
    options: list[str] = Field(default_factory=list)
    messages: list[s.Message]
    summary: list[SummaryLine]

    @classmethod
    def of(cls, d: Discussion) -> DiscussionView:
        """The view of a discussion."""
        waiting = d.status == "waiting_for_user" and d.pending is not None
        return cls(
            id=d.id,
            mode=d.mode,
            scope=list(d.scope) if d.scope is not None else None,
            participants=list(d.participants),
            initiator=d.initiator,
            status=d.status,
            focus=d.focus,
            bubble=d.bubble,
            question=d.pending.question if waiting else None,
            options=list(d.pending.options) if waiting else [],
            messages=[m.model_copy() for m in d.messages[-VIEW_MESSAGES:]],
            summary=[
                SummaryLine(section=e.section, text=e.text, message_id=e.message_id)
                for e in summary_entries(d.summary)
            ],
        )

    @property
    def paused(self) -> bool:
        """True when the discussion is not running or starting."""
        return self.status not in ("open", "running")


class UserView(s.Strict):
    """Everything the participant can see before one step."""

    condition: Literal["DocuTeam", "Baseline"]
    task: str
    step: int
    steps_left: int
    blocks: list[Block]
    agents: list[s.PublicProfile]
    discussions: list[DiscussionView]
    notices: list[str]
    """What the agents did since the last step: reactions to edits, discussions opened."""
    last_result: str
    applied: list[str]
    """Messages the participant has applied so far."""

    def discussion(self, discussion_id: str) -> DiscussionView | None:
        """A discussion by id (None when there is none)."""
        return next((d for d in self.discussions if d.id == discussion_id), None)


def build_view(
    session: Session, step: int, steps_left: int, since: int, last_result: str, applied: list[str]
) -> UserView:
    """The participant's view of a session before a step.

    Args:
        session: The session.
        step: The step about to be taken (1-based).
        steps_left: Steps left including this one.
        since: Log events after this sequence number are new to the participant.
        last_result: How the previous action went.
        applied: Message ids the participant has applied.
    """
    names = {a: agent.profile.name for a, agent in session.agents.items()}
    notices = []
    for event in session.log.events[since:]:
        if event.type != "trigger" or not event.payload["scores"]:
            continue
        reactions = "; ".join(
            f"{names.get(a, a)}: {x['reaction']}" for a, x in event.payload["scores"].items()
        )
        opened = event.payload["discussion"]
        what = f"The agents started {opened}" if opened else "The agents reacted to your edit"
        notices.append(f"{what} ({reactions})")
    return UserView(
        condition=session.config.condition,
        task=session.task,
        step=step,
        steps_left=steps_left,
        blocks=[b.model_copy() for b in session.document.blocks],
        agents=[s.PublicProfile.of(agent.profile) for agent in session.agents.values()],
        discussions=[DiscussionView.of(d) for d in session.discussions.values()],
        notices=notices,
        last_result=last_result,
        applied=list(applied),
    )


def render_view(view: UserView) -> str:
    """The view as text for a model playing the participant."""
    lines = [
        f"Step {view.step}; {view.steps_left} step(s) left including this one.",
        f"Your last action: {view.last_result or '(none yet)'}",
        "",
        "Document (one block per line: [id] type: text):",
        *(f"[{b.id}] {b.type}: {b.text}" for b in view.blocks),
        "",
        "Agents:",
        *(f"- {a.id}: {a.name}, {a.role}. {a.stance}" for a in view.agents),
        "",
        "What the agents did since your last step:",
        *([f"- {n}" for n in view.notices] or ["- nothing"]),
        "",
        "Discussions:",
    ]
    if not view.discussions:
        lines.append("- none yet")
    for d in view.discussions:
        where = "the whole document" if d.scope is None else "blocks " + ", ".join(d.scope)
        lines.append(
            f"{d.id} ({d.mode}, started by {'you' if d.initiator == 'user' else 'the agents'}, "
            f"on {where}; with {', '.join(d.participants)}; status {d.status})"
        )
        lines.append(f"  focus: {d.focus}")
        if d.bubble:
            lines.append(f"  in one line: {d.bubble}")
        for m in d.messages:
            act = f" {m.act}" if m.act else ""
            lines.append(f"  [{m.id}] {m.author_name}{act}: {m.text}")
        for line in d.summary:
            lines.append(f"  summary ({line.section}): {line.text} [{line.message_id}]")
        if d.question:
            options = "; ".join(f"{n}) {o}" for n, o in enumerate(d.options, start=1))
            lines.append(f"  THE AGENTS ASK YOU: {d.question} Options: {options}")
    lines += ["", f"Messages you already applied: {', '.join(view.applied) or 'none'}"]
    return "\n".join(lines)


# --------------------------------------------------------------------------- actions


class UserAction(BaseModel):
    """One step of the participant (the fields each action needs: :data:`REQUIRED`).

    ``block_id`` is the edited block, the block an inserted line follows, or the block a
    message is applied to; ``first_block``/``last_block`` the range a DocuTeam discussion
    is anchored to; ``text`` the new block text, the posted message, the own answer or
    the new focus; ``option`` a quick reply (1 or 2).
    """

    model_config = ConfigDict(extra="forbid")

    action: ActionName
    reasoning: str = Field(default="", max_length=400)
    block_id: str | None = None
    first_block: str | None = None
    last_block: str | None = None
    text: str | None = Field(default=None, max_length=600)
    discussion: str | None = None
    message_id: str | None = None
    option: int | None = Field(default=None, ge=1, le=2)
    agents: list[str] | None = None
    agent: str | None = None
    mode: s.Mode | None = None
    placement: Literal["after", "replace"] = "after"

    def check(self, view: UserView) -> None:
        """The fields the action needs are there and name things the view shows.

        Raises:
            StepOutputError: a missing field or an unknown id, named.
        """
        missing = [name for name in REQUIRED[self.action] if getattr(self, name) in (None, "")]
        if self.action == "answer" and self.option is None and not (self.text or "").strip():
            missing.append("option or text")
        if missing:
            raise s.StepOutputError(f"{self.action} needs {', '.join(missing)}")
        blocks = {b.id for b in view.blocks}
        agents = {a.id for a in view.agents}
        for name in ("block_id", "first_block", "last_block"):
            value = getattr(self, name)
            if value is not None and value not in blocks:
                raise s.StepOutputError(f"{name} {value!r} is not a block of the document")
        for agent in [*(self.agents or []), *([self.agent] if self.agent else [])]:
            if agent not in agents:
                raise s.StepOutputError(f"{agent!r} is not an agent ({', '.join(sorted(agents))})")
        if self.discussion is not None:
            d = view.discussion(self.discussion)
            if d is None:
                raise s.StepOutputError(f"there is no discussion {self.discussion!r}")
            if self.message_id is not None and self.message_id not in {m.id for m in d.messages}:
                raise s.StepOutputError(f"{self.discussion} shows no message {self.message_id!r}")


async def perform(session: Session, action: UserAction) -> str:
    """Do an action on the session and say what happened.

    Raises:
        ValueError, KeyError, RuntimeError: the session refused the action (an unknown
            id, an action the condition does not offer, a discussion not waiting, ...).
    """
    a = action
    if a.action == "edit":
        op = session.edit(a.block_id, a.text)
        return f"edited {op.block_id}"
    if a.action == "insert":
        anchor = session.document.block(a.block_id)
        kind = "paragraph" if anchor.type == "heading" else anchor.type
        op = session.insert(a.text, kind, after=a.block_id)
        return f"added {op.block_id} after {a.block_id}"
    if a.action == "start_discussion":
        scope = None
        if a.first_block is not None:
            scope = (a.first_block, a.last_block or a.first_block)
        d = await session.start_discussion(a.agents, a.mode, scope, a.text or "")
        return f"started {d.id}, now {d.status}"
    if a.action == "post":
        await session.post(a.discussion, a.text)
        return f"wrote into {a.discussion}, now {session.discussions[a.discussion].status}"
    if a.action == "answer":
        reply = a.option if a.option is not None else a.text
        await session.answer(a.discussion, reply)
        return f"answered {a.discussion}, now {session.discussions[a.discussion].status}"
    if a.action == "add_agent":
        session.add_participant(a.discussion, a.agent)
        if session.discussions[a.discussion].status == "open":  # it had ended: it reopens
            await session.run_discussion(a.discussion)
        return f"added {a.agent} to {a.discussion}, now {session.discussions[a.discussion].status}"
    if a.action == "remove_agent":
        session.remove_participant(a.discussion, a.agent)
        return f"removed {a.agent} from {a.discussion}"
    if a.action == "set_focus":
        session.set_focus(a.discussion, a.text)
        return f"set the focus of {a.discussion}"
    if a.action == "apply":
        op = await session.apply_message(a.discussion, a.message_id, a.block_id, a.placement)
        if op is None:
            return f"could not apply {a.message_id} (the rewrite failed)"
        return f"applied {a.message_id} to {op.block_id}"
    if a.action == "stop":
        d = await session.stop(a.discussion)
        return f"stopped {a.discussion}, now {d.status}"
    if a.action == "wait":
        return "waited"
    return "finished"


# --------------------------------------------------------------------------- players


@dataclass
class Reply:
    """A player's answer to one view: the action, or why there is none, and model calls.

    ``model_error`` is the infrastructure failure that left the step without an action
    (a lost step, see :mod:`hasbench.docuteam.failures`).
    """

    action: UserAction | None
    error: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    model_error: ModelError | None = None


class ParticipantPolicy(Protocol):
    """Who plays the participant."""

    model: str

    async def act(self, view: UserView) -> Reply:
        """The next action for a view."""
        ...


def _label(block: Block) -> str:
    """What stays when a block is rewritten: a row's first cell, or a short label."""
    if block.type == "table_row":
        return block.text.split("|")[0].strip() + " | "
    label, colon, _ = block.text.partition(":")
    return f"{label.strip()}: " if colon and len(label.split()) <= 4 else ""


def _closest(text: str, candidates: list[str]) -> str:
    """The candidate sharing most content words with ``text`` (the first on a tie)."""
    words = content_stems(text)
    return max(candidates, key=lambda c: len(content_stems(c) & words))


def _profile_text(agent: s.PublicProfile) -> str:
    return " ".join([agent.role, agent.stance, *agent.expertise])


class ScriptedParticipant:
    """The rule-following participant (see the module docstring for the rules).

    Args:
        persona: Its expertise, initiative and trust.
        rng: Its random draws (seeded per participant and session).
    """

    model = SCRIPTED_USER

    def __init__(self, persona: StudyPersona, rng: np.random.Generator) -> None:
        self.persona = persona
        self.rng = rng
        self.ideas: list[str] = []
        self.used: set[str] = set()
        self.rewritten: set[str] = set()
        self.steered: set[str] = set()
        self.applied: dict[str, int] = {}
        self.started = 0
        self.last_block: str | None = None

    def _chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def _fresh_idea(self, near: str) -> str:
        """The unused request closest to ``near`` (any request when all are used)."""
        fresh = [i for i in self.ideas if i not in self.used] or self.ideas
        idea = _closest(near, fresh)
        self.used.add(idea)
        return idea

    async def act(self, view: UserView) -> Reply:
        """The first rule that applies (see the module docstring)."""
        if not self.ideas:
            self.ideas = task_ideas(view.task) or ["a clearer plan"]
        for rule in (self._answer, self._apply, self._steer, self._rewrite, self._start):
            action = rule(view)
            if action is not None:
                return Reply(action)
        return Reply(self._add_line(view))

    def _answer(self, view: UserView) -> UserAction | None:
        waiting = next((d for d in view.discussions if d.question), None)
        if waiting is None:
            return None
        if self._chance(self.persona.trust):
            option = 1 + int(self.rng.random() < 0.5)
            return UserAction(action="answer", discussion=waiting.id, option=option)
        text = f"My answer: {self._fresh_idea(waiting.focus)}."
        return UserAction(action="answer", discussion=waiting.id, text=text)

    def _apply(self, view: UserView) -> UserAction | None:
        cap = 1 + round(2 * self.persona.trust)
        written = [plan_terms(b.text) for b in view.blocks]
        for d in view.discussions:
            said = [
                m
                for m in d.messages
                if m.kind == "utterance"
                and m.id not in view.applied
                and not any(plan_terms(proposal(m.text)) <= terms for terms in written)
            ]
            if not d.paused or not said or self.applied.get(d.id, 0) >= cap:
                continue
            if not self._chance(0.3 + 0.7 * self.persona.trust):
                return None
            linked = [line.message_id for line in d.summary]
            message = next((m for m in said if m.id in linked), said[-1])
            target = self._target(view, d, message.text)
            if target is None:
                continue
            self.applied[d.id] = self.applied.get(d.id, 0) + 1
            placement = "replace" if is_open(target) else "after"
            return UserAction(
                action="apply",
                discussion=d.id,
                message_id=message.id,
                block_id=target.id,
                placement=placement,
            )
        return None

    def _target(self, view: UserView, d: DiscussionView, text: str) -> Block | None:
        blocks = {b.id: b for b in view.blocks}
        if d.scope is not None:
            return next((blocks[b] for b in d.scope if b in blocks), None)
        candidates = [b for b in view.blocks if b.type != "heading"]
        words = content_stems(text)
        return max(candidates, key=lambda b: (len(content_stems(b.text) & words), is_open(b)))

    def _steer(self, view: UserView) -> UserAction | None:
        persona = self.persona
        for d in view.discussions:
            if not d.paused or d.question or d.id in self.steered:
                continue
            if not self._chance(persona.initiative * (1.2 - persona.trust)):
                return None
            absent = [a for a in view.agents if a.id not in d.participants]
            if view.condition == "DocuTeam" and persona.initiative >= 0.6 and absent:
                best = max(
                    absent,
                    key=lambda a: len(content_stems(_profile_text(a)) & content_stems(d.focus)),
                )
                if len(d.participants) < 4 and d.id + ":added" not in self.steered:
                    self.steered.add(d.id + ":added")
                    return UserAction(action="add_agent", discussion=d.id, agent=best.id)
            self.steered.add(d.id)
            text = f"My priority: {self._fresh_idea(d.focus)}."
            return UserAction(action="post", discussion=d.id, text=text)
        return None

    def _rewrite(self, view: UserView) -> UserAction | None:
        open_blocks = [b for b in view.blocks if is_open(b) and b.id not in self.rewritten]
        if not open_blocks or not self._chance(0.35 + 0.6 * self.persona.initiative):
            return None
        block = open_blocks[0]
        first = self._fresh_idea(block.text)
        if self.persona.expertise >= 0.5:
            body = f"{first}, or {self._fresh_idea(block.text + ' ' + first)}?"
        else:
            body = f"{first}?"
        self.rewritten.add(block.id)
        self.last_block = block.id
        text = _label(block) + body[:1].upper() + body[1:]
        return UserAction(action="edit", block_id=block.id, text=text)

    def _start(self, view: UserView) -> UserAction | None:
        persona = self.persona
        if self.started >= 1 + round(2 * persona.initiative):
            return None
        if not self._chance(0.3 + 0.6 * persona.initiative):
            return None
        if persona.expertise < 0.4:
            mode: s.Mode = "idea"
        elif persona.expertise < 0.7:
            mode = "discussion"
        else:
            mode = "evaluation" if self._chance(0.5) else "discussion"
        blocks = {b.id: b for b in view.blocks}
        scope = None
        about = ""
        if view.condition == "DocuTeam":
            candidates = [b for b in view.blocks if b.type != "heading"]
            anchor = blocks.get(self.last_block or "") or next(
                (b for b in candidates if is_open(b)), candidates[0]
            )
            scope, about = anchor.id, anchor.text
        idea = self._fresh_idea(about or view.task)
        wanted = content_stems(f"{about} {idea}")
        count = 3 if persona.initiative >= 0.6 else 2
        ranked = sorted(view.agents, key=lambda a: -len(content_stems(_profile_text(a)) & wanted))
        self.started += 1
        return UserAction(
            action="start_discussion",
            mode=mode,
            agents=[a.id for a in ranked[:count]],
            first_block=scope,
            last_block=scope,
            text=f"Think about this request: {idea}.",
        )

    def _add_line(self, view: UserView) -> UserAction:
        fresh = [i for i in self.ideas if i not in self.used]
        if not fresh:
            return UserAction(action="finish", reasoning="every request of the task is written")
        if not self._chance(0.2 + 0.6 * self.persona.initiative):
            return UserAction(action="wait", reasoning="reading what the agents do")
        idea = fresh[0]
        self.used.add(idea)
        candidates = [b for b in view.blocks if b.type in ("list_item", "paragraph")]
        anchor = max(candidates, key=lambda b: len(content_stems(b.text) & content_stems(idea)))
        self.last_block = anchor.id
        return UserAction(action="insert", block_id=anchor.id, text=idea[:1].upper() + idea[1:])


class ModelParticipant:
    """A model playing the persona (see the module docstring).

    Args:
        model: Any model string the client serves (litellm, ``local/``, ``test/``).
        persona: Who it plays.
        client: The model client (response cache, retries).
    """

    def __init__(self, model: str, persona: StudyPersona, client: LLMClient) -> None:
        self.model = model
        self.persona = persona
        self.client = client

    async def act(self, view: UserView) -> Reply:
        """Ask the model for the next action; a second unusable reply is a failed step."""
        rules = render(f"{PROMPT_FOLDER}/condition_{view.condition.lower()}")
        messages = [
            {
                "role": "system",
                "content": render(
                    f"{PROMPT_FOLDER}/user_act_system",
                    persona=self.persona.describe(),
                    condition=rules,
                ),
            },
            {
                "role": "user",
                "content": render(
                    f"{PROMPT_FOLDER}/user_act_user", task=view.task, view=render_view(view)
                ),
            },
        ]
        calls: list[dict[str, Any]] = []
        failure: list[str] = []
        errors: list[ModelError] = []

        def parse(content: str | None) -> BaseModel:
            action = parse_reply(UserAction, content, "action")
            action.check(view)
            return action

        def failed(
            kind: str, message: str, attempt: int, raw: str | None, error: ModelError | None
        ) -> None:
            failure.append(f"{kind}: {message}")
            if error is not None:
                errors.append(error)

        action = await ask_model(
            self.client,
            self.model,
            messages,
            "action",
            UserAction,
            parse,
            on_call=lambda response, attempt: calls.append(_call(response, attempt)),
            on_error=failed,
        )
        return Reply(
            action,  # type: ignore[arg-type]
            failure[0] if failure else None,
            calls,
            errors[0] if errors else None,
        )


def _call(response: ModelResponse, attempt: int) -> dict[str, Any]:
    """What the participant's log keeps of one model call."""
    return {
        "model": response.model,
        "attempt": attempt,
        "cached": response.cached,
        "prompt_tokens": response.usage.prompt_tokens,
        "completion_tokens": response.usage.completion_tokens,
    }


# --------------------------------------------------------------------------- running


class UserLog:
    """The participant's own log (JSONL): a header, then one line per step.

    Args:
        path: The file (created or replaced); None keeps the lines in memory only.
        header: What the participant was (persona, player, condition, task, budget, seed).
    """

    def __init__(self, path: str | Path | None, header: dict[str, Any]) -> None:
        self.path = Path(path) if path is not None else None
        self.header = {"kind": "header", **header, "prompt_hashes": prompt_hashes(PROMPT_FOLDER)}
        self.steps: list[dict[str, Any]] = []
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(canonical_json(self.header) + "\n", encoding="utf-8")

    def add(self, record: dict[str, Any]) -> None:
        """Append one step."""
        line = {"kind": "step", **json.loads(json.dumps(record))}
        self.steps.append(line)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(canonical_json(line) + "\n")

    @classmethod
    def read(cls, path: str | Path) -> UserLog:
        """Read a participant log back."""
        lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x]
        log = cls(None, {})
        log.header, log.steps = lines[0], lines[1:]
        return log


async def run_user(
    session: Session, policy: ParticipantPolicy, budget: int, log: UserLog
) -> UserLog:
    """Let a participant work on a session for at most ``budget`` steps.

    The session must run on a :class:`~hasbench.docuteam.timing.ManualClock`. After each
    step the clock moves on by :data:`STEP_SECONDS` (so the agents read the edits) and
    every discussion runs until it pauses. A refused action or a failed model reply is
    recorded as the step's result, and the participant goes on, unless the session has
    failed (:mod:`hasbench.docuteam.failures`; the participant's model failing counts
    as the engine's does): then the participant stops.
    """
    applied: list[str] = []
    last_result = ""
    seen = len(session.log.events)
    losses = LossCounter(session.config.failed_steps_in_a_row)
    for step in range(1, budget + 1):
        if session.failure is not None:
            break
        view = build_view(session, step, budget - step + 1, seen, last_result, applied)
        seen = len(session.log.events)
        reply = await policy.act(view)
        record: dict[str, Any] = {"step": step, "calls": reply.calls}
        if reply.calls:
            losses.answered()
        if reply.model_error is not None and losses.lost(reply.model_error):
            session.fail("participant", policy.model, "act", reply.model_error)
        if reply.action is None:
            last_result = f"no action: {reply.error}"
            log.add({**record, "ok": False, "action": None, "result": last_result})
        elif reply.action.action == "finish":
            log.add(
                {**record, "ok": True, "action": reply.action.model_dump(), "result": "finished"}
            )
            break
        else:
            try:
                last_result = await perform(session, reply.action)
                ok = not last_result.startswith("could not")
            except (ValueError, KeyError, RuntimeError) as exc:
                last_result, ok = f"refused: {exc}", False
            if ok and reply.action.action == "apply":
                applied.append(reply.action.message_id or "")
            log.add(
                {**record, "ok": ok, "action": reply.action.model_dump(), "result": last_result}
            )
        session.clock.advance(STEP_SECONDS)
        await session.tick()
        await session.settle()
    await session.settle()
    return log
