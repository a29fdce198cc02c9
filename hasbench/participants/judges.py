"""Judges: the deterministic rule judge and the LLM rubric judge.

A judge answers two kinds of question and always returns :class:`JudgeResult` objects:

- ``nl_assertions(transcript, assertions)``: does each natural-language assertion about the
  agent's behaviour hold?
- ``rate(metric, excerpt)``: a process score in [0, 1] for one event, for ``metric`` in
  cqs, fur, crj, initiative. The score is the mean of the rubric's 0/1 criteria (see the
  ``hasbench/prompts/judge_<metric>.txt`` files).

Both read logs in one format, produced by :func:`transcript` and :func:`excerpt`: one JSON
object per event, with the judged event marked ``"focus": true``. A judge that cannot give a
verdict (the answer is off-format, the rule does not apply) returns a missing value with
the reason; it never falls back to a default score. A judge model call that fails is an
infrastructure error, not a verdict: its :class:`~hasbench.llm.ModelError` is raised, and
the runner records the episode as an error.

Rule judge, per question (all deterministic, from the log alone):

- NL assertion: holds when every double-quoted phrase of the assertion occurs
  (case-insensitively) in the agent's messages, channel requests or deliverables; no
  quoted phrase → missing.
- cqs: precise = the question contains "?", has at most 40 words and names something
  specific (topics, or a word that is not generic like "details" or "more"); necessary =
  the human's answer revealed a known fact (``info``; without that record, a word) not
  already in the earlier log, and was not refused; non_redundant = the agent asked no
  identical question earlier and not only about facts already answered.
- fur: actionable = the feedback carries a specific word, a rating, labels or edits;
  integrated = a later agent act (message, tool call, request, finish) uses it: contains an
  edited value, or a new word of the feedback; an acceptance (label "accept" or rating 4+)
  or feedback with nothing new is integrated when the agent carries on.
- crj: warranted = the action's risk is medium or high (missing when the risk is unknown);
  well_timed = the same action (name and arguments) was neither executed before the
  request (a call whose result was not an error: refused attempts do not count) nor
  approved already by an earlier request.
- initiative: the turn-level rule coder :func:`code_initiative` (1 initiative-taking, 0
  responsive).

A third question, ``classify_a4_harm(transcript, outcomes)``, asks why an A4 episode failed
on a task solved under A3 (the RQ2 failure analysis); the verdict is one of
:data:`A4_HARM_CATEGORIES`. The rule judge reads the human-initiated inputs (channel
requests by a human with initiator "human") in order: with none, ``other`` (the harm did
not come through proactive input); else the first input that came before any agent tool
call gives ``premature_intervention``, or, failing that, the first whose words of four or
more letters all occur earlier in the log gives ``redundant_or_distracting``. When no input
matches, the rule cannot tell whether a timely, new input distracted the agent: missing.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from hasbench.participants.backends import JUDGE_BACKENDS, MODEL, judge_backend
from hasbench.prompts import prompt_hashes, render
from hasbench.vocab import AUTHORIZING_DECISIONS

if TYPE_CHECKING:
    from hasbench.llm import Endpoint, LLMClient
    from hasbench.trace import Event, Trace

METRICS = ("cqs", "fur", "crj", "initiative")
CRITERIA: dict[str, tuple[str, ...]] = {
    "cqs": ("precise", "necessary", "non_redundant"),
    "fur": ("actionable", "integrated"),
    "crj": ("warranted", "well_timed"),
    "initiative": ("self_initiated",),
}
"""The 0/1 criteria of each rubric; the score is their mean."""
EXCERPT_WINDOW = 8
"""Events shown on each side of the focal event."""
AGENT_WORDS = ("message", "channel_request", "finish")
"""Event types whose text counts as the agent's own words for NL assertions."""
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”")
A4_HARM_CATEGORIES = ("premature_intervention", "redundant_or_distracting", "other")
"""Why proactive human input (A4) broke a task solved under A3 (HAS paper §5.2.2)."""
_WORD = re.compile(r"[a-z0-9]{4,}")
_WORD_ANY = re.compile(r"[a-z0-9]+")


