"""Tests for hasbench.stats.

Reference values come from published worked examples and are re-derived here without
scipy: the exact signed-rank null distribution by enumerating sign flips, the normal
approximation from math.erfc, and Student's t distribution from the closed-form series
of Abramowitz & Stegun 26.7.3/26.7.4 (integer degrees of freedom).
"""

import itertools
import math

import numpy as np
import pytest
import scipy

from hasbench.stats import (
    PairedTResult,
    WilcoxonResult,
    bootstrap_ci,
    format_apa,
    paired_sample_size,
    paired_t,
    paired_test,
    stars,
    weighted_kappa,
    wilcoxon,
)

# Hollander & Wolfe, Nonparametric Statistical Methods (2nd ed., 1999), Example 3.1:
# Hamilton depression scale factor IV, first and second visit, nine patients.
# Published: T+ = 40, exact one-sided P(T+ >= 40) = .020 (R's wilcox.test example prints
# V = 40, p-value = 0.01953).
HW_FIRST = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_SECOND = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]

# Cushny & Peebles (1905), as analysed by Student (1908): extra hours of sleep with two
# drugs for the same ten patients (R's datasets::sleep). Published paired t-test:
# t = 4.0621, df = 9, p = 0.002833, mean difference 1.58, 95% CI [0.7001, 2.4599].
# Published signed-rank test (normal approximation with tie and continuity correction,
# the zero difference dropped): V = 0, p = 0.009091.
SLEEP_DRUG1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_DRUG2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]

# Darwin's Zea mays data from Fisher, The Design of Experiments (1935), §17: height
# difference (eighths of an inch) of crossed minus self-fertilised plants in 15 pairs.
# Published paired t-test: t = 2.148 with 14 df, just beyond the 5% point (p = .0497).
# The signed-rank statistic is 24 with exact two-sided p = 0.0413 (the worked example
# of SciPy's `wilcoxon` documentation).
DARWIN_DIFF = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]

# Wikipedia, "Wilcoxon signed-rank test", worked example (10 pairs, one zero, one tie):
# signed-rank sum W = 9 over 9 non-zero pairs, i.e. W+ = 27 and W- = 18.
WIKI_X1 = [125, 115, 130, 140, 140, 115, 140, 125, 140, 135]
WIKI_X2 = [110, 122, 125, 120, 140, 124, 123, 137, 135, 145]


def student_t_two_sided_p(t: float, df: int) -> float:
    """Two-sided p of Student's t (integer df), Abramowitz & Stegun 26.7.3 / 26.7.4."""
    theta = math.atan(abs(t) / math.sqrt(df))
    c, s = math.cos(theta), math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, c
        if df > 1:
            total = term
            for k in range(3, df - 1, 2):
                term *= (k - 1) / k * c * c
                total += term
        a = 2 / math.pi * (theta + s * total)
    else:
        total, term = 1.0, 1.0
        for k in range(2, df - 1, 2):
            term *= (k - 1) / k * c * c
            total += term
        a = s * total
    return 1 - a


