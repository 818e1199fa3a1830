"""The hypothesis author's literal rule: pooled proportions, two-proportion z-test.

It counts every judgment as an independent observation and ignores that conditions are paired
within topics and that reviewers judge the same outputs. It is reported beside the verdict, never
as the primary test (benchmarks/bench_calibration.py shows its type I error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from harness.analysis.statistics.consensus import CROSS, SINGLE_A, SINGLE_B


@dataclass(frozen=True)
class Pooled:
    novel_cross: int
    n_cross: int
    novel_single: int
    n_single: int
    z: float
    p_value: float
    alternative: str
    ci_low: float  # Wald 95% interval of the pooled difference (independence assumed)
    ci_high: float

    @property
    def p_cross(self) -> float:
        return self.novel_cross / self.n_cross if self.n_cross else math.nan

    @property
    def p_single(self) -> float:
        return self.novel_single / self.n_single if self.n_single else math.nan

    @property
    def difference(self) -> float:
        return self.p_cross - self.p_single


def single_conditions(single: str) -> tuple[int, ...]:
    return {"single_a": (SINGLE_A,), "single_b": (SINGLE_B,)}.get(single, (SINGLE_A, SINGLE_B))


def pooled_test(y: np.ndarray, condition: np.ndarray, single: str, alternative: str) -> Pooled:
    """statsmodels proportions_ztest on pooled judgments (y coded 1/0, NaN left out)."""
    from statsmodels.stats.proportion import proportions_ztest

    coded = ~np.isnan(y)
    is_cross = coded & (condition == CROSS)
    is_single = coded & np.isin(condition, single_conditions(single))
    counts = np.array([int(y[is_cross].sum()), int(y[is_single].sum())])
    nobs = np.array([int(is_cross.sum()), int(is_single.sum())])
    if nobs.min() == 0 or counts.sum() in (0, nobs.sum()):
        z, p = 0.0, 1.0
    else:
        z, p = proportions_ztest(counts, nobs, alternative=alternative)
    rates = counts / np.maximum(nobs, 1)
    se = math.sqrt(sum(r * (1 - r) / max(m, 1) for r, m in zip(rates, nobs, strict=True)))
    diff = float(rates[0] - rates[1])
    return Pooled(
        int(counts[0]),
        int(nobs[0]),
        int(counts[1]),
        int(nobs[1]),
        float(z),
        float(p),
        alternative,
        diff - 1.959964 * se,
        diff + 1.959964 * se,
    )