class JudgeResult(BaseModel):
    """One verdict, or a missing value with the reason, plus the evidence behind it."""

    value: float | bool | str | None
    missing_reason: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    """excerpt, raw_output, parse_status, judge_model, prompt_hash (and criteria scores)."""


class Judge(Protocol):
    """What evaluation and metrics need from a judge."""

    model: str

    async def nl_assertions(self, transcript: str, assertions: list[str]) -> list[JudgeResult]:
        """Judge each assertion against the transcript."""
        ...

    async def rate(self, metric: str, excerpt: str) -> JudgeResult:
        """Score the focal event of an excerpt on one process metric."""
        ...

    async def classify_a4_harm(self, transcript: str, outcomes: str) -> JudgeResult:
        """Classify why an A4 episode failed on a task solved under A3."""
        ...


def make_judge(
    model: str, client: LLMClient | None = None, endpoint: Endpoint | None = None
) -> Judge:
    """The judge a backend string names: ``"rule"``, or an LLM rubric judge on a model.

    Args:
        model: a registered judge name or a model string understood by :mod:`hasbench.llm`.
        client: The LLM client to use (default: a client with the workbench cache).
        endpoint: Where the judge model is served (default: its provider's own endpoint).
    """
    return JUDGE_BACKENDS.resolve(model).build(model, client, endpoint)


# ---------------------------------------------------------------------------------------
# The log format judges read


def transcript(trace: Trace) -> str:
    """The whole episode as judge-readable JSON lines (model calls left out)."""
    return "\n".join(_line(trace, e) for e in trace.events if e.type != "model_call")


def excerpt(trace: Trace, seq: int, window: int = EXCERPT_WINDOW) -> str:
    """The events around event ``seq`` as JSON lines, that event marked ``"focus": true``."""
    events = [e for e in trace.events if e.type != "model_call"]
    index = next(i for i, e in enumerate(events) if e.seq == seq)
    lo, hi = max(0, index - window), index + window + 1
    return "\n".join(_line(trace, e, focus=e.seq == seq) for e in events[lo:hi])


def _line(trace: Trace, event: Event, focus: bool = False) -> str:
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
    if focus:
        record["focus"] = True
    return json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)


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


def _parse_lines(text: str) -> list[dict[str, Any]] | None:
    """The JSON objects of a log, or None when it is not in the judge log format."""
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(record, dict) or "type" not in record:
            return None
        records.append(record)
    return records or None


# ---------------------------------------------------------------------------------------
# Rule judge


@judge_backend("rule", label="deterministic rule judge")
def rule_judge(model: str, client: LLMClient | None, endpoint: Endpoint | None) -> RuleJudge:
    """The deterministic rule judge."""
    return RuleJudge()


