"""Decoding with one key/value cache per row, for Llama-architecture models (the embedded one).

The forward pass is written out here over the model's own modules instead of calling
`model(...)`, for three reasons:

- Batch invariance. Every number a row sees is computed the same way whatever else is in the
  batch: each row is prefilled alone; attention runs per row over exactly that row's keys (no
  padding, so no reduction changes its order); and a decoding step's row count is padded to a
  multiple of `ROW_BLOCK`. The BLAS kernels choose their summation order by the number of rows:
  MKL (float32) gives a row alone, or a row among nine on two threads, different last bits than
  the same row among eight, and oneDNN (bfloat16) does so below eight rows; with multiples of
  eight both give every row the same bits at 8, 16, 24 or 32 rows. So a completion's text is
  byte-identical at batch 1, 8 or 32 (tests/models/test_local.py checks it on each run).
  With int8 products (`_int8.py`) the integer sums are exact whatever the row count, so no
  padding is needed.
- No copying. Each row's cache is preallocated and written in place; a finished row is simply
  dropped and a newcomer joins without padding or concatenating anybody's cache.
- Less per-step Python: no attention masks to build, no cache objects to consult.

Models of other architectures use the generic `Decoder` in `_decode.py`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from harness.models import _int8
from harness.models._decode import Decoder, Row, Sampler
from harness.models.base import GenerationParams

ROW_BLOCK = 8  # a decoding step's row count is padded to a multiple of this
_FIRST_CAPACITY = 256  # tokens a row's cache holds at first beyond its prompt; doubles when full


def supports(lm: Any) -> bool:
    """True for a Llama-architecture model whose layers this module knows how to run."""
    config = getattr(lm, "config", None)
    layers = getattr(getattr(lm, "model", None), "layers", None)
    return (
        getattr(config, "model_type", None) == "llama"
        and getattr(config, "pretraining_tp", 1) == 1
        and layers is not None
        and hasattr(lm.model, "rotary_emb")
    )


def native_bf16() -> bool:
    """True where the CPU multiplies bfloat16 natively (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split("\nflags", 2)[1].split("\n", 1)[0].split()
    except (OSError, IndexError):
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def compute_dtype(lm: Any) -> torch.dtype:
    """bfloat16 on a CPU with native bf16 (about twice the float32 matmul rate), else as loaded."""
    weight: torch.Tensor = next(lm.parameters())
    if weight.device.type == "cpu" and weight.dtype == torch.float32 and native_bf16():
        return torch.bfloat16
    return weight.dtype


class RowCache:
    """Keys and values of one row for every layer, preallocated; `length` columns are filled."""

    def __init__(self, layers: int, heads: int, dim: int, capacity: int, device: torch.device):
        self.keys = torch.empty((layers, heads, capacity, dim), device=device)  # float32
        self.values = torch.empty((layers, heads, capacity, dim), device=device)
        self.length = 0

    def reserve(self, extra: int) -> None:
        """Make room for `extra` more columns, doubling the capacity when full."""
        capacity = self.keys.shape[2]
        if self.length + extra <= capacity:
            return
        grown = max(capacity * 2, self.length + extra)
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_empty((*old.shape[:2], grown, old.shape[3]))
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)


