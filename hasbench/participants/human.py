"""A real person playing humans of an episode: ``human:notebook``, ``terminal``, ``serve``.

Every request addressed to a human the person plays (a clarification question, a review to
give, an action to approve or to carry out, a cue to step in) goes to a *front*: a
:class:`Desk`, which the notebook's console (:func:`hasbench.widgets.play`) or a served
page (:mod:`hasbench.serve`) shows, or the :class:`Terminal`. Every front shows what
:mod:`hasbench.participants.person_view` builds: what that human knows (facts and rules),
the request with what is asked, and the answers the person may give:

- clarification: free text (the known facts it states are recorded as revealed), or
  decline;
- feedback: free text with an optional rating from 1 to 5;
- control: approve, deny, modify (changed values), override (the person's values instead
  of the agent's), take over (with a tool of the person's own, when the human has one) or
  stop; for a request to carry out an action, execute, deny or stop.

At any time the person can also give feedback or information, or stop the episode, on
their own; it reaches the agent at the start of the next turn. The trace header's
``people`` names every human a person played (``human:serve?person=P01`` when the server
was told the person's pseudonym), so its steps count as a real person's.

Options after ``?``: ``play=user_1,user_2`` plays only those humans (default: all of them);
``others=<backend>`` plays the rest (default ``scripted:user``). Example:
``human:notebook?play=user_1``. ``human:serve`` is what ``hasbench serve`` builds its
episodes with (its desk is the server's).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import re
import select
import sys
from collections.abc import Callable, Iterator
from typing import Protocol, TextIO

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
from hasbench.participants.person_view import (
    OWN_INPUT,
    STOP_WORDS,
    TAKES_ARGUMENTS,
    Answer,
    Ask,
    AskKind,
    card,
    check,
    knowledge,
)
from hasbench.scenario import TriggerRule

PREFIX = "human:"
INTERFACES = ("notebook", "terminal", "serve")
DEFAULT_OTHERS = "scripted:user"
PERSON_LABEL = re.compile(r"[A-Za-z0-9_.-]{1,40}")
"""What a person may be called in a trace: a short pseudonym such as ``P01``."""

__all__ = ["Answer", "Ask", "Desk", "PersonPolicy", "Terminal", "check", "parse_answer"]


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
        arguments = answer.arguments if answer.decision in TAKES_ARGUMENTS else None
        tool = answer.tool if answer.decision == "take_over" else None
        return ControlDecision(
            decision=answer.decision, content=answer.text, arguments=arguments, tool=tool
        )

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
# The desk: the notebook's and the server's front


_DESK: contextvars.ContextVar[Desk | None] = contextvars.ContextVar("hasbench_desk", default=None)


class Desk:
    """A front where requests wait until a page or widget puts the person's answer.

    A page subscribes to hear of every change (a new request, an answer, a new turn),
    answers with :meth:`answer` and queues the person's own input with :meth:`offer`.

    Args:
        pace: seconds to wait before each turn, so people can step in between turns of
            fast (scripted) agents.
        wait: seconds a request waits for its answer before it is left unanswered (as
            when a simulated human gives no usable answer); None waits for ever.
        names: what each played human's person is called (a pseudonym), by human id; the
            trace header names them.
    """

    def __init__(
        self, pace: float = 0.0, wait: float | None = None, names: dict[str, str] | None = None
    ) -> None:
        self.pace = pace
        self.wait = wait
        self.names = dict(names or {})
        self.waiting: list[Ask] = []
        self.answered: list[tuple[Ask, Answer | None]] = []
        self.expired: list[Ask] = []
        """Requests left unanswered when their wait ran out."""
        self.views: dict[str, HumanView] = {}
        """The latest view of every human the person plays."""
        self.turns = 0
        self._queued: dict[str, list[Initiative]] = {}
        self._listeners: list[Callable[[], None]] = []
        self._asks = 0

    @contextlib.contextmanager
    def use(self) -> Iterator[Desk]:
        """Make this the desk of ``human:notebook`` and ``human:serve`` seats built inside."""
        token = _DESK.set(self)
        try:
            yield self
        finally:
            _DESK.reset(token)

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after every change."""
        self._listeners.append(listener)

    def waiting_for(self, user_id: str) -> list[Ask]:
        """The requests waiting for the person who plays ``user_id``, oldest first."""
        return [ask for ask in self.waiting if ask.user_id == user_id]

    async def ask(self, ask: Ask) -> Answer | None:
        """Queue a request and wait for the person's answer (at most ``wait`` seconds)."""
        self._asks += 1
        ask.number = self._asks
        ask.future = asyncio.get_running_loop().create_future()
        self.views[ask.user_id] = ask.view
        self.waiting.append(ask)
        self._changed()
        try:
            return await asyncio.wait_for(asyncio.shield(ask.future), self.wait)
        except TimeoutError:
            self.waiting.remove(ask)
            self.expired.append(ask)
            self.answered.append((ask, None))
            self._changed()
            return None

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
        channel, form, _ = OWN_INPUT[kind]
        content = text.strip() or STOP_WORDS
        self._queued.setdefault(user_id, []).append(Initiative(channel, form, content))
        if kind == "stop":
            for ask in self.waiting_for(user_id):
                self.answer(ask, _stop_answer(ask, content))
        self._changed()

    def queued(self, user_id: str) -> list[Initiative]:
        """The person's own input for ``user_id`` not delivered yet (it goes at the next turn)."""
        return list(self._queued.get(user_id, []))

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


