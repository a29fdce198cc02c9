"""A study folder: what a served study writes as it goes, and the study data made from it.

``hasbench serve study STUDY.yaml --out DIR`` writes into ``DIR`` (each line flushed as
it is written, so stopping the server loses nothing that was done):

- ``study.yaml``: a copy of the design the study runs (a restart checks it is the same);
- ``progress.jsonl``: one line per step of a participant (``consented``,
  ``session_started`` with its order, condition, task and log, ``session_ended`` with
  how it ended: ``finished``, ``time_up``, ``failed`` or ``interrupted``);
- ``sessions/<participant>_<condition>.jsonl``: the DocuTeam session logs;
- ``surveys.jsonl``: one line per questionnaire answered (participant, condition, task,
  order, the answers by item);
- ``ratings.jsonl``: one line per plan rated (rater, plan id, participant, condition,
  task, order, the scores by dimension);
- ``links.json``: each seat's private link token (readable by its owner only), so a
  restart keeps everyone's link.

:func:`study_from_folder` turns a folder into study data in the schema of
:mod:`hasbench.docuteam.study.data` (interaction measures from the session logs, survey
and NASA-TLX answers, blind ratings), with the participants it leaves out and why: a
session that failed for an infrastructure reason (listed apart, in ``failed``), or a
participant who has not finished both sessions and questionnaires. A rating missing in
one condition of a participant is dropped from both, with the reason.
``hasbench study analyze DIR`` runs the analysis on it directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from hasbench.docuteam.failures import describe_failure
from hasbench.docuteam.log import LogError, SessionLog
from hasbench.docuteam.measures import study_rows
from hasbench.docuteam.study.data import (
    COLUMNS,
    KNOWN_MEASURES,
    StudyData,
    StudyDataError,
    complete_pairs,
    validate_frame,
    write_study,
)
from hasbench.docuteam.study.questionnaire import ITEMS, RATING_DIMENSIONS

DESIGN = "study.yaml"
PROGRESS = "progress.jsonl"
SESSIONS = "sessions"
SURVEYS = "surveys.jsonl"
RATINGS = "ratings.jsonl"
LINKS = "links.json"
STUDY_CSV = "study.csv"
"""The study data made from the folder (rewritten by each analysis)."""


def session_log(folder: str | Path, participant: str, condition: str) -> Path:
    """Where a participant's session in a condition is logged."""
    return Path(folder) / SESSIONS / f"{participant}_{condition}.jsonl"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file (none when it does not exist).

    A last line cut short (the server stopped while writing it) is ignored.

    Raises:
        StudyDataError: a line before the last that is not JSON.
    """
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines):
                break
            raise StudyDataError(str(path), [f"line {number}: not JSON ({exc})"]) from None
    return records


@dataclass(frozen=True)
class FolderStudy:
    """The study data of a folder and what was left out of it."""

    data: StudyData
    csv: Path
    left_out: list[dict[str, str]]
    """Participants left out: ``participant``, ``reason``."""
    failed: list[dict[str, str]]
    """Sessions that failed for an infrastructure reason: participant, condition, log,
    reason."""
    dropped: list[dict[str, str]]
    """Values missing in one condition of a participant, dropped from both, with why."""


def sessions_of(folder: Path) -> dict[str, dict[int, dict[str, Any]]]:
    """Participant -> order -> the session as the progress file tells it (start and end)."""
    sessions: dict[str, dict[int, dict[str, Any]]] = {}
    for record in read_jsonl(folder / PROGRESS):
        if record.get("event") == "session_started":
            sessions.setdefault(record["participant"], {})[record["order"]] = dict(record)
        elif record.get("event") == "session_ended":
            started = sessions.get(record["participant"], {}).get(record["order"])
            if started is not None:
                started["ended"] = record["how"]
    return sessions


def study_from_folder(folder: str | Path) -> FolderStudy:
    """Study data from a study folder, written to ``study.csv`` there (see the module).

    Raises:
        StudyDataError: nothing usable (no participant completed the study), or records
            that break the schema.
    """
    folder = Path(folder)
    if not (folder / PROGRESS).exists():
        raise StudyDataError(str(folder), [f"not a study folder (no {PROGRESS})"])
    surveys = {(r["participant"], r["condition"]): r for r in read_jsonl(folder / SURVEYS)}
    ratings = read_jsonl(folder / RATINGS)
    raters = sorted({r["rater"] for r in ratings})
    scores = {(r["rater"], r["participant"], r["condition"]): r["scores"] for r in ratings}
    frames, rows, left_out, failed = [], [], [], []
    for participant, sessions in sorted(sessions_of(folder).items()):
        problems = []
        done = []
        for order in (1, 2):
            session = sessions.get(order)
            if session is None or "ended" not in session:
                problems.append(f"session {order} not done")
                continue
            log_path = folder / session["log"]
            try:
                log = SessionLog.read(log_path)
            except LogError as exc:
                problems.append(f"session {order}: {exc}")
                continue
            failure = log.of_type("session_failed")
            if failure:
                failed.append(
                    {
                        "participant": participant,
                        "condition": session["condition"],
                        "log": session["log"],
                        "reason": describe_failure(failure[0].payload),
                    }
                )
                problems.append(f"session {order} failed (listed apart)")
                continue
            if (participant, session["condition"]) not in surveys:
                problems.append(f"questionnaire {order} not answered")
                continue
            done.append((session, log))
        if problems:
            left_out.append({"participant": participant, "reason": "; ".join(problems)})
            continue
        for session, log in done:
            base = {
                "participant": participant,
                "condition": session["condition"],
                "order": str(session["order"]),
                "task": session["task"],
            }
            frames.append(study_rows(log, participant, session["order"], session["task"]))
            answers = surveys[(participant, session["condition"])]["answers"]
            for item, (group, _) in ITEMS.items():
                rows.append(_row(base, group, item, "", answers.get(item), "not answered"))
            for rater in raters:
                given = scores.get((rater, participant, session["condition"]), {})
                for dimension in RATING_DIMENSIONS:
                    reason = f"not rated by {rater} yet"
                    rows.append(
                        _row(base, "blind_rating", dimension, rater, given.get(dimension), reason)
                    )
    if not frames:
        reasons = "; ".join(f"{x['participant']}: {x['reason']}" for x in left_out)
        raise StudyDataError(
            str(folder),
            [f"no participant has completed the study yet ({reasons or 'none'})"]
            + [failed_line(f) for f in failed],
        )
    frame = pd.concat([*frames, pd.DataFrame(rows)], ignore_index=True)
    if "reason" not in frame:
        frame["reason"] = ""
    frame, dropped = complete_pairs(frame)
    frame["value"] = frame["value"].map(lambda v: f"{float(v):g}")
    meta = {"participants": "people", "source": "hasbench serve study", "folder": str(folder)}
    if left_out:
        meta["left_out"] = ", ".join(x["participant"] for x in left_out)
    data = validate_frame(frame[list(COLUMNS)].astype(str), str(folder / STUDY_CSV), meta=meta)
    csv = write_study(data, folder / STUDY_CSV)
    return FolderStudy(data, csv, left_out, failed, dropped)


def failed_line(failed: dict[str, str]) -> str:
    """One failed session, as the analysis lists it apart."""
    return (
        f"failed session, not analysed: {failed['participant']} {failed['condition']} "
        f"({failed['log']}): {failed['reason']}"
    )


def _row(
    base: dict[str, str], group: str, measure: str, rater: str, value: Any, reason: str
) -> dict[str, Any]:
    return {
        **base,
        "measure_group": group,
        "measure": measure,
        "item": "",
        "rater": rater,
        "value": float("nan") if value is None else value,
        "scale": KNOWN_MEASURES[(group, measure)].scale,
        "reason": reason if value is None else "",
    }
