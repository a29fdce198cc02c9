"""Statistics for paired comparisons: bootstrap CIs, signed-rank and t tests, agreement, power.

Every result is a frozen dataclass that records the parameters it was computed with
(``params``) and the scipy version (``scipy_version``), so a table can say exactly how
its numbers were obtained. Randomness (bootstrap, simulation) comes only from a
``numpy.random.Generator`` seeded by the ``seed`` argument.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy
from scipy import special
from scipy import stats as sps

SCIPY_VERSION: str = scipy.__version__

Alternative = Literal["two-sided", "less", "greater"]


def _as_1d(values: Any, name: str) -> np.ndarray:
    """Return ``values`` as a finite, non-empty 1-D float array or raise ValueError."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a one-dimensional sequence, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: no values")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"{name}: non-finite values at positions {bad.tolist()}")
    return arr


def _differences(x: Any, y: Any) -> np.ndarray:
    """Return the paired differences ``x - y`` after checking both samples."""
    xa, ya = _as_1d(x, "x"), _as_1d(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"paired samples need equal lengths, got {xa.size} and {ya.size}")
    return xa - ya


def _check_alternative(alternative: str) -> None:
    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError(
            f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}"
        )


@dataclass(frozen=True)
class _Result:
    """Fields shared by every result: its parameters and the scipy version."""

    params: dict[str, Any]
    scipy_version: str

    def to_dict(self) -> dict[str, Any]:
        """Return the result as a plain dict (for JSON or a table row)."""
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class BootstrapResult(_Result):
    """A bootstrap confidence interval around a statistic of one sample.

    ``degenerate`` is True when every resample gives the same value (e.g. all values
    equal); the interval then has zero width and ``note`` says why.
    """

    estimate: float
    low: float
    high: float
    n: int
    degenerate: bool
    note: str = ""


def _apply_statistic(statistic: Callable[..., Any], samples: np.ndarray) -> np.ndarray:
    """Apply ``statistic`` along the last axis, vectorized when it accepts ``axis``."""
    try:
        out = np.asarray(statistic(samples, axis=-1), dtype=float)
    except TypeError:
        out = np.apply_along_axis(statistic, -1, samples).astype(float)
    if out.shape != samples.shape[:-1]:
        raise ValueError(
            f"statistic must reduce the last axis to one number, got shape {out.shape}"
        )
    return out


