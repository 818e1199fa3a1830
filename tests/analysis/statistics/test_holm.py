"""Holm's adjustment against a published worked example and the definition, enumerated."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from harness.analysis.statistics.holm import holm_adjust


def test_worked_example_of_the_holm_bonferroni_method():
    # The four-hypothesis example of the Wikipedia article "Holm-Bonferroni method" (alpha 0.05):
    # sorted 0.005, 0.01, 0.03, 0.04 give 4 x 0.005, 3 x 0.01, 2 x 0.03, max(0.06, 1 x 0.04);
    # H4 and H1 are rejected, H3 and H2 are not.
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert list(adjusted < 0.05) == [True, False, False, True]


def _by_definition(p: list[float]) -> list[float]:
    """p~_i = max over the tests no larger than p_i (in sorted order) of min(1, (m - k) p_(k))."""
    m = len(p)
    ranked = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for position, i in enumerate(ranked):
        out[i] = max(min(1.0, (m - k) * p[ranked[k]]) for k in range(position + 1))
    return out


# Each grid brings ties and products above 1 (capped).
@pytest.mark.parametrize(("m", "grid"), [(3, (0.0, 0.02, 0.5)), (4, (0.01, 0.4))])
def test_every_vector_on_a_grid_matches_the_definition(m, grid):
    for p in itertools.product(grid, repeat=m):
        assert holm_adjust(list(p)) == pytest.approx(_by_definition(list(p)), abs=1e-15)


def test_tests_that_did_not_run_stay_nan_and_are_not_counted():
    adjusted = holm_adjust(np.array([0.01, np.nan, 0.04]))
    assert np.isnan(adjusted[1])
    assert adjusted[[0, 2]] == pytest.approx([0.02, 0.04])
    assert np.isnan(holm_adjust([np.nan])).all()
    assert holm_adjust([]).shape == (0,)


def test_the_values_are_statsmodels_to_the_bit(monkeypatch):
    # multipletests' full garbage collection on every call changes no value and would take
    # minutes over these vectors in a process that holds a test suite
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    rng = np.random.default_rng(11)
    for draw in range(2000):
        size = int(rng.integers(1, 12))
        p = rng.uniform(0.0, 0.06 if draw % 2 else 1.0, size)
        if draw % 3 == 0:  # ties, zeros and ones
            p = rng.choice([0.0, 0.01, 0.02, 0.3, 1.0], size)
        assert np.array_equal(holm_adjust(p), multipletests(p, method="holm")[1]), p
