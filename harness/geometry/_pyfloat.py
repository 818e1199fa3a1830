"""Float arithmetic as CPython does it, vectorised: C-library functions and the built-in `sum`.

The seed experiments are plain Python loops. To reproduce their numbers bit for bit with numpy,
every operation must round exactly as CPython's does:

- `math.exp`, `math.log`, ... call the C library. numpy's SIMD loops for exp and log differ from
  it in the last bit for some inputs; numpy's scalar loop (taken for a reversed, negative-stride
  view) calls the same C library functions. `tests/geometry/test_pyfloat.py` checks this.
- `sum()` of floats adds left to right (Python 3.11); from Python 3.12 on it carries a Neumaier
  compensation term. `pysum` follows whichever the running interpreter does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

#: Python 3.12 made `sum()` of floats compensated (Neumaier); 3.11 adds left to right.
COMPENSATED_SUM = sys.version_info >= (3, 12)


def libm(ufunc: Callable[..., np.ndarray], x: np.ndarray) -> np.ndarray:
    """`ufunc(x)` through numpy's scalar C-library loop: equal to the `math` module element-wise."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    # reversed input, fresh output: numpy cannot flip both strides back into its SIMD loop
    return ufunc(x.reshape(-1)[::-1])[::-1].reshape(x.shape)


def pysum(terms: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sum along `axis` with the order and rounding of Python's `sum()` over a list of floats."""
    terms = np.asarray(terms, dtype=np.float64)
    if terms.shape[axis] == 0:
        return np.zeros(np.delete(terms.shape, axis))
    if not COMPENSATED_SUM:
        # accumulate is a running left-to-right sum; + 0.0 mirrors Python's integer start 0
        result: np.ndarray = np.take(np.add.accumulate(terms, axis=axis), -1, axis=axis) + 0.0
        return result
    return _neumaier(np.moveaxis(terms, axis, 0))


def _neumaier(terms: np.ndarray) -> np.ndarray:
    """CPython >= 3.12 `sum()` of floats: running total plus a compensation added at the end."""
    total = terms[0] + 0.0
    compensation = np.zeros_like(total)
    for x in terms[1:]:
        step = total + x
        compensation += np.where(np.abs(total) >= np.abs(x), (total - step) + x, (x - step) + total)
        total = step
    use = (compensation != 0) & np.isfinite(compensation)
    result: np.ndarray = np.where(use, total + compensation, total)
    return result