def _bca_levels(
    data: np.ndarray,
    boot: np.ndarray,
    estimate: float,
    statistic: Callable[..., Any],
    alpha: float,
) -> tuple[float, float]:
    """Return the BCa-adjusted quantile levels (Efron 1987) for a two-sided interval."""
    n_boot = boot.size
    below = np.count_nonzero(boot < estimate) + 0.5 * np.count_nonzero(boot == estimate)
    # Keep the bias correction finite when the estimate lies outside every resample.
    p0 = min(max(below / n_boot, 0.5 / n_boot), 1 - 0.5 / n_boot)
    z0 = special.ndtri(p0)
    n = data.size
    leave_one_out = np.broadcast_to(data, (n, n))[~np.eye(n, dtype=bool)].reshape(n, n - 1)
    jack = _apply_statistic(statistic, leave_one_out)
    dev = jack.mean() - jack
    denom = 6.0 * float(np.sum(dev**2)) ** 1.5
    accel = float(np.sum(dev**3)) / denom if denom > 0 else 0.0
    z = special.ndtri(np.array([alpha, 1 - alpha]))
    levels = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    return float(levels[0]), float(levels[1])


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    statistic: Callable[..., Any] = np.mean,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    method: Literal["percentile", "bca"] = "percentile",
    seed: int = 0,
) -> BootstrapResult:
    """Bootstrap a confidence interval for ``statistic`` over the given values (e.g. tasks).

    All resamples are drawn at once and the statistic is applied along an axis, so
    numpy reductions (``np.mean``, ``np.median``) run vectorized; other callables are
    applied resample by resample.

    Args:
        values: one number per unit (task, participant); must be finite.
        statistic: reduces a sample to a number; should accept ``axis``.
        n_resamples: number of bootstrap resamples.
        confidence: two-sided confidence level in (0, 1).
        method: "percentile" or "bca" (bias-corrected and accelerated).
        seed: seed of the ``numpy.random.Generator`` that draws the resamples.

    Returns:
        A BootstrapResult with ``.estimate, .low, .high``.
    """
    data = _as_1d(values, "values")
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    params = {
        "statistic": getattr(statistic, "__name__", repr(statistic)),
        "n_resamples": int(n_resamples),
        "confidence": confidence,
        "method": method,
        "seed": seed,
    }
    estimate = float(_apply_statistic(statistic, data[None, :])[0])
    common = {"params": params, "scipy_version": SCIPY_VERSION, "n": int(data.size)}
    if np.all(data == data[0]):
        return BootstrapResult(
            estimate=estimate,
            low=estimate,
            high=estimate,
            degenerate=True,
            note="all values are equal; the interval has zero width",
            **common,
        )
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(int(n_resamples), data.size))
    boot = _apply_statistic(statistic, data[idx])
    if np.ptp(boot) == 0:
        return BootstrapResult(
            estimate=estimate,
            low=float(boot[0]),
            high=float(boot[0]),
            degenerate=True,
            note="every resample gives the same statistic; the interval has zero width",
            **common,
        )
    alpha = (1 - confidence) / 2
    if method == "bca":
        levels = _bca_levels(data, boot, estimate, statistic, alpha)
    else:
        levels = (alpha, 1 - alpha)
    low, high = np.quantile(boot, levels)
    return BootstrapResult(
        estimate=estimate, low=float(low), high=float(high), degenerate=False, **common
    )


# --------------------------------------------------------------------------- Wilcoxon


@dataclass(frozen=True)
class WilcoxonResult(_Result):
    """Wilcoxon signed-rank test on paired data (differences ``x - y``).

    ``statistic`` follows scipy: min(W+, W-) for a two-sided test, W+ otherwise.
    ``effect_size`` is the matched-pairs rank-biserial correlation
    (W+ - W-) / (W+ + W-): +1 when every non-zero difference is positive.
    """

    statistic: float
    w_plus: float
    w_minus: float
    n: int
    n_nonzero: int
    pvalue: float
    method_used: str
    effect_size: float
    alternative: str
    note: str = ""
    test: str = field(default="wilcoxon", init=False)


