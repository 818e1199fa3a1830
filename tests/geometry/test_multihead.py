"""Multi-head attention equals torch.nn.MultiheadAttention given the same weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from harness.geometry.attention import padding_mask
from harness.geometry.multihead import MultiHeadAttention


def torch_twin(mha: MultiHeadAttention) -> torch.nn.MultiheadAttention:
    twin = torch.nn.MultiheadAttention(
        mha.d_model, mha.n_heads, batch_first=True, dtype=torch.float64
    )
    with torch.no_grad():  # torch stores y = x W^T + b
        twin.in_proj_weight.copy_(
            torch.from_numpy(np.concatenate([mha.w_q, mha.w_k, mha.w_v], axis=1).T)
        )
        twin.in_proj_bias.copy_(torch.from_numpy(np.concatenate([mha.b_q, mha.b_k, mha.b_v])))
        twin.out_proj.weight.copy_(torch.from_numpy(mha.w_o.T))
        twin.out_proj.bias.copy_(torch.from_numpy(mha.b_o))
    return twin


@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_with_padding(causal):
    mha = MultiHeadAttention.initialise(12, 3, seed=5)
    rng = np.random.default_rng(2)
    mha.b_q, mha.b_v = rng.normal(size=12), rng.normal(size=12)  # biases take part too
    x = rng.normal(size=(2, 5, 12))
    lengths = np.array([5, 3])
    ours = mha(x, mask=padding_mask(lengths)[:, None], causal=causal)
    key_padding = torch.from_numpy(~padding_mask(lengths)[:, 0, :])
    causal_bias = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1) if causal else None
    out, weights = torch_twin(mha)(
        *(torch.from_numpy(x),) * 3,
        key_padding_mask=key_padding,
        attn_mask=causal_bias,
        average_attn_weights=False,
    )
    np.testing.assert_allclose(ours.output, out.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(ours.weights, weights.detach().numpy(), atol=1e-6)
    assert ours.head_outputs.shape == (2, 3, 5, 4)


def test_cross_attention_shapes_and_seeded_initialisation():
    a, b = MultiHeadAttention.initialise(8, 2, seed=1), MultiHeadAttention.initialise(8, 2, seed=1)
    assert np.array_equal(a.w_k, b.w_k)
    assert not np.array_equal(a.w_k, MultiHeadAttention.initialise(8, 2, seed=2).w_k)
    out = a(np.ones((1, 3, 8)), context=np.ones((1, 7, 8)))
    assert out.output.shape == (1, 3, 8) and out.weights.shape == (1, 2, 3, 7)
    with pytest.raises(ValueError):
        MultiHeadAttention.initialise(10, 3)
