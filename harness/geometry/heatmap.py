"""A real model's attention over one sentence: the seed's Figure 4.1, from a trained model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import HarnessError
from harness.geometry.entropy import entropy_bits
from harness.geometry.plots import heatmap_figure
from harness.geometry.realmodel import LoadedModel, attention_matrices, load


@dataclass
class SentenceAttention:
    model: str
    sentence: str
    tokens: list[str]  # readable token labels
    weights: np.ndarray  # (layers, heads, S, S), causal: row i attends keys 0..i

    def head_entropy(self, layer: int) -> np.ndarray:
        """Mean over query positions of each head's attention entropy (bits), shape (heads,)."""
        result: np.ndarray = entropy_bits(self.weights[layer]).mean(axis=-1)
        return result

    def contrasting_heads(self, layer: int) -> tuple[int, int]:
        """The most focused and the most diffuse head of a layer (lowest, highest entropy)."""
        h = self.head_entropy(layer)
        return int(np.argmin(h)), int(np.argmax(h))


def sentence_attention(
    sentence: str, model: str | None = None, *, loaded: LoadedModel | None = None
) -> SentenceAttention:
    """Every layer's and head's attention over the tokens of `sentence` (no chat template)."""
    if not sentence.strip():
        raise HarnessError("the sentence is empty", column="SENTENCE")
    loaded = loaded or load(model)
    ids = loaded.tokenizer(sentence, add_special_tokens=True)["input_ids"]
    labels = [_label(loaded.tokenizer, i) for i in ids]
    return SentenceAttention(loaded.name, sentence, labels, attention_matrices(loaded, ids))


def draw_heatmap(
    attention: SentenceAttention,
    out: str | Path,
    *,
    layer: int | None = None,
    heads: tuple[int, int] | None = None,
) -> Path:
    """Mean-over-heads heatmap, per-head weight distributions and two heads side by side (PNG)."""

    n_layers, n_heads = attention.weights.shape[:2]
    layer = n_layers // 2 if layer is None else layer
    if not 0 <= layer < n_layers:
        raise HarnessError(f"layer must be in 0..{n_layers - 1}, got {layer}", column="--layer")
    heads = heads or attention.contrasting_heads(layer)
    if any(not 0 <= h < n_heads for h in heads):
        raise HarnessError(f"heads must be in 0..{n_heads - 1}, got {heads}", column="--heads")
    return heatmap_figure(attention, Path(out), layer=layer, heads=heads)


def _label(tokenizer: object, token_id: int) -> str:
    text = tokenizer.decode([token_id])  # type: ignore[attr-defined]
    return text.strip() or repr(text).strip("'")
