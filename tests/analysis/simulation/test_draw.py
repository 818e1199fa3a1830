"""The simulated sample draws and their complements, as computed, equal their plain definitions
draw for draw: the same topics from the same generator, left in the same state."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.simulation.instrument import draw, rest_of, strata


def plain_draw(topics: int, share: float, rng: np.random.Generator) -> np.ndarray:
    size = min(topics, max(2, round(share * topics)))
    pair = strata(topics)
    order = np.concatenate([rng.permutation(np.flatnonzero(pair == s)) for s in rng.permutation(6)])
    start = int(rng.integers(topics))
    return order[[(start + j * topics) // size for j in range(size)]]


# 3 and 4 topics leave strata empty (a pilot study's prereg simulates them)
@pytest.mark.parametrize(
    ("topics", "share"), [(50, 0.25), (56, 0.25), (363, 0.5), (12, 1.0), (3, 1.0), (4, 0.5)]
)
def test_draws_and_complements_are_their_definitions(topics: int, share: float) -> None:
    ours, plain = np.random.default_rng(7), np.random.default_rng(7)
    picks = np.stack([draw(topics, share, ours) for _ in range(40)])
    expected = np.stack([plain_draw(topics, share, plain) for _ in range(40)])
    assert np.array_equal(picks, expected)
    assert ours.random() == plain.random()  # the same draws consumed
    rest = rest_of(picks, topics)
    assert np.array_equal(rest, np.stack([np.setdiff1d(np.arange(topics), p) for p in picks]))
