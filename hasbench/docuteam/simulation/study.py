"""A simulated within-subjects DocuTeam study: personas use both conditions.

:func:`simulate_study` runs N simulated participants. Participant i (0-based) gets the
design cell i mod 4 of :func:`~hasbench.docuteam.study.example.counterbalanced_design`
(DocuTeam first or second, workshop or sports day in DocuTeam) and the persona
(i + i // 4) mod P, so every persona meets every cell as N grows. Each participant works
on its first task in its first condition, then on the other task in the other condition
(:func:`~hasbench.docuteam.simulation.user.run_user`, within a step budget); each final
plan is rated blind by every rater (:mod:`.rating`) and after each session the persona
answers the questionnaires (:mod:`.survey`).

It writes into ``out_dir``:

- ``logs/<participant>_<condition>.jsonl`` (session logs) and ``.user.jsonl`` (the
  participant's steps);
- ``study.csv``: the study schema of :mod:`hasbench.docuteam.study.data`, interaction
  measures computed from the session logs (:func:`~hasbench.docuteam.measures.study_rows`),
  blind ratings, survey and NASA-TLX answers; metadata ``participants: simulated``;
- ``ratings.jsonl`` and ``questionnaires.jsonl``: every rating and questionnaire with
  its evidence;
- ``simulation.json``: the configuration, design, personas, versions, and every value
  left out of the CSV with the reason (a rating or answer that a model could not give
  is left out of both conditions of that participant, never filled in), and the failed
  sessions apart (``failed``).

A session that fails for an infrastructure reason (:mod:`hasbench.docuteam.failures`:
the engine's or the participant's model cannot be reached, a key or an extra is
missing, ...) is neither rated nor surveyed and gives no rows: it is listed in
``failed`` with its reason, and its participant is left out of the study (both
conditions, so the design stays paired). When every participant is left out there is
no study: :class:`~hasbench.docuteam.failures.FailedSessionError`.

``hasbench study analyze out_dir/study.csv`` (or the notebook
``docuteam_simulated_study``) then makes Table 2 and the figures, bannered
"simulated participants".
"""

from __future__ import annotations

import asyncio
import json
import zlib
from dataclasses import dataclass, replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from hasbench.docuteam.demo import DOCUTEAM_DATA
from hasbench.docuteam.failures import FailedSessionError, describe_failure
from hasbench.docuteam.measures import final_document, initial_document, study_rows
from hasbench.docuteam.session import Session, SessionConfig
from hasbench.docuteam.simulation.personas import (
    STUDY_PERSONAS_FILE,
    StudyPersona,
    load_study_personas,
)
from hasbench.docuteam.simulation.rating import RULE, PlanRating, rate_plan
from hasbench.docuteam.simulation.survey import (
    ITEMS,
    SCRIPTED_RESPONDENT,
    Questionnaire,
    answer_questionnaire,
)
from hasbench.docuteam.simulation.user import (
    SCRIPTED_USER,
    ModelParticipant,
    ParticipantPolicy,
    ScriptedParticipant,
    UserLog,
    run_user,
)
from hasbench.docuteam.steps import SCRIPTED, RoleModels
from hasbench.docuteam.study.analysis import StudyAnalysis
from hasbench.docuteam.study.data import (
    COLUMNS,
    KNOWN_MEASURES,
    StudyData,
    complete_pairs,
    validate_frame,
    write_study,
)
from hasbench.docuteam.study.example import counterbalanced_design
from hasbench.docuteam.study.report import run_study_analysis
from hasbench.docuteam.timing import ManualClock
from hasbench.llm import LLMClient, ResponseCache
from hasbench.prompts import prompt_hashes
from hasbench.sync import run_sync
from hasbench.vocab import canonical_json

SIMULATED = "simulated"
"""The ``participants`` metadata value of a simulated study."""


class SimulationConfig(BaseModel):
    """What a simulated study runs.

    ``user`` plays the participants (``scripted`` or a model string), ``engine`` every
    DocuTeam role (``scripted:docuteam`` or a model string), ``raters`` the blind
    raters (``rule`` or model strings; rater ids R1, R2, ... in this order) and
    ``respondent`` the questionnaires (default: ``scripted`` for a scripted user, else
    the user's model).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    participants: int = Field(default=8, ge=3)
    user: str = SCRIPTED_USER
    engine: str = SCRIPTED
    raters: tuple[str, ...] = (RULE,)
    respondent: str | None = None
    budget: int = Field(default=12, ge=1)
    seed: int = 0
    personas: str = str(STUDY_PERSONAS_FILE)
    concurrency: int = Field(default=4, ge=1)

    @property
    def answered_by(self) -> str:
        """Who answers the questionnaires."""
        if self.respondent is not None:
            return self.respondent
        return SCRIPTED_RESPONDENT if self.user == SCRIPTED_USER else self.user

    def uses_models(self) -> bool:
        """True when any part is played by a model."""
        parts = [self.user, self.engine, self.answered_by, *self.raters]
        return any(p not in (SCRIPTED_USER, SCRIPTED, RULE) for p in parts)


@dataclass(frozen=True)
class SessionResult:
    """One participant's session in one condition, and what came of it."""

    participant: str
    persona: str
    condition: str
    order: int
    task: str
    log: Path
    user_log: Path
    rows: pd.DataFrame
    ratings: list[PlanRating]
    questionnaire: Questionnaire | None
    failure: dict[str, Any] | None = None
    """Why the session failed (then it has no rows, ratings or questionnaire)."""


