"""The rule initiative coder: which turns of an episode take initiative (HAS paper §4.3).

The metrics code every turn of the judge log (:mod:`hasbench.transcript`) with
:func:`code_initiative` (``initiative_coding``, ``initiative_counts``, ``h_init``); the rule
judge gives the same verdict when asked to rate ``initiative``. The coding follows
Collaborative Gym's initiative coding; ``docs/metrics.md`` defines it for readers.
"""

from __future__ import annotations

from hasbench.transcript import is_about

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
        turn: one log line (:func:`hasbench.transcript.transcript` format) of a type in
            :data:`CODED_TURNS`.
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
        if not any(is_about(t, key) for t in topics)
        and key.lower() not in text
        and key.replace("_", " ").lower() not in text
    ]
