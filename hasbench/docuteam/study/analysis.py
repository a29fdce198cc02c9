"""The DocuTeam study analysis (§5.1.5): paired tests per measure, agreement, power.

Blind ratings are averaged over raters per plan, survey items and NASA-TLX dimensions
(plus the overall TLX, the mean of the dimensions) are compared with the Wilcoxon
signed-rank test (options :data:`WILCOXON_OPTIONS`), and interaction-log measures with
:func:`hasbench.stats.paired_test` (Shapiro-Wilk on the differences, then paired t or
Wilcoxon). Differences are DocuTeam minus Baseline, so positive effect sizes favour
higher values with DocuTeam. Every result row names its test's options and the scipy
version that computed it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from hasbench.docuteam.study.data import (
    MEASURE_GROUPS,
    MEASURES,
    StudyData,
    StudyDataError,
    measure_label,
)
from hasbench.stats import (
    PairedTestResult,
    PairedTResult,
    WilcoxonResult,
    format_apa,
    paired_sample_size,
    paired_test,
    stars,
    weighted_kappa,
    wilcoxon,
)

TLX_OVERALL = "overall"
WILCOXON_OPTIONS = MappingProxyType(
    {"zero_method": "wilcox", "correction": False, "method": "auto"}
)
"""Wilcoxon options of the Likert tests: zero differences dropped, no continuity
correction, method chosen by the data (exact null distribution for n <= 50 without ties
or zeros, else enumeration of the sign flips for n <= 13, else the normal
approximation); each result's ``method`` column says which one ran."""
POWER_EFFECT_SIZES: tuple[float, ...] = (0.3, 0.5, 0.8)
POWER_TARGET = 0.8


@dataclass(frozen=True)
class StudyAnalysis:
    """Everything computed from one study dataset.

    Attributes:
        data: the validated input.
        alpha: significance level (also the Shapiro-Wilk level for interaction measures).
        seed: seed for bootstrap CIs and power simulations.
        scores: one score per participant, condition and measure (long format).
        results: one row per measure: descriptives, test, statistic, p, effect size.
        tests: the full stats result per (measure_group, measure).
        agreement: weighted kappa between the two raters per blind-rating dimension.
        power: participants needed for a paired design at several effect sizes.
    """

    data: StudyData
    alpha: float
    seed: int
    scores: pd.DataFrame
    results: pd.DataFrame
    tests: dict[tuple[str, str], Any] = field(repr=False)
    agreement: pd.DataFrame
    power: pd.DataFrame

    @property
    def synthetic(self) -> bool:
        """True when the analysed data are synthetic."""
        return self.data.synthetic


def participant_scores(data: StudyData) -> pd.DataFrame:
    """Average each measure over items and raters per participant and condition.

    Adds the NASA-TLX overall score (mean of the dimensions) when TLX data are present.
    """
    frame = data.frame
    scores = (
        frame.groupby(["measure_group", "measure", "participant", "condition"], sort=False)["value"]
        .mean()
        .reset_index(name="score")
    )
    tlx = scores[scores["measure_group"] == "nasa_tlx"]
    if not tlx.empty:
        overall = tlx.groupby(["participant", "condition"], sort=False)["score"].mean()
        overall = overall.reset_index().assign(measure_group="nasa_tlx", measure=TLX_OVERALL)
        scores = pd.concat([scores, overall[scores.columns]], ignore_index=True)
    return scores


def _measure_order(scores: pd.DataFrame) -> list[tuple[str, str]]:
    """Measures in the order of the paper: groups, then known measures, then the rest."""
    present = set(map(tuple, scores[["measure_group", "measure"]].drop_duplicates().values))
    known = [(m.group, m.name) for m in MEASURES]
    ordered = []
    for group in MEASURE_GROUPS:
        ordered += [k for k in known if k[0] == group and k in present]
        ordered += sorted(k for k in present if k[0] == group and k not in known)
    return ordered


def _result_row(
    group: str, measure: str, test: Any, x: pd.Series, y: pd.Series, conditions: tuple[str, str]
) -> dict[str, Any]:
    inner = test.result if isinstance(test, PairedTestResult) else test
    shapiro = test.shapiro if isinstance(test, PairedTestResult) else None
    treat, control = conditions
    return {
        "measure_group": group,
        "measure": measure,
        "label": "Overall" if measure == TLX_OVERALL else measure_label(group, measure),
        "n": int(x.size),
        f"{treat}_mean": float(x.mean()),
        f"{treat}_sd": float(x.std(ddof=1)),
        f"{control}_mean": float(y.mean()),
        f"{control}_sd": float(y.std(ddof=1)),
        "test": inner.test,
        "statistic": float(inner.statistic),
        "df": inner.df if isinstance(inner, PairedTResult) else None,
        "pvalue": float(inner.pvalue),
        "effect_size": float(inner.effect_size),
        "effect_size_kind": "d_z" if isinstance(inner, PairedTResult) else "rank-biserial r",
        "method": inner.method_used if isinstance(inner, WilcoxonResult) else "t distribution",
        "shapiro_w": shapiro.statistic if shapiro else None,
        "shapiro_p": shapiro.pvalue if shapiro else None,
        "options": json.dumps(inner.params, sort_keys=True),
        "scipy_version": inner.scipy_version,
        "stars": stars(inner.pvalue),
        "apa": format_apa(inner),
        "note": getattr(test, "note", "") or getattr(inner, "note", ""),
    }