@dataclass(frozen=True)
class SimulatedStudy:
    """The outputs of :func:`simulate_study`."""

    data: StudyData
    csv: Path
    manifest: Path
    sessions: list[SessionResult]
    dropped: list[dict[str, str]]
    failed: list[dict[str, Any]]
    """The failed sessions, apart: participant, condition, log and reason."""


def assign_personas(n: int, personas: list[StudyPersona]) -> list[dict[str, Any]]:
    """The design rows of n participants with their personas (see the module docstring)."""
    rows = counterbalanced_design(n)
    for row in rows:
        index = int(str(row["participant"])[1:]) - 1
        row["persona"] = personas[(index + index // 4) % len(personas)]
    return rows


def _policy(
    config: SimulationConfig,
    persona: StudyPersona,
    rng: np.random.Generator,
    client: LLMClient | None,
) -> ParticipantPolicy:
    if config.user == SCRIPTED_USER:
        return ScriptedParticipant(persona, rng)
    assert client is not None
    return ModelParticipant(config.user, persona, client)


def _rows(
    base: dict[str, str], ratings: list[PlanRating], questionnaire: Questionnaire
) -> list[dict[str, Any]]:
    """Rating, survey and NASA-TLX rows of one session (None values kept for now)."""
    rows = []
    for rating in ratings:
        for dimension, score in rating.scores.items():
            rows.append(
                {
                    **base,
                    "measure_group": "blind_rating",
                    "measure": dimension,
                    "rater": rating.rater,
                    "value": score,
                    "reason": rating.missing_reason,
                }
            )
    for item, answer in questionnaire.answers.items():
        group = ITEMS[item][0]
        rows.append(
            {
                **base,
                "measure_group": group,
                "measure": item,
                "rater": "",
                "value": answer,
                "reason": questionnaire.missing_reason,
            }
        )
    for row in rows:
        row["item"] = ""
        row["scale"] = KNOWN_MEASURES[(row["measure_group"], row["measure"])].scale
    return rows


async def _session(
    config: SimulationConfig,
    cell: dict[str, Any],
    out: Path,
    client: LLMClient | None,
) -> SessionResult:
    participant, condition = str(cell["participant"]), str(cell["condition"])
    persona: StudyPersona = cell["persona"]
    task, order = str(cell["task"]), int(cell["order"])
    stem = out / "logs" / f"{participant}_{condition}"
    session = Session.from_folder(
        DOCUTEAM_DATA / task,
        config=SessionConfig(
            condition=condition,
            participant=participant,
            task_name=task,
            order=order,
            simulated_user=True,
        ),
        backends=RoleModels.all(config.engine),
        client=client,
        clock=ManualClock(),
        log_path=stem.with_suffix(".jsonl"),
    )
    rng = np.random.default_rng(
        [config.seed, int(participant[1:]), zlib.crc32(condition.encode("utf-8"))]
    )
    user_log = UserLog(
        stem.with_suffix(".user.jsonl"),
        {
            "participant": participant,
            "persona": persona.model_dump(),
            "player": config.user,
            "condition": condition,
            "task_name": task,
            "order": order,
            "budget": config.budget,
            "seed": config.seed,
        },
    )
    await run_user(session, _policy(config, persona, rng, client), config.budget, user_log)
    result = SessionResult(
        participant=participant,
        persona=persona.id,
        condition=condition,
        order=order,
        task=task,
        log=stem.with_suffix(".jsonl"),
        user_log=stem.with_suffix(".user.jsonl"),
        rows=pd.DataFrame(columns=list(COLUMNS)),
        ratings=[],
        questionnaire=None,
        failure=session.failure,
    )
    if session.failure is not None:
        return result
    initial, final = initial_document(session.log), final_document(session.log)
    team = tuple(agent.profile.name for agent in session.agents.values())
    ratings = [
        await rate_plan(backend, final, initial, session.task, f"R{n}", client, team)
        for n, backend in enumerate(config.raters, start=1)
    ]
    questionnaire = await answer_questionnaire(
        config.answered_by, persona, session.log, user_log, client
    )
    return replace(
        result, rows=study_rows(session.log), ratings=ratings, questionnaire=questionnaire
    )


async def simulate_study(
    config: SimulationConfig, out_dir: str | Path, client: LLMClient | None = None
) -> SimulatedStudy:
    """Run a simulated study and write its files (see the module docstring).

    Args:
        config: What runs.
        out_dir: Where the logs, the study CSV and the manifest go.
        client: The model client when a part is played by a model (default: one with
            the workbench response cache).

    Raises:
        FailedSessionError: every participant has a failed session.
        StudyDataError: the simulated data do not form a valid study (e.g. a measure
            every participant lacks leaves fewer than three participants).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if client is None and config.uses_models():
        client = LLMClient(cache=ResponseCache.default())
    personas = load_study_personas(config.personas)
    design = assign_personas(config.participants, personas)
    limit = asyncio.Semaphore(config.concurrency)

    async def participant(cells: list[dict[str, Any]]) -> list[SessionResult]:
        async with limit:
            return [await _session(config, cell, out, client) for cell in cells]

    by_participant: dict[str, list[dict[str, Any]]] = {}
    for cell in sorted(design, key=lambda c: (c["participant"], c["order"])):
        by_participant.setdefault(str(cell["participant"]), []).append(cell)
    done = await asyncio.gather(*(participant(cells) for cells in by_participant.values()))
    sessions = [result for results in done for result in results]
    failed = [
        {
            "participant": r.participant,
            "condition": r.condition,
            "task": r.task,
            "log": str(r.log.relative_to(out)),
            "reason": describe_failure(r.failure),
            "failure": r.failure,
        }
        for r in sessions
        if r.failure is not None
    ]
    left_out = {f["participant"] for f in failed}
    kept = [r for r in sessions if r.participant not in left_out]
    if not kept:
        _write_manifest(out / "simulation.json", config, personas, sessions, [], failed)
        reasons = "\n  ".join(f"{f['participant']} {f['condition']}: {f['reason']}" for f in failed)
        raise FailedSessionError(
            f"every simulated participant has a failed session, so there is no study "
            f"(listed in {out / 'simulation.json'}):\n  {reasons}"
        )

    frames = [r.rows for r in kept]
    extra = []
    for r in kept:
        base = {
            "participant": r.participant,
            "condition": r.condition,
            "order": str(r.order),
            "task": r.task,
        }
        assert r.questionnaire is not None  # only failed sessions have none
        extra += _rows(base, r.ratings, r.questionnaire)
    frame = pd.concat([*frames, pd.DataFrame(extra)], ignore_index=True)
    frame, dropped = complete_pairs(frame)
    frame["value"] = frame["value"].map(lambda v: f"{float(v):g}")
    meta = {
        "synthetic": "true",
        "participants": SIMULATED,
        "description": "simulated participants (personas) used both conditions; not a study "
        "of people",
        "generator": "hasbench study simulate",
        "user": config.user,
        "engine": config.engine,
        "raters": " ".join(config.raters),
        "respondent": config.answered_by,
        "budget": str(config.budget),
        "seed": str(config.seed),
    }
    if left_out:
        meta["left_out"] = ", ".join(sorted(left_out)) + " (a failed session, see simulation.json)"
    source = str(out / "study.csv")
    data = validate_frame(frame[list(COLUMNS)].astype(str), source, meta=meta)
    csv = write_study(data, out / "study.csv")
    _jsonl(out / "ratings.jsonl", [
        {"participant": r.participant, "condition": r.condition, "task": r.task, **x.model_dump()}
        for r in kept
        for x in r.ratings
    ])  # fmt: skip
    _jsonl(out / "questionnaires.jsonl", [
        {"participant": r.participant, "condition": r.condition, "persona": r.persona,
         "simulated": True, **r.questionnaire.model_dump()}
        for r in kept
        if r.questionnaire is not None
    ])  # fmt: skip
    manifest = _write_manifest(out / "simulation.json", config, personas, sessions, dropped, failed)
    return SimulatedStudy(
        data=data, csv=csv, manifest=manifest, sessions=sessions, dropped=dropped, failed=failed
    )


def _write_manifest(
    path: Path,
    config: SimulationConfig,
    personas: list[StudyPersona],
    sessions: list[SessionResult],
    dropped: list[dict[str, str]],
    failed: list[dict[str, Any]],
) -> Path:
    """Write ``simulation.json`` (see the module docstring)."""
    out = path.parent
    manifest = {
        "note": "simulated participants",
        "config": config.model_dump(),
        "personas": [p.model_dump() for p in personas],
        "design": [
            {
                "participant": r.participant,
                "persona": r.persona,
                "condition": r.condition,
                "order": r.order,
                "task": r.task,
                "log": str(r.log.relative_to(out)),
                "user_log": str(r.user_log.relative_to(out)),
            }
            for r in sessions
        ],
        "dropped": dropped,
        "failed": failed,
        "prompt_hashes": prompt_hashes("docuteam_sim"),
        "versions": {"hasbench": version("hasbench")},
    }
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def run_simulated_study(
    config: SimulationConfig,
    out_dir: str | Path,
    figures_dir: str | Path,
    *,
    alpha: float = 0.05,
    client: LLMClient | None = None,
) -> tuple[SimulatedStudy, StudyAnalysis, list[Path]]:
    """Simulate a study, then analyse its CSV into Table 2 and the figures.

    Callable from a script or a notebook cell (it runs its own event loop when needed).

    Returns:
        The simulated study, its analysis, and the analysis files written to ``figures_dir``.
    """
    study = run_sync(simulate_study(config, out_dir, client))
    analysis, paths = run_study_analysis(study.csv, figures_dir, alpha=alpha, seed=config.seed)
    return study, analysis, paths


def _jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(canonical_json(r) + "\n" for r in records), encoding="utf-8")
