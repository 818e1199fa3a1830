"""Prediction-powered inference for the mean per-topic difference on the adjudicated scale.

Adjudicators judge every item of a random sample of topics ("labelled": d_t, their per-topic
difference, and f_t, the primary reviewers' difference on the same topics); primary reviewers
judge the rest ("unlabelled": f_t only). PPI++ (Angelopoulos, Duchi and Zrnic 2023; PPI:
Angelopoulos et al., Science 2023) estimates the mean of d as

    theta = lambda * mean(f_unlabelled) + mean(d - lambda * f_labelled)

which is unbiased for every lambda whatever the primary reviewers' accuracy: their accuracy only
sets the variance. lambda = cov(d, f) / ((1 + n/N) var(f)), clipped to [0, 1], minimises it
(ppi-python's `_calc_lam_glm` for the mean). lambda = 0 is the classical estimate from the
adjudicated topics alone; with every topic adjudicated (N = 0) this is the paired t-test on the
adjudicators' differences. `interval: normal` with ddof = 0 reproduces ppi-python's z-intervals
(`ppi_mean_ci`, `ppi_mean_pval`). `interval: t` uses ddof = 1 and a t reference with n - 1
degrees of freedom; where lambda is tuned on the same adjudicated topics (PPI++ with primary-only
topics and primary reviewers who vary), it costs one more: the rectifier's variance takes
ddof = 2 and the reference n - 2 degrees of freedom, as for the residuals of the regression
estimator of two-phase sampling, which PPI++ for a mean is. Without it, 15 adjudicated topics gave
a one-sided size up to 6% and 90% intervals that covered 88% (simulation of 4,000 studies per
cell); with it, the classical test's figures. The tuned lambda's own error adds
var(lambda-hat) var(f_L - f_U), about var(d - lambda f) / (n^2 (1 + n/N)) (the slope's variance
var(d - lambda f) / (n var f (1 + n/N)^2) times var(f) (1/n + 1/N)): second order, but at 91 of
363 topics adjudicated, an escalated majority of three, the standard error was 0.6% short of
theta's spread and `refuted` at a true +SESOI 5.06% +/- 0.02% over 800,000 simulated studies;
with the term 5.00%, at a cost of 0.26 points of `refuted` at a true 0.

The sample is drawn with equal inclusion probabilities (systematic over strata), so the
unweighted means are unbiased; treating the draw as simple random ignores the stratification's
variance reduction, which makes the interval slightly conservative. Labelled and unlabelled
topics are treated as independent samples: exact when the study's topics are a sample of a wider
population of topics (the estimand of the paired t-test on every topic); for the mean over the
study's own topics the variance is larger than the truth by var(d) / (n + N), again conservative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import special

Estimator = Literal["ppi++", "ppi", "classical"]
Interval = Literal["t", "normal"]


@dataclass(frozen=True)
class PPIResult:
    """The prediction-powered estimate of the mean difference and its tests."""

    estimate: float
    se: float
    lam: float
    n_labelled: int  # adjudicated topics
    n_unlabelled: int  # topics judged by primary reviewers only
    df: float  # degrees of freedom of the reference distribution (inf: normal)
    estimator: str
    classical_estimate: float  # mean of d over the adjudicated topics
    classical_se: float

    @property
    def effective_topics(self) -> float:
        """Adjudicated topics that the classical estimate would need for the same variance."""
        if not self.se > 0 or not self.classical_se > 0:
            return float(self.n_labelled)
        return self.n_labelled * (self.classical_se / self.se) ** 2

    def _cdf(self, z: float) -> float:
        if math.isinf(self.df):
            return float(special.ndtr(z))
        return float(special.stdtr(self.df, z))

    def _z(self, null: float) -> float:
        if self.se > 0:
            return (self.estimate - null) / self.se
        return math.copysign(math.inf, self.estimate - null) if self.estimate != null else 0.0

    def quantile(self, q: float) -> float:
        if math.isinf(self.df):
            return float(special.ndtri(q))
        return float(special.stdtrit(self.df, q))

    def interval(self, level: float) -> tuple[float, float]:
        half = self.quantile(0.5 + level / 2) * self.se
        return self.estimate - half, self.estimate + half

    def p_greater(self, null: float = 0.0) -> float:
        """One-sided p-value of H0: theta <= null against theta > null."""
        return 1.0 - self._cdf(self._z(null))

    def p_less(self, null: float = 0.0) -> float:
        return self._cdf(self._z(null))

    def p_tost(self, margin: float) -> float:
        """Two one-sided tests of |theta| >= margin: the larger of their p-values."""
        return max(self.p_greater(-margin), self.p_less(margin))


def tuned_lambda(d: np.ndarray, f: np.ndarray, f_unlabelled: np.ndarray) -> float:
    """PPI++'s variance-minimising lambda for a mean, clipped to [0, 1] (0 without spread)."""
    n, big_n = d.size, f_unlabelled.size
    if big_n == 0 or n < 2:
        return 0.0
    var_f = float(np.var(np.concatenate([f, f_unlabelled]), ddof=1))
    if not var_f > 0:
        return 0.0  # primary reviewers who answer alike carry no information
    cov = float(np.mean((d - d.mean()) * (f - f.mean())))
    return float(np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0))


def ppi_mean(
    d: np.ndarray,
    f: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    estimator: Estimator = "ppi++",
    interval: Interval = "t",
) -> PPIResult:
    """The prediction-powered mean of d from labelled (d, f) pairs and unlabelled f."""
    d, f, fu = (np.asarray(x, dtype=float) for x in (d, f, f_unlabelled))
    if d.shape != f.shape:
        raise ValueError("d and f must pair the same adjudicated topics")
    n, big_n = d.size, fu.size
    ddof = 1 if interval == "t" else 0
    lam = {"ppi++": None, "ppi": 1.0, "classical": 0.0}[estimator]
    # one more degree of freedom goes to a lambda tuned on these topics (t interval only)
    fitted = int(lam is None and interval == "t" and _tunable(f, fu))
    lam = tuned_lambda(d, f, fu) if lam is None else lam
    if big_n == 0 or (fitted and n < 3):
        lam = 0.0  # nothing to impute from, or no degree of freedom left to tune lambda with
        fitted = 0
    rectifier = d - lam * f
    imputed = lam * fu.mean() if big_n else 0.0
    var = _var(rectifier, ddof + fitted) / n if n else math.nan
    if fitted:  # lambda's own error times f's mean's gap: var(lambda-hat) var(f_L - f_U)
        var += var / (n * (1.0 + n / big_n))
    if big_n and lam:
        var += lam**2 * _var(fu, ddof) / big_n
    classical_se = math.sqrt(_var(d, ddof) / n) if n else math.nan
    return PPIResult(
        estimate=float(imputed + rectifier.mean()) if n else math.nan,
        se=math.sqrt(var) if n else math.nan,
        lam=lam,
        n_labelled=n,
        n_unlabelled=big_n,
        df=float(n - 1 - fitted) if interval == "t" else math.inf,
        estimator=estimator,
        classical_estimate=float(d.mean()) if n else math.nan,
        classical_se=classical_se,
    )


def _tunable(f: np.ndarray, f_unlabelled: np.ndarray) -> bool:
    """Whether PPI++ tunes lambda on the data: primary-only topics exist and f varies."""
    if f_unlabelled.size == 0 or f.size < 2:
        return False
    return bool(np.var(np.concatenate([f, f_unlabelled])) > 0)


def _var(x: np.ndarray, ddof: int) -> float:
    return float(np.var(x, ddof=ddof)) if x.size > ddof else math.nan
