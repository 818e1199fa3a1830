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
0.02, ten of ten 0.61 against 0.29. For a majority of k adjudicators, J = M(s) + M(p) - 1 with M
the chance that most of them are right, each rate's Wilson limit is carried through M (MOVER, Zou
and Donner 2008): by enumeration over rates 0.55-0.995 and 10-200 controls per rate it covers
at least 97.1% (median 98-100%; nominal 97.5%, one-sided) where the delta method at the raw rate
covered 64-95%. The majority's var(J) takes M's slope at the smoothed rates (at a raw rate of 1
the slope is 0). A majority's J assumes the adjudicators err independently: errors correlated
0.3 between them leave its J at 0.85 where 0.94 is assumed. Adjudicators weighted by their shares of the real
items get var(J) = sum_r w_r^2 var(rate_r) (`statistics.weighted`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from harness.analysis.statistics.ppi import PPIResult

RHO_MAX = 0.99  # a correlation of calls on one control is taken at most this (`clustered`)
RHO_MIN = 1e-6  # ... and below this as 0 (a design effect of 1 plus rounding)

__all__ = [
    "JointTest",
    "YoudenEstimate",
    "correlation_variance",
    "correlations_variance",
    "fieller",
    "majority_rate",
    "majority_rho_slope",
    "majority_slope",
    "newcombe_lower",
    "smoothed_rate",
    "smoothed_var",
    "wilson",
    "youden_estimate",
]


@dataclass(frozen=True)
class YoudenEstimate:
    """J = sensitivity + specificity - 1 of the adjudicators' scale, its variance and the lower
    bound the gate reads."""

    value: float
    variance: float
    lower: float  # Newcombe's lower bound at the gate's level
    level: float


def wilson(k: Any, n: Any, z: float) -> tuple[Any, Any]:
    """Wilson's score interval for k of n (effective, non-integer counts allowed); floats or
    arrays (n > 0)."""
    p = k / n
    den = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(np.maximum(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / den
    return np.maximum(centre - half, 0.0), np.minimum(centre + half, 1.0)


def majority_rate(rate: Any, k: int, rho: Any = 0.0) -> Any:
    """P(more than half of k raters right), each right with probability `rate` (k odd);
    k = 0: the rate itself (the adjudicators' mean). `rho`: the correlation of two raters'
    calls on one item (items that differ in difficulty, Beta-distributed: the beta-binomial's
    tail, which a correlation lowers above 0.5); 0: independent raters; an array: one per
    element of `rate`. The tails are summed term by term (k is small): scipy.stats' generic
    discrete tails took most of a simulated design's time."""
    if not k:
        return rate
    r = np.asarray(rate, dtype=float)
    terms = range(k // 2 + 1, k + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = sum(math.comb(k, j) * r**j * (1.0 - r) ** (k - j) for j in terms)
    # an array: one correlation per element (simulated studies); below RHO_MIN the binomial,
    # which a beta-binomial of concentration near 1e16 would not give in floating point
    tied = np.asarray(rho) > RHO_MIN
    if tied.any():
        scale = (1.0 - np.asarray(rho, dtype=float)) / np.where(tied, rho, 1.0)
        clipped = np.clip(r, 1e-12, 1.0 - 1e-12)
        a, b = clipped * scale, (1.0 - clipped) * scale
        base = special.betaln(a, b)
        beta = sum(math.comb(k, j) * np.exp(special.betaln(a + j, b + k - j) - base) for j in terms)
        tail = np.where(tied & (r > 0.0) & (r < 1.0), np.clip(beta, 0.0, 1.0), tail)
    return float(tail) if np.ndim(tail) == 0 else tail


def newcombe_lower(
    pub_correct: Any,
    pub: Any,
    unpub_correct: Any,
    unpub: Any,
    level: float,
    majority: int = 0,
    rho: tuple[Any, Any] = (0.0, 0.0),
    rho_var: tuple[Any, Any] = (0.0, 0.0),
    rho_cov: tuple[Any, Any] = (0.0, 0.0),
) -> Any:
    """Lower bound (two-sided `level`) of the scale's J = M(s) + M(p) - 1 by Newcombe's (1998)
    hybrid score method (MOVER, Zou and Donner 2008): each rate's Wilson limit carried through
    the increasing M (the identity, or a majority of `majority`, its raters' calls correlated
    `rho` on published and unpublished items) and the distances combined in quadrature. The
    correlations are estimated too (variances `rho_var`, covariances with their rates
    `rho_cov`): each adds the distance z sqrt(var) of what its estimate adds to M's variance."""
    z = float(special.ndtri(0.5 + level / 2))
    s, p = pub_correct / pub, unpub_correct / unpub
    s_low, _ = wilson(pub_correct, pub, z)
    p_low, _ = wilson(unpub_correct, unpub, z)
    ms, mp = majority_rate(s, majority, rho[0]), majority_rate(p, majority, rho[1])
    dist = (ms - majority_rate(s_low, majority, rho[0])) ** 2
    dist = dist + (mp - majority_rate(p_low, majority, rho[1])) ** 2
    extra = correlations_variance(
        pub_correct, pub, unpub_correct, unpub, majority, rho, rho_var, rho_cov
    )
    return ms + mp - 1.0 - np.sqrt(dist + z * z * np.maximum(extra, 0.0))


def correlations_variance(
    pub_correct: Any,
    pub: Any,
    unpub_correct: Any,
    unpub: Any,
    k: int,
    rho: tuple[Any, Any],
    rho_var: tuple[Any, Any],
    rho_cov: tuple[Any, Any],
) -> Any:
    """Both kinds' `correlation_variance` at their smoothed rates: what the two correlations'
    estimates add to the variance of a majority's J."""
    rates = (smoothed_rate(pub_correct, pub), smoothed_rate(unpub_correct, unpub))
    parts = zip(rates, rho, rho_var, rho_cov, strict=True)
    return sum(correlation_variance(r, k, t, v, c) for r, t, v, c in parts)


def correlation_variance(rate: Any, k: int, rho: Any, var: Any, cov: Any) -> Any:
    """What the estimate of the correlation `rho` of a majority's calls adds to the variance of
    M(rate) (delta method, at the smoothed rate): M_rho^2 var(rho) + 2 M_r M_rho cov(rate, rho);
    0 for the adjudicators' mean (k = 0). Controls that differ in difficulty make rho's
    estimate noisy, and it covaries with the rate (hard controls lower one, raise the other)."""
    if not k:
        return 0.0
    slope = majority_rho_slope(rate, k, rho)
    return slope**2 * var + 2.0 * majority_slope(rate, k, rho) * slope * cov


def smoothed_var(k: Any, n: Any) -> Any:
    """Variance of a rate from Agresti and Caffo's smoothed (k + 1) / (n + 2); floats or arrays."""
    p = smoothed_rate(k, n)
    return p * (1.0 - p) / (n + 2.0)


def smoothed_rate(k: Any, n: Any) -> Any:
    """Agresti and Caffo's (k + 1) / (n + 2)."""
    return (k + 1.0) / (n + 2.0)


def majority_slope(rate: Any, k: int, rho: Any = 0.0) -> Any:
    """d/dr of `majority_rate` (1 for k = 0); callers evaluate it at the smoothed rate, since
    at a raw rate of 0 or 1 it is 0 and would make the majority's J look known exactly."""
    if not k:
        return np.ones_like(rate, dtype=float) if isinstance(rate, np.ndarray) else 1.0
    if np.any(np.asarray(rho) > RHO_MIN):  # the beta-binomial's: by central differences
        h = 1e-6
        up, down = np.clip(rate + h, 0.0, 1.0), np.clip(rate - h, 0.0, 1.0)
        return (majority_rate(up, k, rho) - majority_rate(down, k, rho)) / (up - down)
    h = (k - 1) // 2
    return k * math.comb(k - 1, h) * (rate * (1.0 - rate)) ** h


def majority_rho_slope(rate: Any, k: int, rho: Any) -> Any:
    """d/drho of `majority_rate` (0 for k = 0), by differences within [0, RHO_MAX]."""
    if not k:
        return np.zeros_like(rate, dtype=float) if isinstance(rate, np.ndarray) else 0.0
    h = 1e-4
    low = np.maximum(np.asarray(rho, dtype=float) - h, 0.0)
    high = np.minimum(np.asarray(rho, dtype=float) + h, RHO_MAX)
    return (majority_rate(rate, k, high) - majority_rate(rate, k, low)) / (high - low)


def youden_estimate(
    pub_correct: float,
    pub: float,
    unpub_correct: float,
    unpub: float,
    level: float,
    *,
    covered: float = 1.0,
    majority: int = 0,
    variances: tuple[float, float] | None = None,
    rho: tuple[float, float] = (0.0, 0.0),
    rho_var: tuple[float, float] = (0.0, 0.0),
    rho_cov: tuple[float, float] = (0.0, 0.0),
) -> YoudenEstimate | None:
    """J of the adjudicated scale from (effective) control counts; `covered`: the share of the
    adjudicated judgments whose adjudicators have controls (the rest count as J = 0);
    `majority`: k of a majority of k adjudicators (0: their mean), whose J is M(s) + M(p) - 1
    with variance by the delta method; `variances`: the two rates' variances when they are not
    those of the counts (adjudicators weighted by their shares, `statistics.weighted`); `rho`:
    the correlation of two adjudicators' calls on one published / unpublished control,
    `rho_var` its estimate's variance and `rho_cov` its covariance with the rate's (a majority's
    J moves with it: `correlation_variance`)."""
    if pub <= 0 or unpub <= 0:
        return None
    s, p = pub_correct / pub, unpub_correct / unpub
    var_s, var_p = variances or (smoothed_var(pub_correct, pub), smoothed_var(unpub_correct, unpub))
    value = float(majority_rate(s, majority, rho[0]) + majority_rate(p, majority, rho[1]) - 1.0)
    slope_s = majority_slope(smoothed_rate(pub_correct, pub), majority, rho[0])
    slope_p = majority_slope(smoothed_rate(unpub_correct, unpub), majority, rho[1])
    var = float(slope_s**2 * var_s + slope_p**2 * var_p)
    extra = correlations_variance(
        pub_correct, pub, unpub_correct, unpub, majority, rho, rho_var, rho_cov
    )
    var = max(var + float(extra), 0.0)
    lower = float(
        newcombe_lower(
            pub_correct, pub, unpub_correct, unpub, level, majority, rho, rho_var, rho_cov
        )
    )
    lower = lower if lower <= 0 else covered * lower
    return YoudenEstimate(covered * value, covered**2 * var, lower, level)


def fieller(theta: Any, se: Any, j: Any, var_j: Any, q: Any, cov: Any = 0.0) -> tuple[Any, Any]:
    """Fieller's interval of theta / j, the deltas with (theta - delta j)^2 <= q^2 (se^2 -
    2 delta cov + delta^2 var_j) (`cov`: of theta's and j's estimates), within [-1, 1]; [-1, 1]
    where j is not above 0 or the set is unbounded (j not significantly above 0). Floats or
    arrays."""
    a = j * j - q * q * var_j
    b = -2.0 * theta * j + 2.0 * q * q * cov
    c = theta * theta - q * q * se**2
    with np.errstate(invalid="ignore"):
        disc = b * b - 4.0 * a * c
        ok = (j > 0) & (a > 0) & (disc >= 0) & np.isfinite(disc)
    root = np.sqrt(np.where(ok, disc, 0.0))
    a = np.where(ok, a, 1.0)
    low = np.where(ok, np.clip((-b - root) / (2 * a), -1.0, 1.0), -1.0)
    high = np.where(ok, np.clip((-b + root) / (2 * a), -1.0, 1.0), 1.0)
    return low, high


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

    def transfer_floor(self, sesoi: float, alpha: float, both: bool = True) -> float:
        """The least J on real items at which the refutation still holds (both one-sided tests
        at alpha; `both` False: the upper one alone, non-superiority), J's estimate on the
        controls kept for its variance: (|theta| + q s) / SESOI, s the joint standard error.
        Real items harder than the controls leave theta = J_real x delta, so a J on real items
        below it is what would undo the `refuted`."""
        q = self.ppi.quantile(1.0 - alpha)
        s = math.sqrt(self.ppi.se**2 + sesoi**2 * self.youden.variance)
        theta = self.ppi.estimate
        return ((abs(theta) if both else theta) + q * s) / sesoi

    def interval(self, level: float) -> tuple[float, float]:
        """Fieller's interval of delta at two-sided `level`, within [-1, 1]; [-1, 1] when J is
        not significantly above 0 at that level."""
        q = self.ppi.quantile(0.5 + level / 2)
        low, high = fieller(
            self.ppi.estimate, self.ppi.se, self.youden.value, self.youden.variance, q
        )
        return float(low), float(high)
