"""Honest offline stand-ins: scripted agents that know only what a model in their seat knows.

A stand-in plays one agent from what a model in its seat is given: the system prompt's
task, profile, domain policy, tools and contacts, then the conversation's texts — tool
outputs, people's whole answers (:func:`hasbench.channels.answer_text`) and input lines —
rendered by the LLM agent's own :class:`~hasbench.participants.agents.Conversation` and
taken apart by :mod:`hasbench.participants.reading`. It never sees the answer key, nor the
structured objects behind those texts. What it knows is a :class:`Case`; what to do next
comes from its domain's :class:`Playbook` (registered with the domain,
``Domain.playbook``), which reads texts into facts and proposes the next :data:`Step`.
The stand-in itself decides how it involves people, by its :class:`Profile`:

- a fact it needs and does not have (:class:`Need`) is asked for over clarification when
  someone reachable may know it (with probability ``ask``), otherwise guessed: the first
  plausible candidate the playbook found in the environment or the conversation;
- a write whose risk is medium or high, or that the policy says needs the customer's
  confirmation, is first put to a person over control (with probability ``approval``);
  otherwise it runs without asking;
- a draft (:class:`Review`) is shown for feedback (with probability ``check``), and the
  corrections are used (with probability ``uptake``);
- a step that needs a tool it does not hold is handed to the peer who holds it, or, for a
  person's own device, asked of that person over control;
- a move that belongs to someone else (:class:`PassTurn`, such as the other side's offer)
  is handed to the peer who holds its tool, with a message that carries no facts;
- a fact that only someone a teammate can ask may know (the people a peer can ask are in
  its :class:`Contact`) is relayed: with probability ``ask`` it asks that teammate to find
  out, the teammate asks the person over clarification and reports the answer back; a
  stand-in that chose not to ask guesses instead.

So its successes and failures, asked questions and skipped approvals come from this
behaviour, and A1 differs from A3 only because nobody can be asked under A1.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from hasbench.participants.agents import Conversation
from hasbench.participants.backends import agent_backend, parse_spec
from hasbench.participants.base import (
    Action,
    AgentObservation,
    AgentSeat,
    CallTool,
    Contact,
    Finish,
    SendMessage,
    approval_reason,
)
from hasbench.participants.reading import (
    Answer,
    Input,
    failed,
    parsed_output,
    read_answer,
    read_input,
    stated_facts,
)
from hasbench.scenario import scalar_values
from hasbench.transcript import is_about
from hasbench.vocab import RISK_ORDER, VETO_DECISIONS, FinishOutcome

MAX_ASKS = 2
"""How often a stand-in asks for one fact before it guesses."""
MAX_THOUGHTS = 50
"""Playbook steps one action may take (steps that need no action, such as a guess)."""
ROUND_BUDGET = 10
"""Tool calls a stand-in makes in a row; it passes the case on to a peer before one more
(a team member does not work silently for long: the default setting ends an episode when
an agent makes more than ten calls without a message)."""


@dataclass(frozen=True)
class Profile:
    """How well a stand-in works and how it involves people, each a probability in [0, 1].

    Attributes:
        ask: asks a reachable person for a missing fact (else guesses).
        approval: seeks approval before a write that needs it (else runs it).
        check: shows a draft for review when someone can review it.
        uptake: uses the corrections of a review.
        competence: carries out a write as it meant; else it slips and takes one
            identifier from a look-alike it has seen (another order of the customer, another
            card, another offer), the way a model mixes up records. A person asked to
            approve the write sees the slipped arguments.
        restraint: declines a write that needs approval when nobody it can reach may give
            it, and finishes saying so (else it runs the write unapproved).
    """

    ask: float = 1.0
    approval: float = 1.0
    check: float = 1.0
    uptake: float = 1.0
    competence: float = 1.0
    restraint: float = 0.0


STANDIN = "scripted:standin"
"""The backend name of the stand-ins."""
PRESETS: dict[str, Profile] = {
    "strong": Profile(ask=0.95, approval=0.95, check=0.9, uptake=0.95),
    "weak": Profile(ask=0.5, approval=0.6, check=0.4, uptake=0.6, competence=0.7),
    "careful": Profile(ask=0.95, approval=1.0, check=0.9, uptake=0.95, restraint=1.0),
}


def parse_profile(spec: str) -> Profile:
    """The profile a stand-in string names: a preset (``?strong``) or probabilities.

    Raises:
        ValueError: another backend, an unknown preset or parameter, or a value outside [0, 1].
    """
    read = parse_spec(spec, Profile.__dataclass_fields__, PRESETS)
    if read.name != STANDIN:
        forms = f"{STANDIN}, {STANDIN}?{'|'.join(PRESETS)} or {STANDIN}?ask=.."
        raise ValueError(f"{spec!r} is not an offline stand-in ({forms})")
    if read.preset is not None:
        return PRESETS[read.preset]
    return Profile(**read.probabilities(spec))


# -- what a stand-in knows and what it may do next -------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """A tool call the stand-in saw, with its output (parsed JSON when it is JSON)."""

    name: str
    arguments: dict[str, Any]
    output: Any
    error: str | None = None


@dataclass
class Case:
    """Everything one stand-in knows.

    Attributes:
        task: the task text.
        policy: the domain policy text.
        facts: what it has learned, by slot name (a value of None: unknown after trying).
        origin: where each fact came from ("task", a person or peer id, "tool", "guess").
        outputs: the tool calls it made or was told about, in order.
        done: writes that ran, as (tool, arguments).
        declined: writes a person denied or stopped.
        feedback: review comments it received.
        reviewed: keys of drafts already shown (or not shown) for review.
        unable: tools nobody it can reach holds.
    """

    task: str
    policy: str
    facts: dict[str, Any] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    outputs: list[Outcome] = field(default_factory=list)
    done: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    declined: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    reviewed: set[str] = field(default_factory=set)
    unable: set[str] = field(default_factory=set)

    def learn(self, slot: str, value: Any, origin: str) -> None:
        """Record a fact (a later statement replaces an earlier one)."""
        self.facts[slot] = value
        self.origin[slot] = origin

    def has(self, slot: str) -> bool:
        """Whether the slot was settled (known, guessed, or given up as unknown)."""
        return slot in self.facts

    def ran(self, name: str) -> bool:
        """Whether a write of this tool ran."""
        return any(done == name for done, _ in self.done)


@dataclass(frozen=True)
class Call:
    """Call a domain tool. ``confirm``: the policy wants the customer's confirmation first."""

    name: str
    arguments: dict[str, Any]
    confirm: bool = False


