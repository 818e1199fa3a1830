"""How many topics the verdict's own design needs: one figure, read off this study's interval.

The verdict rests on the prediction-powered estimate on the adjudicated scale, so its topic count
is not the paired t-test's (the Power section) nor the control judgments' (Reviewer accuracy).
With the adjudicated share kept, the interval's half-width and the estimate's SE shrink as
1 / sqrt(topics), so this study's figures, scaled, say what a larger study would reach. Per
topic: H the half-width of the interval a test reads (the one-sided test's (1 - 2 alpha)
interval; for equivalence against the J margin, the (1 - alpha) one it then reads), S = SE x
sqrt(n):

    detect         N = ((H + z_power S) / (J x SESOI))^2        (a true +SESOI, seen J x SESOI)
    equivalence    N = ((H + z_{(1+power)/2} S) / margin)^2      (a true 0)

A planning figure (the betting interval narrows faster than 1 / sqrt(n) at first, so it errs
high for small studies); `harness power --adjudicated` simulates the rule itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from harness.analysis.report.results import AdjudicationResult

__all__ = ["VerdictTopics", "verdict_topics", "with_topics"]


@dataclass(frozen=True)
class VerdictTopics:
    detect: int  # topics to detect a true +SESOI with `power`
    equivalence: int  # topics to show equivalence within the margin when there is none
    power: float
    share: float  # adjudicated topics / complete topics, kept as the study grows
    inflation: float  # the one-sided test's half-width over a normal one's
    scale: float  # J: a true difference appears J times as large on the adjudicated scale
    margin: float  # the equivalence margin the verdict reads


def verdict_topics(a: AdjudicationResult, power: float) -> VerdictTopics | None:
    """None when an interval or the SE is missing (too few adjudicated topics)."""
    n = a.topics_labelled + a.topics_unlabelled
    bounds = (a.ci_low, a.ci_high, a.tost_low, a.tost_high)
    if a.se is None or a.se <= 0 or any(b is None for b in bounds) or not n:
        return None
    ci_low, ci_high, tost_low, tost_high = (float(b) for b in bounds)  # type: ignore[arg-type]
    root = math.sqrt(n)
    s = a.se * root
    h_one_sided = (tost_high - tost_low) / 2 * root
    h_margin = (ci_high - ci_low) / 2 * root if a.margin else h_one_sided
    scale = a.youden if a.youden is not None and a.youden > 0 else 1.0
    margin = a.margin if a.margin else a.sesoi
    z = stats.norm.ppf
    detect = ((h_one_sided + z(power) * s) / (scale * a.sesoi)) ** 2
    equivalence = ((h_margin + z((1 + power) / 2) * s) / margin) ** 2
    return VerdictTopics(
        detect=math.ceil(detect),
        equivalence=math.ceil(equivalence),
        power=power,
        share=a.topics_labelled / n,
        inflation=h_one_sided / (z(1 - a.alpha) * s),
        scale=scale,
        margin=margin,
    )


def with_topics(a: AdjudicationResult, power: float) -> AdjudicationResult:
    """The result with the topics its design needs (`topics_to_detect`, ...)."""
    v = verdict_topics(a, power)
    if v is None:
        return a
    return a.model_copy(
        update={
            "topics_to_detect": v.detect,
            "topics_for_equivalence": v.equivalence,
            "topics_power": v.power,
            "topics_basis": (
                f"this study's interval scaled to more topics, {v.share:.0%} adjudicated; "
                f"betting width {v.inflation:.2f} times the normal one; a true difference "
                f"seen {v.scale:.2f} times as large through the adjudicators; equivalence "
                f"within +/-{v.margin:.3f}"
            ),
        }
    )
