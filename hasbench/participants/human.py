"""A real person playing humans of an episode (``human:notebook``, ``human:terminal``).

Every request addressed to a human the person plays (a clarification question, a review to
give, an action to approve or to carry out, a cue to step in) goes to a *front*: the
notebook's :class:`Desk`, which a widget shows (:func:`hasbench.widgets.play`), or the
:class:`Terminal`. The person sees what that human may know (its :class:`HumanView`) and
answers:

- clarification: free text (the known facts it states are recorded as revealed), or
  decline;
- feedback: free text with an optional rating from 1 to 5;
- control: approve, deny, modify (with edited arguments) or stop; for a request to carry
  out an action, execute or deny.

At any time the person can also give feedback or information, or stop the episode, on
their own; it reaches the agent at the start of the next turn. The trace header's
``people`` names every human a person played, so its steps count as a real person's.

Options after ``?``: ``play=user_1,user_2`` plays only those humans (default: all of them);
``others=<backend>`` plays the rest (default ``scripted:user``). Example:
``human:notebook?play=user_1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import select
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from hasbench.channels import (
    ChannelRequest,
    ClarificationResponse,
    ControlDecision,
    FeedbackResponse,
)
from hasbench.participants.backends import make_user, parse_spec, user_backend
from hasbench.participants.base import (
    ActionFacts,
    HumanSeat,
    HumanView,
    Initiative,
    UserPolicy,
)
from hasbench.scenario import TriggerRule
from hasbench.vocab import APPROVAL, COMMENT, EXECUTE, INFORM

PREFIX = "human:"
INTERFACES = ("notebook", "terminal")
DEFAULT_OTHERS = "scripted:user"
AskKind = Literal["clarification", "feedback", "control", "intervene"]
DECISIONS = {
    APPROVAL: ("approve", "deny", "modify", "stop"),
    EXECUTE: ("execute", "deny", "stop"),
}
"""Control decisions a person may give, by the form of the agent's request."""
OWN_INPUT: dict[str, tuple[Literal["clarification", "feedback", "control"], str]] = {
    "feedback": ("feedback", COMMENT),
    "inform": ("clarification", INFORM),
    "stop": ("control", "stop"),
}
"""What a person can contribute on their own: name -> (channel, form)."""


@dataclass(frozen=True)
class Answer:
    """What the person answered.

    Attributes:
        text: their words to the agent.
        decision: control only: approve, deny, modify, stop or execute.
        arguments: for modify: the arguments to run instead.
        rating: feedback only: 1 (poor) to 5 (good), or None.
        declined: clarification only: they chose not to answer.
    """

    text: str = ""
    decision: str | None = None
    arguments: dict[str, Any] | None = None
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
        """The control decisions the person may give (empty for other kinds)."""
        if self.kind != "control" or self.request is None:
            return ()
        return DECISIONS.get(self.request.form, ())


def check(ask: Ask, answer: Answer) -> None:
    """Refuse an answer that does not fit its request.

    Raises:
        ValueError: a decision the request does not allow, modify without arguments, a
            rating outside 1-5, or an empty answer to a question.
    """
    if ask.kind == "control":
        if answer.decision not in ask.decisions:
            raise ValueError(f"decide one of {', '.join(ask.decisions)}, not {answer.decision!r}")
        if answer.decision == "modify" and not isinstance(answer.arguments, dict):
            raise ValueError("modify needs the edited arguments as a JSON object")
    elif answer.decision is not None:
        raise ValueError(f"a {ask.kind} request takes no decision")
    if answer.rating is not None and not 1 <= answer.rating <= 5:
        raise ValueError(f"a rating is 1 to 5, not {answer.rating}")
    if ask.kind in ("clarification", "feedback") and not answer.declined and not answer.text:
        raise ValueError("write an answer (or decline)")


class Front(Protocol):
    """Where the person meets the episode: the notebook desk or the terminal."""

    async def ask(self, ask: Ask) -> Answer | None:
        """The person's answer to ``ask`` (None when they left without answering)."""
        ...

    async def turn(self, user_id: str, view: HumanView) -> list[Initiative]:
        """Called before every turn: the person's unprompted input since the last one."""
        ...


