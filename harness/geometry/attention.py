"""Scaled dot-product attention in numpy: softmax(Q K^T * scale) V with padding and causal masks.

Shapes follow torch.nn.functional.scaled_dot_product_attention: q (..., L, d), k (..., S, d),
v (..., S, d_v); a mask broadcasts to (..., L, S). Boolean masks say where a query MAY attend
(True = attend), float masks are added to the scores. Rows in which every key is masked get
weight zero everywhere (and output zero), never NaN.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


class Attention(NamedTuple):
    output: np.ndarray  # (..., L, d_v)
    weights: np.ndarray  # (..., L, S), rows sum to 1 over attended keys (0 for fully masked rows)


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; -inf scores get weight 0 and all -inf rows give zeros."""
    scores = np.asarray(scores, dtype=np.float64)
    top = np.max(scores, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)  # a fully masked row keeps its -inf -> exp 0
    with np.errstate(over="ignore"):  # a gap beyond the float range just means weight 0
        e = np.exp(scores - top)
    total = np.sum(e, axis=axis, keepdims=True)
    result: np.ndarray = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return result


def causal_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """(L, S) boolean: query i may attend key j iff j <= i (top-left, as torch's is_causal)."""
    n_keys = n_queries if n_keys is None else n_keys
    return np.tril(np.ones((n_queries, n_keys), dtype=bool))


def padding_mask(lengths: np.ndarray | list[int], n_keys: int | None = None) -> np.ndarray:
    """(batch, 1, S) boolean: key j of sequence b is real iff j < lengths[b]; broadcasts over L."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if np.any(lengths < 0):
        raise ValueError("sequence lengths must be >= 0")
    n_keys = int(lengths.max(initial=0)) if n_keys is None else n_keys
    return (np.arange(n_keys)[None, :] < lengths[:, None])[:, None, :]


def combine_masks(*masks: np.ndarray | None) -> np.ndarray | None:
    """Boolean masks combined: attend only where every mask allows it."""
    present = [np.asarray(m, dtype=bool) for m in masks if m is not None]
    if not present:
        return None
    combined = present[0]
    for m in present[1:]:
        combined = combined & m
    return combined


def attention_scores(
    q: np.ndarray,
    k: np.ndarray,
    *,
    scale: float | None = None,
    mask: np.ndarray | None = None,
    causal: bool = False,
) -> np.ndarray:
    """Q K^T * scale (default 1/sqrt(d_k)) with masked positions set to -inf (bool) or shifted."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        mask = np.asarray(mask)
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    if causal:
        scores = np.where(causal_mask(q.shape[-2], k.shape[-2]), scores, -np.inf)
    result: np.ndarray = scores
    return result


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    causal: bool = False,
    scale: float | None = None,
) -> Attention:
    """softmax(Q K^T * scale + mask) V, returning the output and the attention weights."""
    weights = softmax(attention_scores(q, k, scale=scale, mask=mask, causal=causal))
    return Attention(weights @ np.asarray(v, dtype=np.float64), weights)