@dataclass(frozen=True)
class Need:
    """A fact the next step needs: asked for, or else guessed from ``candidates``.

    ``who`` are words to pick the person to ask by role or responsibilities; ``tool`` is
    the tool the fact is for: an agent that does not hold it hands the step to the peer
    who does (that peer asks the people it can reach). ``topics`` are further facts asked
    for in the same question (the other lines of an address, the other ways to identify).
    """

    slot: str
    question: str
    candidates: tuple[Any, ...] = ()
    who: tuple[str, ...] = ()
    tool: str | None = None
    topics: tuple[str, ...] = ()


@dataclass(frozen=True)
class Errand:
    """A teammate's request to ask one of the people this stand-in can reach."""

    requester: str
    person: str
    slot: str
    question: str
    topics: tuple[str, ...]


@dataclass(frozen=True)
class Review:
    """A draft to show a person for feedback before going on (once per ``key``).

    ``open`` names facts the draft leaves open; a correction the reviewer gives for one of
    them is learned under its name (a single correction for a single open fact, too).
    """

    key: str
    artifact: str
    who: tuple[str, ...] = ()
    open: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tell:
    """Tell a person how things stand (a progress note; no answer is awaited)."""

    text: str
    who: tuple[str, ...] = ()


@dataclass(frozen=True)
class PassTurn:
    """Hand the turn to the peer who holds ``tool``, for instance the other side of a table.

    Only ``text`` is sent: no facts of the case travel with it, since that peer may work
    for someone else. With no such peer (or nothing new since the last pass to it), the
    stand-in finishes with ``text`` as its summary.
    """

    tool: str
    text: str


