"""The accuracy the verdict rests on: every reviewer's accuracy weighted by their share of the
real judgments.

The observed difference is a weighted sum of reviewers' judgments, and each reviewer shrinks
their part of it by their own J, so E[d] = true difference x sum_r w_r J_r, where w_r is reviewer
r's share of the absolute weights of d_t. Pooling control judgments instead weights reviewers by
their number of controls; when a busy reviewer is weak and occasional ones are strong (the
per-reviewer minimum of controls makes this common), the pooled J overstates the J that shrank d,
and a corrected-scale equivalence that scales SESOI by it becomes liberal.

The weighted rates s_w = sum_r w_r s_r get Kish's effective sample size
n_eff = 1 / sum_r (w_r^2 / n_r) and the Clopper-Pearson interval on (s_w n_eff, n_eff)
(Korn and Graubard 1998, Stat. Med. 17; Kish 1965). When the shares equal the reviewers' shares of
the controls, n_eff is the number of controls and the interval is the exact pooled one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from harness.analysis.statistics.accuracy import Accuracy

__all__ = ["Weighted", "kish", "weighted_accuracy"]


@dataclass(frozen=True)
class Weighted:
    accuracy: Accuracy  # effective counts (floats), scope "weighted"
    shares: dict[str, float]  # each reviewer's share of the real judgments' weight
    uncovered: float  # share held by reviewers without controls of both kinds


def kish(shares: np.ndarray, correct: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted rate and Kish effective n over the last axis (reviewers).

    `shares` must be zero where n is zero and sum to one over the reviewers with controls."""
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, correct / np.maximum(n, 1), 0.0)
        inv = np.where(n > 0, shares**2 / np.maximum(n, 1), 0.0).sum(axis=-1)
        return (shares * rate).sum(axis=-1), np.where(inv > 0, 1.0 / inv, 0.0)


def weighted_accuracy(
    reviewers: list[Accuracy], shares: Mapping[str, float], level: float
) -> Weighted:
    """Weighted sensitivity and specificity with effective counts for the exact intervals.

    Reviewers of real items without controls of both kinds cannot be weighted in; their share is
    reported as `uncovered` and the others' shares are renormalised."""
    covered = [a for a in reviewers if a.estimable and shares.get(a.label, 0.0) > 0]
    raw = np.array([shares[a.label] for a in covered], dtype=float)
    total = float(sum(v for v in shares.values() if v > 0))
    uncovered = 1.0 - float(raw.sum()) / total if total > 0 else 1.0
    if not covered:
        empty = Accuracy("all reviewers, weighted", "weighted", "mixed", 0, 0, 0, 0, level)
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
    kinds = {a.kind for a in covered}
    acc = Accuracy(
        "all reviewers, weighted",
        "weighted",
        kinds.pop() if len(kinds) == 1 else "mixed",
        float(n_pub),
        float(sens * n_pub),
        float(n_unpub),
        float(spec * n_unpub),
        level,
    )
    return Weighted(acc, {a.label: float(x) for a, x in zip(covered, w, strict=True)}, uncovered)
