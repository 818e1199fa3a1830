"""numpy arithmetic that rounds exactly as CPython does: C-library functions and built-in sum()."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.geometry._pyfloat import libm, pysum

FUNCTIONS = [
    (np.exp, math.exp, -700.0, 700.0),
    (np.log, math.log, 1e-300, 1e300),
    (np.log2, math.log2, 1e-300, 1e300),
    (np.cos, math.cos, -50.0, 50.0),
    (np.sin, math.sin, -50.0, 50.0),
]


def bits(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize(("ufunc", "scalar", "lo", "hi"), FUNCTIONS)
def test_libm_equals_the_math_module_bit_for_bit(ufunc, scalar, lo, hi):
    rng = random.Random(7)
    # the ranges the seed programs use (unit interval, small negatives) and wide ones
    values = [rng.random() for _ in range(20_000)] + [-30 * rng.random() for _ in range(20_000)]
    values += [rng.uniform(lo, hi) for _ in range(20_000)]
    values = [v for v in values if scalar is not math.log and scalar is not math.log2 or v > 0]
    x = np.array(values).reshape(-1, 10)
    expected = np.array([scalar(v) for v in values]).reshape(x.shape)
    assert np.array_equal(bits(libm(ufunc, x)), bits(expected))


floats = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e200, max_value=1e200)


@settings(deadline=None)
@given(st.lists(floats, min_size=0, max_size=60))
def test_pysum_equals_builtin_sum(values):
    got = pysum(np.array(values, dtype=np.float64))
    assert bits(got) == bits(sum(values) + 0.0)


@settings(deadline=None)
@given(st.lists(st.lists(floats, min_size=5, max_size=5), min_size=1, max_size=8))
def test_pysum_along_any_axis(rows):
    x = np.array(rows)
    assert np.array_equal(bits(pysum(x, axis=1)), bits([sum(r) + 0.0 for r in rows]))
    columns = zip(*rows, strict=True)
    assert np.array_equal(bits(pysum(x, axis=0)), bits([sum(c) + 0.0 for c in columns]))


def cpython312_sum(values: list[float]) -> float:
    """CPython 3.12's sum() of floats, written out: Neumaier compensation added at the end."""
    total, compensation = 0.0 + values[0], 0.0
    for x in values[1:]:
        step = total + x
        if abs(total) >= abs(x):
            compensation += (total - step) + x
        else:
            compensation += (x - step) + total
        total = step
    return total + compensation if compensation and math.isfinite(compensation) else total


@settings(deadline=None)
@given(st.lists(st.lists(floats, min_size=4, max_size=4), min_size=1, max_size=30))
def test_compensated_path_follows_python_312(rows):
    from harness.geometry._pyfloat import _neumaier

    x = np.array(rows)  # summed along axis 0, column by column
    expected = [cpython312_sum([r[j] for r in rows]) for j in range(4)]
    assert np.array_equal(bits(_neumaier(x)), bits(expected))
