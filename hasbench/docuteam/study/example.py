"""A seeded generator of example study data with the shape of the DocuTeam study.

The example has 20 participants, both conditions in counterbalanced order and task,
two blind raters scoring four dimensions on 5 points, the ten post-task survey items and
five NASA-TLX dimensions on 7 points, and the interaction-log counts. Condition means
are set near the values the DocuTeam paper reports, but every number is drawn at random:
the data are synthetic (metadata ``synthetic: true``) and only exercise the pipeline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hasbench.docuteam.study.data import CONDITIONS, MEASURES, StudyData, validate_frame

TASKS: tuple[str, str] = ("workshop", "sports_day")
RATERS: tuple[str, str] = ("R1", "R2")

# Target (DocuTeam mean, Baseline mean, SD) per measure for the generator.
_TARGETS: dict[str, tuple[float, float, float]] = {
    "novelty": (3.2, 2.7, 0.9),
    "workability": (3.4, 3.3, 0.75),
    "relevance": (3.3, 2.8, 0.95),
    "specificity": (3.25, 2.3, 0.85),
    "confidence": (4.35, 4.4, 1.5),
    "satisfaction": (5.15, 5.15, 1.35),
    "easy_to_apply": (5.7, 4.6, 1.3),
    "tool_not_partner": (3.25, 4.1, 1.6),
    "expanded_thinking": (5.9, 5.0, 1.2),
    "deepened_thinking": (5.3, 4.7, 1.3),
    "use_again": (5.9, 5.3, 1.1),
    "hard_to_engage": (2.8, 2.9, 1.4),
    "ai_aware_of_me": (5.0, 3.8, 1.3),
    "aware_of_ai": (4.8, 4.6, 1.3),
    "mental_demand": (5.0, 4.6, 1.0),
    "temporal_demand": (4.6, 4.2, 1.1),
    "performance": (4.4, 4.3, 1.0),
    "effort": (5.1, 4.6, 1.0),
    "frustration": (3.8, 3.5, 1.2),
    "idea_mode": (1.5, 2.8, 1.1),
    "discussion_mode": (2.1, 1.2, 1.4),
    "evaluation_mode": (0.6, 0.6, 0.7),
    "steering_messages": (2.7, 5.0, 1.1),
    "draft_word_changes": (448.7, 322.95, 120.0),
    "messages_applied": (12.3, 9.0, 3.5),
}


def counterbalanced_design(n_participants: int) -> list[dict[str, object]]:
    """Counterbalance condition order and task assignment over four participant cells."""
    rows = []
    for i in range(n_participants):
        docuteam_first = i % 2 == 0
        docuteam_task = TASKS[(i // 2) % 2]
        for condition in CONDITIONS:
            is_docuteam = condition == CONDITIONS[0]
            rows.append(
                {
                    "participant": f"P{i + 1:02d}",
                    "condition": condition,
                    "order": 1 if is_docuteam == docuteam_first else 2,
                    "task": docuteam_task if is_docuteam else TASKS[1 - TASKS.index(docuteam_task)],
                }
            )
    return rows


def _scale_bounds(scale: str) -> tuple[int, int | None]:
    if scale == "count":
        return 0, None
    low, high = scale.split("-")
    return int(low), int(high)


def generate_example(seed: int = 0, n_participants: int = 20) -> StudyData:
    """Draw a synthetic study of the DocuTeam study's shape (deterministic for a seed)."""
    if n_participants < 4:
        raise ValueError("the example needs at least 4 participants (one per design cell)")
    rng = np.random.default_rng(seed)
    design = counterbalanced_design(n_participants)
    skill = {f"P{i + 1:02d}": rng.normal(0, 0.5) for i in range(n_participants)}
    rater_bias = {r: rng.normal(0, 0.2) for r in RATERS}
    rows: list[dict[str, object]] = []
    for measure in MEASURES:
        d_mean, b_mean, sd = _TARGETS[measure.name]
        low, high = _scale_bounds(measure.scale)
        for cell in design:
            mean = d_mean if cell["condition"] == CONDITIONS[0] else b_mean
            # Part of the spread is shared by a participant's two conditions (pairing).
            latent = mean + skill[str(cell["participant"])] * sd + rng.normal(0, 0.85 * sd)
            raters = RATERS if measure.group == "blind_rating" else ("",)
            for rater in raters:
                value = latent + (rater_bias[rater] + rng.normal(0, 0.4) if rater else 0.0)
                value = float(np.clip(np.rint(value), low, high if high is not None else np.inf))
                rows.append(
                    {
                        **cell,
                        "measure_group": measure.group,
                        "measure": measure.name,
                        "item": "",
                        "rater": rater,
                        "value": f"{value:g}",
                        "scale": measure.scale,
                    }
                )
    raw = pd.DataFrame(rows).astype(str)
    meta = {
        "synthetic": "true",
        "description": "example data with the shape of the DocuTeam user study; not study results",
        "generator": "hasbench.docuteam.study.example.generate_example",
        "seed": str(seed),
    }
    return validate_frame(raw, f"<synthetic example, seed {seed}>", meta=meta)