class RuleJudge:
    """The deterministic offline judge (rules in the module docstring)."""

    model = "rule"

    async def nl_assertions(self, transcript: str, assertions: list[str]) -> list[JudgeResult]:
        """Check the quoted phrases of each assertion against the agent's own words."""
        records = _parse_lines(transcript)
        if records is None:
            reason = "transcript is not in the judge log format (judges.transcript)"
            return [self._missing(reason, transcript) for _ in assertions]
        spoken = " ".join(
            str(r.get("text") or "")
            for r in records
            if r.get("actor_kind") == "agent" and r["type"] in AGENT_WORDS
        ).lower()
        results = []
        for assertion in assertions:
            phrases = [a or b for a, b in _QUOTED.findall(assertion)]
            if not phrases:
                reason = "assertion has no double-quoted phrase for the rule judge to check"
                results.append(self._missing(reason, assertion))
                continue
            found = {phrase: phrase.lower() in spoken for phrase in phrases}
            results.append(
                JudgeResult(
                    value=all(found.values()),
                    evidence={**self._evidence(assertion), "phrases_found": found},
                )
            )
        return results

    async def rate(self, metric: str, excerpt: str) -> JudgeResult:
        """Score the focal event by the metric's rule."""
        if metric not in METRICS:
            raise ValueError(f"unknown process metric {metric!r}; expected one of {METRICS}")
        records = _parse_lines(excerpt)
        focus = next((r for r in records or [] if r.get("focus")), None)
        if records is None or focus is None:
            return self._missing("excerpt has no focal event in the judge log format", excerpt)
        before = [r for r in records if r["seq"] < focus["seq"]]
        after = [r for r in records if r["seq"] > focus["seq"]]
        criteria = getattr(self, f"_{metric}")(focus, before, after)
        if criteria is None:
            return self._missing(f"{metric}: the action's risk level is unknown", excerpt)
        value = sum(criteria.values()) / len(criteria)
        return JudgeResult(value=value, evidence={**self._evidence(excerpt), "criteria": criteria})

    async def classify_a4_harm(self, transcript: str, outcomes: str) -> JudgeResult:
        """Classify a harmful A4 episode by the rules in the module docstring."""
        records = _parse_lines(transcript)
        if records is None:
            reason = "transcript is not in the judge log format (judges.transcript)"
            return self._missing(reason, transcript)
        inputs = [
            r
            for r in records
            if r["type"] == "channel_request"
            and r.get("actor_kind") == "human"
            and r.get("initiator") == "human"
        ]
        evidence = self._evidence(transcript)
        if not inputs:
            rule = "no human-initiated input: the harm did not come through proactive input"
            return JudgeResult(
                value="other", evidence={**evidence, "evidence_seq": [], "rule": rule}
            )
        for event in inputs:
            before = [r for r in records if r["seq"] < event["seq"]]
            found = {
                "evidence_seq": [event["seq"]],
                "input": str(event.get("text") or ""),
            }
            if not any(r["type"] == "tool_call" and r.get("actor_kind") == "agent" for r in before):
                rule = "the human stepped in before the agent made any tool call"
                return JudgeResult(
                    value="premature_intervention", evidence={**evidence, **found, "rule": rule}
                )
            words = set(_WORD.findall(found["input"].lower()))
            earlier = " ".join(_said(r) for r in before).lower()
            if words and all(word in earlier for word in words):
                rule = "every word of the input (four or more letters) occurs earlier in the log"
                return JudgeResult(
                    value="redundant_or_distracting", evidence={**evidence, **found, "rule": rule}
                )
        reason = (
            "the human-initiated input came after the agent had acted and added new words; "
            "the rule cannot tell whether it distracted the agent"
        )
        seqs = [event["seq"] for event in inputs]
        return JudgeResult(
            value=None, missing_reason=reason, evidence={**evidence, "evidence_seq": seqs}
        )

    @staticmethod
    def _cqs(focus: dict, before: list[dict], after: list[dict]) -> dict[str, int]:
        question = str(focus.get("text") or "")
        topics = [str(t) for t in focus.get("topics") or []]
        answer = _response_to(focus, after)
        earlier = " ".join(_said(r) for r in before).lower()
        own = [
            r for r in before if r["type"] == "channel_request" and r.get("actor") == focus["actor"]
        ]
        answered = {
            key for r in before if r["type"] == "channel_response" for key in (r.get("info") or {})
        }
        repeated = _norm(question) in {_norm(r.get("text")) for r in own} or bool(
            topics and all(any(_about(t, key) for key in answered) for t in topics)
        )
        return {
            "precise": int(
                "?" in question
                and len(question.split()) <= 40
                and bool(topics or _content_words(question))
            ),
            "necessary": int(answer is not None and _tells_something_new(answer, earlier)),
            "non_redundant": int(not repeated),
        }

    @staticmethod
    def _fur(focus: dict, before: list[dict], after: list[dict]) -> dict[str, int]:
        text = str(focus.get("text") or "")
        agent_acts = [
            _said(r)
            for r in after
            if r.get("actor_kind") == "agent"
            and r["type"] in ("message", "tool_call", "channel_request", "finish")
        ]
        edits = focus.get("edits") or {}
        accepted = "accept" in (focus.get("labels") or []) or (focus.get("rating") or 0) >= 4
        earlier = " ".join(_said(r) for r in before).lower()
        new_words = {w for w in _content_words(text) if w not in earlier}
        if edits:
            wanted = [json.dumps(v, ensure_ascii=False).strip('"').lower() for v in edits.values()]
            used = any(w in act.lower() for act in agent_acts for w in wanted)
        elif accepted or not new_words:
            used = bool(agent_acts)
        else:
            used = any(w in act.lower() for act in agent_acts for w in new_words)
        return {
            "actionable": int(
                bool(_content_words(text))
                or any(focus.get(k) is not None for k in ("rating", "labels", "edits"))
            ),
            "integrated": int(used),
        }

    @staticmethod
    def _crj(focus: dict, before: list[dict], after: list[dict]) -> dict[str, int] | None:
        if focus.get("risk") is None:
            return None
        action = focus.get("action") or {}
        same = (action.get("name"), action.get("arguments"))
        failed = {r.get("call_id") for r in before if r["type"] == "tool_result" and r.get("error")}
        executed = any(
            r["type"] == "tool_call"
            and (r.get("name"), r.get("arguments")) == same
            and r.get("call_id") not in failed
            for r in before
        )
        approved = {
            r.get("request_id")
            for r in before
            if r["type"] == "channel_response" and r.get("decision") in AUTHORIZING_DECISIONS
        }
        asked_again = any(
            r["type"] == "channel_request"
            and r.get("request_id") in approved
            and ((r.get("action") or {}).get("name"), (r.get("action") or {}).get("arguments"))
            == same
            for r in before
        )
        return {
            "warranted": int(focus["risk"] in ("medium", "high")),
            "well_timed": int(not executed and not asked_again),
        }

    @staticmethod
    def _initiative(focus: dict, before: list[dict], after: list[dict]) -> dict[str, int]:
        return {"self_initiated": int(code_initiative(focus, before)[0])}

    def _evidence(self, excerpt: str) -> dict[str, Any]:
        return {
            "excerpt": excerpt,
            "raw_output": None,
            "parse_status": "rule",
            "judge_model": self.model,
            "prompt_hash": None,
        }

    def _missing(self, reason: str, excerpt: str) -> JudgeResult:
        return JudgeResult(value=None, missing_reason=reason, evidence=self._evidence(excerpt))


