"""The judge log: a trace as the JSON lines judges read, and reading them back.

Judges, the rule initiative coder and a judged metric's evidence read episodes in one
format: one JSON object per event (model calls left out), with ``seq``, ``step``,
``actor``, ``actor_kind`` (agent or human, from the trace header), ``type``, the event's
``target``, ``channel`` and ``initiator`` when set, and the payload fields a judge needs
(a message's ``text`` and ``in_reply_to``, a tool call's name, arguments, risk and
authorization, a control request's action ``risk``, ...). :func:`transcript` writes a whole
episode, :func:`excerpt` the events around one judged event, marked ``"focus": true``;
:func:`parse_log` reads either back.

While a trace is :func:`~hasbench.memo.unchanged` (the runner scoring a finished episode),
its lines are rendered once (:func:`judge_log`) for all who read them: its excerpts, its
transcript and the initiative coding.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from hasbench.memo import derived

if TYPE_CHECKING:
    from hasbench.trace import Event, Trace

EXCERPT_WINDOW = 8
"""Events shown on each side of the focal event."""
_WORD_ANY = re.compile(r"[a-z0-9]+")


class JudgeLog:
    """A trace's judge log: one record and one JSON line per event (model calls left out).

    Attributes:
        lines: the JSON lines.
    """

    def __init__(self, trace: Trace) -> None:
        events = [e for e in trace.events if e.type != "model_call"]
        self._records = [_record(trace, e) for e in events]
        self.lines = [_dump(record) for record in self._records]
        self._index = {e.seq: i for i, e in enumerate(events)}
        self._parsed: list[dict[str, Any]] | None = None

    def transcript(self) -> str:
        """The whole log as text."""
        return "\n".join(self.lines)

    def excerpt(self, seq: int, window: int = EXCERPT_WINDOW) -> str:
        """The lines around event ``seq``, that event's marked ``"focus": true``."""
        index = self._index[seq]
        focus = _dump({**self._records[index], "focus": True})
        lo, hi = max(0, index - window), min(len(self.lines), index + window + 1)
        return "\n".join(focus if i == index else self.lines[i] for i in range(lo, hi))

    def parsed(self) -> list[dict[str, Any]]:
        """The lines read back as JSON objects, as a judge reads them (shared: do not change)."""
        if self._parsed is None:
            self._parsed = [json.loads(line) for line in self.lines]
        return self._parsed


def judge_log(trace: Trace) -> JudgeLog:
    """The trace's judge log (rendered once while the trace is :func:`~hasbench.memo.unchanged`)."""
    return derived(trace, "judge_log", JudgeLog)


def transcript(trace: Trace) -> str:
    """The whole episode as judge-readable JSON lines (model calls left out)."""
    return judge_log(trace).transcript()


def excerpt(trace: Trace, seq: int, window: int = EXCERPT_WINDOW) -> str:
    """The events around event ``seq`` as JSON lines, that event marked ``"focus": true``."""
    return judge_log(trace).excerpt(seq, window)


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)


def _record(trace: Trace, event: Event) -> dict[str, Any]:
    """The judge log's record of one event (before JSON)."""
    kinds = trace.header.participants
    record: dict[str, Any] = {
        "seq": event.seq,
        "step": event.step,
        "actor": event.actor,
        "actor_kind": kinds.get(event.actor),
        "type": event.type,
    }
    for key in ("target", "channel", "initiator"):
        if getattr(event, key) is not None:
            record[key] = getattr(event, key)
    p = event.payload
    if event.type == "message":
        record["text"] = p.text
        record["in_reply_to"] = _replied_to(trace, event)
    elif event.type == "tool_call":
        record.update(
            call_id=p.call_id,
            name=p.name,
            arguments=p.arguments,
            risk=p.risk,
            authorization=p.authorization,
        )
    elif event.type == "tool_result":
        record.update(call_id=p.call_id, name=p.name, error=p.error, output=str(p.output)[:400])
    elif event.type in ("channel_request", "channel_response"):
        record["text"] = p.content
        keep = {
            "request_id", "form", "action", "topics", "decision", "arguments", "info", "refused",
            "rating", "labels", "edits",
        }  # fmt: skip
        shown = p.model_dump(mode="json", include=keep & set(type(p).model_fields))
        record.update({k: v for k, v in shown.items() if v is not None})
        if event.channel == "control" and event.type == "channel_request":
            record["risk"] = _action_risk(trace, p.action.name if p.action else None)
    elif event.type == "channel_status":
        record.update(request_id=p.request_id, status=p.status)
    elif event.type == "goal_revision":
        record["text"] = p.goal
    elif event.type == "finish":
        record["text"] = p.deliverable
    elif event.type == "error":
        record.update(error_type=p.error_type, text=p.message)
    return record


def _replied_to(trace: Trace, message: Event) -> str | None:
    """The target, if it addressed the sender after the sender last wrote to it."""
    for e in reversed(trace.events[: message.seq]):
        if e.type not in ("message", "channel_request"):
            continue
        if e.actor == message.actor and e.target == message.target:
            return None
        if e.actor == message.target and e.target == message.actor:
            return message.target
    return None


def _action_risk(trace: Trace, name: str | None) -> str | None:
    """The declared risk of a tool: from its calls in the trace, else the domain's spec."""
    for e in trace.of_type("tool_call"):
        if e.payload.name == name:
            return e.payload.risk
    from hasbench.registry import all_domains

    domains = {domain.name: domain for domain in all_domains()}
    if name is None or trace.header.domain not in domains:
        return None
    spec = domains[trace.header.domain].environment._specs.get(name)
    return spec.risk if spec else None


def parse_log(text: str) -> list[dict[str, Any]] | None:
    """The JSON objects of a log, or None when it is not in the judge log format.

    The objects are shared with other calls given the same line (an excerpt's lines recur in
    the excerpts around it): do not change them.
    """
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = _parsed_line(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(record, dict) or "type" not in record:
            return None
        records.append(record)
    return records or None


@lru_cache(maxsize=4096)
def _parsed_line(line: str) -> Any:
    return json.loads(line)


def is_about(topic: str, key: str) -> bool:
    """Whether a question topic names a fact key (the words of one include the other's)."""
    words, key_words = set(_WORD_ANY.findall(topic.lower())), set(_WORD_ANY.findall(key.lower()))
    return bool(words) and (words <= key_words or key_words <= words)
