"""The prediction-powered mean difference against its references: ppi-python's estimate,
z-interval and p-values (`interval: normal`); the paired t-test and statsmodels' TOST where it
reduces to the classical test; unbiasedness and the variance formula by enumerating every
sample of a small population; a hand-computed case."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from harness.analysis.statistics.ppi import ppi_mean, tuned_lambda

ppi_py = pytest.importorskip("ppi_py")  # the dev extra; skipped where it is not installed

STEPS = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])  # per-topic differences of one cross, two singles


def _dataset(seed: int, n: int, big_n: int, agree: float) -> tuple[np.ndarray, ...]:
    """d on n adjudicated topics; f agrees with d with probability `agree`, else is drawn."""
    rng = np.random.default_rng(seed)
    d = rng.choice(STEPS, n, p=[0.05, 0.15, 0.45, 0.25, 0.10])
    f = np.where(rng.random(n) < agree, d, rng.choice(STEPS, n))
    fu = rng.choice(STEPS, big_n, p=[0.05, 0.2, 0.4, 0.25, 0.10])
    return d, f, fu


DATASETS = [
    (seed, n, big_n, agree)
    for seed, (n, big_n, agree) in enumerate(
        [(20, 80, 0.8), (35, 200, 0.5), (15, 348, 0.9), (60, 40, 0.3), (25, 75, 0.0)]
    )
]


def _scalar(x: object) -> float:
    return float(np.asarray(x).squeeze())


@pytest.mark.parametrize(("seed", "n", "big_n", "agree"), DATASETS)
def test_normal_interval_equals_ppi_python(seed, n, big_n, agree):
    d, f, fu = _dataset(seed, n, big_n, agree)
    ours = ppi_mean(d, f, fu, interval="normal")
    assert 0.0 <= ours.lam <= 1.0 and math.isinf(ours.df)
    assert ours.estimate == pytest.approx(
        _scalar(ppi_py.ppi_mean_pointestimate(d, f, fu)), abs=1e-10
    )
    for level in (0.9, 0.95):
        low, high = ppi_py.ppi_mean_ci(d, f, fu, alpha=1 - level)  # lambda tuned by ppi-python
        assert ours.interval(level) == pytest.approx((_scalar(low), _scalar(high)), abs=1e-10)
        low, high = ppi_py.ppi_mean_ci(d, f, fu, alpha=1 - level, lam=ours.lam)
        assert ours.interval(level) == pytest.approx((_scalar(low), _scalar(high)), abs=1e-10)
    # ppi-python's p-value does not clip lambda: compare at ours, passed explicitly
    for null in (-0.1, 0.0, 0.1):
        larger = ppi_py.ppi_mean_pval(d, f, fu, null=null, alternative="larger", lam=ours.lam)
        smaller = ppi_py.ppi_mean_pval(d, f, fu, null=null, alternative="smaller", lam=ours.lam)
        assert ours.p_greater(null) == pytest.approx(_scalar(larger), abs=1e-10)
        assert ours.p_less(null) == pytest.approx(_scalar(smaller), abs=1e-10)


@pytest.mark.parametrize(("estimator", "lam"), [("ppi", 1.0), ("classical", 0.0)])
def test_fixed_lambda_equals_ppi_python(estimator, lam):
    d, f, fu = _dataset(7, 30, 120, 0.7)
    ours = ppi_mean(d, f, fu, estimator=estimator, interval="normal")
    assert ours.lam == lam
    low, high = ppi_py.ppi_mean_ci(d, f, fu, alpha=0.1, lam=lam)
    assert ours.interval(0.9) == pytest.approx((_scalar(low), _scalar(high)), abs=1e-10)
    p = ppi_py.ppi_mean_pval(d, f, fu, null=0.05, alternative="larger", lam=lam)
    assert ours.p_greater(0.05) == pytest.approx(_scalar(p), abs=1e-10)


def test_tuned_lambda_is_ppi_pythons_unclipped_value_clipped():
    d, f, fu = _dataset(3, 15, 348, 0.9)
    grads, grads_hat = d - d.mean(), f - f.mean()
    raw = ppi_py.ppi._calc_lam_glm(grads, grads_hat, fu - f.mean(), np.eye(1), clip=False)
    assert 0 < raw < 1 and tuned_lambda(d, f, fu) == pytest.approx(raw, abs=1e-12)
    d, f, fu = _dataset(4, 60, 40, 0.9)
    f = -f  # primary reviewers who answer against the adjudicators: clipped at 0
    raw = ppi_py.ppi._calc_lam_glm(d - d.mean(), f - f.mean(), fu - f.mean(), np.eye(1))
    assert raw < 0 and tuned_lambda(d, f, fu) == 0.0


def _paired_t(d: np.ndarray):
    return {
        alt: stats.ttest_1samp(d, 0.0, alternative=alt) for alt in ("greater", "less", "two-sided")
    }


@pytest.mark.parametrize("seed", range(4))
def test_every_topic_adjudicated_is_the_paired_t_test(seed):
    d, f, _ = _dataset(seed, 18 + 7 * seed, 0, 0.8)
    result = ppi_mean(d, f, np.array([]))
    ref = _paired_t(d)
    assert result.lam == 0.0 and result.df == d.size - 1 and result.n_unlabelled == 0
    assert result.estimate == pytest.approx(d.mean(), abs=1e-14)
    assert result.p_greater() == pytest.approx(ref["greater"].pvalue, abs=1e-12)
    assert result.p_less() == pytest.approx(ref["less"].pvalue, abs=1e-12)
    for level in (0.9, 0.95):
        ci = ref["two-sided"].confidence_interval(level)
        assert result.interval(level) == pytest.approx((ci.low, ci.high), abs=1e-12)
    for null in (-0.1, 0.1):
        greater = stats.ttest_1samp(d, null, alternative="greater").pvalue
        assert result.p_greater(null) == pytest.approx(greater, abs=1e-12)


@pytest.mark.parametrize("value", [0.0, 0.5, -1.0])
def test_primary_reviewers_who_answer_alike_leave_the_classical_test(value):
    d, _, _ = _dataset(11, 24, 0, 0.0)
    alike = np.full(d.size, value)
    result = ppi_mean(d, alike, np.full(300, value))
    classical = ppi_mean(d, alike, np.array([]))
    assert result.lam == 0.0 and result.df == d.size - 1
    assert result.estimate == classical.estimate == pytest.approx(d.mean())
    assert result.se == pytest.approx(classical.se, abs=1e-15)
    ref = _paired_t(d)
    assert result.p_greater() == pytest.approx(ref["greater"].pvalue, abs=1e-12)
    ci = ref["two-sided"].confidence_interval(0.9)
    assert result.interval(0.9) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert result.effective_topics == pytest.approx(d.size)


@pytest.mark.parametrize("margin", [0.05, 0.1, 0.2])
def test_tost_reduces_to_statsmodels_paired_tost(margin):
    rng = np.random.default_rng(int(margin * 100))
    cross = rng.choice([0.0, 0.5, 1.0], 40, p=[0.6, 0.25, 0.15])
    single = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], 40, p=[0.55, 0.2, 0.15, 0.05, 0.05])
    d = cross - single
    result = ppi_mean(d, d, np.array([]))
    p, upper_of_low, lower_of_high = ttost_paired(cross, single, -margin, margin)
    assert result.p_tost(margin) == pytest.approx(p, abs=1e-12)
    assert result.p_greater(-margin) == pytest.approx(upper_of_low[1], abs=1e-12)
    assert result.p_less(margin) == pytest.approx(lower_of_high[1], abs=1e-12)
    # same for primary reviewers who answer alike on the rest of the topics
    alike = ppi_mean(d, np.zeros(d.size), np.zeros(100))
    assert alike.p_tost(margin) == pytest.approx(p, abs=1e-12)


def test_tuned_lambda_costs_a_degree_of_freedom():
    d, f, fu = _dataset(2, 15, 348, 0.9)
    tuned = ppi_mean(d, f, fu)
    assert 0 < tuned.lam < 1 and tuned.df == d.size - 2
    rectifier = d - tuned.lam * f
    n, big_n = d.size, fu.size
    own = np.var(rectifier, ddof=2) / n  # the rectifier's, lambda's own error beside it
    expected = own * (1 + 1 / (n * (1 + n / big_n))) + tuned.lam**2 * np.var(fu, ddof=1) / big_n
    assert tuned.se**2 == pytest.approx(expected, rel=1e-12)
    assert tuned.estimate == pytest.approx(tuned.lam * fu.mean() + rectifier.mean(), abs=1e-14)
    assert tuned.p_greater() == pytest.approx(stats.t.sf(tuned.estimate / tuned.se, d.size - 2))
    fixed = ppi_mean(d, f, fu, estimator="ppi")  # lambda 1 is not estimated: n - 1
    assert fixed.df == d.size - 1
    expected = np.var(d - f, ddof=1) / d.size + np.var(fu, ddof=1) / fu.size
    assert fixed.se**2 == pytest.approx(expected, rel=1e-12)
    # two adjudicated topics leave no degree of freedom to tune with: the classical estimate
    two = ppi_mean(d[:2], f[:2], fu)
    assert two.lam == 0.0 and two.df == 1 and two.estimate == pytest.approx(d[:2].mean())


# A population of 8 topics (d adjudicated, f primary) sampled 3 at a time without replacement.
POP_D = np.array([1.0, 0.5, 0.0, 0.0, -0.5, 1.0, 0.5, 0.0])
POP_F = np.array([1.0, 0.0, 0.0, 0.5, -0.5, 0.5, 1.0, -1.0])


@pytest.mark.parametrize(("estimator", "lam"), [("ppi", 1.0), ("classical", 0.0)])
def test_unbiased_over_every_sample_of_a_small_population(estimator, lam):
    """Every 3 of 8 topics equally likely: with lambda fixed the estimate averages to the
    population mean of d exactly, and the mean of its variance estimate exceeds its exact
    variance by S_d^2 / 8 (the difference between a superpopulation and a finite-population
    variance), so the interval is valid and conservative for the study's own topics."""
    big_t, n = POP_D.size, 3
    estimates, variances = [], []
    for chosen in itertools.combinations(range(big_t), n):
        rest = np.setdiff1d(np.arange(big_t), chosen)
        r = ppi_mean(POP_D[list(chosen)], POP_F[list(chosen)], POP_F[rest], estimator=estimator)
        assert r.lam == lam
        estimates.append(r.estimate)
        variances.append(r.se**2)
    assert len(estimates) == math.comb(8, 3)
    assert np.mean(estimates) == pytest.approx(POP_D.mean(), abs=1e-14)
    exact = np.var(estimates)  # every sample is equally likely: the exact sampling variance
    assert np.mean(variances) - exact == pytest.approx(np.var(POP_D, ddof=1) / big_t, abs=1e-14)
    # the finite-population formula: (1 - n/T) / n * S^2 of d - lambda (T/N) f
    g = POP_D - lam * big_t / (big_t - n) * POP_F
    assert exact == pytest.approx((1 - n / big_t) / n * np.var(g, ddof=1), abs=1e-14)