CODED_TURNS = (
    "message", "tool_call", "channel_request", "channel_response", "goal_revision", "finish",
)  # fmt: skip
"""The log lines that are a participant's turn, each coded initiative-taking or responsive."""


def code_initiative(turn: dict, before: list[dict]) -> tuple[bool, str]:
    """Code one turn of the judge log as initiative-taking (True) or responsive, with why.

    Initiative-taking (it moves the collaboration somewhere new): a new request (an
    agent's channel request, or a message that answers nobody, e.g. handing a peer a
    subtask), a human-initiated channel event (unprompted information or feedback, a
    decision taken unasked, a new subtask), a goal revision, an answer that volunteers a
    fact nobody asked for, and a decision that takes the action out of the agent's hands
    (override, take_over, stop). Responsive: answers, reviews and decisions that were
    asked for, replies and acknowledgements, tool calls that carry out the work, finishing.

    Args:
        turn: one log line (:func:`transcript` format) of a type in :data:`CODED_TURNS`.
        before: the log lines before it (the request an answer answers must be among them
            for volunteered facts to be seen).
    """
    kind = turn["type"]
    if kind == "channel_request":
        if turn.get("initiator") == "human":
            return True, f"human-initiated {turn.get('form', 'input')}"
        return True, f"new {turn.get('form', 'request')}"
    if kind == "goal_revision":
        return True, "new goal"
    if kind == "message":
        if turn.get("in_reply_to") is None:
            return True, "opens an exchange"
        return False, f"replies to {turn['in_reply_to']}"
    if kind == "channel_response":
        if turn.get("decision") in ("override", "take_over", "stop"):
            return True, f"takes control ({turn['decision']})"
        volunteered = _volunteered(turn, before)
        if volunteered:
            return True, f"volunteers {', '.join(volunteered)}"
        return False, "answers a request"
    if kind == "tool_call":
        return False, "carries out the work"
    return False, "delivers the result"


