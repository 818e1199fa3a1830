"""Multi-head attention with Q/K/V and output projections, as one readable unit (numpy).

Each head projects the inputs with its own slice of W_q, W_k, W_v (d_model -> d_head), runs scaled
dot-product attention, and the heads' outputs are concatenated and projected by W_o. Weights use
the row-vector convention y = x @ W + b (torch's nn.Linear stores W transposed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harness.geometry.attention import scaled_dot_product_attention


class MultiHeadOutput(NamedTuple):
    output: np.ndarray  # (batch, L, d_model)
    weights: np.ndarray  # (batch, heads, L, S)
    head_outputs: np.ndarray  # (batch, heads, L, d_head), before concatenation and W_o


@dataclass
class MultiHeadAttention:
    """Projections W_q, W_k, W_v, W_o of shape (d_model, d_model) and biases of shape (d_model,)."""

    n_heads: int
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_q: np.ndarray
    b_k: np.ndarray
    b_v: np.ndarray
    b_o: np.ndarray

    @classmethod
    def initialise(cls, d_model: int, n_heads: int, seed: int = 0) -> MultiHeadAttention:
        """Glorot-uniform weights from `seed` (numpy's PCG64), zero biases."""
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not divisible by {n_heads} heads")
        rng = np.random.default_rng(seed)
        limit = np.sqrt(6.0 / (2 * d_model))
        w_q, w_k, w_v, w_o = (rng.uniform(-limit, limit, size=(d_model, d_model)) for _ in range(4))
        zero = np.zeros(d_model)
        return cls(n_heads, w_q, w_k, w_v, w_o, zero, zero.copy(), zero.copy(), zero.copy())

    @property
    def d_model(self) -> int:
        result: int = self.w_q.shape[0]
        return result

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def __call__(
        self,
        x: np.ndarray,
        context: np.ndarray | None = None,
        mask: np.ndarray | None = None,
        *,
        causal: bool = False,
    ) -> MultiHeadOutput:
        """Self-attention over x (batch, L, d_model), or cross-attention to `context` (batch, S, .).

        `mask` broadcasts to (batch, heads, L, S), e.g. `padding_mask(lengths)[:, None]`.
        """
        x = np.asarray(x, dtype=np.float64)
        context = x if context is None else np.asarray(context, dtype=np.float64)
        q = self._split(x @ self.w_q + self.b_q)
        k = self._split(context @ self.w_k + self.b_k)
        v = self._split(context @ self.w_v + self.b_v)
        heads, weights = scaled_dot_product_attention(q, k, v, mask, causal=causal)
        merged = np.swapaxes(heads, 1, 2).reshape(*x.shape[:-1], self.d_model)
        return MultiHeadOutput(merged @ self.w_o + self.b_o, weights, heads)

    def _split(self, x: np.ndarray) -> np.ndarray:
        """(batch, L, d_model) -> (batch, heads, L, d_head)."""
        batch, length, _ = x.shape
        return np.swapaxes(x.reshape(batch, length, self.n_heads, self.d_head), 1, 2)
