"""Equivalence (two one-sided tests, TOST) and non-superiority against the SESOI.

"No difference" is a claim that needs its own test: the difference is shown to lie inside
(-SESOI, +SESOI) when both one-sided nulls are rejected at alpha, i.e. when the (1 - 2 alpha)
confidence interval lies inside the margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from harness.analyze.paired import tango_ci, tango_tost


@dataclass(frozen=True)
class Equivalence:
    method: str
    margin: float
    estimate: float
    p_lower: float          # H0: difference <= -margin
    p_upper: float          # H0: difference >= +margin (its rejection is non-superiority)
    ci_low: float           # (1 - 2 alpha) interval
    ci_high: float
    alpha: float

    @property
    def p_tost(self) -> float:
        return max(self.p_lower, self.p_upper)

    @property
    def equivalent(self) -> bool:
        return self.p_tost < self.alpha

    @property
    def non_superior(self) -> bool:
        return self.p_upper < self.alpha


def paired_t(d: np.ndarray, margin: float, alpha: float) -> Equivalence:
    """TOST with one-sample t-tests of the per-topic differences against -margin and +margin."""
    d = np.asarray(d, dtype=float)
    n = d.size
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return Equivalence("paired_t", margin, mean, 1.0, 1.0, -math.inf, math.inf, alpha)
    se = float(d.std(ddof=1) / math.sqrt(n))
    df = n - 1
    if se == 0.0:
        # every topic has the same difference: the interval is that point
        p_lower = 0.0 if mean > -margin else 1.0
        p_upper = 0.0 if mean < margin else 1.0
        return Equivalence("paired_t", margin, mean, p_lower, p_upper, mean, mean, alpha)
    p_lower = float(stats.t.sf((mean + margin) / se, df))
    p_upper = float(stats.t.cdf((mean - margin) / se, df))
    half = float(stats.t.isf(alpha, df) * se)
    return Equivalence("paired_t", margin, mean, p_lower, p_upper, mean - half, mean + half, alpha)


def tango(b: int, c: int, n: int, margin: float, alpha: float) -> Equivalence:
    """TOST with Tango's score statistic on the consensus table (Tango 1998)."""
    if n <= 0:  # no complete topic: nothing is shown
        return Equivalence("tango", margin, math.nan, 1.0, 1.0, -1.0, 1.0, alpha)
    p_lower, p_upper = tango_tost(b, c, n, margin)
    low, high = tango_ci(b, c, n, alpha=2 * alpha)
    estimate = (b - c) / n if n else math.nan
    return Equivalence("tango", margin, estimate, p_lower, p_upper, low, high, alpha)


def t_interval(d: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Two-sided t confidence interval for the mean of d."""
    d = np.asarray(d, dtype=float)
    if d.size < 2:
        return (-math.inf, math.inf)
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    half = float(stats.t.isf((1 - level) / 2, d.size - 1) * se)
    mean = float(d.mean())
    return (mean - half, mean + half)
