"""The accuracy the verdict rests on: every reviewer's accuracy weighted by their share of the
real judgments.

The observed difference is a weighted sum of reviewers' judgments, and each reviewer shrinks
their part of it by their own J, so E[d] = true difference x sum_r w_r J_r, where w_r is reviewer
r's share of the absolute weights of d_t. Pooling control judgments instead weights reviewers by
their number of controls; when a busy reviewer is weak and occasional ones are strong (the
per-reviewer minimum of controls makes this common), the pooled J overstates the J that shrank d,
and a corrected-scale equivalence that scales SESOI by it becomes liberal.

The weighted rates s_w = sum_r w_r s_r get the Clopper-Pearson interval on (s_w n_eff, n_eff)
(Korn and Graubard 1998, Stat. Med. 17). Kish's n = 1 / sum_r (w_r^2 / n_r) (Kish 1965) assumes
every reviewer has the same p(1 - p); a few controls of a weak reviewer with a large share then
get too little variance (coverage 78 % for a nominal 95 % at shares 0.2 / 0.8 with 5 and 500
controls). So n_eff = min(Kish, m (1 - m) / v) with Korn and Graubard's variance
v = sum_r w_r^2 s~_r (1 - s~_r) / n_r of smoothed rates s~_r = (k_r + 1) / (n_r + 2) (never zero)
and m = sum_r w_r s~_r, smoothed the same way so that equally accurate reviewers keep Kish's n.
When the shares equal the reviewers' shares of the controls, v <= m (1 - m) / N by the concavity
of p(1 - p), so n_eff is the number of controls N and the interval is the exact pooled one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.joint import smoothed_var

__all__ = ["Weighted", "kish", "weighted_accuracy"]


@dataclass(frozen=True)
class Weighted:
    accuracy: Accuracy  # effective counts (floats), scope "weighted"
    shares: dict[str, float]  # each reviewer's share of the real judgments' weight
    uncovered: float  # share held by reviewers without controls of both kinds
    # variances of the weighted sensitivity and specificity, sum_r w_r^2 var(rate_r) with
    # smoothed rates (`statistics.joint.smoothed_var`): the joint test's var(J). Its exact
    # expectation at shares 0.2-0.8, 10-200 controls and accuracies 0.7-0.99 is 0.82-6.95 x
    # the true variance (below 0.95 x in 41 of 243 cells, all with 10 controls and accuracy
    # near 0.7; far above it near accuracy 1, where smoothing keeps it away from 0).
    variances: tuple[float, float] | None = None
    # the correlation of two reviewers' calls on one published / unpublished control
    # (`statistics.clustered`): what a majority of them is right with depends on it
    rho: tuple[float, float] = (0.0, 0.0)
    rho_var: tuple[float, float] = (0.0, 0.0)  # the correlations' estimates' variances
    rho_cov: tuple[float, float] = (0.0, 0.0)  # ... and covariances with their rates

    def floor(self, bound: float) -> float:
        """A lower bound of the J that shrank d from one of the covered reviewers' weighted J:
        reviewers without controls count as J = 0 (no discrimination; not the worst case, which is a
        negative J), so their share scales it down."""
        return bound if bound <= 0 else (1.0 - self.uncovered) * bound


def kish(shares: np.ndarray, correct: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted rate and effective n (Kish's, or less when reviewers' rates differ) over the
    last axis (reviewers).

    `shares` must be zero where n is zero and sum to one over the reviewers with controls."""
    with np.errstate(invalid="ignore", divide="ignore"):
        size = np.maximum(n, 1)
        rate = np.where(n > 0, correct / size, 0.0)
        inv = np.where(n > 0, shares**2 / size, 0.0).sum(axis=-1)
        smooth = np.where(n > 0, (correct + 1.0) / (n + 2.0), 0.0)
        var = np.where(n > 0, shares**2 * smooth * (1.0 - smooth) / size, 0.0).sum(axis=-1)
        mean = (shares * smooth).sum(axis=-1)
        kish_n = np.where(inv > 0, 1.0 / inv, 0.0)
        n_eff = np.minimum(kish_n, np.where(var > 0, mean * (1.0 - mean) / var, kish_n))
        return (shares * rate).sum(axis=-1), n_eff


def weighted_accuracy(
    reviewers: list[Accuracy], shares: Mapping[str, float], level: float
) -> Weighted:
    """Weighted sensitivity and specificity with effective counts for the exact intervals.

    Reviewers of real items without controls of both kinds cannot be weighted in; their share is
    reported as `uncovered`, the others' shares are renormalised, and bounds on J go through
    `Weighted.floor`."""
    covered = [a for a in reviewers if a.estimable and shares.get(a.label, 0.0) > 0]
    raw = np.array([shares[a.label] for a in covered], dtype=float)
    total = float(sum(v for v in shares.values() if v > 0))
    uncovered = 1.0 - float(raw.sum()) / total if total > 0 else 1.0
    if not covered:
        empty = Accuracy(
            "all reviewers, weighted by share of real judgments",
            "weighted",
            "mixed",
            0,
            0,
            0,
            0,
            level,
        )
        return Weighted(empty, dict(shares), uncovered)
    w = raw / raw.sum()
    sens, n_pub = kish(
        w,
        np.array([a.published_correct for a in covered], dtype=float),
        np.array([a.published for a in covered], dtype=float),
    )
    spec, n_unpub = kish(
        w,
        np.array([a.unpublished_correct for a in covered], dtype=float),
        np.array([a.unpublished for a in covered], dtype=float),
    )
    variances = (
        _variance(w, [(a.published_correct, a.published) for a in covered]),
        _variance(w, [(a.unpublished_correct, a.unpublished) for a in covered]),
    )
    kinds = {a.kind for a in covered}
    acc = Accuracy(
        "all reviewers, weighted by share of real judgments",
        "weighted",
        kinds.pop() if len(kinds) == 1 else "mixed",
        float(n_pub),
        float(sens * n_pub),
        float(n_unpub),
        float(spec * n_unpub),
        level,
    )
    shares_kept = {a.label: float(x) for a, x in zip(covered, w, strict=True)}
    return Weighted(acc, shares_kept, uncovered, variances)


def _variance(w: np.ndarray, counts: list[tuple[float, float]]) -> float:
    """sum_r w_r^2 var(rate_r), each rate smoothed (k + 1) / (n + 2)."""
    k, n = (np.array(x, dtype=float) for x in zip(*counts, strict=True))
    return float((w**2 * smoothed_var(k, n)).sum())
