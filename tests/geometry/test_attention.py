"""Scaled dot-product attention: properties (hypothesis) and agreement with torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.geometry.attention import (
    causal_mask,
    combine_masks,
    padding_mask,
    scaled_dot_product_attention,
    softmax,
)


@st.composite
def problems(draw):
    """Random q, k, v with batch, a padding mask from lengths (0 allowed) and a causal flag."""
    batch, n_q, n_k = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d, d_v = draw(st.integers(1, 8)), draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([1.0, 10.0, 1e3]))  # large scores must stay stable
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(batch, n_q, d)) * scale
    k = rng.normal(size=(batch, n_k, d))
    v = rng.normal(size=(batch, n_k, d_v))
    lengths = draw(st.lists(st.integers(0, n_k), min_size=batch, max_size=batch))
    return q, k, v, np.array(lengths), draw(st.booleans())


@settings(max_examples=80, deadline=None)
@given(problems())
def test_weights_are_a_distribution_over_visible_keys(problem):
    q, k, v, lengths, causal = problem
    mask = padding_mask(lengths, k.shape[1])
    out, w = scaled_dot_product_attention(q, k, v, mask, causal=causal)
    visible = np.broadcast_to(mask, w.shape).copy()
    if causal:
        visible &= causal_mask(q.shape[1], k.shape[1])
    assert np.all(np.isfinite(w)) and np.all(np.isfinite(out))
    assert np.all(w >= 0)
    assert np.all(w[~visible] == 0)  # padded keys and future keys get nothing
    sums = w.sum(axis=-1)
    has_keys = visible.any(axis=-1)
    np.testing.assert_allclose(sums[has_keys], 1.0, atol=1e-12)
    assert np.all(sums[~has_keys] == 0) and np.all(out[~has_keys] == 0)


@settings(max_examples=60, deadline=None)
@given(problems())
def test_matches_torch_scaled_dot_product_attention(problem):
    q, k, v, lengths, causal = problem
    mask = padding_mask(lengths, k.shape[1]) & (lengths[:, None, None] > 0)
    if causal:
        mask = mask & causal_mask(q.shape[1], k.shape[1])
    out, w = scaled_dot_product_attention(q, k, v, mask)
    rows = mask.any(axis=-1)  # torch gives NaN for fully masked rows; compare the others
    rows = np.broadcast_to(rows, out.shape[:-1])
    expected = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q),
        torch.from_numpy(k),
        torch.from_numpy(v),
        attn_mask=torch.from_numpy(np.broadcast_to(mask, w.shape).copy()),
    )
    np.testing.assert_allclose(out[rows], expected.numpy()[rows], atol=1e-6, rtol=1e-6)


def test_causal_flag_matches_torch_is_causal_and_scale():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 3, 5, 4)) for _ in range(3))
    out, _ = scaled_dot_product_attention(q, k, v, causal=True, scale=0.3)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(x) for x in (q, k, v)), is_causal=True, scale=0.3
    )
    np.testing.assert_allclose(out, expected.numpy(), atol=1e-6)


def test_float_mask_is_added_to_scores():
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(1, 4, 3)) for _ in range(3))
    bias = rng.normal(size=(4, 4))
    out, _ = scaled_dot_product_attention(q, k, v, bias)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(x) for x in (q, k, v)), attn_mask=torch.from_numpy(bias)
    )
    np.testing.assert_allclose(out, expected.numpy(), atol=1e-6)


def test_fully_masked_rows_are_zero_not_nan():
    q = k = v = np.ones((1, 3, 2))
    out, w = scaled_dot_product_attention(q, k, v, np.zeros((3, 3), dtype=bool))
    assert np.all(w == 0) and np.all(out == 0)


def test_softmax_is_stable_for_huge_scores():
    w = softmax(np.array([[1e308, 1e308 / 2, -1e308], [-np.inf, 0.0, 1000.0]]))
    np.testing.assert_allclose(w, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def test_masks():
    assert padding_mask([2, 0, 3]).tolist() == [
        [[True, True, False]],
        [[False, False, False]],
        [[True, True, True]],
    ]
    assert causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]
    both = combine_masks(padding_mask([1, 2], 2), causal_mask(2), None)
    assert both.tolist() == [[[True, False], [True, False]], [[True, False], [True, True]]]
    assert combine_masks(None) is None
    with pytest.raises(ValueError):
        padding_mask([-1])