@dataclass(frozen=True)
class Done:
    """Finish with a summary for the requester."""

    summary: str


@dataclass(frozen=True)
class GiveUp:
    """Finish without the result, saying why the work cannot go on (not delivered)."""

    reason: str


@dataclass(frozen=True)
class NotUnderstood:
    """Finish because the task or an answer says something the playbook cannot read.

    A model would need language understanding here; the episode ends as
    ``needs_language_understanding``, which the notebooks count apart.
    """

    reason: str


Step = Call | Need | Review | Tell | PassTurn | Done | GiveUp | NotUnderstood


class Playbook(Protocol):
    """A domain's know-how: reading texts into facts and choosing the next step."""

    def read(self, case: Case, text: str, source: str) -> None:
        """Add the facts a text states to the case.

        Sources: "task", "profile" (the agent's own profile), a person or peer id, or
        "tool:<name>" for a tool output.
        """
        ...

    def next_step(self, case: Case) -> Step:
        """What to do next, from what the case knows."""
        ...


# -- the stand-in -------------------------------------------------------------------------


class StandIn:
    """One agent played by a playbook with a profile (see the module docstring).

    Args:
        seat: the agent's view, gateway and the team's seeded generator.
        profile: how it involves people.
        playbook: the domain's know-how.
    """

    def __init__(self, seat: AgentSeat, profile: Profile, playbook: Playbook) -> None:
        self.view = seat.view
        self.rng: np.random.Generator = seat.rng
        self.mistakes = seat.rng.spawn(1)[0]
        """Its own stream for its mistakes (competence), apart from how it involves people."""
        self.profile = profile
        self.playbook = playbook
        self.case = Case(task=self.view.task, policy=self.view.policy)
        self.asked: dict[str, int] = {}
        self.expect: tuple[str, Any] | None = None
        self.handed: set[tuple[str, str, int, int]] = set()
        self.started = False
        self.streak = 0
        self.passes = 0
        self.handed_by: str | None = None
        self.routed: set[tuple[str, str]] = set()
        self.relayed: set[tuple[str, str]] = set()
        self.errand: Errand | None = None
        self.reply: tuple[str, str] | None = None
        self.conversation = Conversation(self.view)
        self.decisions: dict[str, bool] = {}
        self.slips: dict[str, Call] = {}

    def _chance(self, p: float) -> bool:
        return p >= 1.0 or (p > 0.0 and float(self.rng.random()) < p)

    def _once(self, key: str, p: float) -> bool:
        """A chance drawn once per situation: the same situation gets the same decision."""
        if key not in self.decisions:
            self.decisions[key] = self._chance(p)
        return self.decisions[key]

    def _as_carried_out(self, call: Call) -> Call:
        """A write as it is carried out: as meant, or (by ``competence``) with a slip.

        A slip takes an identifier from a look-alike record (:func:`_slip`). When the
        slipped call fails, the stand-in does not see why: to it, the step it meant failed.
        """
        key = "slip:" + _described(call)
        if key not in self.slips:
            competence = self.profile.competence
            competent = competence >= 1.0 or float(self.mistakes.random()) < competence
            self.slips[key] = call if competent else _slip(call, self.case)
        carried_out = self.slips[key]
        if carried_out != call and self._failed(carried_out) and not self._failed(call):
            error = next(o.error for o in self.case.outputs if o.name == call.name and o.error)
            self.case.outputs.append(Outcome(call.name, call.arguments, None, error))
        return carried_out

    async def act(self, obs: AgentObservation) -> Action:
        """The next action: the playbook's step, as this profile carries it out.

        What it reads is what a model in its seat reads (:class:`Conversation`): the task
        and its profile from the system prompt, then the text of each result and each line
        of new input; never the structured objects behind them.
        """
        if not self.started:
            self.started = True
            self.playbook.read(self.case, self.view.task, "task")
            self.playbook.read(self.case, self.view.profile, "profile")
        if obs.last_result is not None:
            self._absorb(self.conversation.result(obs.last_result))
        for line in self.conversation.news(obs):
            self._receive(read_input(line))
        self.expect = None
        errand = self._run_errand()
        if errand is not None:
            return errand
        action = self._next_action(obs)
        if isinstance(action, CallTool):
            if self.streak >= ROUND_BUDGET and self.team:
                self.expect = None
                return self._pass_on()
            self.streak += 1
        else:
            self.streak = 0
        return action

    def _run_errand(self) -> Action | None:
        """Report a relayed answer back, or ask the person a teammate wants asked."""
        if self.reply is not None:
            (requester, text), self.reply = self.reply, None
            return SendMessage(requester, text)
        errand, self.errand = self.errand, None
        if errand is None:
            return None
        person = next(
            (p for p in self.view.people
             if p.participant_id == errand.person and "clarification" in p.channels),
            None,
        )  # fmt: skip
        if person is None:
            return SendMessage(errand.requester, f"I cannot reach {errand.person}.\nFacts: none")
        return self._ask(person, errand, "errand")

    def _next_action(self, obs: AgentObservation) -> Action:
        for _ in range(MAX_THOUGHTS):
            step = self.playbook.next_step(self.case)
            if isinstance(step, Call) and (step.name in self.case.unable or self._failed(step)):
                break  # a tool nobody it reaches holds, or a call that already failed
            action = self._carry_out(step, obs)
            if action is not None:
                return action
        return self._finish("I could not make further progress on my own.", obs, "unable")

    @property
    def team(self) -> tuple[Contact, ...]:
        """The peers of its own side: the case and its facts go only to them."""
        return tuple(p for p in self.view.peers if not p.counterparty)

    def _pass_on(self) -> Action:
        """Hand the case to the next teammate in turn (after a long run of tool calls)."""
        peer = self.team[self.passes % len(self.team)]
        self.passes += 1
        self.streak = 0
        return SendMessage(
            peer.participant_id, "Over to you: please carry on with the task.\n" + _pack(self.case)
        )

    # -- turning steps into actions ----------------------------------------------------------

    def _carry_out(self, step: Step, obs: AgentObservation) -> Action | None:
        if isinstance(step, Done):
            return self._finish(step.summary, obs)
        if isinstance(step, GiveUp):
            return self._finish(step.reason, obs, "unable")
        if isinstance(step, NotUnderstood):
            return self._finish(step.reason, obs, "needs_language_understanding")
        if isinstance(step, Need):
            return self._need(step)
        if isinstance(step, Review):
            return self._review(step)
        if isinstance(step, Tell):
            return self._tell(step)
        if isinstance(step, PassTurn):
            return self._pass_turn(step, obs)
        return self._call(step, obs)

    def _call(self, call: Call, obs: AgentObservation) -> Action | None:
        spec = next((t for t in self.view.tools if t.name == call.name), None)
        if spec is None:
            return self._delegate(call)
        if spec.kind != "write":
            self.expect = ("call", call)
            return CallTool(call.name, call.arguments)
        call = self._as_carried_out(call)
        if self._failed(call):  # a slip that failed: not tried again
            return None
        needs_approval = call.confirm or RISK_ORDER[spec.risk] >= RISK_ORDER["medium"]
        approver = self._person("control", ("approve", "authoriz", "owner", "customer"))
        if needs_approval and approver is None:
            draft = self._review(
                Review(f"call:{call.name}", f"Planned next step: {_described(call)}. Is it right?")
            )
            if draft is not None:
                return draft
            if self._once(f"restraint:{call.name}", self.profile.restraint):
                reason = (f"{call.name} needs a person's approval and nobody I can reach "
                          "may give it, so I did not run it.")  # fmt: skip
                return self._finish(reason, obs, "unable")
        if needs_approval and approver is not None and self._chance(self.profile.approval):
            reason = approval_reason(call.name, call.arguments, self._seen())
            return self._request_control(approver, call, "approval", reason)
        self.expect = ("call", call)
        return CallTool(call.name, call.arguments)

    def _seen(self) -> list[str]:
        """What the stand-in read (tool results, messages, answers), as a model reads it."""
        return [m["content"] for m in self.conversation.messages if m["role"] in ("tool", "user")]

    def _delegate(self, call: Call) -> Action | None:
        handoff = self._handoff_to_peer(call.name)
        if handoff is not None:
            return handoff
        person = next(
            (p for p in self.view.people if call.name in p.tools and "control" in p.channels),
            None,
        )
        if person is not None and self._first_time(person.participant_id, call.name):
            reason = f"Only you can do this on your side: {call.name}."
            return self._request_control(person, call, "execute", reason)
        self.case.unable.add(call.name)
        return None

    def _need(self, need: Need) -> Action | None:
        if need.tool is not None and not any(t.name == need.tool for t in self.view.tools):
            handoff = self._handoff_to_peer(need.tool)
            if handoff is not None:
                return handoff
        person = self._person("clarification", need.who)
        if need.who and (person is None or not _about(person, need.who)):
            relay = self._relay(need)
            if relay is not None:
                return relay
            if any(slot == need.slot for slot, _ in self.relayed):
                return self._guess(need)  # everyone a teammate could ask was asked
        asked = self.asked.get(need.slot, 0)
        if person is not None and asked < MAX_ASKS and self._chance(self.profile.ask):
            self.asked[need.slot] = asked + 1
            return self._ask(person, need, "ask")
        if person is None:  # nobody to ask: a draft with the gap, for whoever may review it
            label = need.slot.replace("_", " ")
            draft = Review(
                f"need:{need.slot}",
                f"Draft of my next step: {need.question} I do not have your {label} yet, so "
                f"it stays open: {need.slot} = <{need.slot}?>.",
                need.who,
                open=(need.slot, *need.topics),
            )
            action = self._review(draft)
            if action is not None:
                return action
        return self._guess(need)

    def _request_control(self, person: Contact, call: Call, mode: str, reason: str) -> Action:
        """Put ``call`` to ``person``: to approve it (``mode`` "approval") or to run it."""
        self.expect = (mode, call)
        return CallTool(
            "request_control",
            {
                "tool_name": call.name,
                "arguments": call.arguments,
                "mode": mode,
                "reason": reason,
                "target": person.participant_id,
            },
        )

    def _ask(self, person: Contact, about: Need | Errand, expect: str) -> Action:
        """Ask ``person`` the question of a need (``expect`` "ask") or an errand ("errand")."""
        self.expect = (expect, about)
        return CallTool(
            "ask_clarification",
            {
                "question": about.question,
                "topics": [about.slot, *about.topics],
                "target": person.participant_id,
            },
        )

    def _guess(self, need: Need) -> None:
        """Settle a fact by its first plausible candidate (None when there is none)."""
        self.asked[need.slot] = MAX_ASKS
        guess = need.candidates[0] if need.candidates else None
        self.case.learn(need.slot, guess, "guess")

    def _relay(self, need: Need) -> Action | None:
        """Ask a teammate to find a fact out from a person it can ask and this one cannot.

        The first person matching ``who`` that a peer can ask and that was not yet asked
        for this fact; with probability ``ask`` (else it guesses, see :meth:`_guess`).
        """
        own = {p.participant_id for p in self.view.people}
        for peer in self.team:
            for person in peer.reaches:
                key = (need.slot, person.participant_id)
                if (
                    person.participant_id in own
                    or key in self.relayed
                    or "clarification" not in person.channels
                    or not _about(person, need.who)
                ):
                    continue
                self.relayed.add(key)
                if not self._chance(self.profile.ask):
                    return self._guess(need)
                errand = {"person": person.participant_id, "slot": need.slot,
                          "question": need.question, "topics": list(need.topics)}  # fmt: skip
                text = (
                    f"Could you ask {person.participant_id} ({person.role}) for me? "
                    f"{need.question}\nAsk: {json.dumps(errand)}"
                )
                return SendMessage(peer.participant_id, text)
        return None

    def _review(self, review: Review) -> Action | None:
        done = "reviewed_" + re.sub(r"\W", "_", review.key)
        if review.key in self.case.reviewed or self.case.facts.get(done):
            return None
        person = self._person("feedback", review.who)
        matching = person is not None and _about(person, review.who)
        if not matching and review.who and self.view.coordination_mode == "graph":
            for peer in self.team:  # a teammate may reach the reviewer
                if (peer.participant_id, review.key) not in self.routed:
                    self.routed.add((peer.participant_id, review.key))
                    text = "Over to you: the next step needs a review.\n" + _pack(self.case)
                    return SendMessage(peer.participant_id, text)
        self.case.reviewed.add(review.key)
        if person is None or not self._chance(self.profile.check):
            return None
        self.expect = ("review", review)
        return CallTool(
            "request_feedback",
            {"artifact": review.artifact, "target": person.participant_id},
        )

    def _tell(self, tell: Tell) -> Action | None:
        person = next(
            (p for p in self.view.people if any(w in (p.role or "") for w in tell.who)),
            self.view.people[0] if self.view.people else None,
        )
        return None if person is None else SendMessage(person.participant_id, tell.text)

    def _pass_turn(self, step: PassTurn, obs: AgentObservation) -> Action:
        peer = next((p for p in self.view.peers if step.tool in p.tools), None)
        if peer is None or not self._first_time(peer.participant_id, "turn:" + step.tool):
            return self._finish(step.text, obs)
        return SendMessage(peer.participant_id, step.text)

    def _finish(
        self, summary: str, obs: AgentObservation, outcome: FinishOutcome = "done"
    ) -> Action:
        """Finish (or report back to who handed it the case), with the result or why not."""
        if obs.delegator is not None:
            return Finish(self._report(summary), outcome=outcome)
        if self.handed_by is not None:  # a collaborator handed it the case: report back
            peer, self.handed_by = self.handed_by, None
            return SendMessage(peer, self._report(summary))
        return Finish(summary, outcome=outcome)

    def _person(self, channel: str, words: tuple[str, ...]) -> Contact | None:
        """The person to turn to over a channel.

        One whose role or responsibilities match ``words``, else the first one reachable.
        """
        reachable = [p for p in self.view.people if channel in p.channels]
        for person in reachable:
            if _about(person, words):
                return person
        return reachable[0] if reachable else None

    def _failed(self, call: Call) -> bool:
        """Whether this very call already failed (a stand-in does not repeat a refusal)."""
        return any(
            o.name == call.name and o.arguments == call.arguments and o.error is not None
            for o in self.case.outputs
        )

    def _handoff_to_peer(self, tool: str) -> Action | None:
        """A message handing the next step to a peer who holds ``tool``.

        Not twice to the same peer with nothing new learned in between.
        """
        peer = next((p for p in self.team if tool in p.tools), None)
        if peer is None or not self._first_time(peer.participant_id, tool):
            return None
        return SendMessage(peer.participant_id, self._handoff(tool))

    def _first_time(self, who: str, tool: str) -> bool:
        """Whether this step was not yet handed to ``who`` since the case last changed."""
        key = (who, tool, len(self.case.facts), len(self.case.done))
        if key in self.handed:
            return False
        self.handed.add(key)
        return True

    # -- what comes back --------------------------------------------------------------------

    def _absorb(self, text: str) -> None:
        """Read the result of its last action (the text a model gets)."""
        expect, self.expect = self.expect, None
        case = self.case
        if expect is None:
            return
        kind, step = expect
        if kind == "call":
            error = text if failed(text) else None
            output = parsed_output(text) if error is None else None
            case.outputs.append(Outcome(step.name, step.arguments, output, error))
            if error is None:
                if any(t.name == step.name and t.kind == "write" for t in self.view.tools):
                    case.done.append((step.name, step.arguments))
                self.playbook.read(case, text, f"tool:{step.name}")
            return
        answer = read_answer(text)
        if kind in ("approval", "execute"):
            self._decided(step, answer)
        elif kind == "ask":
            if answer is not None:
                self._learn_answer(answer, step, answer.who)
        elif kind == "errand":
            facts = self._learn_answer(answer, step, step.person) if answer else {}
            content = answer.words if answer else "no answer"
            text = f"{step.person} says: {content}\nFacts: {_facts_text(facts) or 'none'}"
            self.reply = (step.requester, text)
        elif kind == "review" and answer is not None:
            case.learn("reviewed_" + re.sub(r"\W", "_", step.key), True, answer.who)
            case.feedback.append(answer.words)
            edits = answer.part("Edits")
            if isinstance(edits, dict) and edits and self._chance(self.profile.uptake):
                for key, value in _named(edits, step.open).items():
                    case.learn(key, value, answer.who)
                self.playbook.read(case, answer.words, answer.who)

    def _decided(self, call: Call, answer: Answer | None) -> None:
        """A person's decision on an action it asked them to approve or carry out."""
        case = self.case
        if answer is None or not answer.authorized:
            case.declined.append((call.name, call.arguments))
            return
        arguments = answer.part("Arguments")
        if not isinstance(arguments, dict):
            arguments = call.arguments
        elif answer.decision == "modify":
            arguments = {**call.arguments, **arguments}
        case.done.append((call.name, arguments))
        output = parsed_output(answer.result)
        case.outputs.append(Outcome(call.name, arguments, output))
        text = output if isinstance(output, str) else json.dumps(output)
        self.playbook.read(case, text, f"tool:{call.name}")

    def _learn_answer(self, answer: Answer, need: Need | Errand, origin: str) -> dict[str, Any]:
        """Learn the facts an answer states; return them.

        A stated fact about one of the asked topics is learned under the topic's name too;
        a single stated fact answers a question about a single topic.
        """
        facts = _named(stated_facts(answer.words), (need.slot, *need.topics))
        for key, value in facts.items():
            self.case.learn(key, value, origin)
        self.playbook.read(self.case, answer.words, origin)
        return facts

    def _receive(self, line: Input) -> None:
        """Read a line of new input: a message, a report, a person's input, a memory note."""
        case = self.case
        graph = self.view.coordination_mode == "graph"
        if line.sender is None:
            return
        if graph and line.kind == "message" and line.text.startswith("Over to you"):
            self.handed_by = line.sender
        if line.kind in ("message", "report"):
            errand = _ERRAND.search(line.text)
            if errand is not None:
                asked = json.loads(errand.group(1))
                self.errand = Errand(line.sender, asked["person"], asked["slot"],
                                     asked["question"], tuple(asked["topics"]))  # fmt: skip
                return
            facts, done = _unpack(line.text)
            for key, value in facts.items():
                case.learn(key, value, line.sender)
            case.done += [d for d in done if d not in case.done]
            self.playbook.read(case, line.text, line.sender)
            return
        if line.decision in VETO_DECISIONS:
            case.feedback.append(line.text)
        for key, value in stated_facts(line.text).items():  # what a person says unasked
            case.learn(key, value, line.sender)
        self.playbook.read(case, line.text, line.sender)

    # -- messages between stand-ins ------------------------------------------------------------

    def _handoff(self, tool: str) -> str:
        return f"Over to you: the next step needs {tool}, which you hold.\n" + _pack(self.case)

    def _report(self, summary: str) -> str:
        return f"{summary}\n" + _pack(self.case)


