"""Holm's step-down adjustment of p-values, shared by the secondary analyses and the geometry
comparison (statsmodels computes it; this module adds the handling of tests that did not run)."""

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
        # deferred: statsmodels takes about a second to import
        from statsmodels.stats.multitest import multipletests

        adjusted[ran] = multipletests(values[ran], method="holm")[1]
    return adjusted
