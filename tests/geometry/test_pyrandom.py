"""PythonRandom draws what random.Random draws, bit for bit, in the same order."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.geometry.pyrandom import PythonRandom

calls = st.lists(
    st.tuples(st.sampled_from(["gauss", "random"]), st.integers(0, 9)), min_size=1, max_size=12
)


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(st.integers(-(2**70), 2**70), st.text(max_size=8)),
    calls,
    st.sampled_from([(0, 1), (0.0, 1.0), (2.5, 0.25), (-1, 3)]),
)
def test_interleaved_draws_equal_python(seed, sequence, params):
    reference, stream = random.Random(seed), PythonRandom(seed)
    mu, sigma = params
    for kind, n in sequence:
        if kind == "gauss":
            expected = [reference.gauss(mu, sigma) for _ in range(n)]
            assert same(stream.gauss(n, mu, sigma), expected)
        else:
            assert same(stream.random(n), [reference.random() for _ in range(n)])
    assert stream.getstate() == reference.getstate()


def test_large_block_and_continuation():
    reference = random.Random(1)
    expected = [reference.gauss(0, 1) for _ in range(200_001)]  # odd: one sine value cached
    stream = PythonRandom(1)
    assert same(stream.gauss(200_001, 0, 1), expected)
    assert stream.getstate() == reference.getstate()
    tail = PythonRandom.like(reference)
    assert same(tail.gauss(3), [reference.gauss(0, 1) for _ in range(3)])


def test_like_does_not_disturb_the_source():
    source = random.Random(9)
    source.gauss(0, 1)  # leaves a cached value
    before = source.getstate()
    PythonRandom.like(source).gauss(10)
    assert source.getstate() == before


def test_blocks_and_threads_do_not_change_a_bit(monkeypatch):
    """Small blocks force the threaded path; any worker count gives Python's exact stream."""
    from harness.geometry import _threads, pyrandom

    monkeypatch.setattr(pyrandom, "BLOCK_PAIRS", 257)
    reference = random.Random(31)
    reference.gauss(0, 1)  # the stream starts with a cached sine value
    expected = [reference.gauss(-2.0, 0.5) for _ in range(10_001)]
    for cpus in (1, 2, 3, 8):
        monkeypatch.setattr(_threads, "available_cpus", lambda cpus=cpus: cpus)
        source = random.Random(31)
        source.gauss(0, 1)
        stream = PythonRandom.like(source)
        assert same(stream.gauss(10_001, -2.0, 0.5), expected)
        assert stream.getstate() == reference.getstate()
