"""The adjudicators measured: their accuracy on the planted controls in their own packets, and
what it allows the verdict on the adjudicated scale to claim.

Adjudicators who misjudge shrink the difference they see: with sensitivity s and specificity p
that do not depend on the condition, an item's expected adjudicated value is (1 - s) + J x for
true novelty x (J = s + p - 1), so the adjudicated difference is J times the true one. Testing
`supported` on the adjudicated scale stays valid (shrinking towards 0 never makes a null look
false), but "no difference of interest" must be shown against the SESOI times J: equivalence
inside +/- SESOI x J_L, with J_L the exact lower bound of the adjudicators' J, holds for the
true difference whenever J >= J_L. Each is taken at alpha / 2 (Bonferroni), as for the primary
reviewers (`statistics.controls`). Adjudicators who cannot be shown to discriminate (J_L below
`controls.min_youden`, or no controls) cannot refute.

J is every adjudicator's accuracy weighted by their share of the adjudicated judgments
(`statistics.weighted`): the adjudicated value of an item is the mean over its adjudicators, so
each shrinks their part of it by their own J. With `combine: majority` the bound is the majority's
J computed from the lower bounds of the two rates (`_lower`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from scipy import special

from harness.analysis.plan.plan_file import Plan
from harness.analysis.statistics.accuracy import (
    Accuracy,
    Differential,
    accuracy_table,
    coded_controls,
    differential,
    uncounted_controls,
)
from harness.analysis.statistics.clustered import clustered
from harness.analysis.statistics.controls import GateWords, discrimination_gate
from harness.analysis.statistics.differential_error import (
    ArmRate,
    DifferentialError,
    differential_error,
)
from harness.analysis.statistics.joint import (
    RHO_MAX,
    YoudenEstimate,
    majority_rate,
    youden_estimate,
)
from harness.analysis.statistics.ppi import PPIResult
from harness.analysis.statistics.weighted import Weighted, weighted_accuracy

__all__ = ["Instrument", "corrected_interval", "measure"]


@dataclass(frozen=True)
class Instrument:
    """The adjudicators' accuracy and what the verdict may claim from it."""

    coded: pd.DataFrame  # the adjudicators' coded control judgments
    table: list[Accuracy]  # per adjudicator, per kind, pooled (both arms)
    weighted: Weighted  # weighted by each adjudicator's share of the adjudicated judgments
    bound: float | None  # lower bound of J at one-sided alpha / 2: the SESOI's factor
    ok: bool  # shown to discriminate (the gate on J's exact lower bound)
    reason: str
    differential: Differential | None  # cross-field vs single-field controls, where both exist
    estimate: YoudenEstimate | None = None  # J with its variance, for the joint test
    # the adjudicated arms: their novel rates weight the differential-error bias and correct it
    single: ArmRate | None = None
    cross: ArmRate | None = None

    def joint_gate(self, plan: Plan) -> tuple[bool, str]:
        """The gate of the joint rule (`statistics.joint`): Newcombe's lower bound of J at
        `controls.level` at least `controls.min_youden`."""
        est, c = self.estimate, plan.controls
        if est is None or not self.weighted.accuracy.estimable:
            return False, self.reason
        acc = self.weighted.accuracy
        text = (
            f"{ADJUDICATOR_WORDS.weighted.format(j=format(est.value, '.3f'))}, lower bound "
            f"{est.lower:.3f} ({c.level:.0%} score interval) from {acc.published:.1f} published "
            f"and {acc.unpublished:.1f} unpublished effective control judgments"
        )
        if est.lower < c.min_youden:
            return False, (
                f"the adjudicators could not be shown to discriminate: {text}; the plan requires "
                f"its lower bound to be at least {c.min_youden:g}"
            )
        return True, text

    @property
    def youden(self) -> float:
        return self.weighted.accuracy.youden

    def differential_error(
        self, ppi: PPIResult, plan: Plan, alpha: float | None = None
    ) -> DifferentialError:
        """How robust a difference on their scale is to their own differential error (at the
        plan's alpha, or `alpha` for one of several models' tests)."""
        a = plan.adjudication
        k = a.per_item if a.combine == "majority" else 0
        level = plan.primary.alpha if alpha is None else alpha
        shares = self.weighted.shares
        return differential_error(self.coded, shares, ppi, level, k, self.single, self.cross)

    def margin(self, sesoi: float) -> float | None:
        """The margin on the adjudicated scale that keeps the true difference inside the SESOI."""
        if not self.ok or self.bound is None or self.bound <= 0:
            return None
        return sesoi * self.bound