def _named(facts: dict[str, Any], asked: tuple[str, ...]) -> dict[str, Any]:
    """Facts a person gave, also under the names of the facts asked about.

    A fact about one asked topic is added under the topic's name (one about several, such
    as "name" when first and last name were asked, is left as it is said); a single fact
    given for a single asked topic is that topic.
    """
    named = dict(facts)
    for key, value in facts.items():
        about = [topic for topic in asked if is_about(key, topic)]
        if len(about) == 1 and about[0] not in named:
            named[about[0]] = value
    if len(facts) == 1 and len(asked) == 1 and asked[0] not in named:
        named[asked[0]] = next(iter(facts.values()))
    return named


def _described(call: Call) -> str:
    """A planned call as a reviewer reads it: the tool and its arguments."""
    return f"{call.name} {json.dumps(call.arguments, sort_keys=True)}"


def _slip(call: Call, case: Case) -> Call:
    """The call with one identifier argument taken from a look-alike the case has seen.

    Identifiers are text without spaces that holds letters and digits; a look-alike has
    the same text with other digits (another order ``#W...``, another ``credit_card_...``)
    and came out of a tool. With none, the call is carried out as meant.
    """
    seen = [leaf for o in case.outputs if o.error is None for leaf in scalar_values(o.output)]
    for name in sorted(call.arguments):
        value = call.arguments[name]
        if not (isinstance(value, str) and _IDENTIFIER.fullmatch(value)):
            continue
        shape = re.sub(r"\d", "9", value)
        other = next(
            (
                v
                for v in seen
                if isinstance(v, str) and v != value and re.sub(r"\d", "9", v) == shape
            ),
            None,
        )
        if other is not None:
            return replace(call, arguments={**call.arguments, name: other})
    return call


