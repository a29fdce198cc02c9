"""Process measures of a DocuTeam session, computed from its log alone.

The DocuTeam paper (§5.1.5, Table 2, Figure 3) reports per participant and condition:
steering messages sent into discussions, word-level changes to the draft, messages
applied to the document, and the discussions the user started in each mode. We add the
discussions the agents started. :func:`study_rows` turns one log into rows of the study
CSV schema (:mod:`hasbench.docuteam.study.data`), so session logs feed ``hasbench study``.
A session that failed (:mod:`hasbench.docuteam.failures`) has no measures: asking for
them raises :class:`~hasbench.docuteam.failures.FailedSessionError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from hasbench.docuteam.document import Document, EditOp, word_changes
from hasbench.docuteam.failures import FailedSessionError, describe_failure
from hasbench.docuteam.log import SessionLog
from hasbench.docuteam.schemas import MODES

if TYPE_CHECKING:
    from hasbench.docuteam.study.data import StudyData

STUDY_MEASURES: tuple[str, ...] = (
    "idea_mode",
    "discussion_mode",
    "evaluation_mode",
    "steering_messages",
    "draft_word_changes",
    "messages_applied",
    "user_discussions",
    "agent_discussions",
)
"""The interaction measures a session log contributes to the study table."""


def initial_document(log: SessionLog) -> Document:
    """The document as the session started."""
    return Document.from_json(json.dumps(log.header.document), "log header")


def final_document(log: SessionLog) -> Document:
    """The starting document with every logged edit replayed.

    Raises:
        DocumentError: an edit does not fit (a log that does not belong to its header).
    """
    document = initial_document(log)
    for event in log.of_type("edit"):
        document.replay(EditOp.model_validate(event.payload))
    return document


def session_measures(log: SessionLog) -> dict[str, int]:
    """The process measures of one session.

    - ``steering_messages``: messages the user posted into discussions on their own
      (answers to the agents' questions are counted apart, as ``clarifications_answered``);
    - ``steering_actions``: participant, focus and mode changes and stops;
    - ``draft_word_changes``: words added, removed or replaced between the starting and
      the final document (:func:`~hasbench.docuteam.document.word_changes`);
    - ``messages_applied``: discussion messages applied to the document;
    - ``user_discussions`` / ``agent_discussions``: discussions each side started, and
      ``<mode>_mode``: user-started discussions per mode (the mode they opened in);
    - ``model_calls`` and ``step_errors``: model calls made and steps skipped, and
      ``steps_lost``: the steps among them skipped for an infrastructure failure.

    Raises:
        FailedSessionError: the session failed.
    """
    if log.failure is not None:
        raise FailedSessionError(
            f"{_label(log)}: the session failed, so it has no measures: "
            f"{describe_failure(log.failure)}"
        )
    errors = [e.payload for e in log.of_type("error")]
    steering = [e.payload["action"] for e in log.of_type("steering")]
    opened = [e.payload for e in log.of_type("discussion_opened")]
    by_user = [d for d in opened if d["initiator"] == "user"]
    measures = {
        "steering_messages": steering.count("post"),
        "steering_actions": sum(action != "post" for action in steering),
        "clarifications_answered": sum(
            e.payload["action"] == "answered" for e in log.of_type("clarification")
        ),
        "draft_word_changes": word_changes(
            initial_document(log).text(), final_document(log).text()
        ),
        "messages_applied": len(log.of_type("application")),
        "user_discussions": len(by_user),
        "agent_discussions": sum(d["initiator"] == "agents" for d in opened),
        "model_calls": len(log.of_type("model_call")),
        "step_errors": len(errors),
        "steps_lost": sum(e["error_type"] == "model_failure" for e in errors),
    }
    for mode in MODES:
        measures[f"{mode}_mode"] = sum(d["mode"] == mode for d in by_user)
    return measures


def study_rows(
    log: SessionLog,
    participant: str | None = None,
    order: int | None = None,
    task: str | None = None,
) -> pd.DataFrame:
    """The interaction rows of one session in the study CSV schema.

    Participant, order and task default to the labels in the log header.

    Raises:
        FailedSessionError: the session failed.
        ValueError: a label is missing (name it in the session config or pass it here).
    """
    participant = participant or log.header.participant
    order = order or log.header.order
    task = task or log.header.task_name
    missing = [
        name
        for name, value in (("participant", participant), ("order", order), ("task", task))
        if not value
    ]
    if missing:
        raise ValueError(f"the session log has no {', '.join(missing)}; pass them to study_rows")
    from hasbench.docuteam.study.data import COLUMNS  # the study package loads matplotlib

    measures = session_measures(log)
    rows = [
        {
            "participant": participant,
            "condition": log.header.condition,
            "order": str(order),
            "task": task,
            "measure_group": "interaction",
            "measure": name,
            "item": "",
            "rater": "",
            "value": str(measures[name]),
            "scale": "count",
        }
        for name in STUDY_MEASURES
    ]
    return pd.DataFrame(rows, columns=list(COLUMNS))


def study_data(logs: Iterable[SessionLog | str | Path], source: str = "session logs") -> StudyData:
    """Validated study data from session logs (one per participant and condition).

    The data are marked synthetic, with simulated participants, when any session's user
    was simulated. Sessions that lost steps to infrastructure failures are named in the
    metadata ``steps_lost``.

    Raises:
        FailedSessionError: a session failed; the message lists every failed session.
        StudyDataError: the logs do not form a paired design (e.g. a participant with one
            condition only), listing every problem.
    """
    from hasbench.docuteam.study.data import validate_frame

    logs = [log if isinstance(log, SessionLog) else SessionLog.read(log) for log in logs]
    failed = [f"{_label(log)}: {describe_failure(log.failure)}" for log in logs if log.failure]
    if failed:
        raise FailedSessionError(
            f"{len(failed)} of {len(logs)} sessions failed and give no study rows; leave "
            "them out (with their participants' other sessions) or run them again:\n  "
            + "\n  ".join(failed)
        )
    frames = [study_rows(log) for log in logs]
    meta = {"source": source}
    if any(log.header.config.get("simulated_user") for log in logs):
        meta["synthetic"] = "true"
        meta["participants"] = "simulated"
    lost = [(log, session_measures(log)["steps_lost"]) for log in logs]
    if any(n for _, n in lost):
        meta["steps_lost"] = ", ".join(f"{_label(log)}: {n}" for log, n in lost if n)
    return validate_frame(pd.concat(frames, ignore_index=True), source, meta=meta)


def _label(log: SessionLog) -> str:
    """A session's file, or its participant and condition when it has none."""
    if log.source is not None:
        return str(log.source)
    return f"{log.header.participant or 'session'} ({log.header.condition})"
