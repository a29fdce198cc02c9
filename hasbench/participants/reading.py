"""Reading the texts an agent is given, for the offline stand-ins.

A stand-in reads exactly what a model in its seat reads (:class:`~hasbench.participants.
agents.Conversation`): tool results, people's answers as
:func:`hasbench.channels.answer_text` writes them, and input lines ``[<kind> from
<sender>] <text>``. This module turns those texts back into parts without language
understanding: who answered and with what words, a decision, the structured lines of an
answer (``Edits: {...}``, ``Arguments: {...}``, ``Result: ...``), and the facts a person
states in the two plain forms ``My <label> is <value>.`` and ``<label>: <value>`` (one per
line). Anything said otherwise is left to the domain's playbook, or not understood.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, get_args

from hasbench.vocab import AUTHORIZING_DECISIONS, Decision

ERROR_PREFIXES = ("Error:", "Stopped:")
"""How a failed call's result begins."""
STRUCTURED = ("Tool", "Arguments", "Rating", "Labels", "Edits", "Demonstration")
"""The lines that may follow an answer's words (see :func:`hasbench.channels.answer_text`)."""
_HEAD = re.compile(r"^([\w.-]+) \(([\w-]+)[^)]*\): ?(.*)$", re.DOTALL)
_INPUT = re.compile(r"^\[(\w+) from ([\w.-]+)\] (.*)$", re.DOTALL)
_PART = re.compile(rf"^({'|'.join(STRUCTURED)}): (.*)$")
_DECISION = re.compile(r"^([a-z_]+)\.(?:\s|$)")
_DECISIONS = frozenset(get_args(Decision))
_STATED = re.compile(r"\b[Mm]y ([a-z][a-z ]{0,30}?) is (.+?)\.(?=\s|$)")
_TERSE = re.compile(r"^([a-z][a-z ]{0,30}): (.+?)\.?$", re.MULTILINE)


@dataclass(frozen=True)
class Answer:
    """A person's answer to the agent's request, as the agent read it.

    Attributes:
        who: the person who answered.
        words: what they said (for a decision, after the decision).
        decision: the decision on an action, if it was one.
        parts: the structured lines by name (``Edits``, ``Arguments``, ...), as text.
        result: what the action's run returned (``Result:``), if it ran.
        carried_out: False when the text says the decision was not carried out.
    """

    who: str
    words: str
    decision: str | None = None
    parts: dict[str, str] = field(default_factory=dict)
    result: str | None = None
    carried_out: bool = True

    def part(self, name: str) -> Any:
        """A structured line's value read as JSON (None when absent or unreadable)."""
        raw = self.parts.get(name)
        return None if raw is None else parsed_output(raw)

    @property
    def authorized(self) -> bool:
        """Whether the decision let the action run and it ran without an error."""
        return (
            self.decision in AUTHORIZING_DECISIONS
            and self.carried_out
            and self.result is not None
            and not failed(self.result)
        )


def read_answer(text: str) -> Answer | None:
    """A person's answer in a result text.

    None when the text is no answer (an error, a refused or expired request, the end).
    """
    head = _HEAD.match(text)
    if head is None:
        return None
    who, _, body = head.groups()
    result = None
    if "\nResult: " in body:
        body, result = body.split("\nResult: ", 1)
    carried_out = not body.endswith(" (not carried out)")
    body = body.removesuffix(" (not carried out)")
    lines = body.split("\n")
    parts: dict[str, str] = {}
    while len(lines) > 1 and (part := _PART.match(lines[-1])):
        parts[part.group(1)] = part.group(2)
        lines.pop()
    words = "\n".join(lines)
    decision = None
    if (found := _DECISION.match(words)) and found.group(1) in _DECISIONS:
        decision, words = found.group(1), words[found.end() :].strip()
    return Answer(who, words, decision, parts, result, carried_out)


@dataclass(frozen=True)
class Input:
    """A line of new input: a message, a report, a person's own input or a memory note.

    Attributes:
        kind: ``message``, ``report``, a channel name, or ``memory``.
        sender: who it comes from (for a memory note, who the note quotes, if anyone).
        text: the text.
        decision: a person's unasked decision (``deny``, ``stop``, ...), if it is one.
    """

    kind: str
    sender: str | None
    text: str
    decision: str | None = None


def read_input(line: str) -> Input:
    """An input line of the conversation (``[<kind> from <sender>] ...``, ``[memory] ...``)."""
    if line.startswith("[memory] "):
        note = line.removeprefix("[memory] ")
        head = _HEAD.match(note)
        return Input("memory", head.group(1) if head else None, head.group(3) if head else note)
    found = _INPUT.match(line)
    if found is None:
        return Input("message", None, line)
    kind, sender, text = found.groups()
    decision = None
    if kind == "control" and (d := _DECISION.match(text)) and d.group(1) in _DECISIONS:
        decision = d.group(1)
    return Input(kind, sender, text, decision)


def stated_facts(text: str) -> dict[str, Any]:
    """The facts a text states as ``My <label> is <value>.`` or ``<label>: <value>``.

    Keys are the labels with underscores (``zip code`` → ``zip_code``); values are text,
    or data when written as a JSON object or list.
    """
    facts: dict[str, Any] = {}
    for label, value in [*_TERSE.findall(text), *_STATED.findall(text)]:
        facts[label.strip().replace(" ", "_")] = _value(value)
    return facts


def failed(text: str) -> bool:
    """Whether a tool's result text says the call failed."""
    return text.startswith(ERROR_PREFIXES)


def parsed_output(text: Any) -> Any:
    """JSON text as data; anything else as it is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text


def _value(raw: str) -> Any:
    raw = raw.strip()
    if raw[:1] in "[{":
        return parsed_output(raw)
    return raw