def _signed_rank_sums(d: np.ndarray, zero_method: str) -> tuple[float, float]:
    """Return (W+, W-) for the differences under the given zero handling."""
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = sps.rankdata(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    w_minus = float(ranks[d < 0].sum())
    if zero_method == "zsplit":
        half_zero = float(ranks[d == 0].sum()) / 2
        w_plus += half_zero
        w_minus += half_zero
    return w_plus, w_minus


def _choose_wilcoxon_method(d: np.ndarray, zero_method: str) -> str:
    """Resolve method="auto" the way scipy does, so the method used is known exactly.

    Exact null distribution when n <= 50 without ties or zeros; otherwise complete
    enumeration of the sign flips when n <= 13; otherwise the normal approximation.
    """
    if d.size > 50:
        return "asymptotic"
    has_zero = bool(np.any(d == 0))
    ranked = np.abs(d[d != 0]) if zero_method == "wilcox" else np.abs(d)
    has_ties = np.unique(ranked).size < ranked.size
    if not (has_ties or has_zero):
        return "exact"
    if d.size <= 13:
        return "permutation"
    return "asymptotic"


def wilcoxon(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    *,
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    correction: bool = False,
    method: Literal["auto", "exact", "asymptotic"] = "auto",
    alternative: Alternative = "two-sided",
) -> WilcoxonResult:
    """Wilcoxon signed-rank test of ``x`` against ``y`` (paired), p-value from scipy.

    With ``method="auto"`` the method is resolved before calling scipy and passed
    explicitly, so ``method_used`` ("exact", "permutation" = exact enumeration of sign
    flips, or "asymptotic") is what produced the p-value. If every difference is zero
    the test has nothing to rank: the result has p = 1, effect size 0 and a note.
    """
    d = _differences(x, y)
    _check_alternative(alternative)
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise ValueError(f"zero_method must be wilcox, pratt or zsplit, got {zero_method!r}")
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"method must be auto, exact or asymptotic, got {method!r}")
    params = {
        "zero_method": zero_method,
        "correction": correction,
        "method": method,
        "alternative": alternative,
    }
    n_nonzero = int(np.count_nonzero(d))
    common = {
        "params": params,
        "scipy_version": SCIPY_VERSION,
        "n": int(d.size),
        "n_nonzero": n_nonzero,
        "alternative": alternative,
    }
    if n_nonzero == 0:
        return WilcoxonResult(
            statistic=0.0,
            w_plus=0.0,
            w_minus=0.0,
            pvalue=1.0,
            method_used="none",
            effect_size=0.0,
            note="all differences are zero; there is no evidence of a difference",
            **common,
        )
    w_plus, w_minus = _signed_rank_sums(d, zero_method)
    used = _choose_wilcoxon_method(d, zero_method) if method == "auto" else method
    scipy_method: Any = sps.PermutationMethod() if used == "permutation" else used
    res = sps.wilcoxon(
        d,
        zero_method=zero_method,
        correction=correction,
        method=scipy_method,
        alternative=alternative,
    )
    statistic = min(w_plus, w_minus) if alternative == "two-sided" else w_plus
    return WilcoxonResult(
        statistic=statistic,
        w_plus=w_plus,
        w_minus=w_minus,
        pvalue=float(res.pvalue),
        method_used=used,
        effect_size=(w_plus - w_minus) / (w_plus + w_minus),
        **common,
    )


# --------------------------------------------------------------------------- paired t


@dataclass(frozen=True)
class PairedTResult(_Result):
    """Paired t-test on ``x - y``; ``effect_size`` is Cohen's d_z (mean / SD of differences)."""

    statistic: float
    df: int
    pvalue: float
    mean_diff: float
    sd_diff: float
    ci: tuple[float, float]
    effect_size: float
    n: int
    alternative: str
    test: str = field(default="paired-t", init=False)


def paired_t(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    alternative: Alternative = "two-sided",
    confidence: float = 0.95,
) -> PairedTResult:
    """Paired t-test of ``x`` against ``y`` with the CI of the mean difference.

    Raises:
        ValueError: fewer than two pairs, or all differences equal (the t statistic is
            undefined when the differences have no variance).
    """
    d = _differences(x, y)
    _check_alternative(alternative)
    if d.size < 2:
        raise ValueError("paired t-test needs at least two pairs")
    sd = float(np.std(d, ddof=1))
    if sd == 0:
        raise ValueError(
            "paired t-test is undefined: every difference equals "
            f"{d[0]:g}, so the differences have zero variance"
        )
    res = sps.ttest_rel(np.asarray(x, float), np.asarray(y, float), alternative=alternative)
    ci = res.confidence_interval(confidence_level=confidence)
    mean = float(d.mean())
    return PairedTResult(
        params={"alternative": alternative, "confidence": confidence},
        scipy_version=SCIPY_VERSION,
        statistic=float(res.statistic),
        df=int(d.size - 1),
        pvalue=float(res.pvalue),
        mean_diff=mean,
        sd_diff=sd,
        ci=(float(ci.low), float(ci.high)),
        effect_size=mean / sd,
        n=int(d.size),
        alternative=alternative,
    )


# --------------------------------------------------------------------------- choice


@dataclass(frozen=True)
class ShapiroResult(_Result):
    """Shapiro-Wilk normality test on the paired differences."""

    statistic: float
    pvalue: float
    normal: bool
    n: int


