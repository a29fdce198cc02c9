"""The DocuTeam session log: a header and append-only typed events, as JSON Lines.

The first line is ``{"kind": "header", ...}`` (condition, configuration, backends,
prompt hashes, the starting document and agents); every further line is one event
``{"kind": "event", "seq", "t", "type", "actor", "discussion", "payload", "usage"}``.
``t`` is the session clock in seconds (a manual clock makes the file reproducible).

Event types and their payloads:

- ``edit``: an :class:`~hasbench.docuteam.document.EditOp` (typed by the user or made by
  applying a message, ``source``).
- ``trigger``: one proactive decision on a batch of edits: ``outcome`` (``trivial``,
  ``below_threshold``, ``opened``, ``failed``, ``no_change``), the edit ids, goal,
  interpretation, selected agents with reasons, each agent's raw and damped scores and
  reaction, nearby open discussions, per-mode means, threshold, chosen mode, discussion.
- ``discussion_opened``: id, mode, scope (block ids, null for the whole document),
  participants, initiator (``user`` / ``agents``), origin (``document`` / ``side_panel``),
  comment.
- ``focus``: the discussion's focus (again when a user message reopens it).
- ``moderator``: the decision with its direction, question and options, dialog state.
- ``message``: a discussion message (agent utterance with its act, the moderator's
  question, the user's answer or post).
- ``clarification``: ``asked`` (question, options) or ``answered`` (answer, option).
- ``steering``: the user acting on a discussion: ``post``, ``add_participant``,
  ``remove_participant``, ``set_focus``, ``set_mode``, ``stop``.
- ``status``: a discussion's new status and why.
- ``memory``: one agent's memory change (``cause``: discussion or user_message) with the
  entries added, updated and deleted.
- ``summary`` / ``bubble``: the mode's structured summary / the one-line summary.
- ``application``: a message applied to the document: message id, target block,
  placement, snippet, the written text, whether it was adapted, the edit id.
- ``agent``: the user added an agent (``added``) or rewrote its profile (``edited``):
  the profile afterwards (and ``before``, for an edit).
- ``model_call``: step, role, model, attempt, cached, cost; ``usage`` holds tokens.
- ``error``: a step whose output could not be used (``invalid_output``, after one retry)
  or whose model failed (``model_failure``, with the failure's ``kind``); the step was
  skipped.
- ``session_failed``: the session failed for an infrastructure reason (role, model,
  step, kind, message, whether it was permanent, what to fix); no model step ran after
  it and the log gives no measures (:mod:`hasbench.docuteam.failures`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hasbench.trace import Usage
from hasbench.vocab import canonical_json

LOG_SCHEMA_VERSION = 1
LogEventType = Literal[
    "edit",
    "trigger",
    "discussion_opened",
    "focus",
    "moderator",
    "message",
    "clarification",
    "steering",
    "status",
    "memory",
    "summary",
    "bubble",
    "application",
    "agent",
    "model_call",
    "error",
    "session_failed",
]


class LogError(ValueError):
    """A session log that cannot be read; the message names the file and line."""


class LogHeader(BaseModel):
    """What a session started from."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["header"] = "header"
    schema_version: int = LOG_SCHEMA_VERSION
    condition: Literal["DocuTeam", "Baseline"]
    participant: str = ""
    task_name: str = ""
    order: int = 0
    task: str = ""
    config: dict[str, Any]
    backends: dict[str, str]
    package_version: str
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    document: dict[str, Any]
    """The starting document (``Document.to_json`` as an object)."""
    agents: list[dict[str, Any]]
    """Profiles with their starting memory entries."""


