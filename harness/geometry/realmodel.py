"""Attention weights out of a real transformer (the embedded SmolLM2 by default).

The model is loaded with eager attention: fused kernels (SDPA, flash) never materialise the
weights, so `output_attentions=True` needs the plain implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.models.embedded import load_model, load_tokenizer, resolve


@dataclass
class LoadedModel:
    name: str  # the label stored with the measures (geometry.model)
    model: Any  # a transformers causal LM with eager attention
    tokenizer: Any

    @property
    def n_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def n_heads(self) -> int:
        return int(self.model.config.num_attention_heads)


def load(model: str | None = None) -> LoadedModel:
    """A local model (embedded by default) and its tokenizer, ready to return attention weights."""

    name, _ = resolve(model)
    return LoadedModel(name, load_model(model, attn_implementation="eager"), load_tokenizer(model))


def attention_matrices(loaded: LoadedModel, input_ids: list[int]) -> np.ndarray:
    """Every layer's and head's attention over one sequence: (layers, heads, S, S)."""
    import torch

    out = _forward(loaded, [input_ids])
    return torch.stack([a[0] for a in out]).to(torch.float64).cpu().numpy()


def last_token_attention(loaded: LoadedModel, batch: list[list[int]]) -> list[np.ndarray]:
    """For each sequence, its last token's attention: (layers, heads, S_i).

    Sequences run together, padded on the right. Under the causal mask no real token can see the
    padding after it and positions count from 0 as when run alone, so each sequence's weights are
    those of a run on its own (up to float rounding in the batched matrix products).
    """
    import torch

    lengths = torch.tensor([len(ids) for ids in batch])
    out = _forward(loaded, batch)
    rows = torch.arange(len(batch))
    last = torch.stack([a[rows, :, lengths - 1, :] for a in out], dim=1)  # (B, layers, heads, S)
    weights = last.to(torch.float64).cpu().numpy()
    return [weights[b, :, :, : int(n)] for b, n in enumerate(lengths)]


def _forward(loaded: LoadedModel, batch: list[list[int]]) -> tuple[Any, ...]:
    """Attention tuples of the base model (no output head: its logits are not needed)."""
    import torch

    width = max(len(ids) for ids in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    for b, seq in enumerate(batch):
        ids[b, : len(seq)] = torch.tensor(seq)
    model = loaded.model
    with torch.inference_mode():
        out = model.base_model(
            input_ids=ids.to(model.device), output_attentions=True, use_cache=False
        )
    if not out.attentions or out.attentions[0] is None:
        raise RuntimeError("the model returned no attention weights (load it with eager attention)")
    result: tuple[Any, ...] = out.attentions
    return result