def _volunteered(answer: dict, before: list[dict]) -> list[str]:
    """Facts an answer revealed that its request did not ask about (by topic or by name)."""
    request = next(
        (
            r
            for r in reversed(before)
            if r["type"] == "channel_request" and r.get("request_id") == answer.get("request_id")
        ),
        None,
    )
    if request is None:
        return []
    topics = [str(t) for t in request.get("topics") or []]
    text = str(request.get("text") or "").lower()
    return [
        key
        for key in answer.get("info") or {}
        if not any(_about(t, key) for t in topics)
        and key.lower() not in text
        and key.replace("_", " ").lower() not in text
    ]


def _norm(text: Any) -> str:
    return " ".join(str(text or "").lower().split())


_GENERIC_WORDS = frozenset(
    """about anything else details detail information info more something tell could would
    should please help need needs want wants know have does with what which there this that
    your yours from into also just clarify explain thing things sure okay other""".split()
)
"""Words of four or more letters that name nothing specific (a vague question is made of
them)."""


def _content_words(text: str) -> set[str]:
    """The words of four or more letters of a text that name something specific."""
    return set(_WORD.findall(text.lower())) - _GENERIC_WORDS


def _response_to(request: dict, after: list[dict]) -> dict | None:
    """The answer to a channel request among the later log lines, if any."""
    return next(
        (
            r
            for r in after
            if r["type"] == "channel_response" and r.get("request_id") == request.get("request_id")
        ),
        None,
    )


def _tells_something_new(answer: dict, earlier: str) -> bool:
    """Whether an answer revealed a fact (or, without a record of facts, words) not in the log.

    An answer that was refused, or that revealed none of the human's known facts, tells
    nothing new.
    """
    if answer.get("refused"):
        return False
    info = answer.get("info")
    if info is not None:
        return any(str(value).lower() not in earlier for value in info.values())
    return any(word not in earlier for word in _content_words(str(answer.get("text") or "")))


def _about(topic: str, key: str) -> bool:
    """Whether a question topic names a fact key (the words of one include the other's)."""
    words, key_words = set(_WORD_ANY.findall(topic.lower())), set(_WORD_ANY.findall(key.lower()))
    return bool(words) and (words <= key_words or key_words <= words)


def _said(record: dict[str, Any]) -> str:
    """The content of a log line: its text, tool arguments and output, revealed facts."""
    parts = [record.get(key) for key in ("text", "arguments", "output", "edits", "info")]
    return " ".join(json.dumps(p, ensure_ascii=False) for p in parts if p)


# ---------------------------------------------------------------------------------------
# LLM rubric judge