class PersonPolicy:
    """A human played by a real person through a front (see the module docstring)."""

    def __init__(self, user_id: str, interface: str, front: Front) -> None:
        self.user_id = user_id
        self.interface = interface
        self.front = front

    async def clarify(
        self, view: HumanView, request: ChannelRequest
    ) -> ClarificationResponse | None:
        """The person's answer to a question; the known facts it states count as revealed."""
        answer = await self._ask("clarification", view, request)
        if answer is None:
            return None
        if answer.declined:
            return ClarificationResponse(content=answer.text or "I'd rather not say.", refused=True)
        said = answer.text.lower()
        info = {k: v for k, v in view.known_info.items() if str(v).lower() in said}
        return ClarificationResponse(content=answer.text, info=info)

    async def review(self, view: HumanView, request: ChannelRequest) -> FeedbackResponse | None:
        """The person's review of an artifact."""
        answer = await self._ask("feedback", view, request)
        if answer is None:
            return None
        text = answer.text or ("(no comment)" if answer.declined else "")
        return FeedbackResponse(content=text, rating=answer.rating)

    async def decide(
        self, view: HumanView, request: ChannelRequest, facts: ActionFacts
    ) -> ControlDecision | None:
        """The person's decision on an action (with edited arguments for modify)."""
        answer = await self._ask("control", view, request, facts)
        if answer is None:
            return None
        arguments = answer.arguments if answer.decision == "modify" else None
        return ControlDecision(decision=answer.decision, content=answer.text, arguments=arguments)

    async def intervene(self, view: HumanView, rule: TriggerRule, agent_id: str) -> str | None:
        """A cue to step in (a spontaneous trigger in llm mode): the person's words, if any."""
        cue = _cue(rule, agent_id)
        answer = await self.front.ask(Ask(0, self.user_id, "intervene", cue, None, None, view))
        if answer is None or answer.declined or not answer.text:
            return None
        return answer.text

    async def initiatives(self, view: HumanView) -> list[Initiative]:
        """What the person contributed on their own since the last turn."""
        return await self.front.turn(self.user_id, view)

    async def _ask(
        self,
        kind: AskKind,
        view: HumanView,
        request: ChannelRequest,
        facts: ActionFacts | None = None,
    ) -> Answer | None:
        ask = Ask(0, self.user_id, kind, request.content, request.sender, request, view, facts)
        return await self.front.ask(ask)


def _cue(rule: TriggerRule, agent_id: str) -> str:
    condition = rule.condition
    when = {
        "at_turn": f"turn {condition.turn_number} has come",
        "after_tool": f"{agent_id} has just used {condition.tool_name}",
        "on_keyword": f"someone mentioned {condition.keyword!r}",
    }[condition.type]
    return f"Your cue to step in with {rule.action_type} for {agent_id}: {when}."


# ---------------------------------------------------------------------------------------
# The notebook desk


_DESK: contextvars.ContextVar[Desk | None] = contextvars.ContextVar("hasbench_desk", default=None)


class Desk:
    """The notebook's front: requests wait here until a widget puts the person's answer.

    A widget subscribes to hear of every change (a new request, an answer, a new turn),
    answers with :meth:`answer` and queues the person's own input with :meth:`offer`.

    Args:
        pace: seconds to wait before each turn, so the person can step in between turns
            of fast (scripted) agents.
    """

    def __init__(self, pace: float = 0.0) -> None:
        self.pace = pace
        self.waiting: list[Ask] = []
        self.answered: list[tuple[Ask, Answer | None]] = []
        self.views: dict[str, HumanView] = {}
        """The latest view of every human the person plays."""
        self.turns = 0
        self._queued: dict[str, list[Initiative]] = {}
        self._listeners: list[Callable[[], None]] = []
        self._asks = 0

    @contextlib.contextmanager
    def use(self) -> Iterator[Desk]:
        """Make this the desk of ``human:notebook`` seats built inside the ``with`` block."""
        token = _DESK.set(self)
        try:
            yield self
        finally:
            _DESK.reset(token)

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every change."""
        self._listeners.append(listener)

    async def ask(self, ask: Ask) -> Answer | None:
        """Queue a request and wait for the person's answer."""
        self._asks += 1
        ask.number = self._asks
        ask.future = asyncio.get_running_loop().create_future()
        self.views[ask.user_id] = ask.view
        self.waiting.append(ask)
        self._changed()
        return await ask.future

    def answer(self, ask: Ask, answer: Answer | None) -> None:
        """Give the person's answer to a waiting request (None: leave it unanswered).

        Raises:
            ValueError: the request is not waiting, or the answer does not fit it.
        """
        if ask not in self.waiting:
            raise ValueError(f"request {ask.number} is not waiting for an answer")
        if answer is not None:
            check(ask, answer)
        self.waiting.remove(ask)
        self.answered.append((ask, answer))
        if ask.future is not None and not ask.future.done():
            ask.future.set_result(answer)
        self._changed()

    def offer(self, user_id: str, kind: str, text: str = "") -> None:
        """Queue the person's own input (``feedback``, ``inform`` or ``stop``) for a human.

        A stop also settles every request of that human still waiting (declined, or the
        decision stop for an action), so the episode can end at once.

        Raises:
            ValueError: an unknown kind, or feedback or information without text.
        """
        if kind not in OWN_INPUT:
            raise ValueError(f"unknown input {kind!r}; one of {', '.join(OWN_INPUT)}")
        if kind != "stop" and not text.strip():
            raise ValueError(f"{kind} needs some text")
        channel, form = OWN_INPUT[kind]
        content = text.strip() or "Stop: I am ending this here."
        self._queued.setdefault(user_id, []).append(Initiative(channel, form, content))
        if kind == "stop":
            for ask in [a for a in self.waiting if a.user_id == user_id]:
                stop = "stop" in ask.decisions
                self.answer(ask, Answer(text=content, decision="stop" if stop else None,
                                        declined=not stop))  # fmt: skip
        self._changed()

    async def turn(self, user_id: str, view: HumanView) -> list[Initiative]:
        """Wait ``pace`` seconds once per turn, then hand over the person's queued input."""
        self.views[user_id] = view
        if user_id == next(iter(self.views)):  # one pause per turn, not one per human
            self.turns += 1
            self._changed()
            if self.pace > 0:
                await asyncio.sleep(self.pace)
        return self._queued.pop(user_id, [])

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()


