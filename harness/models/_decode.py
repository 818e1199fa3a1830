"""Continuous batched decoding for the local backend.

Up to `batch_size` rows decode together in one key/value cache. A row leaves the moment it ends
(end-of-sequence token or max_tokens) and a waiting prompt takes its place: the newcomer is
prefilled on its own, then its cache is joined to the running one, left-padded so that every row
ends at the last column. Rotary position embeddings are applied before keys are cached and each
row keeps its own position counter, so padding changes nothing but the attention mask.

Each row samples with its own generator, seeded per completion, so what a prompt produces does
not depend on which other prompts shared the batch (up to floating-point rounding).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from harness.models.base import GenerationParams

#: Next token per row from its logits, each row drawing from its own generator.
Sampler = Callable[[torch.Tensor, GenerationParams, Sequence[torch.Generator | None]], torch.Tensor]


@dataclass
class Row:
    """One completion in progress."""

    ids: list[int]
    seed: int
    tag: Any = None  # the caller's handle (the unit being generated)
    tokens: list[int] = field(default_factory=list)
    reason: str = "length"
    position: int = 0
    started: float = 0.0
    generator: torch.Generator | None = None
    params: GenerationParams | None = None  # this row's own; None: the decoder's


class Decoder:
    """Rows decoding together; `join` adds rows, `step` advances all and returns finished ones."""

    def __init__(
        self,
        lm: Any,
        cache_arg: str,
        pad_id: int,
        eos: frozenset[int],
        params: GenerationParams,
        sample: Sampler,
    ) -> None:
        self.lm, self.cache_arg, self.pad_id, self.eos = lm, cache_arg, pad_id, eos
        self.params, self.sample = params, sample
        self.device = next(lm.parameters()).device
        self.rows: list[Row] = []
        self.cache: Any = None
        self.mask: Any = None  # [rows, cache length], 1 where a row has a real token
        self.logits: Any = None  # [rows, vocab], next-token logits of each row

    @property
    def can_join(self) -> bool:
        """Rows can join a running batch only when its cache is plain per-layer tensors."""
        return not self.rows or _joinable(self.cache)

    def join(self, rows: list[Row]) -> None:
        """Prefill `rows` (left-padded among themselves) and add them to the batch."""
        width = max(len(r.ids) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, width - len(row.ids) :] = torch.tensor(row.ids)
            mask[i, width - len(row.ids) :] = 1
            row.position, row.started = len(row.ids), time.perf_counter()
            row.generator = torch.Generator().manual_seed(row.seed)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = _new_cache(self.lm)
        mask = mask.to(self.device)
        with torch.inference_mode():
            logits = self.lm(
                input_ids=input_ids.to(self.device),
                attention_mask=mask,
                position_ids=positions.to(self.device),
                use_cache=True,
                logits_to_keep=1,
                **{self.cache_arg: cache},
            ).logits[:, -1]
        if not self.rows:
            self.rows, self.cache, self.mask, self.logits = list(rows), cache, mask, logits
            return
        self.mask = _join_caches(self.cache, self.mask, cache, mask)
        self.rows += rows
        self.logits = torch.cat([self.logits, logits])

    def step(self) -> list[Row]:
        """Pick the next token of each row that has its logits; return rows that ended; run the
        model for the rest (and for rows waiting for their prefill, where a decoder defers it)."""
        ready = self._ready()
        picked = self._pick(ready)
        keep, done = [], []
        for j, row in enumerate(self.rows[:ready]):
            token = int(picked[j])
            if token in self.eos:
                row.reason = "stop"
                done.append(row)
            else:
                row.tokens.append(token)
                if len(row.tokens) >= (row.params or self.params).max_tokens:
                    done.append(row)
                else:
                    keep.append(j)
        if done:
            self._keep(keep + list(range(ready, len(self.rows))))
            picked = picked[torch.tensor(keep, dtype=torch.long, device=picked.device)]
        if self.rows:
            self._advance(picked)
        return done

    def _ready(self) -> int:
        """How many rows, from the first, have their next-token logits (here: all)."""
        return len(self.rows)

    def _pick(self, ready: int) -> torch.Tensor:
        """The next token of each of the first `ready` rows, sampled with its own params: rows
        that share params are sampled together (a row's pick depends only on its logits and
        generator)."""
        rows = self.rows[:ready]
        if not rows:
            return torch.empty(0, dtype=torch.long, device=self.device)
        groups: dict[GenerationParams, list[int]] = {}
        for j, row in enumerate(rows):
            groups.setdefault(row.params or self.params, []).append(j)
        if len(groups) == 1:
            (params,) = groups
            return self.sample(self.logits, params, [r.generator for r in rows])
        picked = torch.empty(len(rows), dtype=torch.long, device=self.logits.device)
        for params, members in groups.items():
            index = torch.tensor(members, dtype=torch.long, device=self.logits.device)
            gens = [rows[j].generator for j in members]
            picked[index] = self.sample(self.logits[index], params, gens)
        return picked

    def _keep(self, index: list[int]) -> None:
        """Drop finished rows, then cache columns that are padding for every remaining row."""
        self.rows = [self.rows[j] for j in index]
        if not self.rows:
            self.cache = self.mask = self.logits = None
            return
        chosen = torch.tensor(index, dtype=torch.long, device=self.device)
        self.cache.batch_select_indices(chosen)
        self.mask = self.mask[chosen]
        first = int(self.mask.any(0).long().argmax())
        if first > 0 and _joinable(self.cache):
            for layer in self.cache.layers:
                layer.keys, layer.values = layer.keys[:, :, first:], layer.values[:, :, first:]
            self.mask = self.mask[:, first:]

    def _advance(self, picked: torch.Tensor) -> None:
        self.mask = torch.cat([self.mask, self.mask.new_ones((len(self.rows), 1))], dim=1)
        positions = torch.tensor([[r.position] for r in self.rows], device=self.device)
        with torch.inference_mode():
            self.logits = self.lm(
                input_ids=picked[:, None],
                attention_mask=self.mask,
                position_ids=positions,
                use_cache=True,
                **{self.cache_arg: self.cache},
            ).logits[:, -1]
        for row in self.rows:
            row.position += 1


def _new_cache(lm: Any) -> Any:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=lm.config)
    except TypeError:  # older transformers
        return DynamicCache()


def _joinable(cache: Any) -> bool:
    from transformers.cache_utils import DynamicLayer

    layers = getattr(cache, "layers", None)
    if not layers:
        return False
    return all(type(layer) is DynamicLayer for layer in layers)


def _join_caches(
    cache: Any, mask: torch.Tensor, extra: Any, extra_mask: torch.Tensor
) -> torch.Tensor:
    """Append `extra`'s rows to `cache` (in place), left-padding the shorter; returns the mask."""
    width = max(mask.shape[1], extra_mask.shape[1])

    def pad(
        tensor: torch.Tensor, length: int
    ) -> torch.Tensor:  # zeros on the left of the sequence axis
        missing = width - length
        if not missing:
            return tensor
        spec = (0, 0, missing, 0) if tensor.dim() == 4 else (missing, 0)
        return F.pad(tensor, spec)

    for mine, theirs in zip(cache.layers, extra.layers, strict=True):
        old, new = mine.keys.shape[2], theirs.keys.shape[2]
        mine.keys = torch.cat([pad(mine.keys, old), pad(theirs.keys, new)])
        mine.values = torch.cat([pad(mine.values, old), pad(theirs.values, new)])
    return torch.cat([pad(mask, mask.shape[1]), pad(extra_mask, extra_mask.shape[1])])
