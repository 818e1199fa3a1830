"""The refutation test with the adjudicators' J estimated jointly with the difference.

Adjudicators whose errors do not depend on the condition see theta = J x delta, delta the true
difference (`statistics.instrument`). "No difference of interest" is the claim |delta| < SESOI,
that is theta - SESOI J < 0 and theta + SESOI J > 0. Each side is one linear combination of two
independent estimates, theta-hat from the real items (PPI++, `statistics.ppi`) and J-hat from the
adjudicators' planted controls, so it is tested with one statistic

    T = (theta-hat - m J-hat) / sqrt(se(theta)^2 + m^2 var(J-hat)),   m = +SESOI or -SESOI,

against the t reference of theta (Wald's test of a linear combination; Fieller 1954 for the ratio
delta = theta / J). Near delta = 0 the J term adds little (m^2 var(J) is small beside
se(theta)^2), where the earlier rule split alpha between the difference and an exact bound of J
(Bonferroni) and scaled the SESOI by that bound: at every topic adjudicated and no true
difference it refuted in 2.8% of studies, this test in 95% (benchmarks/bench_instrument.py).

Inverting the two tests gives Fieller's interval for delta: the deltas whose T lies within the
reference quantiles, the roots of (theta - delta J)^2 = q^2 (se^2 + delta^2 var J). Its
(1 - 2 alpha) interval lies inside +/- SESOI exactly when both one-sided tests reject at alpha.
When J is not significantly above 0 the set is unbounded and the interval is [-1, 1].

var(J-hat) uses Agresti and Caffo's (2000) smoothed rates, (k + 1) / (n + 2), so that ten of ten
correct controls do not read as a rate known without error. The gate on J (`controls.min_youden`)
uses Newcombe's (1998) hybrid score interval for the difference of the two rates, sensitivity
minus the false-novel rate (statsmodels' `confint_proportions_2indep`, method `newcomb`, checks
it), instead of Bonferroni-split Clopper-Pearson bounds: two adjudicators with ten controls each
(ten published, ten unpublished in all) and nine of ten right give a lower bound of 0.37 against
0.02, ten of ten 0.61 against 0.29.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from harness.analysis.statistics.ppi import PPIResult

__all__ = ["JointTest", "YoudenEstimate", "newcombe_lower", "youden_estimate"]


@dataclass(frozen=True)
class YoudenEstimate:
    """J = sensitivity + specificity - 1 of the adjudicators' scale, its variance and the lower
    bound the gate reads."""

    value: float
    variance: float
    lower: float  # Newcombe's lower bound at the gate's level
    level: float


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for k of n (effective, non-integer counts allowed)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / den
    return max(centre - half, 0.0), min(centre + half, 1.0)


def newcombe_lower(
    pub_correct: float, pub: float, unpub_correct: float, unpub: float, level: float
) -> float:
    """Newcombe's hybrid score lower bound (two-sided `level`) of J = s - (1 - p): the share of
    published controls judged published minus the share of unpublished ones judged published."""
    z = float(stats.norm.ppf(0.5 + level / 2))
    s, fpr = pub_correct / pub, (unpub - unpub_correct) / unpub
    s_low, _ = wilson(pub_correct, pub, z)
    _, f_high = wilson(unpub - unpub_correct, unpub, z)
    return (s - fpr) - math.sqrt((s - s_low) ** 2 + (f_high - fpr) ** 2)


def smoothed_var(k: Any, n: Any) -> Any:
    """Variance of a rate from Agresti and Caffo's smoothed (k + 1) / (n + 2); floats or arrays."""
    p = (k + 1.0) / (n + 2.0)
    return p * (1.0 - p) / (n + 2.0)


def majority_slope(rate: float, k: int) -> float:
    """d/dr of P(more than half of k raters right), each right with probability r (k odd)."""
    h = (k - 1) // 2
    return float(k * math.comb(k - 1, h) * (rate * (1.0 - rate)) ** h)


def youden_estimate(
    pub_correct: float,
    pub: float,
    unpub_correct: float,
    unpub: float,
    level: float,
    *,
    covered: float = 1.0,
    majority: int = 0,
) -> YoudenEstimate | None:
    """J of the adjudicated scale from (effective) control counts; `covered`: the share of the
    adjudicated judgments whose adjudicators have controls (the rest count as J = 0);
    `majority`: k of a majority of k adjudicators (0: their mean), whose J is M(s) + M(p) - 1
    with variance by the delta method."""
    if pub <= 0 or unpub <= 0:
        return None
    s, p = pub_correct / pub, unpub_correct / unpub
    var_s, var_p = smoothed_var(pub_correct, pub), smoothed_var(unpub_correct, unpub)
    if majority:
        m = np.asarray(stats.binom.sf(majority // 2, majority, [s, p]), dtype=float)
        value = float(m.sum() - 1.0)
        var = majority_slope(s, majority) ** 2 * var_s + majority_slope(p, majority) ** 2 * var_p
        z = float(stats.norm.ppf(0.5 + level / 2))
        lower = value - z * math.sqrt(var)
    else:
        value, var = s + p - 1.0, var_s + var_p
        lower = newcombe_lower(pub_correct, pub, unpub_correct, unpub, level)
    lower = lower if lower <= 0 else covered * lower
    return YoudenEstimate(covered * value, covered**2 * var, lower, level)


@dataclass(frozen=True)
class JointTest:
    """Tests of the true difference delta = theta / J with both estimates' uncertainty."""

    ppi: PPIResult
    youden: YoudenEstimate

    def _stat(self, margin: float) -> float:
        """T for H0: theta = margin x J (theta-hat - margin J-hat over its standard error)."""
        num = self.ppi.estimate - margin * self.youden.value
        se = math.sqrt(self.ppi.se**2 + margin**2 * self.youden.variance)
        if se > 0:
            return num / se
        return 0.0 if num == 0 else math.copysign(math.inf, num)

    def p_below(self, margin: float) -> float:
        """One-sided p of H0: delta >= margin (evidence that delta < margin)."""
        return self.ppi._cdf(self._stat(margin))

    def p_above(self, margin: float) -> float:
        """One-sided p of H0: delta <= margin (evidence that delta > margin)."""
        return 1.0 - self.ppi._cdf(self._stat(margin))

    def p_tost(self, sesoi: float) -> float:
        """Both one-sided tests of |delta| >= sesoi: the larger p-value."""
        return max(self.p_below(sesoi), self.p_above(-sesoi))

    def interval(self, level: float) -> tuple[float, float]:
        """Fieller's interval of delta at two-sided `level`, within [-1, 1]; [-1, 1] when J is
        not significantly above 0 at that level."""
        q = self.ppi.quantile(0.5 + level / 2)
        theta, j = self.ppi.estimate, self.youden.value
        if not j > 0:  # a scale that does not discriminate bounds no true difference
            return -1.0, 1.0
        a = j * j - q * q * self.youden.variance
        b = -2.0 * theta * j
        c = theta * theta - q * q * self.ppi.se**2
        disc = b * b - 4.0 * a * c
        if not (a > 0 and disc >= 0 and math.isfinite(disc)):
            return -1.0, 1.0
        root = math.sqrt(disc)
        low, high = (-b - root) / (2 * a), (-b + root) / (2 * a)
        return float(np.clip(low, -1.0, 1.0)), float(np.clip(high, -1.0, 1.0))
