"""The simulated sample draws and their complements: the vectorised draws have the
distribution of their plain definition (one study at a time), and the complements are exact."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.simulation.instrument import draws, rest_of, strata


def plain_draw(topics: int, share: float, rng: np.random.Generator) -> np.ndarray:
    size = min(topics, max(2, round(share * topics)))
    pair = strata(topics)
    order = np.concatenate([rng.permutation(np.flatnonzero(pair == s)) for s in rng.permutation(6)])
    start = int(rng.integers(topics))
    return order[[(start + j * topics) // size for j in range(size)]]


def _per_stratum(picks: np.ndarray, topics: int) -> np.ndarray:
    return np.stack([np.bincount(strata(topics)[p], minlength=6) for p in picks])


# 3 and 4 topics leave strata empty (a pilot study's prereg simulates them)
@pytest.mark.parametrize(
    ("topics", "share"), [(50, 0.25), (56, 0.25), (363, 0.5), (12, 1.0), (3, 1.0), (4, 0.5)]
)
def test_draws_follow_their_plain_definition(topics: int, share: float) -> None:
    n = 4000
    picks = draws(topics, share, n, np.random.default_rng(7))
    plain_rng = np.random.default_rng(8)
    plain = np.stack([plain_draw(topics, share, plain_rng) for _ in range(n)])
    assert picks.shape == plain.shape
    assert all(len(set(row)) == picks.shape[1] for row in picks)  # distinct topics
    # the same counts per stratum (a systematic draw fixes them to floor or ceiling of the
    # stratum's share), in the same proportions
    ours, theirs = _per_stratum(picks, topics), _per_stratum(plain, topics)
    assert np.array_equal(np.unique(ours, axis=0), np.unique(theirs, axis=0))
    # every topic drawn with probability size / topics: within 4.5 Monte Carlo SE of it
    freq = np.bincount(picks.ravel(), minlength=topics) / n
    p = picks.shape[1] / topics
    assert np.all(np.abs(freq - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-12)
    # which topics go together: pairs of neighbours within a stratum as often as in the plain
    together = (np.abs(np.diff(np.sort(picks, axis=1), axis=1)) == 1).mean()
    together_plain = (np.abs(np.diff(np.sort(plain, axis=1), axis=1)) == 1).mean()
    assert abs(together - together_plain) <= 0.02


def test_draws_are_reproducible_and_complements_exact() -> None:
    picks = draws(50, 0.25, 40, np.random.default_rng(3))
    assert np.array_equal(picks, draws(50, 0.25, 40, np.random.default_rng(3)))
    rest = rest_of(picks, 50)
    assert np.array_equal(rest, np.stack([np.setdiff1d(np.arange(50), p) for p in picks]))
