"""The joint test of the true difference (`statistics.joint`): Newcombe's bound against
statsmodels, Fieller's interval against brute-force inversion of the test, and the vectorised
rule of the simulation against the verdict's own."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import confint_proportions_2indep

from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.joint import (
    JointTest,
    YoudenEstimate,
    majority_rate,
    newcombe_lower,
    smoothed_var,
    youden_estimate,
)
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.weighted import weighted_accuracy


@pytest.mark.parametrize(
    ("pub_ok", "pub", "unpub_ok", "unpub", "level"),
    [(9, 10, 9, 10, 0.95), (10, 10, 10, 10, 0.95), (18, 20, 17, 20, 0.9), (40, 50, 31, 45, 0.99)],
)
def test_newcombe_bound_is_statsmodels(pub_ok, pub, unpub_ok, unpub, level):
    low, _ = confint_proportions_2indep(
        pub_ok, pub, unpub - unpub_ok, unpub, method="newcomb", compare="diff", alpha=1 - level
    )
    assert newcombe_lower(pub_ok, pub, unpub_ok, unpub, level) == pytest.approx(low, abs=1e-12)


def test_newcombe_bound_passes_where_the_bonferroni_exact_bound_cannot():
    """Ten published and ten unpublished controls, all right: the exact bound was 0.290."""
    assert newcombe_lower(10, 10, 10, 10, 0.95) > 0.6
    assert 0.3 < newcombe_lower(9, 10, 9, 10, 0.95) < 0.4


def _ppi(estimate: float, se: float, n: int = 40):
    d = np.array([estimate - se * math.sqrt(n), estimate + se * math.sqrt(n)] * (n // 2))
    return ppi_mean(d, d, np.array([]), estimator="classical")


@pytest.mark.parametrize(
    ("theta", "se", "j", "var"), [(0.02, 0.03, 0.8, 0.004), (-0.05, 0.02, 0.6, 0.01)]
)
def test_fieller_interval_inverts_the_joint_test(theta, se, j, var):
    """The interval's ends are where the two-sided test at the level just rejects: brute force
    over a grid of deltas (step 1e-5), every point of it from 1e-3 outside the kept deltas of
    every 100th point inwards (a scalar test per point: the whole grid would take a minute)."""
    test = JointTest(_ppi(theta, se), YoudenEstimate(j, var, 0.5, 0.95))
    low, high = test.interval(0.9)
    grid = np.linspace(-1, 1, 200_001)

    def kept(deltas: np.ndarray) -> list[float]:
        return [x for x in deltas if test.p_below(x) >= 0.05 and test.p_above(x) >= 0.05]

    coarse = kept(grid[::100])
    window = grid[(grid >= min(coarse) - 1e-3) & (grid <= max(coarse) + 1e-3)]
    kept_fine = kept(window)
    assert window[0] < kept_fine[0] and kept_fine[-1] < window[-1]  # both ends inside it
    assert low == pytest.approx(min(kept_fine), abs=2e-5)
    assert high == pytest.approx(max(kept_fine), abs=2e-5)
    # the (1 - 2 alpha) interval inside +/- SESOI is exactly the TOST at alpha
    sesoi = max(abs(low), abs(high)) + 1e-6
    assert test.p_tost(sesoi) < 0.05
    assert test.p_tost(max(abs(low), abs(high)) - 1e-4) > 0.05


def test_fieller_interval_is_unbounded_when_j_is_not_shown_above_zero():
    test = JointTest(_ppi(0.01, 0.02), YoudenEstimate(0.05, 0.01, -0.1, 0.95))
    assert test.interval(0.95) == (-1.0, 1.0)


def test_the_joint_statistic_is_the_linear_combination():
    ppi = _ppi(0.03, 0.02)
    est = YoudenEstimate(0.7, 0.004, 0.5, 0.95)
    test = JointTest(ppi, est)
    t = (0.03 - 0.1 * 0.7) / math.sqrt(ppi.se**2 + 0.01 * 0.004)
    assert test.p_below(0.1) == pytest.approx(ppi._cdf(t))
    # at delta = 0 J's uncertainty does not enter
    assert test.p_above(0.0) == pytest.approx(ppi.p_greater(0.0))


def test_youden_estimate_smooths_and_scales_by_the_covered_share():
    est = youden_estimate(10, 10, 10, 10, 0.95)
    assert est is not None and est.value == 1.0 and est.variance > 0
    half = youden_estimate(10, 10, 10, 10, 0.95, covered=0.5)
    assert half.value == 0.5 and half.variance == pytest.approx(est.variance / 4)
    assert youden_estimate(0, 0, 5, 10, 0.95) is None


def test_majority_j_by_the_delta_method():
    """A majority of three at rates 0.9: M = 0.972 each, J 0.944; its variance is the slope
    k C(k-1, h) (r(1-r))^h, taken at the smoothed rate, squared times each rate's."""
    est = youden_estimate(90, 100, 90, 100, 0.95, majority=3)
    assert est is not None
    assert est.value == pytest.approx(2 * (3 * 0.9**2 * 0.1 + 0.9**3) - 1)
    p = 91 / 102
    slope = 3 * 2 * (p * (1 - p))
    assert est.variance == pytest.approx(2 * slope**2 * p * (1 - p) / 102)
    # every control right: the raw slope is 0, the smoothed one is not
    perfect = youden_estimate(10, 10, 10, 10, 0.95, majority=3)
    assert perfect is not None and perfect.variance > 0.001