def test_tuned_lambda_is_not_unbiased_on_every_sample():
    """The tuned lambda depends on the sample: its estimate is consistent, not exactly unbiased
    (the reason the fixed-lambda test above is the exact one)."""
    estimates = [
        ppi_mean(POP_D[list(c)], POP_F[list(c)], POP_F[np.setdiff1d(np.arange(8), c)]).estimate
        for c in itertools.combinations(range(8), 3)
    ]
    assert abs(np.mean(estimates) - POP_D.mean()) > 1e-6


def test_hand_computed_case():
    d = np.array([1.0, 0.0, 0.5, -0.5])
    f = np.array([1.0, 0.0, 0.0, -0.5])
    fu = np.array([1.0, 0.0, 0.5, 0.5, 0.0, 0.0])
    # means: d 0.25, f 0.125; cov(d, f) with ddof 0 = (0.75*0.875 + -0.25*-0.125 + 0.25*-0.125
    # + -0.75*-0.625) / 4 = (0.65625 + 0.03125 - 0.03125 + 0.46875) / 4 = 0.28125
    # pooled f (10 values): mean 0.25, sum of squares about it 2.125, var ddof 1 = 2.125 / 9
    lam = 0.28125 / ((1 + 4 / 6) * (2.125 / 9))
    assert tuned_lambda(d, f, fu) == pytest.approx(lam, abs=1e-15)
    assert lam == pytest.approx(0.7147058823529412)
    r = ppi_mean(d, f, fu, interval="normal")
    # estimate: lam * mean(fu) + mean(d) - lam * mean(f) = 0.25 + lam * (0.3333... - 0.125)
    assert r.estimate == pytest.approx(0.25 + lam * (1 / 3 - 0.125), abs=1e-15)
    rect = d - lam * f
    var = np.mean((rect - rect.mean()) ** 2) / 4 + lam**2 * np.mean((fu - 1 / 3) ** 2) / 6
    assert r.se == pytest.approx(math.sqrt(var), abs=1e-15)
    assert r.p_greater() == pytest.approx(stats.norm.sf(r.estimate / r.se), abs=1e-15)


def test_ppi_python_reference_case():
    """ppi-python's own test_ppi_mean_pointestimate: predictions off by exactly +2 everywhere,
    so the rectifier removes the bias and the estimate is 0 (lambda clips to 1)."""
    y = np.random.default_rng(0).normal(0, 1, 100)
    r = ppi_mean(y, y + 2, np.full(10_000, 2.0), interval="normal")
    assert r.lam == 1.0 and r.estimate == pytest.approx(0.0, abs=1e-12)