class LogEvent(BaseModel):
    """One thing that happened in a session."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["event"] = "event"
    seq: int
    t: float
    type: LogEventType
    actor: str
    discussion: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None


def _line(model: BaseModel) -> str:
    return canonical_json(model.model_dump(mode="json"), ascii_only=False)


class SessionLog:
    """The events of one session, kept in memory and (optionally) appended to a file.

    Observers see every event as it is appended: :meth:`subscribe` calls a function,
    :meth:`stream` is an async iterator for code running on the event loop.

    Args:
        header: The session header.
        path: A JSONL file written as events happen (created or replaced).
    """

    def __init__(self, header: LogHeader, path: str | Path | None = None) -> None:
        self.header = header
        self.events: list[LogEvent] = []
        self.path = Path(path) if path is not None else None
        self.source = self.path
        """The file the log was written to or read from (None: in memory only)."""
        self._observers: list[Callable[[LogEvent], None]] = []
        self._queues: list[asyncio.Queue[LogEvent]] = []
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(_line(header) + "\n", encoding="utf-8")

    def append(
        self,
        type: LogEventType,
        actor: str,
        payload: dict[str, Any],
        t: float,
        discussion: str | None = None,
        usage: Usage | None = None,
    ) -> LogEvent:
        """Record an event, write it to the file and tell observers."""
        event = LogEvent(
            seq=len(self.events) + 1,
            t=round(t, 6),
            type=type,
            actor=actor,
            discussion=discussion,
            payload=json.loads(json.dumps(payload, default=_jsonable)),
            usage=usage,
        )
        self.events.append(event)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(_line(event) + "\n")
        for observer in list(self._observers):
            observer(event)
        for queue in self._queues:
            queue.put_nowait(event)
        return event

    def subscribe(self, observer: Callable[[LogEvent], None]) -> Callable[[], None]:
        """Call ``observer(event)`` for every new event; returns a function to unsubscribe."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer)

    async def stream(self) -> AsyncIterator[LogEvent]:
        """Yield events as they are appended (from now on), until the consumer stops."""
        queue: asyncio.Queue[LogEvent] = asyncio.Queue()
        self._queues.append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._queues.remove(queue)

    @property
    def failure(self) -> dict[str, Any] | None:
        """Why the session failed (its ``session_failed`` payload), or None."""
        failed = self.of_type("session_failed")
        return failed[0].payload if failed else None

    def of_type(self, *types: LogEventType) -> list[LogEvent]:
        """Events of the given types, in order."""
        return [event for event in self.events if event.type in types]

    def write(self, path: str | Path) -> Path:
        """Write the whole log as JSONL."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [_line(self.header), *(_line(event) for event in self.events)]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: str | Path) -> SessionLog:
        """Read a JSONL session log.

        Raises:
            LogError: unreadable file, a bad line, or events out of order (file and line).
        """
        path = Path(path)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise LogError(f"{path}: cannot read the session log ({exc.strerror})") from None
        if not lines:
            raise LogError(f"{path}: empty file, expected a header line")
        log: SessionLog | None = None
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                data = json.loads(text)
                if log is None:
                    log = cls(LogHeader.model_validate(data))
                    continue
                event = LogEvent.model_validate(data)
            except (json.JSONDecodeError, ValidationError) as exc:
                what = "header" if log is None else "event"
                raise LogError(
                    f"{path}: line {number}: not a valid {what} ({_first(exc)})"
                ) from None
            if event.seq != len(log.events) + 1:
                raise LogError(f"{path}: line {number}: seq {event.seq} out of order")
            log.events.append(event)
        assert log is not None
        log.source = path
        return log

    def to_dataframe(self) -> pd.DataFrame:
        """One row per event: seq, t, type, actor, discussion, tokens and the payload."""
        rows = []
        for event in self.events:
            row = event.model_dump(exclude={"kind", "usage"})
            row["prompt_tokens"] = event.usage.prompt_tokens if event.usage else 0
            row["completion_tokens"] = event.usage.completion_tokens if event.usage else 0
            rows.append(row)
        columns = ["seq", "t", "type", "actor", "discussion", "payload"]
        return pd.DataFrame(rows, columns=[*columns, "prompt_tokens", "completion_tokens"])


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot log a {type(value).__name__}")