def measure(frame: pd.DataFrame, shares: dict[str, float], plan: Plan) -> Instrument:
    """`frame`: the adjudicators' control reviews (`data.adjudicator_controls`); `shares`: each
    adjudicator's share of the adjudicated judgments of real items."""
    c, alpha = plan.controls, plan.primary.alpha
    coded = coded_controls(frame, plan.outcome.unsure)
    table = accuracy_table(coded, c.level) if len(coded) else []
    kept = [a for a in table if a.scope == "reviewer"]
    # controls judged by several adjudicators covary: their variances carry the design effect
    weighted = clustered(weighted_accuracy(kept, shares, c.level), coded)
    uncounted = uncounted_controls(frame, plan.outcome.unsure)
    ok, reason = discrimination_gate(weighted, plan, ADJUDICATOR_WORDS, uncounted)
    bound = None
    if weighted.accuracy.estimable:
        bound = weighted.floor(_lower(weighted, alpha / 2, plan))
    diff = differential(coded, alpha) if len(coded) else None
    return Instrument(coded, table, weighted, bound, ok, reason, diff, _estimate(weighted, plan))


def _estimate(weighted: Weighted, plan: Plan) -> YoudenEstimate | None:
    acc = weighted.accuracy
    if not acc.estimable:
        return None
    a = plan.adjudication
    return youden_estimate(
        acc.published_correct,
        acc.published,
        acc.unpublished_correct,
        acc.unpublished,
        plan.controls.level,
        covered=1.0 - weighted.uncovered,
        majority=a.per_item if a.combine == "majority" else 0,
        variances=weighted.variances,
        rho=weighted.rho,
        rho_var=weighted.rho_var,
        rho_cov=weighted.rho_cov,
    )


def _lower(weighted: Weighted, alpha: float, plan: Plan) -> float:
    """Lower bound of the scale's J at one-sided alpha (split over both rates). With `combine:
    majority` the scale is the majority of `per_item` adjudicators: its rates M(s) = P(more than
    half of them right) grow with each adjudicator's rate s, so the bound is M(s_L) + M(p_L) - 1
    (a majority's J can fall below the adjudicators' own when one rate is under 0.5), with
    their calls' correlation on one control (`statistics.clustered`) at its upper limit."""
    acc, inner = weighted.accuracy, 1.0 - 2.0 * alpha
    if plan.adjudication.combine != "majority":
        return acc.youden_ci(inner)[0]
    k = plan.adjudication.per_item
    z = float(special.ndtri(1.0 - alpha))
    pairs = zip(weighted.rho, weighted.rho_var, strict=True)
    upper = [min(r + z * math.sqrt(v), RHO_MAX) for r, v in pairs]
    s_low = acc.sensitivity_ci(1.0 - alpha)[0]
    p_low = acc.specificity_ci(1.0 - alpha)[0]
    # M falls with rho above a rate of 0.5 and rises below it: the lower of its two ends
    low = [
        min(majority_rate(x, k, 0.0), majority_rate(x, k, r))
        for x, r in zip((s_low, p_low), upper, strict=True)
    ]
    return float(low[0] + low[1] - 1.0)


ADJUDICATOR_WORDS = GateWords(
    none_judged="no adjudicator judged a planted control",
    one_kind="no adjudicator judged both published and unpublished controls",
    unmeasured="the adjudicators' accuracy",
    who="the adjudicators",
    weighted="the adjudicators' J = {j} (weighted by their share of the adjudicated judgments)",
    uncovered="adjudicators with {u} of the adjudicated judgments",
)


def corrected_interval(
    low: float, high: float, youden: tuple[float, float]
) -> tuple[float | None, float | None]:
    """An interval of the true difference from one of the adjudicated difference and one of J
    (both must hold: levels add, Bonferroni): each end divided by the J that makes it widest."""
    j_low, j_high = youden
    if not (math.isfinite(low) and math.isfinite(high)) or not j_low > 0:
        return None, None
    j_high = min(max(j_high, j_low), 1.0)  # callers pass the floored bounds of both ends
    lo = low / j_low if low < 0 else low / j_high
    hi = high / j_low if high > 0 else high / j_high
    return max(lo, -1.0), min(hi, 1.0)
