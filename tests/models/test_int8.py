"""The int8 products: close to float32, exactly independent of the batch, packed per model."""

from __future__ import annotations

import pytest
import torch

from harness.models import _int8
from harness.models._rowcache import RowDecoder
from harness.models.base import GenerationParams
from harness.models.local import LocalBackend, sample_tokens

pytestmark = pytest.mark.skipif(not _int8.available(), reason="fbgemm is x86 only")


def weights(out: int, width: int, seed: int) -> torch.Tensor:
    return torch.randn((out, width), generator=torch.Generator().manual_seed(seed)) / width**0.5


def test_the_product_is_close_to_float32():
    w, x = weights(96, 64, 0), torch.randn((7, 64), generator=torch.Generator().manual_seed(1))
    exact = x @ w.T
    got = _int8.Int8Linear([w], torch.ones(64))(x)
    assert got.shape == exact.shape
    assert float((got - exact).norm() / exact.norm()) < 0.02


def test_full_scale_weights_and_activations_do_not_saturate():
    """fbgemm's AVX2 kernels add pairs of products in 16 bits: with 8-bit weights a row of
    large positive inputs against large weights of one sign overflowed (64 came out as 0.5)."""
    w = torch.ones((4, 64))
    w[1] = -1
    w[2, ::2] = 0.5
    x = torch.ones((3, 64))
    x[1] = torch.linspace(0.9, 1.0, 64)
    exact = x @ w.T
    got = _int8.Int8Linear([w], torch.ones(64))(x)
    assert torch.allclose(got, exact, rtol=0.02)


def test_a_row_gets_the_same_bits_whatever_shares_its_batch():
    w = weights(80, 48, 2)
    smooth = 2.0 ** torch.randint(-2, 3, (48,)).float()
    linear = _int8.Int8Linear([w], smooth)
    rows = torch.randn((9, 48), generator=torch.Generator().manual_seed(3))
    rows[4] *= 1000  # a huge row beside small ones changes no other row's grid
    rows[5] = 0  # nor does an empty one
    together = linear(rows)
    for i in range(9):
        assert torch.equal(linear(rows[i : i + 1])[0], together[i])
    flipped = linear(rows.flip(0)).flip(0)
    assert torch.equal(flipped, together)


def test_packed_matrices_split_into_the_products_of_each():
    a, b = weights(24, 32, 4), weights(40, 32, 5)
    x = torch.randn((3, 2, 32), generator=torch.Generator().manual_seed(6))
    first, second = _int8.Int8Linear([a, b], torch.ones(32)).split(x)
    assert first.shape == (3, 2, 24) and second.shape == (3, 2, 40)
    assert float((first - x @ a.T).norm() / (x @ a.T).norm()) < 0.02
    assert float((second - x @ b.T).norm() / (x @ b.T).norm()) < 0.02


def test_smoothing_moves_an_outlier_channel_into_the_weights():
    w, x = weights(64, 32, 7), torch.randn((16, 32), generator=torch.Generator().manual_seed(8))
    x[:, 3] *= 60  # one channel of activations far larger than the rest, as in LLMs
    exact = x @ w.T
    plain = _int8.Int8Linear([w], torch.ones(32))(x)
    smooth = torch.ones(32)
    smooth[3] = 8.0
    smoothed = _int8.Int8Linear([w], smooth)(x)
    error = [float((y - exact).norm() / exact.norm()) for y in (plain, smoothed)]
    assert error[1] < error[0] / 2


def test_a_model_is_packed_once_with_power_of_two_smoothing(tiny_int8):
    backend = tiny_int8
    model = backend._int8()
    assert backend._int8() is model  # kept with the weights
    assert len(model.layers) == len(backend._lm.model.layers)
    for layer in model.layers:
        for linear in (layer.qkv, layer.out, layer.gate_up, layer.down):
            exponents = torch.log2(1 / linear.unsmooth)
            assert torch.equal(exponents, exponents.round())
    config = backend._lm.config
    assert model.layers[0].qkv.sizes == [
        config.hidden_size,
        config.num_key_value_heads * config.hidden_size // config.num_attention_heads,
        config.num_key_value_heads * config.hidden_size // config.num_attention_heads,
    ]


def test_int8_logits_follow_float32(tiny_int8):
    backend = tiny_int8
    params = GenerationParams(temperature=0, max_tokens=1)
    ids = backend._prompt_ids([{"role": "user", "content": "Tell me about rivers and maps."}])
    args = (backend._lm, 0, backend._eos, params, sample_tokens)
    exact = RowDecoder(*args, dtype=torch.float32).sequence_logits(ids)
    quantised = RowDecoder(*args, int8=backend._int8()).sequence_logits(ids)
    assert exact.shape == quantised.shape == (len(ids), backend._lm.config.vocab_size)
    cosine = torch.nn.functional.cosine_similarity(exact, quantised, dim=-1)
    assert float(cosine.min()) > 0.98


@pytest.fixture
def tiny_int8(tiny_model):
    return LocalBackend(str(tiny_model), precision="int8").load()
