"""Entropy in bits, mass on groups of keys, split index."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.geometry.entropy import entropy_bits, group_mass, split_index


def test_entropy_of_known_distributions():
    w = np.array([[0.25] * 4, [1.0, 0, 0, 0], [0.5, 0.5, 0, 0]])
    np.testing.assert_allclose(entropy_bits(w), [2.0, 0.0, 1.0])
    assert entropy_bits(np.zeros(3)) == 0.0  # a fully masked row


@settings(deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_entropy_bounds(values):
    w = np.array(values)
    if w.sum() == 0:
        return
    h = entropy_bits(w / w.sum())
    assert -1e-12 <= h <= np.log2(len(values)) + 1e-9


def test_group_mass_and_split():
    w = np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]])
    mass = group_mass(w, {"a": [0, 1], "b": [3]})
    np.testing.assert_allclose(mass["a"], [0.3, 0.8])
    np.testing.assert_allclose(mass["b"], [0.4, 0.1])
    np.testing.assert_allclose(split_index(mass["a"], mass["b"]), [0.6 / 0.7, 0.2 / 0.9])
    assert split_index(0.2, 0.2) == 1.0 and split_index(0.3, 0.0) == 0.0
    assert np.isnan(split_index(0.0, 0.0))