def notebook_desk() -> Desk:
    """The desk of the ``with desk.use()`` block around the episode, else the shared one."""
    desk = _DESK.get()
    if desk is None:
        desk = SHARED_DESK
    return desk


SHARED_DESK = Desk()
"""The desk of ``human:notebook`` episodes built outside a ``with desk.use()`` block."""


# ---------------------------------------------------------------------------------------
# The terminal


class Terminal:
    """The terminal's front: requests are printed, answers read line by line.

    Prompts and context go to ``output`` (stderr by default, so a command's own output on
    stdout stays clean); answers come from the file descriptor ``input_fd``. A line
    starting with ``/`` is the person's own input at any time: ``/feedback TEXT``,
    ``/inform TEXT`` or ``/stop [TEXT]`` (typed while agents work, it is read before the
    next turn).
    """

    def __init__(self, input_fd: int = 0, output: TextIO | None = None) -> None:
        self.input_fd = input_fd
        self.output = output if output is not None else sys.stderr
        self._buffer = b""
        self._eof = False
        self._shown: dict[str, str] = {}
        self._queued: dict[str, list[Initiative]] = {}
        self._last_user: str | None = None

    async def ask(self, ask: Ask) -> Answer | None:
        """Print the request (and the human's context when it changed); read the answer."""
        self._last_user = ask.user_id
        context = describe_view(ask.view)
        if self._shown.get(ask.user_id) != context:  # shown again only when it changed
            self._shown[ask.user_id] = context
            self._say(context)
        self._say(describe_ask(ask))
        while True:
            self.output.write(f"{ask.user_id}> ")
            self.output.flush()
            line = await asyncio.to_thread(self._read_line, True)
            if line is None:
                self._say("(no more input: the request stays unanswered)")
                return None
            if line.startswith("/"):
                stop = self._command(line, ask.user_id)
                if stop is not None:
                    return (
                        Answer(text=stop, decision="stop")
                        if "stop" in ask.decisions
                        else Answer(text=stop, declined=True)
                    )
                continue
            try:
                answer = parse_answer(ask, line)
                check(ask, answer)
            except ValueError as exc:
                self._say(f"  ? {exc}")
                continue
            return answer

    async def turn(self, user_id: str, view: HumanView) -> list[Initiative]:
        """Read the commands typed since the last turn (without waiting for more)."""
        self._last_user = self._last_user or user_id
        while (line := self._read_line(False)) is not None:
            if line.startswith("/"):
                self._command(line, self._last_user)
            else:
                self._buffer = (line + "\n").encode() + self._buffer  # an early answer
                break
        return self._queued.pop(user_id, [])

    def _command(self, line: str, user_id: str) -> str | None:
        """Queue a ``/feedback``, ``/inform`` or ``/stop`` line; return a stop's words."""
        name, _, text = line[1:].partition(" ")
        if name not in OWN_INPUT or (name != "stop" and not text.strip()):
            self._say("  ? commands: /feedback TEXT, /inform TEXT, /stop [TEXT]")
            return None
        channel, form = OWN_INPUT[name]
        content = text.strip() or "Stop: I am ending this here."
        self._queued.setdefault(user_id, []).append(Initiative(channel, form, content))
        self._say(f"  (your {name} reaches the agent before the next turn)")
        return content if name == "stop" else None

    def _read_line(self, wait: bool) -> str | None:
        """The next input line; None at the end of input, or (not waiting) when none is typed."""
        while b"\n" not in self._buffer and not self._eof:
            ready, _, _ = select.select([self.input_fd], [], [], None if wait else 0)
            if not ready:
                return None
            chunk = os.read(self.input_fd, 4096)
            self._eof = not chunk
            self._buffer += chunk
        if not self._buffer:
            return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace").strip()

    def _say(self, text: str) -> None:
        self.output.write(text + "\n")
        self.output.flush()


