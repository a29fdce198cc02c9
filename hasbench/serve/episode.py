"""An episode served to the people who play its humans (``hasbench serve TASKS TASK_ID``).

:class:`ServedEpisode` is one application of :mod:`hasbench.serve.server`. Each person
(:class:`Person`) plays one human of the task through ``human:serve``: their page shows
what :mod:`hasbench.participants.person_view` builds for that human (its part, rules and
facts; the requests routed to it, to answer; what its node saw) and takes their own
feedback, information or stop. Humans nobody plays are simulated by the ``others``
backend. The researcher's page shows the episode live (every trace event as it is
recorded, who is connected, what waits for whom), the graph, and at the end the outcome.

The episode starts once every person has opened their page (or when the researcher
starts it). Its trace is written to ``out/<task_id>-NNN.jsonl`` event by event, so
stopping the server loses nothing; :func:`incomplete` lists the traces of a folder that
never ended. A request nobody answers within ``wait`` seconds is left unanswered, as when
a simulated human gives no usable answer; the agents go on, within the episode's limits.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hasbench.agency import Setting
from hasbench.evaluate import evaluate
from hasbench.metrics import human_steps, person_steps
from hasbench.participants.backends import make_judge
from hasbench.participants.human import PERSON_LABEL, Answer, Desk
from hasbench.participants.person_view import OWN_INPUT, card, conversation, knowledge
from hasbench.scenario import Scenario
from hasbench.serve.journal import Journal, next_path
from hasbench.serve.live import Room
from hasbench.serve.server import Server
from hasbench.serve.tokens import Seat
from hasbench.simulator import Backends, Episode
from hasbench.trace import Event, Trace, TraceError, jsonl_line

RESEARCHER = "researcher"
ENDINGS = {
    "agent_done": "the agents finished the task",
    "user_stop": "someone stopped it",
    "max_iterations": "it used all of its turns",
    "max_tool_rounds": "an agent made too many tool calls in a row",
    "too_many_errors": "the agents made too many errors",
    "budget_exhausted": "the agents used up their requests to people",
    "episode_error": "something went wrong in the episode",
    "model_error": "a model could not be reached",
}
"""Why an episode ended, in words for the people who played it."""


@dataclass(frozen=True)
class Person:
    """A real person playing one human of the task.

    Attributes:
        user_id: the human they play.
        name: their pseudonym in the trace (``P01``), if given.
    """

    user_id: str
    name: str | None = None


def parse_people(text: str, scenario: Scenario) -> list[Person]:
    """Read ``user_0,user_1`` or ``user_0=P01,user_1=P02`` against the task's humans.

    Raises:
        ValueError: an unknown or repeated human, or a pseudonym that is not a short word.
    """
    humans = [u.user_id for u in scenario.users]
    people: list[Person] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        user_id, _, name = item.partition("=")
        if user_id not in humans:
            raise ValueError(
                f"--people: {user_id!r} is not a human of {scenario.task_id} "
                f"(its humans: {', '.join(humans)})"
            )
        if any(p.user_id == user_id for p in people):
            raise ValueError(f"--people: {user_id} is named twice")
        if name and not PERSON_LABEL.fullmatch(name):
            raise ValueError(
                f"--people: {name!r}: a pseudonym is 1-40 letters, digits, '_', '.' or '-'"
            )
        people.append(Person(user_id, name or None))
    if not people:
        raise ValueError(f"--people: name at least one human of {scenario.task_id}")
    return people


def incomplete(folder: str | Path) -> list[str]:
    """The traces in ``folder`` that never ended, one line each (what and how far)."""
    found = []
    for path in sorted(Path(folder).glob("*.jsonl")):
        try:
            trace = Trace.read(path)
        except TraceError as exc:
            found.append(f"{path}: unreadable ({exc})")
            continue
        if trace.termination is None:
            turn = max((e.step for e in trace.events), default=0)
            people = ", ".join(sorted(trace.header.people or {})) or "nobody"
            found.append(
                f"{path}: {trace.header.scenario_id} stopped in turn {turn} after "
                f"{len(trace.events)} events (people: {people})"
            )
    return found


class ServedEpisode:
    """One episode whose humans are played by people, each on their own page.

    Args:
        scenario: the task.
        people: who plays which human (in the task's order of humans).
        setting: the participation setting.
        backends: the agent, the judge, endpoints, and (``user``) the backend of the
            humans nobody plays.
        seed: the episode seed.
        out: the folder of the trace.
        pace: seconds before each turn, so people can step in between turns.
        wait: seconds a request waits for its person before it is left unanswered.
        start: ``joined`` (when every person has opened their page) or ``now``.
        client: the model client for model backends (None: made when needed).
    """

    def __init__(
        self,
        scenario: Scenario,
        people: Sequence[Person],
        setting: Setting | None = None,
        backends: Backends | None = None,
        seed: int = 0,
        *,
        out: str | Path = "runs/serve",
        pace: float = 1.0,
        wait: float | None = 600.0,
        start: str = "joined",
        client: Any | None = None,
    ) -> None:
        if start not in ("joined", "now"):
            raise ValueError(f"start must be 'joined' or 'now', not {start!r}")
        order = [u.user_id for u in scenario.users]
        self.people = sorted(people, key=lambda p: order.index(p.user_id))
        self.title = scenario.task_id
        backends = backends or Backends()
        played = ",".join(p.user_id for p in self.people)
        served = backends.model_copy(
            update={"user": f"human:serve?play={played}&others={backends.user}"}
        )
        names = {p.user_id: p.name for p in self.people if p.name}
        self.desk = Desk(pace=pace, wait=wait, names=names)
        with self.desk.use():
            self.episode = Episode(scenario, setting, served, seed, client)
        self.wait = wait
        self.phase = "before"
        self.outcome: dict[str, Any] | None = None
        self.earlier = incomplete(out)
        self.path = next_path(out, scenario.task_id)
        self._journal = Journal(self.path)
        self._journal.write(jsonl_line(self.episode.trace.header))
        self.episode.trace.subscribe(self._recorded)
        self._start = asyncio.Event()
        if start == "now":
            self._start.set()
        self._server: Server | None = None
        self._graph: bytes | None = None

    # -- the application's side of the server ----------------------------------------------

    def seats(self) -> list[Seat]:
        """A seat per person (the task's order of humans), then the researcher's."""
        seats = [Seat(p.user_id, self._label(p), "episode_person") for p in self.people]
        return [*seats, Seat(RESEARCHER, "researcher", "episode_watch", "watch", False)]

    def bind(self, server: Server) -> None:
        """Keep the server: its room hears of every change."""
        self._server = server
        self.desk.subscribe(server.room.changed)

    def joined(self, seat: Seat) -> None:
        """A page opened for the first time: start once every person is in."""
        room = self._room
        if all(room.joined(p.user_id) for p in self.people):
            self._start.set()

    def state(self, seat: Seat) -> dict[str, Any]:
        """What a person's page or the researcher's page shows now."""
        if seat.id == RESEARCHER:
            return self._watch_state()
        return self._person_state(self._person(seat.id))

    def act(self, seat: Seat, action: dict[str, Any]) -> None:
        """A person answers a request or speaks up; the researcher starts or renews a link.

        Raises:
            ValueError: an action the page may not take now, or one that does not fit.
        """
        what = action.get("do")
        if seat.id == RESEARCHER:
            if what == "start":
                self._start.set()
            elif what == "new_link" and action.get("seat") in {p.user_id for p in self.people}:
                self._server_of().reissue(action["seat"])
            else:
                raise ValueError(f"unknown action {what!r}")
        elif what == "answer":
            self._answer(seat.id, action)
        elif what == "own":
            self._own(seat.id, action)
        else:
            raise ValueError(f"unknown action {what!r}")
        self._room.changed()

    def asset(self, seat: Seat, name: str) -> tuple[str, bytes] | None:
        """The researcher's drawing of the graph (``graph.svg``)."""
        if seat.id != RESEARCHER or name != "graph.svg":
            return None
        if self._graph is None:
            self._graph = _graph_svg(self.episode)
        return "image/svg+xml", self._graph

    # -- running ---------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        """Wait for the start, run the episode to its end, evaluate it; return the outcome."""
        await self._start.wait()
        self.phase = "running"
        self._room.changed()
        try:
            trace = await self.episode.run()
        finally:
            if self.episode.trace.termination is not None:
                self._journal.write(jsonl_line(self.episode.trace.termination))
            self._journal.close()
        self.outcome = await self._evaluate(trace)
        self.phase = "ended"
        self._room.changed()
        return self.outcome

    async def _evaluate(self, trace: Trace) -> dict[str, Any]:
        termination = trace.termination
        found: dict[str, Any] = {
            "termination": termination.reason if termination else None,
            "detail": termination.detail if termination else None,
            "turns": termination.step if termination else self.episode.step_no,
            "human_steps": len(human_steps(trace)),
            "person_steps": {
                p.user_id: sum(e.actor == p.user_id for e in person_steps(trace))
                for p in self.people
            },
            "trace": str(self.path),
        }
        if trace.of_type("model_error"):
            found["error"] = trace.of_type("model_error")[-1].payload.message
            return found
        backends = self.episode.backends
        judge = make_judge(backends.judge, self.episode.client, backends.endpoint("judge"))
        try:
            outcome = await evaluate(self.episode.scenario, trace, judge)
        except Exception as exc:  # noqa: BLE001 - shown to the researcher, never a score
            found["error"] = f"evaluation failed: {type(exc).__name__}: {exc}"
            return found
        found.update(success=outcome.success, task_score=outcome.task_score)
        return found

    def _recorded(self, event: Event) -> None:
        self._journal.write(jsonl_line(event))
        if self._server is not None:
            self._room.changed()

    # -- what people do --------------------------------------------------------------------

    def _answer(self, user_id: str, action: dict[str, Any]) -> None:
        number = action.get("number")
        ask = next((a for a in self.desk.waiting_for(user_id) if a.number == number), None)
        if ask is None:
            raise ValueError("this request is no longer waiting (answered, or its time ran out)")
        choice = action.get("choice")
        text = str(action.get("text") or "").strip()
        if choice == "send":
            rating = action.get("rating")
            answer = Answer(text=text, rating=int(rating) if rating else None)
        elif choice == "decline":
            answer = Answer(text=text, declined=True)
        else:
            arguments = action.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise ValueError("the action's values must be an object")
            answer = Answer(
                text=text, decision=choice, arguments=arguments, tool=action.get("tool") or None
            )
        self.desk.answer(ask, answer)

    def _own(self, user_id: str, action: dict[str, Any]) -> None:
        if self.phase != "running":
            raise ValueError(
                "the episode has not started yet" if self.phase == "before" else "it has ended"
            )
        self.desk.offer(user_id, str(action.get("kind")), str(action.get("text") or ""))

    # -- pages -----------------------------------------------------------------------------

    def _person_state(self, person: Person) -> dict[str, Any]:
        """A person's page: only what their human's node may see."""
        user_id = person.user_id
        waiting = [asdict(card(ask)) for ask in self.desk.waiting_for(user_id)]
        ended = self.phase == "ended" or self.episode.ended
        return {
            "page": "person",
            "task_id": self.title,
            "name": person.name,
            "you": asdict(knowledge(self.episode.human_view(user_id))),
            "phase": "ended" if ended else self.phase,
            "status": self._status(waiting, ended),
            "turn": self.episode.step_no,
            "requests": waiting,
            "conversation": [asdict(line) for line in conversation(self._events(), user_id)],
            "own": {
                "open": self.phase == "running" and not ended,
                "kinds": [{"value": k, "label": label} for k, (_, _, label) in OWN_INPUT.items()],
                "queued": [item.content for item in self.desk.queued(user_id)],
            },
            "wait": self.wait,
        }

    def _status(self, waiting: list[dict[str, Any]], ended: bool) -> str:
        if ended:
            termination = self.episode.trace.termination
            why = ENDINGS.get(termination.reason, termination.reason) if termination else ""
            return f"The episode has ended: {why}. Thank you!"
        if self.phase == "before":
            return "Not started yet: waiting for everyone to open their page. Read your part."
        if waiting:
            return "Your turn: answer the request below."
        return f"Running (turn {self.episode.step_no}): the agents are working."

    def _watch_state(self) -> dict[str, Any]:
        """The researcher's page: the whole episode, live."""
        episode, room = self.episode, self._room
        server = self._server_of()
        people = [
            {
                "user_id": p.user_id,
                "role": episode.scenario.user(p.user_id).role,
                "name": p.name,
                "joined": room.joined(p.user_id),
                "connected": room.connected(p.user_id),
                "waiting": [card(a).heading for a in self.desk.waiting_for(p.user_id)],
                "unanswered": sum(a.user_id == p.user_id for a in self.desk.expired),
                "link": server.link(p.user_id),
            }
            for p in self.people
        ]
        played = {p.user_id for p in self.people}
        return {
            "page": "watch",
            "task_id": self.title,
            "setting": episode.setting.label(),
            "backends": episode.backends.models(),
            "seed": episode.setup.seed,
            "trace": str(self.path),
            "phase": "ended" if self.phase == "ended" else self.phase,
            "turn": episode.step_no,
            "people": people,
            "simulated": [u.user_id for u in episode.scenario.users if u.user_id not in played],
            "events": [_event_row(e) for e in self._events()],
            "outcome": self.outcome,
            "earlier": self.earlier,
        }

    # -- helpers ---------------------------------------------------------------------------

    def _events(self) -> list[Event]:
        return self.episode.trace.events

    def _person(self, user_id: str) -> Person:
        return next(p for p in self.people if p.user_id == user_id)

    def _label(self, person: Person) -> str:
        role = self.episode.scenario.user(person.user_id).role
        return (
            person.user_id
            + (f" ({role})" if role else "")
            + (f", {person.name}" if person.name else "")
        )

    def _server_of(self) -> Server:
        if self._server is None:
            raise RuntimeError("the episode is not served yet")
        return self._server

    @property
    def _room(self) -> Room:
        return self._server_of().room


def _event_row(e: Event) -> dict[str, Any]:
    """One trace event for the researcher's live list."""
    return {
        "seq": e.seq,
        "turn": e.step,
        "actor": e.actor,
        "target": e.target,
        "type": e.type,
        "channel": e.channel,
        "text": event_text(e),
        "detail": e.payload.model_dump(mode="json"),
    }


def event_text(e: Event) -> str:
    """What an event says, in one line."""
    p = e.payload
    if e.type == "message":
        return p.text
    if e.type == "tool_call":
        flag = " (unauthorized)" if p.unauthorized else ""
        return f"{p.name} {_short(p.arguments)}{flag}"
    if e.type == "tool_result":
        return ("error: " if p.error else "") + str(p.output)[:300]
    if e.type == "channel_request":
        action = f" [{p.action.name} {_short(p.action.arguments)}]" if p.action else ""
        return f"{p.form} {p.request_id}: {p.content}{action}"
    if e.type == "channel_status":
        return f"{p.request_id} {p.status}" + (f": {p.reason}" if p.reason else "")
    if e.type == "channel_response":
        head = p.decision or ("declined" if p.refused else "answer")
        return f"{head} {p.request_id}: {p.content}"
    if e.type == "model_call":
        return f"{p.model}" + (" (cached)" if p.cached else "")
    if e.type in ("error", "model_error"):
        return f"{getattr(p, 'error_type', None) or p.kind}: {p.message}"
    if e.type == "goal_revision":
        return p.goal
    if e.type == "finish":
        return p.deliverable
    return ""


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 200 else text[:199] + "…"


def _graph_svg(episode: Episode) -> bytes:
    """The task's HAS Graph as drawn for figures, in SVG."""
    import matplotlib
    from matplotlib.figure import Figure

    from hasbench.graph_drawing import draw, figure_size

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": episode.scenario.task_id}):
        figure = Figure(figsize=figure_size(episode.graph))
        draw(episode.graph, figure.add_subplot(), episode.setting.enabled_channels())
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", bbox_inches="tight")
    return buffer.getvalue().encode()