def _agreement(data: StudyData, seed: int) -> pd.DataFrame:
    """Quadratic-weighted kappa between two raters per blind-rating dimension."""
    ratings = data.frame[data.frame["measure_group"] == "blind_rating"]
    rows = []
    for measure, part in ratings.groupby("measure", sort=False):
        base = {"measure": measure, "label": measure_label("blind_rating", measure)}
        raters = sorted(part["rater"].unique())
        if len(raters) != 2 or (part["item"] != "").any():
            note = "kappa needs exactly two raters and single-item ratings"
            rows.append({**base, "n_plans": None, "kappa": None, "note": note})
            continue
        wide = part.pivot_table(
            index=["participant", "condition"], columns="rater", values="value", aggfunc="first"
        ).dropna()
        low, high = (int(v) for v in part["scale"].iloc[0].split("-"))
        res = weighted_kappa(
            wide[raters[0]], wide[raters[1]], list(range(low, high + 1)), seed=seed
        )
        rows.append(
            {
                **base,
                "n_plans": res.n,
                "kappa": res.kappa,
                "ci_low": res.low,
                "ci_high": res.high,
                "weights": res.params["weights"],
                "ci": f"{res.params['confidence']:.0%} {res.params['ci_method']}, "
                f"{res.params['n_resamples']} resamples",
                "note": "",
            }
        )
    return pd.DataFrame(rows)


def _power(alpha: float, seed: int) -> pd.DataFrame:
    """Participants needed for 80% power at several d_z, paired t and Wilcoxon."""
    rows = []
    for effect in POWER_EFFECT_SIZES:
        for test in ("t", "wilcoxon"):
            res = paired_sample_size(
                effect, alpha=alpha, power=POWER_TARGET, test=test, n_sim=1000, seed=seed
            )
            rows.append(
                {
                    "effect_size_dz": effect,
                    "test": res.test,
                    "n_participants": res.n,
                    "achieved_power": res.power,
                    "target_power": POWER_TARGET,
                    "alpha": alpha,
                    "method": res.method,
                }
            )
    return pd.DataFrame(rows)


def analyze(data: StudyData, alpha: float = 0.05, seed: int = 0) -> StudyAnalysis:
    """Run the full study analysis on validated data.

    Raises:
        StudyDataError: fewer than three participants (the tests need three pairs).
        ValueError: ``alpha`` outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if len(data.participants) < 3:
        raise StudyDataError(
            data.source, [f"need at least 3 participants, found {len(data.participants)}"]
        )
    treat, control = data.conditions
    scores = participant_scores(data)
    rows = []
    tests: dict[tuple[str, str], Any] = {}
    for group, measure in _measure_order(scores):
        part = scores[(scores["measure_group"] == group) & (scores["measure"] == measure)]
        wide = part.pivot(index="participant", columns="condition", values="score")
        x, y = wide[treat], wide[control]
        if group == "interaction":
            test: Any = paired_test(x.to_numpy(), y.to_numpy(), alpha=alpha)
        else:
            test = wilcoxon(x.to_numpy(), y.to_numpy(), **WILCOXON_OPTIONS)
        tests[(group, measure)] = test
        rows.append(_result_row(group, measure, test, x, y, data.conditions))
    results = pd.DataFrame(rows)
    results["significant"] = results["pvalue"] < alpha
    return StudyAnalysis(
        data=data,
        alpha=alpha,
        seed=seed,
        scores=scores,
        results=results,
        tests=tests,
        agreement=_agreement(data, seed),
        power=_power(alpha, seed),
    )


def likert_counts(data: StudyData, group: str) -> pd.DataFrame:
    """Count responses per measure, condition and scale point (all points, zeros kept)."""
    part = data.frame[data.frame["measure_group"] == group]
    rows = []
    for (measure, condition), values in part.groupby(["measure", "condition"], sort=False):
        low, high = (int(v) for v in values["scale"].iloc[0].split("-"))
        counts = np.bincount(values["value"].astype(int) - low, minlength=high - low + 1)
        for point, count in zip(range(low, high + 1), counts, strict=True):
            rows.append(
                {"measure": measure, "condition": condition, "point": point, "count": int(count)}
            )
    return pd.DataFrame(rows)