@dataclass(frozen=True)
class PairedTestResult(_Result):
    """A paired comparison whose test was chosen by a normality check on the differences.

    ``test`` is "paired-t" or "wilcoxon"; ``result`` holds that test's full result and
    ``shapiro`` the normality check (None when the differences are constant, which
    cannot be checked and is treated as non-normal; ``note`` says so).
    """

    test: str
    result: WilcoxonResult | PairedTResult
    shapiro: ShapiroResult | None
    alpha: float
    note: str = ""

    @property
    def statistic(self) -> float:
        """The chosen test's statistic."""
        return self.result.statistic

    @property
    def pvalue(self) -> float:
        """The chosen test's p-value."""
        return self.result.pvalue

    @property
    def effect_size(self) -> float:
        """The chosen test's effect size (d_z for t, rank-biserial for Wilcoxon)."""
        return self.result.effect_size


def paired_test(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, alpha: float = 0.05
) -> PairedTestResult:
    """Shapiro-Wilk on ``x - y``; paired t-test if p >= alpha, else Wilcoxon (two-sided).

    Raises:
        ValueError: fewer than three pairs (Shapiro-Wilk needs three).
    """
    d = _differences(x, y)
    if d.size < 3:
        raise ValueError("paired_test needs at least three pairs (Shapiro-Wilk needs three)")
    params = {"alpha": alpha, "normality_test": "shapiro", "alternative": "two-sided"}
    if np.ptp(d) == 0:
        return PairedTestResult(
            params=params,
            scipy_version=SCIPY_VERSION,
            test="wilcoxon",
            result=wilcoxon(x, y),
            shapiro=None,
            alpha=alpha,
            note="the differences are constant, so normality cannot be checked",
        )
    sw = sps.shapiro(d)
    shapiro = ShapiroResult(
        params={"alpha": alpha},
        scipy_version=SCIPY_VERSION,
        statistic=float(sw.statistic),
        pvalue=float(sw.pvalue),
        normal=bool(sw.pvalue >= alpha),
        n=int(d.size),
    )
    chosen = paired_t(x, y) if shapiro.normal else wilcoxon(x, y)
    return PairedTestResult(
        params=params,
        scipy_version=SCIPY_VERSION,
        test=chosen.test,
        result=chosen,
        shapiro=shapiro,
        alpha=alpha,
    )


# --------------------------------------------------------------------------- reporting


def _format_p(p: float) -> str:
    if p < 0.001:
        return "p < .001"
    text = f"{p:.3f}"
    return "p = " + (text[1:] if text.startswith("0") else text)


def format_apa(result: WilcoxonResult | PairedTResult | PairedTestResult) -> str:
    """Format a test result in APA style.

    Examples: ``W = 31.0, p = .013`` (Wilcoxon) and ``t(19) = 3.68, p = .002`` (paired t).
    """
    if isinstance(result, PairedTestResult):
        return format_apa(result.result)
    if isinstance(result, WilcoxonResult):
        return f"W = {result.statistic:.1f}, {_format_p(result.pvalue)}"
    if isinstance(result, PairedTResult):
        return f"t({result.df}) = {result.statistic:.2f}, {_format_p(result.pvalue)}"
    raise TypeError(f"format_apa cannot format {type(result).__name__}")


def stars(p: float) -> str:
    """Significance stars: ``***`` p < .001, ``**`` p < .01, ``*`` p < .05, else ``""``."""
    if p < 0.001:
        return "***"
    if p < 0.01:
        return "**"
    if p < 0.05:
        return "*"
    return ""


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AgreementResult(_Result):
    """Weighted Cohen's kappa between two raters with a bootstrap CI over rated items."""

    kappa: float
    low: float
    high: float
    n: int
    n_resamples_used: int


