"""Holm's step-down adjustment of p-values, shared by the secondary analyses, the per-model
tests and the geometry comparison, with the handling of tests that did not run.

The arithmetic is statsmodels' `multipletests(method="holm")` (sorted p times m, m - 1, ..., 1,
a running maximum, capped at 1), so the values are the same to the bit (tests/analysis/
statistics/test_holm.py compares them); computed here because statsmodels runs a full garbage
collection on every call, a tenth of a second or more in a process that holds much.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def holm_adjust(p: ArrayLike) -> np.ndarray:
    """Holm-adjusted p-values in the order given; NaN marks a test that did not run, stays NaN
    and does not count towards the number of tests."""
    values = np.asarray(p, dtype=np.float64)
    adjusted = np.full_like(values, np.nan)
    ran = ~np.isnan(values)
    if ran.any():
        adjusted[ran] = _holm(values[ran])
    return adjusted


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values of tests that all ran, in the order given."""
    order = np.argsort(p)
    stepped = np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1))
    stepped[stepped > 1] = 1
    out = np.empty_like(stepped)
    out[order] = stepped
    return out
