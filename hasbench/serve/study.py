"""The DocuTeam study served to real people (``hasbench serve study STUDY.yaml``).

:class:`ServedStudy` is an application of :mod:`hasbench.serve.server`, beside the served
episode. Its seats:

- each participant (``/join/TOKEN``): consent, then their two sessions in their assigned
  order (:class:`~hasbench.docuteam.study.design.StudyPlan`), each introduced by its task and
  what the condition offers, run with the DocuTeam UI (the page and
  :class:`~hasbench.docuteam.widget.controller.SessionController` of the notebook widget)
  for the study's time, each followed by the post-survey and NASA-TLX
  (:mod:`hasbench.docuteam.study.questionnaire`); then a thank-you;
- each rater (``/join/TOKEN``): the final plans of the finished sessions, blind (no
  participant, no condition) and in an order of their own, each to score on Novelty,
  Workability, Relevance and Specificity;
- the researcher (``/watch/TOKEN``): every participant's progress (where they are, their
  sessions, time left, what failed), the raters' progress, the links.

Everything lands in the study folder as it happens (:mod:`hasbench.docuteam.study.folder`):
the session logs event by event, a line per step, questionnaire and rating. A reload
comes back where the person was; a restart of the server keeps every link and picks each
participant up where the records leave them (a session cut by the stop ends as
``interrupted``, with its log as far as it got). ``hasbench study analyze DIR`` reads the
folder as it is.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hasbench.docuteam.log import SessionLog
from hasbench.docuteam.measures import final_document
from hasbench.docuteam.session import Session, SessionConfig
from hasbench.docuteam.study import folder as files
from hasbench.docuteam.study.design import SessionPlan, StudyDesignError, StudyPlan
from hasbench.docuteam.study.questionnaire import (
    ANCHORS,
    ITEMS,
    RATING_DIMENSIONS,
    RATING_SCALE,
)
from hasbench.docuteam.timing import SystemClock
from hasbench.docuteam.widget.controller import SessionController
from hasbench.docuteam.widget.front import STATIC as UI_STATIC
from hasbench.serve.journal import Journal
from hasbench.serve.server import Server
from hasbench.serve.tokens import Seat

RESEARCHER = "researcher"
CONDITION_INTRO = {
    "DocuTeam": (
        "The agents follow your document. When you change a part, they read the change "
        "and may start a discussion beside it. You can also tick blocks and start a "
        "discussion on them, answer the agents' questions, steer a discussion, and apply "
        "what they say into the plan."
    ),
    "Baseline": (
        "The agents talk with you in the panel on the right, about the whole plan, when "
        "you start a discussion. Answer their questions, steer the chat, and apply what "
        "they say into the plan."
    ),
}
"""What each condition offers, as the participant reads it before the session."""
UI_ASSETS = {"docuteam.js": "text/javascript", "docuteam.css": "text/css"}


@dataclass
class Participant:
    """One participant: their plan and what their records say they have done."""

    name: str
    plans: list[SessionPlan]
    consented: bool = False
    started: dict[int, dict[str, Any]] = field(default_factory=dict)
    ended: dict[int, str] = field(default_factory=dict)
    answered: set[int] = field(default_factory=set)
    live: SessionController | None = None
    deadline: float | None = None

    def phase(self) -> tuple[str, int]:
        """Where they are (consent, brief, session, survey or done) and in which session."""
        if not self.consented:
            return "consent", 0
        for plan in self.plans:
            k = plan.order
            if k not in self.started:
                return "brief", k
            if k not in self.ended:
                return "session", k
            if self.ended[k] != "failed" and k not in self.answered:
                return "survey", k
        return "done", 0


class ServedStudy:
    """The study served to its participants, raters and researcher (see the module).

    Args:
        study: The loaded design.
        out: The study folder.
        client: The model client when a role uses a model (None: made when needed).

    Raises:
        StudyDesignError: the folder holds another study's records.
    """

    def __init__(self, study: StudyPlan, out: str | Path, client: Any | None = None) -> None:
        self.study = study
        self.design = study.design
        self.title = self.design.title
        self.out = Path(out)
        self.backends = self.design.role_models()
        self.client = client
        (self.out / files.SESSIONS).mkdir(parents=True, exist_ok=True)
        self._check_folder()
        self.people = {p: Participant(p, plans) for p, plans in study.plans.items()}
        self.interrupted = self._restore()
        self._progress = Journal(self.out / files.PROGRESS)
        self._surveys = Journal(self.out / files.SURVEYS)
        self._ratings = Journal(self.out / files.RATINGS)
        for name, order in self.interrupted:
            self._end_record(name, order, "interrupted")
        self._server: Server | None = None
        self._plans: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}

    # -- the folder --------------------------------------------------------------------

    def _check_folder(self) -> None:
        copy = self.out / files.DESIGN
        text = self.study.path.read_text(encoding="utf-8")
        if copy.exists() and copy.read_text(encoding="utf-8") != text:
            raise StudyDesignError(
                f"{self.out}: this folder holds a study run with another design ({copy}); "
                "use a new --out folder, or the same design file"
            )
        copy.write_text(text, encoding="utf-8")
        links = self.out / files.LINKS
        if links.exists():
            self._saved = json.loads(links.read_text(encoding="utf-8"))
        else:
            self._saved = {"tokens": {}, "salt": secrets.token_hex(16)}

    def _restore(self) -> list[tuple[str, int]]:
        """Read who did what from the records; return the sessions the last stop cut."""
        for record in files.read_jsonl(self.out / files.PROGRESS):
            person = self.people.get(record.get("participant", ""))
            if person is None:
                continue
            if record["event"] == "consented":
                person.consented = True
            elif record["event"] == "session_started":
                person.started[record["order"]] = record
            elif record["event"] == "session_ended":
                person.ended[record["order"]] = record["how"]
        for record in files.read_jsonl(self.out / files.SURVEYS):
            if record["participant"] in self.people:
                self.people[record["participant"]].answered.add(record["order"])
        return [(p.name, k) for p in self.people.values() for k in p.started if k not in p.ended]

    def _record(self, event: str, person: str, **fields: Any) -> None:
        line = {"t": round(time.time(), 3), "event": event, "participant": person, **fields}
        self._progress.write(json.dumps(line, ensure_ascii=False, sort_keys=True))

    def _end_record(self, name: str, order: int, how: str) -> None:
        self.people[name].ended[order] = how
        self._record("session_ended", name, order=order, how=how)

    # -- the application's side of the server --------------------------------------------

    def seats(self) -> list[Seat]:
        """Participants, then raters, then the researcher."""
        seats = [Seat(p, f"{p} (participant)", "study_participant") for p in self.people]
        seats += [Seat(r, f"{r} (rater)", "study_rater") for r in self.design.raters]
        return [*seats, Seat(RESEARCHER, "researcher", "study_watch", "watch", False)]

    def bind(self, server: Server) -> None:
        """Keep the server; give every seat its saved link (new seats get new ones)."""
        self._server = server
        server.tokens.keep(self._saved["tokens"])
        self._saved["tokens"] = {s.id: server.tokens.token(s.id) for s in self.seats()}
        links = self.out / files.LINKS
        links.write_text(json.dumps(self._saved, indent=2), encoding="utf-8")
        os.chmod(links, 0o600)

    def joined(self, seat: Seat) -> None:
        """Nothing starts on joining: each person goes at their own pace."""

    def asset(self, seat: Seat, name: str) -> tuple[str, bytes] | None:
        """The DocuTeam UI's script and style sheet."""
        if name not in UI_ASSETS:
            return None
        return UI_ASSETS[name], (UI_STATIC / name).read_bytes()

    def state(self, seat: Seat) -> dict[str, Any]:
        """What a participant's, a rater's or the researcher's page shows now."""
        if seat.id == RESEARCHER:
            return self._watch_state()
        if seat.id in self.people:
            return self._participant_state(self.people[seat.id])
        return self._rater_state(seat.id)

    def act(self, seat: Seat, action: dict[str, Any]) -> None:
        """Apply an action of a page (raise ValueError to refuse it, with the reason)."""
        what = action.get("do")
        if seat.id == RESEARCHER:
            if what != "new_link" or action.get("seat") not in self._saved["tokens"]:
                raise ValueError(f"unknown action {what!r}")
            self._server_of().reissue(action["seat"])
            self.bind(self._server_of())
        elif seat.id in self.people:
            self._participant_act(self.people[seat.id], what, action)
        elif what == "rate":
            self._rate(seat.id, action)
        else:
            raise ValueError(f"unknown action {what!r}")
        self._changed()

    def _changed(self) -> None:
        if self._server is not None:
            self._server.room.changed()

    def _server_of(self) -> Server:
        if self._server is None:
            raise RuntimeError("the study is not served yet")
        return self._server

    # -- participants ------------------------------------------------------------------

    def _participant_act(self, person: Participant, what: Any, action: dict[str, Any]) -> None:
        phase, order = person.phase()
        if what == "consent" and phase == "consent":
            if action.get("agree") is not True:
                raise ValueError("tick the box to agree before you go on")
            person.consented = True
            self._record("consented", person.name)
        elif what == "start_session" and phase == "brief":
            self._start_session(person, order)
        elif what == "ui" and phase == "session" and person.live is not None:
            inner = action.get("action")
            if not isinstance(inner, dict):
                raise ValueError("bad message: expected an action")
            person.live.act(inner)
        elif what == "finish_session" and phase == "session":
            self._end_session(person, order, "finished")
        elif what == "survey" and phase == "survey":
            self._answer(person, order, action.get("answers"))
        else:
            raise ValueError("this step is over; the page shows where you are now")

    def _plan(self, person: Participant, order: int) -> SessionPlan:
        return next(p for p in person.plans if p.order == order)

    def _start_session(self, person: Participant, order: int) -> None:
        plan = self._plan(person, order)
        log = files.session_log(self.out, person.name, plan.condition)
        config = SessionConfig(
            condition=plan.condition,
            participant=person.name,
            task_name=plan.task,
            order=order,
            debounce=self.design.debounce,
        )
        session = Session.from_folder(
            self.study.task_folders[plan.task],
            config=config,
            backends=self.backends,
            client=self.client,
            clock=SystemClock(),
            log_path=log,
        )
        title = f"Session {order} of 2"
        person.live = SessionController(session, title=title)
        person.live.subscribe(lambda: self._live_changed(person, order))
        seconds = self.design.minutes_per_session * 60
        person.deadline = time.time() + seconds
        person.started[order] = {"order": order, "condition": plan.condition, "task": plan.task}
        self._record(
            "session_started", person.name, order=order, condition=plan.condition,
            task=plan.task, log=str(log.relative_to(self.out)), deadline=round(person.deadline),
        )  # fmt: skip
        loop = asyncio.get_running_loop()
        self._timers[person.name] = loop.call_later(
            seconds, self._end_session, person, order, "time_up"
        )

    def _live_changed(self, person: Participant, order: int) -> None:
        live = person.live
        if live is not None and live.session.failure is not None and order not in person.ended:
            self._end_session(person, order, "failed")
        self._changed()

    def _end_session(self, person: Participant, order: int, how: str) -> None:
        """End a running session: the agents stop, the log stays as it is, the page moves on."""
        if order in person.ended or person.live is None:
            return
        timer = self._timers.pop(person.name, None)
        if timer is not None:
            timer.cancel()
        live, person.live, person.deadline = person.live, None, None
        live.close()
        for d in live.session.discussions.values():
            d.stop_requested = True
        self._end_record(person.name, order, how)
        self._changed()

    def _answer(self, person: Participant, order: int, answers: Any) -> None:
        if not isinstance(answers, dict):
            raise ValueError("bad message: expected the answers")
        missing = [item for item in ITEMS if answers.get(item) not in range(1, 8)]
        if missing:
            raise ValueError(f"please answer every question ({len(missing)} left)")
        plan = self._plan(person, order)
        line = {
            "t": round(time.time(), 3),
            "participant": person.name,
            "condition": plan.condition,
            "task": plan.task,
            "order": order,
            "answers": {item: answers[item] for item in ITEMS},
        }
        self._surveys.write(json.dumps(line, sort_keys=True))
        person.answered.add(order)

    def _participant_state(self, person: Participant) -> dict[str, Any]:
        phase, order = person.phase()
        state: dict[str, Any] = {
            "page": "participant",
            "title": self.title,
            "name": person.name,
            "phase": phase,
            "order": order,
            "step": self._step(person),
            "minutes": self.design.minutes_per_session,
        }
        if phase == "consent":
            state["consent"] = self.design.consent
        elif phase == "brief":
            plan = self._plan(person, order)
            task = self.study.task_folders[plan.task] / "task.md"
            state["intro"] = CONDITION_INTRO[plan.condition]
            state["task"] = task.read_text(encoding="utf-8").strip() if task.exists() else ""
        elif phase == "session" and person.live is not None:
            state["ui"] = person.live.state()
            state["seconds_left"] = max(0, round((person.deadline or 0) - time.time()))
        elif phase == "survey":
            state["items"] = [
                {"id": item, "group": group, "text": text} for item, (group, text) in ITEMS.items()
            ]
            state["anchors"] = {group: list(pair) for group, pair in ANCHORS.items()}
        if phase in ("brief", "done") and any(how == "failed" for how in person.ended.values()):
            state["note"] = (
                "A session could not go on for a technical reason (not because of anything "
                "you did). The researcher can see what happened."
            )
        return state

    def _step(self, person: Participant) -> str:
        phase, order = person.phase()
        steps = ["consent", "brief1", "session1", "survey1", "brief2", "session2", "survey2"]
        key = phase if phase in ("consent", "done") else f"{phase}{order}"
        if key == "done":
            return "Finished"
        return f"Step {steps.index(key) + 1} of {len(steps)}"

    # -- raters ------------------------------------------------------------------------

    def _finished_plans(self) -> list[tuple[str, SessionPlan]]:
        return [
            (p.name, plan)
            for p in self.people.values()
            for plan in p.plans
            if p.ended.get(plan.order) in ("finished", "time_up", "interrupted")
        ]

    def _plan_id(self, person: str, condition: str) -> str:
        salted = f"{self._saved['salt']}:{person}:{condition}".encode()
        return hashlib.sha256(salted).hexdigest()[:10]

    def _blocks(self, person: str, plan: SessionPlan) -> list[dict[str, Any]]:
        key = (person, plan.order)
        if key not in self._plans:
            log = SessionLog.read(files.session_log(self.out, person, plan.condition))
            self._plans[key] = [
                {k: b[k] for k in ("type", "level", "text", "checked")}
                for b in (block.model_dump() for block in final_document(log).blocks)
            ]
        return self._plans[key]

    def _given(self, rater: str) -> dict[str, dict[str, int]]:
        return {
            r["plan"]: r["scores"]
            for r in files.read_jsonl(self.out / files.RATINGS)
            if r["rater"] == rater
        }

    def _rater_state(self, rater: str) -> dict[str, Any]:
        given = self._given(rater)
        plans = []
        for person, plan in self._finished_plans():
            plan_id = self._plan_id(person, plan.condition)
            task = self.study.task_folders[plan.task] / "task.md"
            plans.append(
                {
                    "id": plan_id,
                    "task": task.read_text(encoding="utf-8").strip() if task.exists() else "",
                    "blocks": self._blocks(person, plan),
                    "scores": given.get(plan_id),
                }
            )
        plans.sort(key=lambda p: hashlib.sha256(f"{rater}:{p['id']}".encode()).hexdigest())
        return {
            "page": "rater",
            "title": self.title,
            "name": rater,
            "plans": plans,
            "expected": 2 * len(self.people),
            "dimensions": [{"id": d, "question": q} for d, q in RATING_DIMENSIONS.items()],
            "scale": list(RATING_SCALE),
        }

    def _rate(self, rater: str, action: dict[str, Any]) -> None:
        plan_id = action.get("plan")
        found = [
            (person, plan)
            for person, plan in self._finished_plans()
            if self._plan_id(person, plan.condition) == plan_id
        ]
        if not found:
            raise ValueError("this plan is not open for rating")
        scores = action.get("scores")
        low, high = RATING_SCALE
        if not isinstance(scores, dict) or any(
            scores.get(d) not in range(low, high + 1) for d in RATING_DIMENSIONS
        ):
            raise ValueError(f"give every dimension a score from {low} to {high}")
        ((person, plan),) = found
        line = {
            "t": round(time.time(), 3),
            "rater": rater,
            "plan": plan_id,
            "participant": person,
            "condition": plan.condition,
            "task": plan.task,
            "order": plan.order,
            "scores": {d: scores[d] for d in RATING_DIMENSIONS},
        }
        self._ratings.write(json.dumps(line, sort_keys=True))

    # -- the researcher ----------------------------------------------------------------

    def _watch_state(self) -> dict[str, Any]:
        server, room = self._server_of(), self._server_of().room
        people = []
        for p in self.people.values():
            phase, order = p.phase()
            sessions = []
            for plan in p.plans:
                live = p.live if phase == "session" and order == plan.order else None
                status = p.ended.get(plan.order) or (
                    "running" if live else ("not started" if plan.order not in p.started else "")
                )
                sessions.append(
                    {
                        "order": plan.order,
                        "condition": plan.condition,
                        "task": plan.task,
                        "status": status,
                        "survey": plan.order in p.answered,
                        "seconds_left": (
                            max(0, round((p.deadline or 0) - time.time())) if live else None
                        ),
                        "discussions": len(live.session.discussions) if live else None,
                    }
                )
            people.append(
                {
                    "name": p.name,
                    "phase": self._step(p),
                    "joined": room.joined(p.name),
                    "connected": room.connected(p.name),
                    "sessions": sessions,
                    "link": server.link(p.name),
                }
            )
        ready = len(self._finished_plans())
        raters = [
            {
                "name": r,
                "rated": len(self._given(r)),
                "ready": ready,
                "connected": room.connected(r),
                "link": server.link(r),
            }
            for r in self.design.raters
        ]
        failed = [
            {"participant": p.name, "order": k, "how": how}
            for p in self.people.values()
            for k, how in sorted(p.ended.items())
            if how in ("failed", "interrupted")
        ]
        return {
            "page": "watch",
            "title": self.title,
            "folder": str(self.out),
            "minutes": self.design.minutes_per_session,
            "backends": self.backends.model_dump(),
            "people": people,
            "raters": raters,
            "apart": failed,
        }
