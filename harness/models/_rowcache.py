"""Decoding with one key/value cache per row, for Llama-architecture models (the embedded one).

The forward pass is written out here over the model's own modules instead of calling
`model(...)`, for four reasons:

- Batch invariance. Every number a row sees is computed the same way whatever else is in the
  batch: a prompt's attention runs alone over its own keys, in the call a whole prefill makes;
  a decoding row's attention runs alone over exactly that row's keys (no padding, so no
  reduction changes its order); and where the products depend on the row count, a decoding
  step's row count is padded to a multiple of `ROW_BLOCK`. The BLAS kernels choose their
  summation order by the number of rows: MKL (float32) gives a row alone, or a row among nine
  on two threads, different last bits than the same row among eight, and oneDNN (bfloat16 on a
  CPU without native support) does so below eight rows; with multiples of eight both give
  every row the same bits at 8, 16, 24 or 32 rows. So a completion's text is byte-identical at
  batch 1, 8 or 32 (tests/models/test_local.py checks it on each run). With int8 products
  (`_int8.py`) the integer sums are exact whatever the row count, and bfloat16 on a CPU that
  multiplies it natively gives a row the same bits among any two or more rows: no padding.
- Fewer passes and fewer prompt tokens, where a row's matrix product does not depend on the
  other rows of the product (`rows_exact`: bfloat16 on a CPU that multiplies it natively, and
  int8; measured from two rows up; not MKL's float32, where every prompt is prefilled whole and
  alone). A prompt that joins the batch is prefilled within the decoding rows' next pass, its
  tokens in the same products as their next tokens (every pass reads all the weights once), and
  the beginning that the prompts of a call share (the chat template's system turn, a blinded
  step's instruction: `share`) is prefilled once and copied into each row's cache; the rest's
  queries attend together with the prefix's recorded queries, in the call a whole prefill
  makes, and the prefix is cut where the attention kernel treats its queries alike alone and
  within the whole prompt (`_prefix_length`). Logits, keys and values stay those of a
  whole-prompt prefill alone, bit for bit (tests/models/test_rowcache.py).
- No copying. Each row's cache is preallocated and written in place (one call per layer writes
  every decoding row's new column); a finished row is simply dropped and a newcomer joins
  without padding or concatenating anybody's cache.
- Less per-step Python: no attention masks to build, no cache objects to consult.

Models of other architectures use the generic `Decoder` in `_decode.py`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from harness.models import _int8
from harness.models._decode import Decoder, Row, Sampler
from harness.models.base import GenerationParams

ROW_BLOCK = 8  # a decoding step's row count is padded to a multiple of this
_FIRST_CAPACITY = 256  # tokens a row's cache holds at first beyond its prompt; doubles when full
#: A shared prefix is cut to a multiple of `_PREFIX_BLOCK` tokens, at most `_MAX_PREFIX` (see
#: `_prefix_length`).
_PREFIX_BLOCK = 16
_MAX_PREFIX = 96
#: A one-row bfloat16 product may take another kernel: products are row-exact from two rows, so
#: a pass has two rows or more and a prompt prefilled after a shared prefix two tokens or more.
_MIN_ROWS = 2

#: One layer's attention: (layer index, queries, keys, values, the layer's attention module)
#: -> the attention output, [rows, heads, tokens, head_dim] in float32.
Attend = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor, Any], torch.Tensor]


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


def _prefix_length(shared: int, prompt: int) -> int:
    """How much of a prompt of `prompt` tokens that begins with a shared prefix of `shared` tokens
    is taken from the prefix's prefill (0: the prompt is prefilled whole).

    The rest's queries attend in the call a whole prefill makes, but the prefix's own queries
    attended among the prefix alone, over fewer keys than in the whole prompt's call: the CPU
    attention kernel then gives the same bits only where its float32 products and vector sums
    split alike. They do where the prefix fills whole vectors of 16 floats and is at most 96
    tokens long: measured on prompts of every length up to 520 tokens, on 1 and 2 threads, in
    bfloat16 and int8 (at 112 and 128 tokens some prompts of 193 to 240 tokens differed), and
    with prefixes of 48, 80 and 96 tokens on prompts up to 765 tokens, also in int8 with torch
    and MKL held to AVX2 (`ATEN_CPU_CAPABILITY`, `MKL_ENABLE_INSTRUCTIONS`); the rest keeps at
    least `_MIN_ROWS` tokens."""
    length = min(shared, prompt - _MIN_ROWS, _MAX_PREFIX) // _PREFIX_BLOCK * _PREFIX_BLOCK
    return max(length, 0)


class RowCache:
    """Keys and values of one row for every layer, in float32: [layers, kv heads, capacity,
    head_dim], preallocated and written in place."""

    def __init__(self, layers: int, heads: int, dim: int, capacity: int, device: torch.device):
        self.keys = torch.empty((layers, heads, capacity, dim), device=device)
        self.values = torch.empty((layers, heads, capacity, dim), device=device)

    def reserve(self, columns: int) -> None:
        """Room for `columns` columns, doubling the capacity when full."""
        capacity = self.keys.shape[2]
        if columns <= capacity:
            return
        grown = max(capacity * 2, columns)
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_empty((*old.shape[:2], grown, old.shape[3]))
            new[:, :, :capacity] = old
            setattr(self, name, new)


@dataclass(frozen=True)
class _Prefix:
    """A prefilled prompt prefix: per layer its keys and values ([layers, kv heads, tokens,
    head_dim]) and its queries ([layers, tokens, heads, head_dim], as the attention reads them)."""

    keys: torch.Tensor
    values: torch.Tensor
    queries: torch.Tensor

    @property
    def length(self) -> int:
        return self.keys.shape[2]


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
        self.caches: list[RowCache] = []  # the cache of each of `rows`
        # a row's product does not depend on the other rows: prompts can be prefilled in the
        # decoding rows' pass, and prefixes shared, without changing a bit
        exact = int8 is not None or (dtype == torch.bfloat16 and native_bf16())
        self.rows_exact = exact and self.device.type == "cpu"
        self.fresh: list[Row] = []  # the last rows, joined since the last pass: no logits yet
        self._shared: list[tuple[int, ...]] = []  # longest first
        self._prefixes: dict[tuple[int, ...], _Prefix] = {}

    @property
    def can_join(self) -> bool:
        return True

    def share(self, prefixes: Iterable[Sequence[int]]) -> None:
        """Prompt beginnings to prefill once for every row that starts with them (see the module
        docstring); ignored where the products are not row-exact."""
        if self.rows_exact:
            found = {tuple(p) for p in prefixes if len(p) >= _PREFIX_BLOCK} | set(self._shared)
            self._shared = sorted(found, key=len, reverse=True)

    def join(self, rows: list[Row]) -> None:
        """Give each row its cache. With row-exact products its prompt is prefilled in the next
        pass, beside the other rows' next tokens (`_advance`); otherwise now, alone. Rows join
        all together or, on an error, none."""
        caches = [
            self._cache(len(r.ids) + min((r.params or self.params).max_tokens, _FIRST_CAPACITY))
            for r in rows
        ]
        for row in rows:
            row.position, row.started = len(row.ids), time.perf_counter()
            row.generator = torch.Generator().manual_seed(row.seed)
        # a one-token prompt is prefilled alone, as ever: within a pass its one-row product
        # would have other rows beside it
        deferred = [self.rows_exact and len(r.ids) >= _MIN_ROWS for r in rows]
        alone = [
            (row, cache, self._prefill(row.ids, cache))
            for row, cache, later in zip(rows, caches, deferred, strict=True)
            if not later
        ]
        queued = [(r, c) for r, c, later in zip(rows, caches, deferred, strict=True) if later]
        self.rows += [row for row, _ in queued]
        self.caches += [cache for _, cache in queued]
        self.fresh += [row for row, _ in queued]
        if alone:
            ready = self._ready()
            self.rows[ready:ready] = [row for row, _, _ in alone]
            self.caches[ready:ready] = [cache for _, cache, _ in alone]
            logits = torch.cat([logits for _, _, logits in alone])
            self.logits = logits if self.logits is None else torch.cat([self.logits, logits])

    def _ready(self) -> int:
        return len(self.rows) - len(self.fresh)

    def _keep(self, index: list[int]) -> None:
        self.rows = [self.rows[j] for j in index]
        self.caches = [self.caches[j] for j in index]
        self.logits = None

    def _advance(self, picked: torch.Tensor) -> None:
        """One pass of the model: the next token of every decoding row (their count padded by
        `_padded`), then the prompts of the rows that joined since the last pass, all in one
        product per projection; attention per row. Logits as a row alone gets them (each
        prompt's from its own one-row head)."""
        count, fresh = len(picked), self.fresh
        self.fresh = []
        padded = self._padded(count)
        written = [r.position for r in self.rows[:count]]  # each decoding row's new column
        for cache, column in zip(self.caches, written, strict=False):
            cache.reserve(column + 1)
        ids, positions = [self.pad_id] * padded, [0] * padded
        ids[:count], positions[:count] = picked.tolist(), written
        prompts = []
        for row, cache in zip(fresh, self.caches[count:], strict=True):
            prefix = self._start(row.ids, cache)
            start = prefix.length if prefix is not None else 0
            prompts.append(_Prompt(cache, start, len(row.ids) - start, prefix))
            ids += row.ids[start:]
            positions += range(start, len(row.ids))
        attention = _Pass(self.caches[:count], written, padded, prompts)
        hidden = self._forward(
            torch.tensor([ids], device=self.device),
            torch.tensor([positions], device=self.device),
            attention.attend,
        )[0]
        logits = [self._logits(hidden[:padded])[:count]] if count else []
        ends = list(itertools.accumulate([padded] + [p.width for p in prompts]))
        logits += [self._logits(hidden[end - 1 : end]) for end in ends[1:]]
        self.logits = torch.cat(logits)
        for row in self.rows[:count]:
            row.position += 1

    def _padded(self, count: int) -> int:
        """How many rows a pass's `count` decoding rows take: a multiple of `ROW_BLOCK` where the
        products depend on the row count; where they do not, at least two (a one-row bfloat16
        product takes another kernel; int8 adds its grid row itself)."""
        if not count or self.int8:
            return count
        if self.rows_exact:
            return max(count, _MIN_ROWS)
        return -(-count // ROW_BLOCK) * ROW_BLOCK

    def sequence_logits(self, ids: list[int]) -> torch.Tensor:
        """Next-token logits (float32) after every prefix of `ids`, one row alone: what the
        model predicts for a given text (the benchmarks compare precisions with it)."""
        return self._prefill(ids, self._cache(len(ids)), every=True, share=False)

    # -- prefill ------------------------------------------------------------------------------
    def _cache(self, columns: int) -> RowCache:
        return RowCache(
            len(self.lm.model.layers), self.kv_heads, self.head_dim, columns, self.device
        )

    def _prefill(
        self, ids: list[int], cache: RowCache, every: bool = False, share: bool = True
    ) -> torch.Tensor:
        """Prefill `ids` alone into `cache`, taking what a shared prefix covers from its
        prefill; the logits of its last position (`every`: of each)."""
        prefix = self._start(ids, cache) if share else None
        start = prefix.length if prefix is not None else 0
        tokens = torch.tensor([ids[start:]], device=self.device)
        positions = torch.arange(start, len(ids), device=self.device)[None]

        def attend(layer: int, q: Any, k: Any, v: Any, attn: Any) -> torch.Tensor:
            keys, values = cache.keys[layer], cache.values[layer]
            return _attend_prompt(q, k, v, attn, keys, values, start, prefix, layer)

        hidden = self._forward(tokens, positions, attend)
        return self._logits(hidden[0] if every else hidden[:, -1])

    def _start(self, ids: list[int], cache: RowCache) -> _Prefix | None:
        """The shared prefix `ids` begins with (`_prefix`), its keys and values copied into
        `cache`; None when none applies."""
        prefix = self._prefix(ids)
        if prefix is not None:
            cache.keys[:, :, : prefix.length] = prefix.keys
            cache.values[:, :, : prefix.length] = prefix.values
        return prefix

    def _prefix(self, ids: list[int]) -> _Prefix | None:
        """The longest shared prefix `ids` begins with, cut by `_prefix_length`, prefilled on
        first use; None when none applies."""
        for shared in self._shared:
            if len(shared) < len(ids) and tuple(ids[: len(shared)]) == shared:
                length = _prefix_length(len(shared), len(ids))
                if not length:
                    continue
                key = shared[:length]
                if key not in self._prefixes:
                    self._prefixes[key] = self._record_prefix(list(key))
                return self._prefixes[key]
        return None

    def _record_prefix(self, ids: list[int]) -> _Prefix:
        """Prefill `ids` alone, keeping each layer's queries, keys and values."""
        cache = self._cache(len(ids))
        queries: list[torch.Tensor] = []
        tokens = torch.tensor([ids], device=self.device)
        positions = torch.arange(len(ids), device=self.device)[None]

        def attend(layer: int, q: Any, k: Any, v: Any, attn: Any) -> torch.Tensor:
            queries.append(q.transpose(1, 2)[0].clone())
            keys, values = cache.keys[layer], cache.values[layer]
            return _attend_prompt(q, k, v, attn, keys, values, 0, None, layer)

        self._forward(tokens, positions, attend)
        return _Prefix(cache.keys, cache.values, torch.stack(queries))

    # -- the layers ---------------------------------------------------------------------------
    def _forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, attend: Attend
    ) -> torch.Tensor:
        """The last layer's hidden states of `tokens` ([rows, tokens]); `attend` runs each
        layer's attention over the rows' caches."""
        model = self.lm.model
        with torch.inference_mode():
            hidden: torch.Tensor = model.embed_tokens(tokens)
            cos, sin = model.rotary_emb(hidden[:0].float(), positions)  # float32, as attention
            for index, layer in enumerate(model.layers):
                q, k, v = self._attention(index, layer, layer.input_layernorm(hidden), cos, sin)
                out = attend(index, q, k, v, layer.self_attn)
                hidden = hidden + self._project(index, layer.self_attn, out)
                hidden = hidden + self._mlp(index, layer, layer.post_attention_layernorm(hidden))
            return hidden

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Next-token logits (float32) of hidden states [rows, hidden size]."""
        with torch.inference_mode():
            last = self.lm.model.norm(hidden)
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

    def _project(self, layer: int, attn: Any, out: torch.Tensor) -> torch.Tensor:
        """The attention output's projection back to the hidden size."""
        rows, width = out.shape[0], out.shape[2]
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


@dataclass(frozen=True)
class _Prompt:
    """A prompt prefilled in a pass: its cache, where its prefill starts (after a shared
    prefix), how many tokens it adds to the pass, and the prefix."""

    cache: RowCache
    start: int
    width: int
    prefix: _Prefix | None


class _Pass:
    """The attention of one `_advance` pass, whose tokens are: the decoding rows' next tokens
    (their caches `caches`, each writing column `written`; padded to `padded` rows), then each
    prompt's tokens."""

    def __init__(
        self, caches: list[RowCache], written: list[int], padded: int, prompts: list[_Prompt]
    ) -> None:
        self.count, self.prompts = len(caches), prompts
        self.sizes = [1] * self.count + [padded - self.count] + [p.width for p in prompts]
        # per layer: each decoding row's new key and value column, and its keys and values
        # up to that column, as views made once per pass
        pairs = list(zip(caches, written, strict=True))
        self.new_keys = _by_layer([c.keys[:, :, n] for c, n in pairs])
        self.new_values = _by_layer([c.values[:, :, n] for c, n in pairs])
        self.keys = _by_layer([c.keys[:, None, :, : n + 1] for c, n in pairs])
        self.values = _by_layer([c.values[:, None, :, : n + 1] for c, n in pairs])

    def attend(self, layer: int, q: Any, k: Any, v: Any, attn: Any) -> torch.Tensor:
        """Write the decoding rows' new keys and values to their caches and attend over each
        row's own; then each prompt over its cache (`_attend_prompt`). Returns [1, heads,
        tokens, head_dim] in the pass's order, zeros for the padding rows."""
        count = self.count
        if count:
            torch._foreach_copy_(self.new_keys[layer], k[0, :, :count].unbind(1))
            torch._foreach_copy_(self.new_values[layer], v[0, :, :count].unbind(1))
        queries = q.split(self.sizes, dim=2)
        out = [
            F.scaled_dot_product_attention(
                queries[r],
                self.keys[layer][r],
                self.values[layer][r],
                scale=attn.scaling,
                enable_gqa=True,
            )
            for r in range(count)
        ]
        out.append(queries[count].new_zeros(queries[count].shape))
        if self.prompts:
            keys, values = k.split(self.sizes, dim=2), v.split(self.sizes, dim=2)
            for i, prompt in enumerate(self.prompts, start=count + 1):
                cache = prompt.cache
                out.append(
                    _attend_prompt(
                        queries[i],
                        keys[i],
                        values[i],
                        attn,
                        cache.keys[layer],
                        cache.values[layer],
                        prompt.start,
                        prompt.prefix,
                        layer,
                    )
                )
        return torch.cat(out, dim=2)


def _by_layer(views: list[torch.Tensor]) -> list[list[torch.Tensor]]:
    """[layer][row] from one view per row whose first dimension is the layer."""
    return [list(layer) for layer in zip(*(v.unbind(0) for v in views), strict=True)]


def _attend_prompt(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    attn: Any,
    keys: torch.Tensor,
    values: torch.Tensor,
    start: int,
    prefix: _Prefix | None,
    layer: int,
) -> torch.Tensor:
    """A prompt's attention (one row, its tokens from `start` on) over its cache's `keys` and
    `values` ([kv heads, capacity, head_dim]); with a prefix, the prefix's queries join the
    prompt's so that the call is the one a whole prefill makes."""
    end = start + q.shape[2]
    keys[:, start:end] = k[0]
    values[:, start:end] = v[0]
    if prefix is not None:  # [1, heads, tokens, dim] laid out as `_attention` lays it out
        q = torch.cat([prefix.queries[layer, None], q.transpose(1, 2)], dim=1).transpose(1, 2)
    out = F.scaled_dot_product_attention(
        q,
        keys[None, :, :end],
        values[None, :, :end],
        is_causal=end > 1,
        scale=attn.scaling,
        enable_gqa=True,
    )
    return out[:, :, start:]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)