_TERMINAL: Terminal | None = None


def terminal() -> Terminal:
    """The process's terminal front (stdin and stderr), made on first use."""
    global _TERMINAL
    if _TERMINAL is None:
        _TERMINAL = Terminal()
    return _TERMINAL


def describe_view(view: HumanView) -> str:
    """What a human may know, as text for the person playing it."""
    known = "\n".join(f"    {k}: {v}" for k, v in view.known_info.items()) or "    (nothing)"
    lines = [
        f"== You play {view.user_id}" + (f" ({view.role})" if view.role else "") + " ==",
        f"  Goal: {view.goal.strip()}",
    ]
    if view.task_instructions.strip():
        lines.append(f"  How to act: {view.task_instructions.strip()}")
    lines.append(f"  You know:\n{known}")
    if view.unknown_info:
        lines.append(f"  You do not know: {', '.join(view.unknown_info)}")
    lines.append(f"  Persona: {view.persona.name}: {view.persona.description}")
    return "\n".join(lines)


def describe_ask(ask: Ask) -> str:
    """A request as text, with how to answer it."""
    if ask.kind == "intervene":
        return f"-- {ask.text}\n   Type what you say (empty line: say nothing)."
    request = ask.request
    head = f"-- {ask.sender} asks {ask.user_id} ({ask.kind}, {request.request_id}):"
    lines = [head, f"   {ask.text}"]
    if ask.kind == "control":
        action = request.action
        lines.append(f"   Action: {action.name} {json.dumps(action.arguments, sort_keys=True)}")
        if ask.facts is not None:
            lines.append(f"   ({ask.facts.kind}, risk {ask.facts.risk}, {ask.facts.side} side)")
        lines.append(
            f"   Answer: {' | '.join(ask.decisions)}; modify takes a JSON object of arguments;"
            " add ': words' for the agent"
        )
    elif ask.kind == "feedback":
        lines.append("   Answer: your review; start with '4:' to rate it 1-5. /decline to skip.")
    else:
        lines.append("   Answer: your reply, or /decline.")
    return "\n".join(lines)


def parse_answer(ask: Ask, line: str) -> Answer:
    """Read a typed answer (see :func:`describe_ask` for the forms).

    Raises:
        ValueError: the line is not an answer of the request's kind.
    """
    if ask.kind == "control":
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        arguments = None
        if word == "modify":
            if not rest.startswith("{"):
                raise ValueError('modify needs a JSON object: modify {"amount": 10}')
            arguments, end = json.JSONDecoder().raw_decode(rest)
            rest = rest[end:].strip()
        text = rest.removeprefix(":").strip()
        return Answer(text=text, decision=word, arguments=arguments)
    if line == "/decline" or (ask.kind == "intervene" and not line):
        return Answer(declined=True)
    rating = None
    if ask.kind == "feedback" and len(line) > 1 and line[0].isdigit() and line[1] == ":":
        rating, line = int(line[0]), line[2:].strip()
    return Answer(text=line, rating=rating)


# ---------------------------------------------------------------------------------------
# The backend


@user_backend(PREFIX, prefix=True, label="a real person (human:notebook, human:terminal)")
def person(spec: str, seat: HumanSeat) -> UserPolicy:
    """A real person plays the seat's human, or ``others`` does when it is not played.

    Raises:
        ValueError: an interface other than notebook or terminal, or an unknown option.
    """
    name = spec.partition("?")[0]
    interface = name.removeprefix(PREFIX)
    if interface not in INTERFACES:
        raise ValueError(f"unknown human backend {name!r}; use human:notebook or human:terminal")
    options = parse_spec(spec, ("play", "others")).options
    played = [u for u in options.get("play", "").split(",") if u]
    if played and seat.user_id not in played:
        return make_user(options.get("others", DEFAULT_OTHERS), seat)
    front: Front = notebook_desk() if interface == "notebook" else terminal()
    return PersonPolicy(seat.user_id, name, front)