def _exact_coverage(n: int, rate: float, majority: int, level: float) -> float:
    """P(the bound <= the true J) over every outcome of n published and n unpublished controls
    at sensitivity = specificity = rate (brute-force enumeration)."""
    k = np.arange(n + 1)
    prob = stats.binom.pmf(k, n, rate)
    ks, kp = np.meshgrid(k, k, indexing="ij")
    lower = newcombe_lower(ks, n, kp, n, level, majority)
    truth = 2 * majority_rate(rate, majority) - 1.0
    return float((np.outer(prob, prob) * (lower <= truth + 1e-12)).sum())


@pytest.mark.parametrize(("n", "rate"), [(10, 0.8), (20, 0.9), (30, 0.75), (60, 0.85)])
def test_majority_bound_covers_by_enumeration(n, rate):
    """The MOVER bound of a majority of three's J keeps its one-sided 97.5% (two-sided 95%)
    coverage (99.2-100% at these cells, conservative where M is flat); the delta method at the
    raw rate, which it replaces, covered 92-95% here and 64% at 10 controls of rate 0.95."""
    assert _exact_coverage(n, rate, 3, 0.95) >= 0.96


def test_majority_bound_reduces_to_newcombe_for_the_mean():
    assert newcombe_lower(18, 20, 17, 20, 0.95, 0) == pytest.approx(
        newcombe_lower(18, 20, 17, 20, 0.95)
    )
    # an increasing M keeps the bound below the estimate and above the identity's where J is high
    est = youden_estimate(18, 20, 17, 20, 0.95, majority=3)
    assert est is not None and est.lower < est.value


def test_weighted_variance_is_the_sum_over_adjudicators():
    """Shares 0.8 / 0.2, a weak busy adjudicator (70 of 100) and a strong occasional one (10 of
    10): var(J) sums w_r^2 var(rate_r) (smoothed); the exact variance of the weighted rate at
    the observed rates is its raw counterpart."""
    strong = Accuracy("a", "reviewer", "both", 10, 10, 10, 10, 0.95)
    weak = Accuracy("b", "reviewer", "both", 100, 70, 100, 70, 0.95)
    w = weighted_accuracy([strong, weak], {"a": 0.2, "b": 0.8}, 0.95)
    assert w.variances is not None
    direct = 0.04 * smoothed_var(10, 10) + 0.64 * smoothed_var(70, 100)
    assert w.variances == pytest.approx((direct, direct))
    exact = 0.64 * 0.7 * 0.3 / 100  # the strong one's rate 1 adds nothing unsmoothed
    assert exact < direct < 1.25 * exact
    est = youden_estimate(10, 10, 10, 10, 0.95, variances=w.variances)
    assert est is not None and est.variance == pytest.approx(2 * direct)


@pytest.mark.parametrize("theta", [0.01, -0.02])
def test_the_transfer_floor_is_where_the_refutation_stops(theta):
    """The least J on real items at which the joint TOST still refutes: at it, the larger
    one-sided p is alpha exactly; a little above it refutes, a little below does not."""
    ppi = _ppi(theta, 0.01)
    test = JointTest(ppi, YoudenEstimate(0.9, 0.0004, 0.8, 0.95))
    floor = test.transfer_floor(0.1, 0.05)
    assert 0.0 < floor < 0.9 and test.p_tost(0.1) < 0.05

    def at(j: float) -> float:
        return JointTest(ppi, YoudenEstimate(j, 0.0004, 0.8, 0.95)).p_tost(0.1)

    assert at(floor) == pytest.approx(0.05, abs=1e-9)
    assert at(floor + 0.01) < 0.05 < at(floor - 0.01)
    # non-superiority reads the upper test alone
    upper = test.transfer_floor(0.1, 0.05, both=False)
    assert JointTest(ppi, YoudenEstimate(upper, 0.0004, 0.8, 0.95)).p_below(0.1) == pytest.approx(
        0.05, abs=1e-9
    )


def test_majority_rates_are_scipys_binomial_and_beta_binomial_tails():
    """The tails summed term by term against scipy.stats (binom, betabinom) over random rates
    and correlations, for three and five raters."""
    rng = np.random.default_rng(1)
    rate = rng.uniform(0.0, 1.0, 2000)
    rho = rng.choice([0.0, 1e-7, 1e-3, 0.1, 0.4, 0.9], 2000)
    for k in (3, 5):
        scale = (1.0 - rho) / np.where(rho > 1e-6, rho, 1.0)
        r = np.clip(rate, 1e-12, 1.0 - 1e-12)
        beta = stats.betabinom.sf(k // 2, k, r * scale, (1.0 - r) * scale)
        want = np.where(rho > 1e-6, beta, stats.binom.sf(k // 2, k, rate))
        assert majority_rate(rate, k, rho) == pytest.approx(want, abs=1e-10)
    assert majority_rate(1.0, 3, 0.3) == 1.0 and majority_rate(0.0, 3, 0.3) == 0.0