def _stop_answer(ask: Ask, words: str) -> Answer:
    """A stop given while ``ask`` waits: the decision stop for an action, else declined."""
    if "stop" in ask.decisions:
        return Answer(text=words, decision="stop")
    return Answer(text=words, declined=True)


def current_desk(interface: str) -> Desk:
    """The desk of the ``with desk.use()`` block around the episode.

    Outside one, ``human:notebook`` uses :data:`SHARED_DESK`.

    Raises:
        ValueError: ``human:serve`` outside a server's block.
    """
    desk = _DESK.get()
    if desk is not None:
        return desk
    if interface == "serve":
        raise ValueError("human:serve plays humans through a server: use `hasbench serve`")
    return SHARED_DESK


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
            if line.startswith("/") and line != "/decline":
                stop = self._command(line, ask.user_id)
                if stop is not None:
                    return _stop_answer(ask, stop)
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
        channel, form, _ = OWN_INPUT[name]
        content = text.strip() or STOP_WORDS
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
    """What a human knows (:func:`~hasbench.participants.person_view.knowledge`), as text."""
    known = knowledge(view)
    lines = [f"== You play {known.title} ==", f"  Your goal: {known.goal}"]
    if known.responsibilities:
        lines.append(f"  You answer for: {'; '.join(known.responsibilities)}")
    if known.rules:
        lines.append("  Your rules:")
        lines += [f"    - {rule}" for rule in known.rules]
    lines.append("  What you know:")
    lines += [f"    {name}: {value}" for name, value in known.facts] or [
        "    (no facts of your own: rely on your rules and on what you are told)"
    ]
    if known.unknown:
        lines.append(f"  What you do not know: {', '.join(known.unknown)}")
    if known.tools:
        lines.append("  Your own tools: " + ", ".join(name for name, _ in known.tools))
    lines.append(f"  Persona: {known.persona}")
    return "\n".join(lines)


