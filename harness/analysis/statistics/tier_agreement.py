"""Do the two tiers of reviewers describe the same items? A guard on the adjudicated scale.

Accuracy measured on planted controls describes real items only if reviewers judge both alike.
Adjudicators who recognise controls, or answer real items by some rule of their own, can pass the
J gate and still report almost nothing novel, which reads as "no difference" (a measured case: 91
of 363 topics adjudicated, adjudicators calling 1% of real items novel whatever the truth, primary
reviewers at accuracy 0.8 seeing a true +0.1: `refuted` in 90% of studies at margin 0.065).

Each tier implies a true novel rate per arm through its measured accuracy: a tier reports novel
with probability q = (1 - sensitivity) + J pi, so pi = (q - 1 + sensitivity) / J. On the
adjudicated topics' items both tiers judged the same outputs, so their implied rates must agree.
Each is bounded by the corners of the exact intervals of q (items as the unit: the sum of their
mean verdicts), sensitivity and specificity; intervals that do not overlap in an arm mean
that at least one tier did not judge real items as it judged controls, and no "no difference"
may be read from the adjudicated scale.

The corners of exact intervals are wide where topics are few: with 25 adjudicated topics and
adjudicators calling 1% of real items novel (their controls right), they overlapped in 94% of
simulated studies, and the joint rule refuted a true +SESOI in 58%. So the implied rates are also
compared by a z statistic, each with its delta-method variance
[var(q) + (1 - pi)^2 var(s) + pi^2 var(p)] / J^2 (smoothed rates (k + 1) / (n + 2)); the tiers
disagree when |z| exceeds `Z_GUARD` in an arm or over all items (two-sided 0.005 each).
"""

from __future__ import annotations

import itertools

import numpy as np

from harness.analysis.statistics.accuracy import Accuracy, clopper_pearson
from harness.analysis.statistics.consensus import (
    ADJUDICATOR,
    CROSS,
    Judgments,
    code_outcome,
    role_mask,
)
from harness.analysis.statistics.joint import smoothed_var

__all__ = ["implied_rate", "implied_z", "tiers_disagree"]

Z_GUARD = 2.807  # two-sided 0.005: norm.ppf(1 - 0.0025)


def _implied(novel: float, n: float, acc: Accuracy) -> tuple[float, float]:
    """The implied true novel rate (unclipped) and its delta-method variance."""
    q, var_q = novel / n, smoothed_var(novel, n)
    s, var_s = acc.sensitivity, smoothed_var(acc.published_correct, acc.published)
    p, var_p = acc.specificity, smoothed_var(acc.unpublished_correct, acc.unpublished)
    j = s + p - 1.0
    if j <= 0:
        return float("nan"), float("inf")
    pi = (q - 1.0 + s) / j
    return pi, (var_q + (1 - pi) ** 2 * var_s + pi**2 * var_p) / j**2


def implied_z(a: tuple[float, int], p: tuple[float, int], adj: Accuracy, prim: Accuracy) -> float:
    """z of the difference between the tiers' implied rates (0 when either is not implied)."""
    pi_a, var_a = _implied(*a, adj)
    pi_p, var_p = _implied(*p, prim)
    if not (np.isfinite(pi_a) and np.isfinite(pi_p)) or var_a + var_p <= 0:
        return 0.0
    return float((pi_a - pi_p) / np.sqrt(var_a + var_p))


def implied_rate(novel: float, n: int, acc: Accuracy, level: float) -> tuple[float, float]:
    """Bounds on the true novel rate that `novel` of `n` items judged novel imply, given the
    accuracy's exact intervals; (0, 1) when J's interval reaches 0 (nothing is implied)."""
    qs = clopper_pearson(novel, n, level)
    corners = itertools.product(qs, acc.sensitivity_ci(level), acc.specificity_ci(level))
    rates = []
    for q, sens, spec in corners:
        j = sens + spec - 1.0
        if j <= 0:
            return 0.0, 1.0
        rates.append((q - 1.0 + sens) / j)
    return max(0.0, min(rates)), min(1.0, max(rates))


def _item_counts(
    j: Judgments, keep: np.ndarray, novel: np.ndarray, arm: np.ndarray
) -> tuple[float, int]:
    """(items judged novel, items) of an arm: the sum of the items' mean coded verdicts (an
    effective count: the binomial over items is wider than the judgments' own spread)."""
    rows = keep & arm & ~np.isnan(novel)
    if not rows.any():
        return 0, 0
    items, inverse = np.unique(j.item[rows], return_inverse=True)
    means = np.bincount(inverse, weights=novel[rows]) / np.bincount(inverse)
    return float(means.sum()), int(items.size)


def tiers_disagree(
    j: Judgments,
    roles: np.ndarray,
    sampled: np.ndarray,
    unsure: str,
    primary: Accuracy,
    adjudicators: Accuracy,
    level: float,
) -> str | None:
    """Why the tiers' judgments of the adjudicated items cannot both fit their measured
    accuracy, or None when they can (or either accuracy is not estimable)."""
    if not (primary.estimable and adjudicators.estimable):
        return None
    novel = code_outcome(j.verdict, unsure)
    on_sample = np.asarray(sampled, dtype=bool)[j.item_topic[j.item]]
    theirs = role_mask(j, roles, ADJUDICATOR)
    cross = j.condition == CROSS
    both = np.ones_like(cross)
    for name, arm in (("cross-field", cross), ("single-field", ~cross), ("", both)):
        a = _item_counts(j, on_sample & theirs, novel, arm)
        p = _item_counts(j, on_sample & ~theirs, novel, arm)
        if not a[1] or not p[1]:
            continue
        z = implied_z(a, p, adjudicators, primary)
        if abs(z) > Z_GUARD:
            return (
                f"on the adjudicated {name or 'all'} items the adjudicators' verdicts ({a[0]:.1f} "
                f"of {a[1]} novel) and the primary reviewers' ({p[0]:.1f} of {p[1]}) imply true novel rates "
                f"that differ by z = {z:+.2f} given each tier's accuracy on its controls (the "
                f"guard's limit {Z_GUARD}): at least one tier did not judge real items as it "
                "judged controls, so the adjudicated scale cannot show that the conditions do "
                "not differ"
            )
        if not name:  # all items: the z statistic only
            continue
        lo_a, hi_a = implied_rate(*a, adjudicators, level)
        lo_p, hi_p = implied_rate(*p, primary, level)
        if hi_a < lo_p or hi_p < lo_a:
            return (
                f"on the adjudicated {name} items the adjudicators' verdicts ({a[0]:.1f} of {a[1]} "
                f"novel) imply a true novel rate in [{lo_a:.3f}, {hi_a:.3f}] and the primary "
                f"reviewers' ({p[0]:.1f} of {p[1]}) one in [{lo_p:.3f}, {hi_p:.3f}], given each "
                "tier's accuracy on its controls: at least one tier did not judge real items as "
                "it judged controls, so the adjudicated scale cannot show that the conditions "
                "do not differ"
            )
    return None
