"""Agreement coefficients against published examples and direct computation."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from harness.analysis.statistics.agreement import (
    agreement,
    cohens_kappa,
    count_matrix,
    fleiss_kappa,
    krippendorff_alpha_nominal,
    raw_agreement,
)

# Fleiss (1971), Psychological Bulletin 76:378: 30 patients, 6 psychiatrists, 5 diagnoses;
# published kappa 0.430 (0.4302445 to seven places, as R irr::kappam.fleiss).
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
# values 1-5, None = not coded; published nominal alpha = 0.743.
KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _counts_from_ratings(ratings: np.ndarray, categories: int) -> np.ndarray:
    units = np.repeat(np.arange(ratings.shape[0]), ratings.shape[1])
    return count_matrix(units, ratings.reshape(-1) - 1, ratings.shape[0], categories)


def test_fleiss_kappa_fleiss_1971():
    counts = _counts_from_ratings(FLEISS_1971, 5)
    assert fleiss_kappa(counts) == pytest.approx(0.4302445, abs=1e-7)


def test_fleiss_kappa_wikipedia_example():
    # 10 subjects, 14 raters, 5 categories; kappa 0.210
    table = np.array(
        [
            [0, 0, 0, 0, 14],
            [0, 2, 6, 4, 2],
            [0, 0, 3, 5, 6],
            [0, 3, 9, 2, 0],
            [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0],
            [3, 2, 6, 3, 0],
            [2, 5, 3, 2, 2],
            [6, 5, 2, 1, 0],
            [0, 2, 2, 3, 7],
        ]
    )
    assert round(fleiss_kappa(table), 3) == 0.210


def test_krippendorff_alpha_nominal_published_example():
    units, values = [], []
    for row in KRIPPENDORFF:
        for unit, value in enumerate(row):
            if value is not None:
                units.append(unit)
                values.append(value - 1)
    counts = count_matrix(np.array(units), np.array(values), 12, 5)
    assert round(krippendorff_alpha_nominal(counts), 3) == 0.743


def test_cohens_kappa_textbook_and_sas_examples():
    # 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15: p_o 0.7, p_e 0.5, kappa 0.4
    assert cohens_kappa(np.array([[20, 5], [10, 15]])) == pytest.approx(0.4)
    # SAS PROC FREQ example (as in statsmodels' tests): kappa 0.4842
    assert cohens_kappa(np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])) == pytest.approx(
        0.4842, abs=1e-4
    )


def test_pairs_and_alpha_match_direct_computation():
    rng = np.random.default_rng(4)
    n_items, reviewers = 300, ["r0", "r1", "r2", "r3"]
    truth = rng.integers(0, 3, n_items)
    item, reviewer, verdict = [], [], []
    for i in range(n_items):
        for r in rng.choice(4, size=rng.integers(1, 5), replace=False):
            item.append(i)
            reviewer.append(r)
            verdict.append(truth[i] if rng.random() < 0.7 else rng.integers(0, 3))
    item, reviewer, verdict = map(np.array, (item, reviewer, verdict))
    y = (verdict == 1).astype(float)
    result = agreement(item, reviewer, verdict, y, n_items, reviewers, min_shared=5)
    grid = np.full((n_items, 4), -1)
    grid[item, reviewer] = verdict
    for pair in result.pairs:
        a, b = reviewers.index(pair.reviewer_a), reviewers.index(pair.reviewer_b)
        both = (grid[:, a] >= 0) & (grid[:, b] >= 0)
        assert pair.n_items == both.sum()
        assert pair.kappa == pytest.approx(cohen_kappa_score(grid[both, a], grid[both, b]))
    assert len(result.pairs) == 6
    # raw agreement by explicit pair counting
    shares = []
    for i in range(n_items):
        values = grid[i][grid[i] >= 0]
        if values.size >= 2:
            pairs = [(x, z) for k, x in enumerate(values) for z in values[k + 1 :]]
            shares.append(np.mean([x == z for x, z in pairs]))
    assert result.raw_agreement == pytest.approx(np.mean(shares))
    assert result.n_items == len(shares)
    assert -1 <= result.alpha_verdicts <= 1 and -1 <= result.alpha_outcome <= 1


def test_perfect_agreement():
    counts = np.array([[3, 0, 0], [0, 3, 0], [0, 0, 3], [3, 0, 0]])
    assert fleiss_kappa(counts) == pytest.approx(1.0)
    assert krippendorff_alpha_nominal(counts) == pytest.approx(1.0)
    assert raw_agreement(counts) == 1.0


def test_undefined_when_everyone_uses_one_category():
    counts = np.array([[2, 0], [2, 0]])
    assert np.isnan(fleiss_kappa(counts))
    assert np.isnan(krippendorff_alpha_nominal(counts))


def test_krippendorff_alpha_binary_two_observers_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section A: two
    # observers, ten units, binary values; published alpha = 0.095.
    first = np.array([0, 1, 0, 0, 0, 0, 0, 0, 1, 0])
    second = np.array([1, 1, 1, 0, 0, 1, 0, 0, 0, 0])
    counts = count_matrix(np.r_[np.arange(10), np.arange(10)], np.r_[first, second], 10, 2)
    assert round(krippendorff_alpha_nominal(counts), 3) == 0.095