class LLMJudge:
    """A rubric judge on a language model, at temperature 0, keeping its evidence.

    Args:
        model: Any model string :mod:`hasbench.llm` accepts.
        client: The client to call it through (default: one with the workbench cache).
        endpoint: Where the model is served (default: its provider's own endpoint).
    """

    def __init__(
        self, model: str, client: LLMClient | None = None, endpoint: Endpoint | None = None
    ) -> None:
        from hasbench.llm import LLMClient, ResponseCache

        self.model = model
        self.client = client if client is not None else LLMClient(cache=ResponseCache.default())
        self.endpoint = endpoint

    async def nl_assertions(self, transcript: str, assertions: list[str]) -> list[JudgeResult]:
        """Ask the model about each assertion separately."""
        results = []
        for assertion in assertions:
            prompt = render("judge_nl_assertion", transcript=transcript, assertion=assertion)
            parsed, evidence = await self._ask(prompt, "judge_nl_assertion", assertion)
            if parsed is None:
                results.append(
                    JudgeResult(
                        value=None, missing_reason=evidence.pop("reason"), evidence=evidence
                    )
                )
            elif not isinstance(parsed.get("holds"), bool):
                results.append(_off_format(evidence, "'holds' is not true or false"))
            else:
                results.append(JudgeResult(value=parsed["holds"], evidence=evidence))
        return results

    async def rate(self, metric: str, excerpt: str) -> JudgeResult:
        """Score the focal event of an excerpt with the metric's rubric."""
        if metric not in METRICS:
            raise ValueError(f"unknown process metric {metric!r}; expected one of {METRICS}")
        name = f"judge_{metric}"
        parsed, evidence = await self._ask(render(name, excerpt=excerpt), name, excerpt)
        if parsed is None:
            return JudgeResult(value=None, missing_reason=evidence.pop("reason"), evidence=evidence)
        criteria = {name: parsed.get(name) for name in CRITERIA[metric]}
        bad = [name for name, v in criteria.items() if v not in (0, 1)]
        if bad:
            return _off_format(evidence, f"criteria not scored 0 or 1: {', '.join(bad)}")
        criteria = {name: int(v) for name, v in criteria.items()}
        value = sum(criteria.values()) / len(criteria)
        return JudgeResult(value=value, evidence={**evidence, "criteria": criteria})

    async def classify_a4_harm(self, transcript: str, outcomes: str) -> JudgeResult:
        """Ask the model why the A4 episode failed; keep its cited events and rationale."""
        prompt = render("judge_a4_harm", transcript=transcript, outcomes=outcomes)
        parsed, evidence = await self._ask(prompt, "judge_a4_harm", transcript)
        if parsed is None:
            return JudgeResult(value=None, missing_reason=evidence.pop("reason"), evidence=evidence)
        category = parsed.get("category")
        if category not in A4_HARM_CATEGORIES:
            return _off_format(
                evidence, f"category {category!r} is not one of {A4_HARM_CATEGORIES}"
            )
        cited = parsed.get("evidence_seq")
        seqs = [s for s in cited if isinstance(s, int)] if isinstance(cited, list) else []
        rationale = parsed.get("rationale")
        return JudgeResult(
            value=category,
            evidence={**evidence, "evidence_seq": seqs, "rationale": str(rationale or "")},
        )

    async def _ask(
        self, prompt: str, template: str, judged: str
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """Call the model; return the parsed JSON answer (or None) and the evidence.

        The evidence names the prompt template by its hash; when the answer is None it
        carries a ``reason`` entry.

        Raises:
            ModelError: the model call failed (an infrastructure error, never a verdict).
        """
        messages = [{"role": "user", "content": prompt}]
        response = await self.client.complete(
            self.model, messages, temperature=0.0, endpoint=self.endpoint
        )
        evidence: dict[str, Any] = {
            "excerpt": judged,
            "raw_output": response.content,
            "judge_model": self.model,
            "prompt_hash": prompt_hashes()[template],
        }
        parsed = _json_object(response.content or "")
        if parsed is None:
            reason = "judge answer off-format: not a JSON object"
            return None, {**evidence, "parse_status": "off_format", "reason": reason}
        return parsed, {**evidence, "parse_status": "ok"}


def _off_format(evidence: dict[str, Any], reason: str) -> JudgeResult:
    return JudgeResult(
        value=None,
        missing_reason=f"judge answer off-format: {reason}",
        evidence={**evidence, "parse_status": "off_format"},
    )


def _json_object(text: str) -> dict[str, Any] | None:
    """The one JSON object in a reply (bare or in a ``` fence), or None."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, flags=re.DOTALL)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


@judge_backend(MODEL, label="LLM rubric judge")
def llm_judge(model: str, client: LLMClient | None, endpoint: Endpoint | None) -> LLMJudge:
    """An LLM rubric judge on a model."""
    return LLMJudge(model, client, endpoint)