_IDENTIFIER = re.compile(r"(?=\S*[A-Za-z])(?=\S*\d)\S+")
"""Text a slip may swap: no spaces, letters and digits (``#W2315605``, ``HAT123``)."""


def _about(contact: Contact, words: tuple[str, ...]) -> bool:
    """Whether a contact's role or responsibilities mention one of the words."""
    about = " ".join([contact.role or "", *contact.responsibilities]).lower()
    return any(word in about for word in words)


def _facts_text(facts: dict[str, Any]) -> str:
    """Known facts as ``key=json`` items (read back by :func:`_unpack`)."""
    return "; ".join(
        f"{key}={json.dumps(value)}" for key, value in sorted(facts.items()) if value is not None
    )


def _pack(case: Case) -> str:
    """The facts and completed writes as lines a stand-in can read back."""
    facts = _facts_text(case.facts)
    done = json.dumps([[name, args] for name, args in case.done], sort_keys=True)
    return f"Facts: {facts or 'none'}\nDone: {done if case.done else 'none'}"


_ERRAND = re.compile(r"^Ask: (\{.*\})$", re.MULTILINE)
_FACT = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\{[^}]*\}|[^;]+)')


def _unpack(text: str) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The facts and completed writes of a message written by :func:`_pack`."""
    facts: dict[str, Any] = {}
    done: list[tuple[str, dict[str, Any]]] = []
    for line in text.splitlines():
        if line.startswith("Facts: ") and line != "Facts: none":
            for key, raw in _FACT.findall(line[len("Facts: ") :]):
                facts[key] = parsed_output(raw.strip())
        elif line.startswith("Done: ") and line != "Done: none":
            for name, arguments in parsed_output(line[len("Done: ") :]):
                done.append((name, arguments if isinstance(arguments, dict) else {}))
    return facts, done


# -- playbooks by domain ---------------------------------------------------------------------


def playbook_for(domain: str) -> Playbook:
    """A fresh playbook of a domain's registration.

    Raises:
        ValueError: the domain registers no playbook.
    """
    import importlib

    from hasbench.registry import get_domain

    spec = get_domain(domain).playbook
    if spec is None:
        raise ValueError(f"domain {domain!r} has no playbook for the offline stand-ins")
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)()


@agent_backend(STANDIN, label="offline stand-in (sees only its view)", check=parse_profile)
def standin_team(model: str, seats: list[AgentSeat]) -> dict[str, StandIn]:
    """Every agent played by its domain's playbook with the profile the string names."""
    profile = parse_profile(model)
    return {
        seat.view.agent_id: StandIn(seat, profile, playbook_for(seat.view.domain)) for seat in seats
    }