def normal_two_sided_p(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


def enumerate_signed_rank(ranks: np.ndarray, w_plus: float) -> dict[str, float]:
    """Exact p-values of W+ by enumerating every assignment of signs to the ranks."""
    signs = np.array(list(itertools.product([0, 1], repeat=len(ranks))))
    null = signs @ ranks
    greater = np.mean(null >= w_plus - 1e-9)
    less = np.mean(null <= w_plus + 1e-9)
    return {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}


def test_student_t_reference_matches_known_points():
    # Table values: t(9) = 2.262 and t(14) = 2.145 are the two-sided 5% points.
    assert student_t_two_sided_p(2.262, 9) == pytest.approx(0.05, abs=2e-4)
    assert student_t_two_sided_p(2.145, 14) == pytest.approx(0.05, abs=2e-4)


# ------------------------------------------------------------------ Wilcoxon examples


def test_wilcoxon_hollander_wolfe_depression():
    res = wilcoxon(HW_FIRST, HW_SECOND, alternative="greater")
    assert res.w_plus == 40 and res.w_minus == 5 and res.statistic == 40
    assert res.method_used == "exact"
    ranks = np.arange(1, 10, dtype=float)
    assert res.pvalue == pytest.approx(enumerate_signed_rank(ranks, 40)["greater"])
    assert res.pvalue == pytest.approx(0.020, abs=5e-4)
    two = wilcoxon(HW_FIRST, HW_SECOND)
    assert two.statistic == 5 and two.pvalue == pytest.approx(2 * 0.01953125)


def test_wilcoxon_sleep_normal_approximation_with_ties_and_zero():
    res = wilcoxon(SLEEP_DRUG1, SLEEP_DRUG2, correction=True, method="asymptotic")
    assert res.n == 10 and res.n_nonzero == 9
    assert res.w_plus == 0 and res.statistic == 0
    assert res.method_used == "asymptotic"
    # Independent computation: n = 9, one tie of size 2 (1.3 appears twice).
    n = 9
    mean = n * (n + 1) / 4
    var = n * (n + 1) * (2 * n + 1) / 24 - (2**3 - 2) / 48
    z = (0 - mean + 0.5) / math.sqrt(var)
    assert res.pvalue == pytest.approx(normal_two_sided_p(z), rel=1e-9)
    assert res.pvalue == pytest.approx(0.009091, abs=5e-7)
    assert res.effect_size == -1.0


def test_wilcoxon_darwin_zea_mays_exact():
    res = wilcoxon(DARWIN_DIFF, np.zeros(15))
    assert res.method_used == "exact"
    assert (res.w_minus, res.statistic) == (24, 24)
    ranks = np.arange(1, 16, dtype=float)
    expected = enumerate_signed_rank(ranks, res.w_plus)["two-sided"]
    assert res.pvalue == pytest.approx(expected)
    assert res.pvalue == pytest.approx(0.0413, abs=5e-5)
    assert res.effect_size == pytest.approx((96 - 24) / 120)


def test_wilcoxon_wikipedia_rank_sums_with_tie_and_zero():
    res = wilcoxon(WIKI_X1, WIKI_X2)
    assert (res.w_plus, res.w_minus) == (27, 18)
    assert res.w_plus - res.w_minus == 9
    assert res.n_nonzero == 9 and res.method_used == "permutation"
    # Permutation p: enumerate sign flips of the mid-ranks of the non-zero differences.
    d = np.array(WIKI_X1, float) - np.array(WIKI_X2, float)
    d = d[d != 0]
    ranks = scipy.stats.rankdata(np.abs(d))
    assert res.pvalue == pytest.approx(enumerate_signed_rank(ranks, 27)["two-sided"])


@pytest.mark.parametrize("n", range(1, 13))
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_wilcoxon_exact_matches_brute_force(n, alternative):
    rng = np.random.default_rng(n)
    x = rng.normal(0.3, 1, n)
    y = rng.normal(0, 1, n)
    res = wilcoxon(x, y, alternative=alternative, method="exact")
    d = x - y
    ranks = np.arange(1, n + 1, dtype=float)
    w_plus = float(ranks[np.argsort(np.argsort(np.abs(d)))][d > 0].sum())
    assert res.w_plus == pytest.approx(w_plus)
    assert res.pvalue == pytest.approx(enumerate_signed_rank(ranks, w_plus)[alternative])
    expected_stat = min(res.w_plus, res.w_minus) if alternative == "two-sided" else res.w_plus
    assert res.statistic == expected_stat


def test_wilcoxon_zero_methods_rank_sums():
    x = [0, 0, 1, -2, 3, 4]
    y = [0] * 6
    assert wilcoxon(x, y).n_nonzero == 4
    wil = wilcoxon(x, y)
    assert (wil.w_plus, wil.w_minus) == (1 + 3 + 4, 2)
    pratt = wilcoxon(x, y, zero_method="pratt")
    assert (pratt.w_plus, pratt.w_minus) == (3 + 5 + 6, 4)
    zsplit = wilcoxon(x, y, zero_method="zsplit")
    assert (zsplit.w_plus, zsplit.w_minus) == (3 + 5 + 6 + 1.5, 4 + 1.5)


def test_wilcoxon_auto_uses_normal_approximation_for_large_n():
    rng = np.random.default_rng(0)
    res = wilcoxon(rng.normal(size=60), rng.normal(size=60))
    assert res.method_used == "asymptotic"
    assert res.params["method"] == "auto" and res.scipy_version == scipy.__version__


def test_wilcoxon_all_differences_zero_is_a_clear_result():
    res = wilcoxon([3, 4, 5], [3, 4, 5])
    assert res.pvalue == 1.0 and res.effect_size == 0.0 and res.n_nonzero == 0
    assert "zero" in res.note
    assert format_apa(res) == "W = 0.0, p = 1.000"


def test_wilcoxon_rejects_bad_input():
    with pytest.raises(ValueError, match="equal lengths"):
        wilcoxon([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="non-finite"):
        wilcoxon([1, float("nan")], [1, 2])
    with pytest.raises(ValueError, match="alternative"):
        wilcoxon([1, 2], [2, 1], alternative="bigger")


# ------------------------------------------------------------------ paired t examples


def test_paired_t_student_sleep():
    res = paired_t(SLEEP_DRUG2, SLEEP_DRUG1)
    assert res.df == 9
    assert res.statistic == pytest.approx(4.0621, abs=5e-5)
    assert res.mean_diff == pytest.approx(1.58)
    assert res.pvalue == pytest.approx(student_t_two_sided_p(res.statistic, 9), rel=1e-6)
    assert res.pvalue == pytest.approx(0.002833, abs=5e-7)
    assert res.ci == pytest.approx((0.7001142, 2.4598858), abs=5e-7)
    assert res.effect_size == pytest.approx(
        1.58 / np.std(np.subtract(SLEEP_DRUG2, SLEEP_DRUG1), ddof=1)
    )
    assert format_apa(res) == "t(9) = 4.06, p = .003"


def test_paired_t_darwin_zea_mays():
    res = paired_t(DARWIN_DIFF, np.zeros(15))
    assert res.df == 14
    assert res.statistic == pytest.approx(2.148, abs=5e-4)
    assert res.mean_diff == pytest.approx(314 / 15)
    assert res.pvalue == pytest.approx(student_t_two_sided_p(res.statistic, 14), rel=1e-6)
    assert res.pvalue == pytest.approx(0.0497, abs=5e-5)


def test_paired_t_constant_differences_is_an_error():
    with pytest.raises(ValueError, match="zero variance"):
        paired_t([2, 3, 4], [1, 2, 3])


# ------------------------------------------------------------------ paired_test choice


def test_paired_test_normal_differences_use_t():
    rng = np.random.default_rng(3)
    x = rng.normal(0, 1, 20)
    res = paired_test(x + rng.normal(0.5, 1, 20), x)
    assert res.shapiro is not None and res.shapiro.normal
    assert res.test == "paired-t" and isinstance(res.result, PairedTResult)
    assert res.pvalue == res.result.pvalue and res.statistic == res.result.statistic


def test_paired_test_skewed_differences_use_wilcoxon():
    base = np.zeros(20)
    skewed = (
        np.array([0.1, 0.2, 0.1, 0.3, 0.2, 0.1, 0.4, 0.2, 0.3, 0.1] * 2)
        + np.r_[np.zeros(18), 9.0, 12.0]
    )
    res = paired_test(skewed, base)
    assert res.shapiro is not None and not res.shapiro.normal
    assert res.shapiro.pvalue < 0.05
    assert res.test == "wilcoxon" and isinstance(res.result, WilcoxonResult)
    assert format_apa(res).startswith("W = ")


def test_paired_test_constant_differences_fall_back_to_wilcoxon():
    res = paired_test([2, 3, 4, 5], [1, 2, 3, 4])
    assert res.test == "wilcoxon" and res.shapiro is None and "constant" in res.note
    assert res.effect_size == 1.0


# ------------------------------------------------------------------ formatting


def test_format_apa_and_stars():
    res = WilcoxonResult(
        params={},
        scipy_version="x",
        statistic=31.0,
        w_plus=31.0,
        w_minus=179.0,
        n=20,
        n_nonzero=20,
        pvalue=0.0131,
        method_used="exact",
        effect_size=-0.7,
        alternative="two-sided",
    )
    assert format_apa(res) == "W = 31.0, p = .013"
    assert [stars(p) for p in (0.0004, 0.004, 0.04, 0.05, 0.6)] == ["***", "**", "*", "", ""]
    with pytest.raises(TypeError):
        format_apa(3.0)


# ------------------------------------------------------------------ bootstrap


def test_bootstrap_percentile_is_deterministic_and_matches_resampling():
    values = np.arange(1.0, 31.0) ** 1.5
    a = bootstrap_ci(values, statistic=np.mean, n_resamples=2000, seed=7)
    b = bootstrap_ci(values, statistic=np.mean, n_resamples=2000, seed=7)
    assert a == b
    rng = np.random.default_rng(7)
    means = values[rng.integers(0, 30, size=(2000, 30))].mean(axis=1)
    assert (a.low, a.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))
    assert a.estimate == pytest.approx(values.mean())
    assert a.params == {
        "statistic": "mean",
        "n_resamples": 2000,
        "confidence": 0.95,
        "method": "percentile",
        "seed": 7,
    }
    assert bootstrap_ci(values, n_resamples=2000, seed=8) != a


def test_bootstrap_percentile_coverage_is_near_nominal():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(300):
        res = bootstrap_ci(rng.normal(0, 1, 40), n_resamples=1000, seed=int(rng.integers(1e9)))
        hits += res.low <= 0 <= res.high
    assert 0.90 <= hits / 300 <= 0.98


def test_bootstrap_bca_agrees_with_scipy_on_skewed_data():
    x = np.random.default_rng(1).exponential(size=30)
    ours = bootstrap_ci(x, method="bca", n_resamples=20000)
    ref = scipy.stats.bootstrap((x,), np.mean, method="BCa", n_resamples=20000, rng=0)
    assert ours.low == pytest.approx(ref.confidence_interval.low, rel=0.02)
    assert ours.high == pytest.approx(ref.confidence_interval.high, rel=0.02)
    percentile = bootstrap_ci(x, n_resamples=20000)
    assert ours.high > percentile.high  # BCa shifts right for a right-skewed mean


def test_bootstrap_degenerate_data_gives_zero_width_interval():
    res = bootstrap_ci([0.5] * 12, method="bca")
    assert (res.estimate, res.low, res.high) == (0.5, 0.5, 0.5)
    assert res.degenerate and "equal" in res.note
    single = bootstrap_ci([3.0])
    assert single.degenerate and single.low == single.high == 3.0


def test_bootstrap_accepts_statistics_without_axis():
    res = bootstrap_ci([1, 2, 3, 4, 10], statistic=lambda v: float(sorted(v)[len(v) // 2]))
    assert res.estimate == 3 and res.low <= 3 <= res.high


def test_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="non-finite"):
        bootstrap_ci([1.0, np.nan])
    with pytest.raises(ValueError, match="method"):
        bootstrap_ci([1.0, 2.0], method="basic")


# ------------------------------------------------------------------ agreement and power


def test_quadratic_kappa_matches_moment_identity():
    # For equally spaced categories, quadratic-weighted kappa equals
    # 2 cov(a, b) / (var a + var b + (mean a - mean b)^2) with population moments.
    rng = np.random.default_rng(2)
    a = rng.integers(1, 6, 40)
    b = np.clip(a + rng.integers(-1, 2, 40), 1, 5)
    res = weighted_kappa(a, b, [1, 2, 3, 4, 5], seed=1)
    cov = np.mean((a - a.mean()) * (b - b.mean()))
    expected = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert res.kappa == pytest.approx(expected)
    assert res.low <= res.kappa <= res.high and res.n == 40
    assert res.params["weights"] == "quadratic"


def test_linear_kappa_hand_example_and_errors():
    # Two items, ratings (1,2) and (2,1) on 3 categories: observed weighted
    # disagreement 0.5, expected 0.25 -> kappa = 1 - 0.5 / 0.25 = -1.
    assert weighted_kappa([1, 2], [2, 1], [1, 2, 3], weights="linear").kappa == pytest.approx(-1)
    perfect = weighted_kappa([1, 3, 5, 2], [1, 3, 5, 2], [1, 2, 3, 4, 5])
    assert (perfect.kappa, perfect.low, perfect.high) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="not among categories"):
        weighted_kappa([1, 6], [1, 2], [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="single category"):
        weighted_kappa([3, 3], [3, 3], [1, 2, 3])


def test_sample_size_for_paired_t_matches_power_tables():
    # Cohen (1988) / G*Power, two-sided alpha = .05, power = .80: d_z = 0.5 -> 34, 0.8 -> 15.
    assert paired_sample_size(0.5).n == 34
    res = paired_sample_size(0.8)
    assert res.n == 15 and res.power >= 0.8 and res.method == "noncentral t formula"
    assert paired_sample_size(0.5, power=0.9).n > 34


def test_sample_size_for_wilcoxon_by_simulation():
    res = paired_sample_size(0.5, test="wilcoxon", n_sim=2000, seed=0)
    # Under normal differences the signed-rank test is ~95% as efficient as t.
    assert 33 <= res.n <= 39 and res.power >= 0.8
    assert res.params["n_sim"] == 2000 and res.test == "wilcoxon"
    assert paired_sample_size(0.5, test="wilcoxon", seed=0) == res
    with pytest.raises(ValueError, match="positive"):
        paired_sample_size(0.0)


def test_fleiss_kappa_reproduces_the_textbook_example():
    """Fleiss (1971) as worked in the literature: 10 items, 14 raters, 5 categories."""
    from hasbench.stats import fleiss_kappa

    counts = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]  # fmt: skip
    result = fleiss_kappa(counts)
    assert result.observed == pytest.approx(0.378, abs=5e-4)
    assert result.expected == pytest.approx(0.213, abs=5e-4)
    assert result.kappa == pytest.approx(0.210, abs=5e-4)
    assert (result.n_items, result.n_raters) == (10, 14)


def test_fleiss_kappa_limits_and_bad_tables():
    from hasbench.stats import category_counts, fleiss_kappa

    agree = category_counts([["A", "A", "A"], ["B", "B", "B"]], ["A", "B", "C"])
    assert fleiss_kappa(agree).kappa == 1.0
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]).kappa)  # one category: undefined
    with pytest.raises(ValueError, match="different numbers of raters"):
        fleiss_kappa([[2, 1], [1, 1]])
    with pytest.raises(ValueError, match="at least two raters"):
        fleiss_kappa([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="label 'Z' is not among"):
        category_counts([["A", "Z"]], ["A", "B"])
