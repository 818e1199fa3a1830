"""What a decisive study needs: reviewer accuracy, control judgments and topics.

`refuted` needs the exact lower bound of the pooled J to reach `controls.min_youden` and
equivalence on the corrected scale, where the observed differences are tested against the SESOI
scaled by J's lower bound. These helpers turn an assumed accuracy into the number of control
judgments that bring J's bound above the minimum, and the topics that then give the equivalence
test its target power (normal approximation of the paired TOST; the default betting test needs
more, see docs/methodology.md).
"""

from __future__ import annotations

import math

from harness.analyze.accuracy import Accuracy
from harness.analyze.sample_size import tost_power, tost_sample_size
from harness.errors import HarnessError

MAX_CONTROLS = 1_000_000


def expected_accuracy(sensitivity: float, specificity: float, judgments: int,
                      level: float) -> Accuracy:
    """The accuracy table of a study whose control judgments (half published) hit the expected
    counts exactly."""
    pub = judgments // 2
    unpub = judgments - pub
    return Accuracy("planned", "pooled", "mixed", pub, int(round(pub * sensitivity)), unpub,
                    int(round(unpub * specificity)), level)


def youden_bound(sensitivity: float, specificity: float, judgments: int, level: float) -> float:
    """Exact (Bonferroni) lower bound of J at `level` (two-sided) with expected counts."""
    if judgments < 2:
        return -1.0
    return expected_accuracy(sensitivity, specificity, judgments, level).youden_ci()[0]


def controls_needed(sensitivity: float, specificity: float, min_youden: float,
                    level: float) -> int | None:
    """Fewest control judgments (half published) whose expected J bound reaches `min_youden`;
    None when the assumed J itself is not above it."""
    if sensitivity + specificity - 1.0 <= min_youden:
        return None
    high = 4
    while youden_bound(sensitivity, specificity, high, level) < min_youden:
        high *= 2
        if high > MAX_CONTROLS:
            return None
    low = high // 2
    while high - low > 1:   # the bound grows with n up to rounding of the expected counts
        mid = (low + high) // 2
        if youden_bound(sensitivity, specificity, mid, level) >= min_youden:
            high = mid
        else:
            low = mid
    return high


def corrected_tost_topics(sd: float, sesoi: float, youden_low: float, alpha: float,
                          target: float) -> int | None:
    """Topics for equivalence against SESOI * J_L at alpha / 2 (normal approximation)."""
    if youden_low <= 0 or not math.isfinite(sd) or sd <= 0:
        return None
    try:
        return tost_sample_size(sd, sesoi * youden_low, 0.0, alpha / 2, target)
    except HarnessError:
        return None


def corrected_tost_power(n: int, sd: float, sesoi: float, youden_low: float,
                         alpha: float) -> float | None:
    if youden_low <= 0 or not math.isfinite(sd) or sd <= 0:
        return None
    return tost_power(n, sd, sesoi * youden_low, 0.0, alpha / 2)
