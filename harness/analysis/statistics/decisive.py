"""What a decisive study needs: reviewer accuracy, control judgments and topics.

`refuted` needs the exact lower bound of the pooled J to reach `controls.min_youden` and
equivalence on the corrected scale, where the observed differences are tested against the SESOI
scaled by J's lower bound. These helpers turn an assumed accuracy into the number of control
judgments with which J's bound passes the minimum with the plan's power, and the topics that then
give the equivalence test its target power (normal approximation of the paired TOST; the
default betting test needs more, see docs/methodology.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from harness.analysis.planning.sample_size import tost_power, tost_sample_size
from harness.analysis.statistics.accuracy import Accuracy
from harness.errors import HarnessError

MAX_CONTROLS = 1_000_000


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


def controls_needed(
    sensitivity: float, specificity: float, min_youden: float, level: float, power: float = 0.8
) -> int | None:
    """Fewest control judgments (half published) with which the gate on J passes with
    probability `power` (exact, `gate_power`); None when the assumed J is not above the minimum.

    The probability is not monotone in n at every step (the counts are discrete), so the
    search returns the first n of a bisection between a failing and a passing n; n + 2 rarely
    differs."""
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
    return high


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