def describe_ask(ask: Ask) -> str:
    """A request (:func:`~hasbench.participants.person_view.card`) as text, with how to answer."""
    shown = card(ask)
    where = f" ({shown.request_id})" if shown.request_id else ""
    lines = [f"-- {shown.heading}{where}:", f"   {shown.asked}"]
    if shown.words:
        lines.append(f"   Their words: {shown.words}")
    if shown.action is not None:
        arguments = json.dumps(shown.action.arguments, sort_keys=True)
        lines.append(f"   Action: {shown.action.name} {arguments} ({shown.action.about})")
    if ask.kind == "control":
        values = " | ".join(c.value for c in shown.choices)
        lines.append(
            f"   Answer: {values}, then ': your words' for the agent (approve: looks right); "
            'modify and override take the values as JSON (modify {"amount": 10}: fixed)'
            + ("; take_over TOOL {...}" if shown.tools else "")
        )
    elif ask.kind == "feedback":
        lines.append("   Answer: your review; start with '4:' to rate it 1-5. /decline to skip.")
    elif ask.kind == "intervene":
        lines.append("   Type what you say (empty line: say nothing).")
    else:
        lines.append("   Answer: your reply, or /decline.")
    return "\n".join(lines)


_DECISION_WORD = re.compile(r"\s*([a-z_]+)\s*(?::\s*|\s+|$)", re.IGNORECASE)


def parse_answer(ask: Ask, line: str) -> Answer:
    """Read a typed answer (see :func:`describe_ask` for the forms).

    A decision is its word, then optionally the values as JSON (modify, override; take_over
    first names its tool), then the person's words after ``:`` (or a space):
    ``approve: looks right``, ``deny : I cannot verify``, ``modify {"amount": 10}: fixed``.

    Raises:
        ValueError: the line is not an answer of the request's kind.
    """
    if ask.kind == "control":
        match = _DECISION_WORD.match(line)
        if match is None:
            raise ValueError(f"start with one of {', '.join(ask.decisions)}")
        word, rest = match.group(1).lower(), line[match.end() :].strip()
        tool = arguments = None
        if word == "take_over" and rest and not rest.startswith("{"):
            tool, _, rest = rest.partition(" ")
            rest = rest.strip()
        if word in TAKES_ARGUMENTS:
            if not rest.startswith("{"):
                raise ValueError(f'{word} needs a JSON object: {word} {{"amount": 10}}')
            try:
                arguments, end = json.JSONDecoder().raw_decode(rest)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{word}: the values are not valid JSON ({exc.msg})") from None
            rest = rest[end:].strip()
        text = rest.removeprefix(":").strip()
        return Answer(text=text, decision=word, arguments=arguments, tool=tool)
    if line == "/decline" or (ask.kind == "intervene" and not line):
        return Answer(declined=True)
    rating = None
    if ask.kind == "feedback" and len(line) > 1 and line[0].isdigit() and line[1] == ":":
        rating, line = int(line[0]), line[2:].strip()
    return Answer(text=line, rating=rating)


# ---------------------------------------------------------------------------------------
# The backend


def person_options(spec: str) -> tuple[str, dict[str, str]]:
    """The interface (notebook, terminal, serve) and the options of a ``human:`` string.

    Raises:
        ValueError: an interface other than notebook, terminal or serve, or an unknown
            option.
    """
    name = spec.partition("?")[0]
    interface = name.removeprefix(PREFIX)
    if interface not in INTERFACES:
        raise ValueError(
            f"unknown human backend {name!r}; use human:notebook, human:terminal or human:serve"
        )
    options = parse_spec(spec, ("play", "others")).options
    return interface, options


@user_backend(
    PREFIX, prefix=True, label="a real person (human:notebook, human:terminal, human:serve)",
    check=person_options,
)  # fmt: skip
def person(spec: str, seat: HumanSeat) -> UserPolicy:
    """A real person plays the seat's human, or ``others`` does when it is not played.

    Raises:
        ValueError: an interface other than notebook, terminal or serve, an unknown
            option, or ``human:serve`` outside a server.
    """
    interface, options = person_options(spec)
    name = spec.partition("?")[0]
    played = [u for u in options.get("play", "").split(",") if u]
    if played and seat.user_id not in played:
        return make_user(options.get("others", DEFAULT_OTHERS), seat)
    if interface == "terminal":
        return PersonPolicy(seat.user_id, name, terminal())
    desk = current_desk(interface)
    label = desk.names.get(seat.user_id)
    return PersonPolicy(seat.user_id, f"{name}?person={label}" if label else name, desk)