def _kappa_from_counts(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted kappa for confusion-count arrays of shape (..., K, K); NaN if undefined."""
    total = counts.sum(axis=(-2, -1), keepdims=True)
    observed = counts / total
    expected = observed.sum(axis=-1, keepdims=True) * observed.sum(axis=-2, keepdims=True)
    num = (weights * observed).sum(axis=(-2, -1))
    den = (weights * expected).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, 1 - num / den, np.nan)


def weighted_kappa(
    rater_a: Sequence[float] | np.ndarray,
    rater_b: Sequence[float] | np.ndarray,
    categories: Sequence[float],
    *,
    weights: Literal["linear", "quadratic"] = "quadratic",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> AgreementResult:
    """Weighted kappa of two raters' ordinal ratings of the same items, with a percentile CI.

    The CI resamples items; resamples in which kappa is undefined (both raters use one
    category) are dropped and counted in ``n_resamples_used``.

    Raises:
        ValueError: unequal lengths, a rating outside ``categories``, or kappa undefined
            on the full data.
    """
    a, b = _as_1d(rater_a, "rater_a"), _as_1d(rater_b, "rater_b")
    if a.shape != b.shape:
        raise ValueError(f"raters rated different numbers of items: {a.size} and {b.size}")
    cats = np.asarray(categories, dtype=float)
    for name, r in (("rater_a", a), ("rater_b", b)):
        outside = sorted(set(r[~np.isin(r, cats)].tolist()))
        if outside:
            raise ValueError(f"{name}: ratings {outside} are not among categories {cats.tolist()}")
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be 'linear' or 'quadratic', got {weights!r}")
    k = cats.size
    power = 2 if weights == "quadratic" else 1
    grid = np.arange(k)
    w = (np.abs(grid[:, None] - grid[None, :]) / (k - 1)) ** power
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    full = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k)
    kappa = float(_kappa_from_counts(full, w))
    if math.isnan(kappa):
        raise ValueError("weighted kappa is undefined: both raters used a single category")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(int(n_resamples), a.size))
    cells = ia[idx] * k + ib[idx] + (np.arange(int(n_resamples)) * k * k)[:, None]
    counts = np.bincount(cells.ravel(), minlength=int(n_resamples) * k * k)
    boot = _kappa_from_counts(counts.reshape(int(n_resamples), k, k), w)
    boot = boot[~np.isnan(boot)]
    alpha = (1 - confidence) / 2
    low, high = np.quantile(boot, (alpha, 1 - alpha))
    return AgreementResult(
        params={
            "weights": weights,
            "categories": cats.tolist(),
            "confidence": confidence,
            "n_resamples": int(n_resamples),
            "ci_method": "percentile bootstrap over items",
            "seed": seed,
        },
        scipy_version=SCIPY_VERSION,
        kappa=kappa,
        low=float(low),
        high=float(high),
        n=int(a.size),
        n_resamples_used=int(boot.size),
    )


@dataclass(frozen=True)
class FleissResult(_Result):
    """Fleiss' kappa of several raters who each put every item into one category."""

    kappa: float
    """NaN when every rating falls in one category (chance agreement is then 1)."""
    observed: float
    """Mean agreement over items (the share of agreeing rater pairs)."""
    expected: float
    """Agreement expected by chance from the overall category shares."""
    n_items: int
    n_raters: int


def category_counts(labels: Sequence[Sequence[Any]], categories: Sequence[Any]) -> np.ndarray:
    """Items x categories table: how many raters put each item in each category.

    Args:
        labels: One row per item, one label per rater.
        categories: Every category a label may take.

    Raises:
        ValueError: a label outside ``categories``.
    """
    index = {category: j for j, category in enumerate(categories)}
    table = np.zeros((len(labels), len(categories)), dtype=int)
    for i, row in enumerate(labels):
        for label in row:
            if label not in index:
                raise ValueError(f"item {i}: label {label!r} is not among {list(categories)}")
            table[i, index[label]] += 1
    return table


def fleiss_kappa(counts: Sequence[Sequence[int]] | np.ndarray) -> FleissResult:
    """Fleiss' kappa from an items x categories count table (Fleiss 1971).

    Each row gives how many raters chose each category for one item; every item must be
    rated by the same number (at least two) of raters.

    Raises:
        ValueError: not a 2-D table of non-negative counts, fewer than two raters, or
            items rated by different numbers of raters.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2 or table.size == 0 or (table < 0).any():
        raise ValueError("counts: expected a non-empty items x categories table of counts >= 0")
    raters = table.sum(axis=1)
    if not np.all(raters == raters[0]):
        uneven = sorted({int(r) for r in raters})
        raise ValueError(f"counts: items are rated by different numbers of raters: {uneven}")
    n = int(raters[0])
    if n < 2:
        raise ValueError(f"counts: Fleiss' kappa needs at least two raters per item, got {n}")
    per_item = (np.square(table).sum(axis=1) - n) / (n * (n - 1))
    observed = float(per_item.mean())
    shares = table.sum(axis=0) / table.sum()
    expected = float(np.square(shares).sum())
    kappa = (observed - expected) / (1 - expected) if expected < 1 else math.nan
    return FleissResult(
        params={"method": "Fleiss (1971)", "categories": int(table.shape[1])},
        scipy_version=SCIPY_VERSION,
        kappa=float(kappa),
        observed=observed,
        expected=expected,
        n_items=int(table.shape[0]),
        n_raters=n,
    )


# --------------------------------------------------------------------------- power


@dataclass(frozen=True)
class PowerResult(_Result):
    """Smallest number of participants reaching the target power in a paired design."""

    n: int
    power: float
    effect_size: float
    test: str
    method: str


def _t_power(effect_size: float, n: np.ndarray, alpha: float) -> np.ndarray:
    """Two-sided paired t-test power at d_z = effect_size for each n (noncentral t)."""
    df = n - 1
    crit = sps.t.ppf(1 - alpha / 2, df)
    nc = effect_size * np.sqrt(n)
    return sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc)


def paired_sample_size(
    effect_size: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    test: Literal["t", "wilcoxon"] = "t",
    n_sim: int = 2000,
    seed: int = 0,
    max_n: int = 1000,
) -> PowerResult:
    """Participants needed for a two-sided paired test to reach ``power`` at d_z = effect_size.

    For the t-test the power comes from the noncentral t distribution (a formula). For
    the Wilcoxon signed-rank test it is simulated: ``n_sim`` studies with normal
    differences (mean ``effect_size``, SD 1), the same random draws reused for every n.

    Raises:
        ValueError: a non-positive effect size, or the target not reached by ``max_n``.
    """
    if not effect_size > 0:
        raise ValueError(f"effect_size must be positive, got {effect_size}")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError("alpha and power must lie in (0, 1)")
    ns = np.arange(2, max_n + 1)
    t_powers = _t_power(effect_size, ns, alpha)
    reached = np.flatnonzero(t_powers >= power)
    if reached.size == 0:
        raise ValueError(f"power {power} is not reached with up to {max_n} participants")
    n_t = int(ns[reached[0]])
    params = {"alpha": alpha, "target_power": power, "sides": 2, "max_n": max_n}
    if test == "t":
        return PowerResult(
            params=params,
            scipy_version=SCIPY_VERSION,
            n=n_t,
            power=float(t_powers[reached[0]]),
            effect_size=effect_size,
            test="paired-t",
            method="noncentral t formula",
        )
    if test != "wilcoxon":
        raise ValueError(f"test must be 't' or 'wilcoxon', got {test!r}")
    rng = np.random.default_rng(seed)
    draws = rng.standard_normal((int(n_sim), max_n)) + effect_size
    start = max(3, n_t // 2)
    for n in range(start, max_n + 1):
        res = sps.wilcoxon(
            draws[:, :n],
            axis=1,
            zero_method="wilcox",
            correction=False,
            method="exact" if n <= 50 else "asymptotic",
        )
        achieved = float(np.mean(res.pvalue < alpha))
        if achieved >= power:
            return PowerResult(
                params={**params, "n_sim": int(n_sim), "seed": seed},
                scipy_version=SCIPY_VERSION,
                n=n,
                power=achieved,
                effect_size=effect_size,
                test="wilcoxon",
                method="simulation (normal differences)",
            )
    raise ValueError(f"power {power} is not reached with up to {max_n} participants")