class RowDecoder(Decoder):
    """`Decoder` with per-row caches and a batch-invariant forward pass (see module docstring)."""

    def __init__(
        self,
        lm: Any,
        pad_id: int,
        eos: frozenset[int],
        params: GenerationParams,
        sample: Sampler,
        dtype: torch.dtype | None = None,
        int8: _int8.Int8Model | None = None,
    ) -> None:
        super().__init__(lm, "", pad_id, eos, params, sample)
        dtype = torch.float32 if int8 else dtype or compute_dtype(lm)
        if next(lm.parameters()).dtype != dtype:
            lm.to(dtype)  # once per model: later decoders find it converted
        self.int8 = int8  # packed integer projections in place of the model's own
        config = lm.config
        self.head_dim = getattr(config, "head_dim", None) or (
            config.hidden_size // config.num_attention_heads
        )
        self.kv_heads = config.num_key_value_heads
        self.caches: list[RowCache] = []

    @property
    def can_join(self) -> bool:
        return True

    def join(self, rows: list[Row]) -> None:
        """Prefill each row alone, into its own cache, and add it to the batch."""
        logits = []
        for row in rows:
            row.position, row.started = len(row.ids), time.perf_counter()
            row.generator = torch.Generator().manual_seed(row.seed)
            cache = RowCache(
                len(self.lm.model.layers),
                self.kv_heads,
                self.head_dim,
                len(row.ids) + min((row.params or self.params).max_tokens, _FIRST_CAPACITY),
                self.device,
            )
            ids = torch.tensor([row.ids], device=self.device)
            logits.append(self._forward(ids, ids.new_tensor([list(range(len(row.ids)))]), [cache]))
            self.caches.append(cache)
        self.rows += rows
        joined = torch.cat(logits)
        self.logits = joined if self.logits is None else torch.cat([self.logits, joined])

    def _keep(self, index: list[int]) -> None:
        self.rows = [self.rows[j] for j in index]
        self.caches = [self.caches[j] for j in index]
        self.logits = None

    def _advance(self, picked: torch.Tensor) -> None:
        """One token for every row, the rows padded to a multiple of `ROW_BLOCK` (integer
        products need no padding)."""
        count = len(self.rows)
        padded = count if self.int8 else -(-count // ROW_BLOCK) * ROW_BLOCK
        tokens = torch.full((padded, 1), self.pad_id, dtype=torch.long, device=self.device)
        tokens[:count, 0] = picked
        positions = torch.zeros_like(tokens)
        positions[:count, 0] = torch.tensor([r.position for r in self.rows])
        self.logits = self._forward(tokens, positions, self.caches)[:count]
        for row in self.rows:
            row.position += 1

    def sequence_logits(self, ids: list[int]) -> torch.Tensor:
        """Next-token logits (float32) after every prefix of `ids`, one row alone: what the
        model predicts for a given text (the benchmarks compare precisions with it)."""
        cache = RowCache(
            len(self.lm.model.layers), self.kv_heads, self.head_dim, len(ids), self.device
        )
        tokens = torch.tensor([ids], device=self.device)
        positions = tokens.new_tensor([list(range(len(ids)))])
        return self._forward(tokens, positions, [cache], every=True)[0]

    def _forward(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        caches: list[RowCache],
        every: bool = False,
    ) -> torch.Tensor:
        """Next-token logits (float32) of the last position of each row (`every`: of every
        position); rows past `len(caches)` are padding and attend to nothing."""
        model = self.lm.model
        with torch.inference_mode():
            hidden = model.embed_tokens(tokens)
            cos, sin = model.rotary_emb(hidden[:0].float(), positions)  # float32, as attention
            for cache in caches:
                cache.reserve(tokens.shape[1])
            for index, layer in enumerate(model.layers):
                attended = self._attention(index, layer, layer.input_layernorm(hidden), cos, sin)
                hidden = hidden + self._attend(layer.self_attn, index, *attended, caches)
                hidden = hidden + self._mlp(index, layer, layer.post_attention_layernorm(hidden))
            for cache in caches:
                cache.length += tokens.shape[1]
            last = model.norm(hidden if every else hidden[:, -1])
            head = self.int8.head(last) if self.int8 else self.lm.lm_head(last)
            logits: torch.Tensor = head.float()
            return logits

    def _attention(
        self, index: int, layer: Any, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of `x` ([rows, heads, tokens, head_dim]), rotated, in float32
        (CPU attention in bfloat16 takes about three times as long as in float32)."""
        rows, width = x.shape[:2]
        attn = layer.self_attn
        if self.int8:
            projected = self.int8.layers[index].qkv.split(x)
        else:
            projected = attn.q_proj(x), attn.k_proj(x), attn.v_proj(x)
        q, k, v = (
            p.view(rows, width, -1, self.head_dim).transpose(1, 2).float() for p in projected
        )
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin, v

    def _attend(
        self,
        attn: Any,
        layer: int,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        caches: list[RowCache],
    ) -> torch.Tensor:
        """Write each row's new keys and values to its cache; attend over that row's alone."""
        rows, width = q.shape[0], q.shape[2]
        out = torch.zeros_like(q)
        for r, cache in enumerate(caches):
            end = cache.length + width
            cache.keys[layer, :, cache.length : end] = k[r]
            cache.values[layer, :, cache.length : end] = v[r]
            out[r] = F.scaled_dot_product_attention(
                q[r : r + 1],
                cache.keys[layer, None, :, :end],
                cache.values[layer, None, :, :end],
                is_causal=width > 1,
                scale=attn.scaling,
                enable_gqa=True,
            )[0]
        merged = out.transpose(1, 2).reshape(rows, width, -1).to(attn.o_proj.weight.dtype)
        if self.int8:
            return self.int8.layers[layer].out(merged)
        return attn.o_proj(merged)  # type: ignore[no-any-return]

    def _mlp(self, index: int, layer: Any, x: torch.Tensor) -> torch.Tensor:
        if not self.int8:
            return layer.mlp(x)  # type: ignore[no-any-return]
        packed = self.int8.layers[index]
        gate, up = packed.gate_up.split(x)
        return packed.down(F.silu(gate) * up)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)
