"""McNemar and Tango against published values and direct computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from harness.analysis.statistics.paired import (
    _p21_constrained,
    mcnemar,
    tango_ci,
    tango_statistic,
    tango_tost,
)


def test_mcnemar_matches_fagerland_2013_bentur_example():
    # Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1 (n12 = 1,
    # n21 = 7): exact conditional p = 0.070, mid-p = 0.039, asymptotic p = 0.034.
    r = mcnemar(1, 7)
    assert r.p_exact_two_sided == pytest.approx(18 / 256)
    assert round(r.p_exact_two_sided, 3) == 0.070
    assert r.p_midp_two_sided == pytest.approx(10 / 256)
    assert round(r.p_midp_two_sided, 3) == 0.039
    assert round(r.p_asymptotic_two_sided, 3) == 0.034
    # one-sided: the c side is the larger one here
    assert r.p_exact_less == pytest.approx(9 / 256)
    assert r.p_midp_less == pytest.approx(9 / 256 - 4 / 256)


def test_mcnemar_matches_agresti_presidential_approval():
    # Agresti (2007), An Introduction to Categorical Data Analysis, Table 8.1: approval at two
    # surveys of 1600 people, discordant 150 and 86: z = 4.17, z^2 = 17.36.
    r = mcnemar(150, 86)
    assert r.z == pytest.approx(4.166, abs=1e-3)
    assert r.z**2 == pytest.approx(17.36, abs=0.01)
    assert r.p_exact_greater < 1e-4


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 3), (5, 1), (2, 9), (40, 20), (17, 30)])
def test_mcnemar_exact_equals_statsmodels_binomial(b, c):
    table = [[10, b], [c, 10]]
    ours = mcnemar(b, c)
    assert ours.p_exact_two_sided == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    if b + c:  # P(B >= b) + P(B <= b) - P(B = b) = 1
        point = (ours.p_exact_greater - ours.p_midp_greater) * 2
        assert ours.p_exact_greater + ours.p_exact_less - point == pytest.approx(1.0)
    else:  # no discordant topic: no evidence either way
        assert ours.p_midp_greater == ours.p_exact_greater == 1.0


def test_tango_statistic_at_zero_is_mcnemar_z():
    for b, c, n in [(9, 4, 50), (1, 7, 21), (150, 86, 1600)]:
        assert tango_statistic(b, c, n, 0.0) == pytest.approx((b - c) / math.sqrt(b + c))


def _p21_numeric(b: int, c: int, n: int, delta: float) -> float:
    """Restricted MLE of the c-cell probability by direct maximisation of the likelihood."""
    rest = n - b - c

    def negloglik(t: float) -> float:
        p12, p21 = t + delta, t
        concordant = 1 - p12 - p21
        return -(b * math.log(p12) + c * math.log(p21) + rest * math.log(concordant))

    low, high = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    return optimize.minimize_scalar(
        negloglik, bounds=(low, high), method="bounded", options={"xatol": 1e-12}
    ).x


@pytest.mark.parametrize(
    ("b", "c", "n", "delta"),
    [(9, 4, 50, 0.05), (1, 7, 21, -0.2), (40, 20, 160, 0.2), (12, 3, 80, -0.05)],
)
def test_tango_restricted_mle_equals_direct_maximisation(b, c, n, delta):
    assert _p21_constrained(b, c, n, delta) == pytest.approx(_p21_numeric(b, c, n, delta), abs=1e-6)


@pytest.mark.parametrize(
    ("b", "c", "n"), [(1, 7, 21), (40, 20, 160), (9, 4, 50), (0, 5, 30), (6, 0, 12)]
)
def test_tango_ci_inverts_the_score_test(b, c, n):
    low, high = tango_ci(b, c, n)
    assert low < (b - c) / n < high
    z = 1.959964
    if low > -1:
        assert tango_statistic(b, c, n, low) == pytest.approx(z, abs=1e-6)
    if high < 1:
        assert tango_statistic(b, c, n, high) == pytest.approx(-z, abs=1e-6)
    # the interval excludes 0 exactly when McNemar's z exceeds 1.96
    excludes_zero = low > 0 or high < 0
    assert excludes_zero == (abs(mcnemar(b, c).z) > z)


def test_tango_tost_matches_interval():
    # equivalence at alpha is shown iff the (1 - 2 alpha) interval lies inside the margin
    for b, c, n, margin in [(10, 8, 400, 0.05), (10, 8, 60, 0.05), (30, 5, 100, 0.3)]:
        p_low, p_high = tango_tost(b, c, n, margin)
        low, high = tango_ci(b, c, n, alpha=0.10)
        assert (max(p_low, p_high) < 0.05) == (-margin < low and high < margin)


def test_mcnemar_mid_p_is_below_exact():
    rng = np.random.default_rng(1)
    for b, c in rng.integers(0, 30, size=(20, 2)):
        r = mcnemar(int(b), int(c))
        assert r.p_midp_greater <= r.p_exact_greater


def test_tango_ci_and_mid_p_match_cavo_2012():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8,
    # Cavo et al. (2012): table [[59, 6], [16, 80]], n = 161. Published: Tango asymptotic score
    # interval -0.0621 (95% CI -0.1240 to -0.0054); McNemar mid-P test P = 0.034690.
    low, high = tango_ci(6, 16, 161)
    assert (round(low, 4), round(high, 4)) == (-0.1240, -0.0054)
    assert round(mcnemar(6, 16).p_midp_two_sided, 6) == 0.034690
