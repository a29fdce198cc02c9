"""What a person playing a human sees and may answer: one view for every front.

The notebook console (:mod:`hasbench.widgets.human_console`), the terminal
(:class:`hasbench.participants.human.Terminal`) and the served page (:mod:`hasbench.serve`)
show the same things, built here, and only lay them out differently:

- :func:`knowledge`: what the played human knows: role, responsibilities, goal, the rules
  it follows (its task instructions), its facts, what it does not know, its own tools.
- :func:`card`: a request waiting for the person (:class:`Ask`): who asks, what is asked
  in one sentence, the asker's own words, the action with its arguments, and the answers
  the person may give (:class:`Choice`), each with what it does.
- :func:`conversation`: what the human's node has seen of the episode: what was said to
  it and by it, its requests' fates, the actions it carried out. Never another node's
  private exchanges.

:class:`Answer` is what the person gives back; :func:`check` refuses one that does not fit
its request, in words the person can act on.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from hasbench.channels import ChannelRequest, control_reason
from hasbench.participants.base import ActionFacts, HumanView
from hasbench.trace import Event
from hasbench.vocab import APPROVAL, COMMENT, EXECUTE, INFORM, QUESTION, REVIEW

AskKind = Literal["clarification", "feedback", "control", "intervene"]

CHOICES: dict[str, tuple[str, str]] = {
    "approve": ("Approve", "The agent runs the action as shown."),
    "deny": ("Deny", "The action does not run. Tell the agent why."),
    "modify": ("Approve with changes", "The agent runs the action with the values you changed."),
    "override": ("Override", "The agent runs the action with your values instead of its own."),
    "take_over": ("Do it myself", "You carry the action out yourself, with a tool of your own."),
    "execute": ("Carry it out", "The action runs on your side now, as you doing it."),
    "stop": ("Stop the episode", "Ends the whole episode now, for everyone."),
    "send": ("Send", "Your words go to the agent."),
    "decline": ("Decline", "You do not answer this request."),
}
"""Every answer a person may give: value -> (button label, what it does)."""
TAKES_ARGUMENTS = frozenset({"modify", "override", "take_over"})
"""Decisions whose answer carries the person's values for the action."""
OWN_INPUT: dict[str, tuple[Literal["clarification", "feedback", "control"], str, str]] = {
    "feedback": ("feedback", COMMENT, "Feedback on the agents' work"),
    "inform": ("clarification", INFORM, "Information the agents should know"),
    "stop": ("control", "stop", "Stop the episode"),
}
"""What a person can contribute on their own: name -> (channel, form, label)."""
STOP_WORDS = "Stop: I am ending this here."
"""The words of a stop given without any."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@dataclass(frozen=True)
class Answer:
    """What the person answered.

    Attributes:
        text: their words to the agent.
        decision: control only: approve, deny, modify, override, take_over, stop or execute.
        arguments: for modify, override and take_over: the action's values to run with.
        tool: for take_over: the person's own tool that carries the action out.
        rating: feedback only: 1 (poor) to 5 (good), or None.
        declined: clarification and feedback only: they chose not to answer.
    """

    text: str = ""
    decision: str | None = None
    arguments: dict[str, Any] | None = None
    tool: str | None = None
    rating: int | None = None
    declined: bool = False


@dataclass(eq=False)
class Ask:
    """One request waiting for the person.

    Attributes:
        number: counts the asks of a desk from 1 (set by the desk).
        user_id: the human the person plays here.
        kind: the channel of the request, or ``intervene`` (a cue to step in).
        text: what is asked (the request's content, or what the cue is about).
        sender: the agent asking (None for a cue).
        request: the channel request (None for a cue).
        view: what that human may know now.
        facts: for control: the action's risk, kind and side.
    """

    number: int
    user_id: str
    kind: AskKind
    text: str
    sender: str | None
    request: ChannelRequest | None
    view: HumanView
    facts: ActionFacts | None = None
    future: asyncio.Future[Answer | None] | None = field(default=None, repr=False)

    @property
    def decisions(self) -> tuple[str, ...]:
        """The control decisions the person may give (empty for other kinds).

        On an action to approve: approve, deny, modify, override, take_over (only for a
        human with tools of their own) and stop; on an action to carry out: execute, deny
        and stop.
        """
        if self.kind != "control" or self.request is None:
            return ()
        if self.request.form == EXECUTE:
            return ("execute", "deny", "stop")
        if self.request.form != APPROVAL:
            return ()
        own = ("take_over",) if self.view.tools else ()
        return ("approve", "deny", "modify", "override", *own, "stop")


def check(ask: Ask, answer: Answer) -> None:
    """Refuse an answer that does not fit its request.

    Raises:
        ValueError: a decision the request does not allow, new values missing where the
            decision needs them, a tool the human does not hold, a rating outside 1-5, or
            an empty answer to a question.
    """
    if ask.kind == "control":
        if answer.decision not in ask.decisions:
            raise ValueError(f"decide one of {', '.join(ask.decisions)}, not {answer.decision!r}")
        if answer.decision in TAKES_ARGUMENTS and not isinstance(answer.arguments, dict):
            raise ValueError(f"{answer.decision} needs the action's values as a JSON object")
        if answer.decision == "modify" and not answer.arguments:
            raise ValueError("modify needs at least one changed value (or approve)")
        own = [t.name for t in ask.view.tools]
        if answer.decision == "take_over" and answer.tool not in own:
            raise ValueError(f"take over with one of your tools: {', '.join(own)}")
    elif answer.decision is not None:
        raise ValueError(f"a {ask.kind} request takes no decision")
    if answer.rating is not None and not 1 <= answer.rating <= 5:
        raise ValueError(f"a rating is 1 to 5, not {answer.rating}")
    if ask.kind in ("clarification", "feedback") and not answer.declined and not answer.text:
        raise ValueError("write an answer (or decline)")


# -- what the human knows ------------------------------------------------------------------


@dataclass(frozen=True)
class Knowledge:
    """What the played human knows: its part, its rules and its facts.

    Attributes:
        user_id: the human.
        role: its role in the task (None when the task names none).
        responsibilities: what it answers for.
        goal: what it wants now (after any change of plan).
        rules: how it acts: its task instructions, one rule per sentence.
        facts: what it knows, as (name, value) pairs.
        unknown: what it does not know (names of facts).
        tools: its own tools, as (name, description) pairs.
        persona: how a simulated human in this seat would behave (name: description).
    """

    user_id: str
    role: str | None
    responsibilities: tuple[str, ...]
    goal: str
    rules: tuple[str, ...]
    facts: tuple[tuple[str, str], ...]
    unknown: tuple[str, ...]
    tools: tuple[tuple[str, str], ...]
    persona: str

    @property
    def title(self) -> str:
        """``user_1 (billing manager)``."""
        return self.user_id + (f" ({self.role})" if self.role else "")


def knowledge(view: HumanView) -> Knowledge:
    """What a human knows, as a person playing it is shown it."""
    return Knowledge(
        user_id=view.user_id,
        role=view.role,
        responsibilities=tuple(view.responsibilities),
        goal=view.goal.strip(),
        rules=_sentences(view.task_instructions),
        facts=tuple((_words(k), _value(v)) for k, v in view.known_info.items()),
        unknown=tuple(_words(k) for k in view.unknown_info),
        tools=tuple((t.name, t.description) for t in view.tools),
        persona=f"{view.persona.name}: {view.persona.description}",
    )


def _sentences(text: str) -> tuple[str, ...]:
    """A text as its sentences (task instructions state one rule per sentence)."""
    return tuple(s for s in _SENTENCE_END.split(text.strip()) if s)


def _words(key: str) -> str:
    return key.replace("_", " ")


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


# -- a request waiting for the person ------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One answer the person may give to a request.

    Attributes:
        value: the decision (control) or ``send`` / ``decline``.
        label: the button's words.
        help: what happens when it is chosen.
        takes_arguments: the answer carries the person's values for the action.
    """

    value: str
    label: str
    help: str
    takes_arguments: bool = False


@dataclass(frozen=True)
class ActionShown:
    """The action of a control request as the person sees it.

    Attributes:
        name: the tool.
        arguments: its arguments as the agent gave them.
        about: its kind and risk (``write, risk high``).
        texts: each argument's value as text, as the sentence of what is asked writes it.
    """

    name: str
    arguments: dict[str, Any]
    about: str
    texts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Card:
    """A request waiting for the person, ready to show.

    Attributes:
        number: the request's number on its desk (answers name it).
        user_id: the human asked.
        kind: clarification, feedback, control or intervene.
        request_id: the channel request's id (None for a cue).
        sender: who asks (None for a cue).
        heading: who asks for what, in a few words.
        asked: what is asked of the person, in one sentence.
        words: the asker's own words (the question, the work to review, the reason).
        action: for control: the action.
        choices: the answers the person may give.
        takes_text: the answer carries words.
        takes_rating: the answer may carry a rating from 1 to 5.
        tools: for take_over: the person's own tools.
    """

    number: int
    user_id: str
    kind: AskKind
    request_id: str | None
    sender: str | None
    heading: str
    asked: str
    words: str | None
    action: ActionShown | None
    choices: tuple[Choice, ...]
    takes_text: bool = True
    takes_rating: bool = False
    tools: tuple[str, ...] = ()


def card(ask: Ask) -> Card:
    """A waiting request as the person sees it (see :class:`Card`)."""
    request, sender = ask.request, ask.sender or "an agent"
    action = None
    words: str | None = ask.text
    takes_rating = False
    if ask.kind == "intervene":
        heading, asked, words, values = "Your cue to step in", ask.text, None, ("send", "decline")
    elif ask.kind == "clarification":
        heading = f"{sender} asks you a question"
        asked = f"Answer {sender}'s question from what you know, or decline."
        values = ("send", "decline")
    elif ask.kind == "feedback":
        heading = f"{sender} asks for your review"
        asked = (
            f"Review what {sender} shows you: say what is right and what to change, and rate "
            "it from 1 (poor) to 5 (good) if you like."
        )
        values, takes_rating = ("send", "decline"), True
    else:
        ref = request.action if request is not None else None
        name, arguments = (ref.name, dict(ref.arguments)) if ref is not None else ("?", {})
        facts = ask.facts
        about = f"{facts.kind}, risk {facts.risk}" if facts is not None else ""
        action = ActionShown(name, arguments, about, {k: _value(v) for k, v in arguments.items()})
        with_values = f" with {_arguments_text(arguments)}" if arguments else ""
        if request is not None and request.form == EXECUTE:
            heading = f"{sender} asks you to carry out an action"
            asked = f"Carry out {name}{with_values} yourself?"
        else:
            heading = f"{sender} asks for your approval"
            asked = f"Should {sender} run {name}{with_values}?"
        words = control_reason(request.form, name, request.content) if request else None
        values = ask.decisions
    choices = tuple(Choice(v, *CHOICES[v], takes_arguments=v in TAKES_ARGUMENTS) for v in values)
    return Card(
        number=ask.number,
        user_id=ask.user_id,
        kind=ask.kind,
        request_id=request.request_id if request is not None else None,
        sender=ask.sender,
        heading=heading,
        asked=asked,
        words=words or None,
        action=action,
        choices=choices,
        takes_rating=takes_rating,
        tools=tuple(t.name for t in ask.view.tools) if "take_over" in values else (),
    )


def _arguments_text(arguments: dict[str, Any]) -> str:
    """``account_id = A101, amount = 30.0``."""
    return ", ".join(f"{k} = {_value(v)}" for k, v in arguments.items())


# -- what the human's node has seen --------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One thing the human's node saw happen.

    Attributes:
        turn: the episode's turn.
        speaker: who acted (``you`` for the human itself).
        to: whom it was addressed to (``you``, an id, or None).
        what: what it was (``message``, ``asks you``, ``you answer: approve``, ...).
        text: its words.
    """

    turn: int
    speaker: str
    to: str | None
    what: str
    text: str


_OWN_WORDS = {INFORM: "information", COMMENT: "feedback"}
_ASKS = {
    QUESTION: "asks you",
    REVIEW: "asks for your review",
    APPROVAL: "asks for your approval",
    EXECUTE: "asks you to carry out",
}
_CLOSED = ("expired", "terminated", "refused")


def conversation(events: Iterable[Event], user_id: str) -> list[Line]:
    """What a human's node has seen: exchanges it took part in, and its own actions.

    Messages to or from it, requests to it and their fate, its answers, what it said on
    its own, the actions it carried out and changes of its goal; never what other
    participants said among themselves.
    """
    lines: list[Line] = []
    asked: set[str] = set()

    def who(pid: str | None) -> str | None:
        return "you" if pid == user_id else pid

    for e in events:
        p = e.payload
        if e.type == "message" and user_id in (e.actor, e.target):
            lines.append(Line(e.step, who(e.actor), who(e.target), "message", p.text))
        elif e.type == "channel_request" and e.target == user_id and e.initiator == "agent":
            asked.add(p.request_id)
            text = p.content
            if p.action is not None:
                reason = control_reason(p.form, p.action.name, p.content)
                values = _arguments_text(p.action.arguments)
                text = f"{p.action.name} with {values}" + (f". “{reason}”" if reason else "")
            lines.append(Line(e.step, e.actor, "you", _ASKS.get(p.form, "asks you"), text))
        elif e.type == "channel_request" and e.actor == user_id:
            what = _OWN_WORDS.get(p.form, p.form)
            lines.append(Line(e.step, "you", e.target, f"you, on your own: {what}", p.content))
        elif e.type == "channel_response" and e.actor == user_id:
            what = p.decision or ("declined" if p.refused else "answer")
            if p.rating is not None:
                what += f", rating {p.rating}"
            lines.append(Line(e.step, "you", e.target, f"you: {what}", p.content))
        elif e.type == "channel_status" and p.request_id in asked and p.status in _CLOSED:
            what = f"{p.request_id} {p.status}"
            lines.append(Line(e.step, "episode", "you", what, p.reason or ""))
        elif e.type == "tool_result" and e.actor == user_id:
            lines.append(Line(e.step, "you", None, f"you ran {p.name}", str(p.output)))
        elif e.type == "goal_revision" and e.actor == user_id:
            lines.append(Line(e.step, "you", None, "your goal changed", p.goal))
    return lines
