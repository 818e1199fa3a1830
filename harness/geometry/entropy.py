"""What an attention distribution says: its entropy in bits, its mass on groups of keys, and how
evenly it splits between two groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def entropy_bits(weights: np.ndarray, axis: int = -1) -> np.ndarray:
    """-sum w log2 w along `axis`, with 0 log 0 = 0 (masked keys contribute nothing)."""
    w = np.asarray(weights, dtype=np.float64)
    positive = w > 0
    terms = np.where(positive, w * np.log2(np.where(positive, w, 1.0)), 0.0)
    result: np.ndarray = -np.sum(terms, axis=axis)
    return result


def group_mass(
    weights: np.ndarray, groups: Mapping[str, Sequence[int] | np.ndarray]
) -> dict[str, np.ndarray]:
    """Attention mass on each named group of key positions (summed over the last axis).

    A key in two groups counts in both; positions outside every group are simply not counted.
    """
    w = np.asarray(weights, dtype=np.float64)
    return {
        name: w[..., np.asarray(idx, dtype=np.int64)].sum(axis=-1) for name, idx in groups.items()
    }


def split_index(mass_a: np.ndarray | float, mass_b: np.ndarray | float) -> np.ndarray:
    """Evenness of mass between two groups: 2 min(a, b) / (a + b), 1 = even, 0 = all on one.

    Equal to 1 - |a - b| / (a + b); NaN where both masses are zero.
    """
    a, b = np.asarray(mass_a, dtype=np.float64), np.asarray(mass_b, dtype=np.float64)
    total = a + b
    result: np.ndarray = np.divide(
        2.0 * np.minimum(a, b), total, out=np.full(total.shape, np.nan), where=total > 0
    )
    return result
