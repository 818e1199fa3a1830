"""Inter-rater agreement: raw agreement, Cohen's kappa per reviewer pair, Fleiss' kappa and
Krippendorff's alpha (nominal), all from an items-by-categories count matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np


def count_matrix(item: np.ndarray, category: np.ndarray, n_items: int, k: int) -> np.ndarray:
    """Items x categories: how many reviewers put each item in each category."""
    return np.bincount(item * k + category, minlength=n_items * k).reshape(n_items, k)


def raw_agreement(counts: np.ndarray) -> float:
    """Mean over items with >= 2 ratings of the share of rater pairs that agree."""
    m = counts.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return math.nan
    c, m = counts[keep].astype(float), m[keep].astype(float)
    return float(np.mean((c * (c - 1)).sum(axis=1) / (m * (m - 1))))


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss (1971) kappa; every row must have the same number of ratings (>= 2)."""
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    if counts.shape[0] == 0 or m[0] < 2 or not np.all(m == m[0]):
        return math.nan
    p_items = ((counts * counts).sum(axis=1) - m) / (m * (m - 1))
    shares = counts.sum(axis=0) / m.sum()
    expected = float((shares * shares).sum())
    if expected >= 1.0:
        return math.nan
    return float((p_items.mean() - expected) / (1 - expected))


def krippendorff_alpha_nominal(counts: np.ndarray) -> float:
    """Krippendorff's alpha for nominal data from per-unit value counts (missing data allowed)."""
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    keep = m >= 2
    if not keep.any():
        return math.nan
    c, m = counts[keep], m[keep]
    weighted = c / (m - 1)[:, None]
    coincidence = weighted.T @ c - np.diag(weighted.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    observed = coincidence.sum() - np.trace(coincidence)
    expected = n_c.sum() ** 2 - (n_c * n_c).sum()
    if expected == 0:
        return math.nan
    return float(1 - (n - 1) * observed / expected)


def cohens_kappa(table: np.ndarray) -> float:
    """Cohen's kappa of a square confusion table."""
    table = np.asarray(table, dtype=float)
    total = table.sum()
    if total == 0:
        return math.nan
    observed = np.trace(table) / total
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum() / total**2)
    if expected >= 1.0:
        return math.nan
    return float((observed - expected) / (1 - expected))


@dataclass(frozen=True)
class PairKappa:
    reviewer_a: str
    reviewer_b: str
    n_items: int
    agreement: float
    kappa: float


@dataclass(frozen=True)
class Agreement:
    n_items: int  # items with at least two ratings
    raw_agreement: float
    fleiss_kappa: float
    fleiss_raters: int  # ratings per item in the Fleiss subset
    fleiss_items: int
    alpha_verdicts: float  # Krippendorff's alpha, three verdict categories
    alpha_outcome: float  # Krippendorff's alpha, coded outcome (novel or not)
    pairs: list[PairKappa] = field(default_factory=list)


def agreement(
    item: np.ndarray,
    reviewer: np.ndarray,
    verdict: np.ndarray,
    y: np.ndarray,
    n_items: int,
    reviewer_ids: list[str],
    min_shared: int,
) -> Agreement:
    counts = count_matrix(item, verdict, n_items, 3)
    m = counts.sum(axis=1)
    multi = m >= 2
    coded = ~np.isnan(y)
    outcome = count_matrix(item[coded], y[coded].astype(int), n_items, 2)
    fleiss_m = int(np.bincount(m[multi]).argmax()) if multi.any() else 0
    fleiss_rows = counts[m == fleiss_m] if fleiss_m else counts[:0]
    return Agreement(
        n_items=int(multi.sum()),
        raw_agreement=raw_agreement(counts),
        fleiss_kappa=fleiss_kappa(fleiss_rows),
        fleiss_raters=fleiss_m,
        fleiss_items=int(fleiss_rows.shape[0]),
        alpha_verdicts=krippendorff_alpha_nominal(counts),
        alpha_outcome=krippendorff_alpha_nominal(outcome),
        pairs=_pairs(item, reviewer, verdict, n_items, reviewer_ids, min_shared),
    )


def _pairs(
    item: np.ndarray,
    reviewer: np.ndarray,
    verdict: np.ndarray,
    n_items: int,
    reviewer_ids: list[str],
    min_shared: int,
) -> list[PairKappa]:
    n_reviewers = len(reviewer_ids)
    grid = np.full((n_items, n_reviewers), -1, dtype=np.int8)
    grid[item, reviewer] = verdict
    rated = grid >= 0
    out = []
    for a, b in combinations(range(n_reviewers), 2):
        both = rated[:, a] & rated[:, b]
        shared = int(both.sum())
        if shared < min_shared:
            continue
        x, z = grid[both, a].astype(int), grid[both, b].astype(int)
        table = np.bincount(x * 3 + z, minlength=9).reshape(3, 3)
        out.append(
            PairKappa(
                reviewer_ids[a],
                reviewer_ids[b],
                shared,
                float(np.trace(table) / shared),
                cohens_kappa(table),
            )
        )
    return out
