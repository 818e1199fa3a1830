"""What a decisive study needs: reviewer accuracy, control judgments and topics.

`refuted` needs the exact lower bound of the pooled J to reach `controls.min_youden` and
equivalence on the corrected scale, where the observed differences are tested against the SESOI
scaled by J's lower bound. These helpers turn an assumed accuracy into the number of control
judgments with which J's bound passes the minimum with the plan's power, and the topics that then
give the equivalence test its target power (normal approximation of the paired TOST; the
default betting test needs more, see docs/methodology.md).

The gate runs on the weighted accuracy's effective counts (harness.analysis.statistics.weighted),
n_eff = N / deff with N the control judgments and deff = N sum_r (w_r^2 / n_r) the design effect
of the reviewers' shares w_r of the real judgments and their controls n_r. The power is
computed on n_eff, so N = deff x the effective judgments needed: counting on pooled judgments
understated it (sens = spec = 0.9, minimum J 0.3: 53 judgments for power 0.8, but spread as 13
over each of 4 reviewers with shares 0.45 / 0.45 / 0.05 / 0.05 the gate passed 28 %). Equal
shares with equal controls per reviewer give deff = 1.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.sample_size import tost_power, tost_sample_size
from harness.errors import HarnessError

MAX_CONTROLS = 1_000_000
SETTLE = 64  # judgments beyond the bisection's answer checked for a dip below the target power


def expected_accuracy(
    sensitivity: float, specificity: float, judgments: int, level: float
) -> Accuracy:
    """The accuracy table of a study whose control judgments (half published) hit the expected
    counts exactly."""
    pub = judgments // 2
    unpub = judgments - pub
    return Accuracy(
        "planned",
        "pooled",
        "mixed",
        pub,
        int(round(pub * sensitivity)),
        unpub,
        int(round(unpub * specificity)),
        level,
    )


def youden_bound(sensitivity: float, specificity: float, judgments: int, level: float) -> float:
    """Exact (Bonferroni) lower bound of J at `level` (two-sided) with expected counts."""
    if judgments < 2:
        return -1.0
    return expected_accuracy(sensitivity, specificity, judgments, level).youden_ci()[0]


def _lower_bounds(n: int, level: float) -> np.ndarray:
    """Clopper-Pearson lower bound at two-sided `level` for k = 0..n successes."""
    k = np.arange(n + 1)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        return np.where(k > 0, stats.beta.ppf(tail, np.maximum(k, 1), n - k + 1), 0.0)


def gate_power(
    sensitivity: float, specificity: float, judgments: int, min_youden: float, level: float
) -> float:
    """Probability that the exact (Bonferroni) lower bound of J reaches `min_youden`, by
    enumeration over both binomial counts (half the judgments published)."""
    pub = judgments // 2
    unpub = judgments - pub
    if pub < 1 or unpub < 1:
        return 0.0
    inner = 1.0 - (1.0 - level) / 2.0
    s_low, p_low = _lower_bounds(pub, inner), _lower_bounds(unpub, inner)
    # p_low increases with the count: the fewest correct unpublished judgments that suffice
    # for each count of correct published ones
    first = np.searchsorted(p_low, min_youden + 1.0 - s_low - 1e-12, side="left")
    reach = stats.binom.sf(first - 1, unpub, specificity)
    return float(np.sum(stats.binom.pmf(np.arange(pub + 1), pub, sensitivity) * reach))


def design_effect(shares: np.ndarray, controls: np.ndarray) -> float:
    """deff = (sum_r n_r) sum_r (w_r^2 / n_r) over reviewers with controls, shares renormalised
    over them: the factor by which weighting shrinks the control judgments to effective ones."""
    shares, controls = np.asarray(shares, dtype=float), np.asarray(controls, dtype=float)
    keep = (controls > 0) & (shares > 0)
    if not keep.any():
        return 1.0
    w = shares[keep] / shares[keep].sum()
    return float(controls[keep].sum() * np.sum(w**2 / controls[keep]))


def controls_needed(
    sensitivity: float,
    specificity: float,
    min_youden: float,
    level: float,
    power: float = 0.8,
    design: float = 1.0,
) -> int | None:
    """Fewest control judgments (half published) with which the gate on J passes with
    probability `power` (exact, `gate_power` on the effective judgments N / `design`); None
    when the assumed J is not above the minimum.

    The probability is saw-toothed in n (the counts are discrete), so a bisection between a
    failing and a passing n can land on a tooth: the answer is the first n after which the
    power stays at or above `power` over the next SETTLE judgments."""
    if sensitivity + specificity - 1.0 <= min_youden:
        return None

    def enough(n: int) -> bool:
        return gate_power(sensitivity, specificity, n, min_youden, level) >= power

    high = 4
    while not enough(high):
        high *= 2
        if high > MAX_CONTROLS:
            return None
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    failing = [n for n in range(high, high + SETTLE + 1) if not enough(n)]
    effective = failing[-1] + 1 if failing else high
    return int(math.ceil(effective * max(design, 1.0) - 1e-9))


def corrected_tost_topics(
    sd: float, sesoi: float, youden_low: float, alpha: float, target: float
) -> int | None:
    """Topics for equivalence against SESOI * J_L at alpha / 2 (normal approximation)."""
    if youden_low <= 0 or not math.isfinite(sd) or sd <= 0:
        return None
    try:
        return tost_sample_size(sd, sesoi * youden_low, 0.0, alpha / 2, target)
    except HarnessError:
        return None


def corrected_tost_power(
    n: int, sd: float, sesoi: float, youden_low: float, alpha: float
) -> float | None:
    if youden_low <= 0 or not math.isfinite(sd) or sd <= 0:
        return None
    return tost_power(n, sd, sesoi * youden_low, 0.0, alpha / 2)
