"""The `local` backend: transformers on CPU (or GPU when present), batched generation.

With no model named it runs the embedded SmolLM2-135M-Instruct; any local transformers folder or
GGUF file also works (see `embedded.resolve`). Nothing is fetched from a hub.

Generation is our own decoding loop (`_decode.py`) rather than `model.generate`, for two
reasons: each completion draws its randomness from its own generator, seeded from (seed, key,
sample), so a completion does not depend on which other prompts shared its batch or on the order
of a resumed run; and batching is continuous: a finished row leaves at once and the next waiting
prompt takes its place, so the batch stays full however much answer lengths vary. Llama models
(the embedded one) decode with per-row caches and a forward pass whose arithmetic does not depend
on the batch (`_rowcache.py`): their texts are byte-identical at any batch size. Where a row's
matrix product does not depend on the other rows (bfloat16 on a CPU that multiplies it, int8),
that decoder also prefills the beginning every prompt of a call's group shares once
(`shared_prefixes`: the chat template's system turn, a blinded step's instruction) and prefills
a joining prompt in the running rows' next pass, changing no bit. Other models share one
left-padded cache, where last-bit float differences between batch shapes can occasionally
change a sampled token at a high temperature. Prompts are sorted by length.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import secrets
import time
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.defaults import EMBEDDED_MODEL_NAME, available_cpus
from harness.errors import HarnessError
from harness.models import _int8, _rowcache, embedded
from harness.models._decode import Decoder, Row
from harness.models.base import (
    ChatRequest,
    Completion,
    GenerationParams,
    ModelAPI,
    failed,
    unit_seed,
    validate,
)
from harness.models.settings import LocalSettings
from harness.study.clock import utc_now
from harness.study.records import JsonObject

if TYPE_CHECKING:
    import torch

DEFAULT_BATCH_SIZE = LocalSettings.batch_size
_TOP_P_SHORTLIST = 256  # nucleus sampling looks at this many tokens first, all only when needed


class _Weights:
    """A loaded model and its tokenizer, shared by the backends that hold it."""

    def __init__(self, lm: Any, tokenizer: Any) -> None:
        self.lm, self.tokenizer = lm, tokenizer


#: Models loaded in this process, by path and precision, while some backend holds them (the blinded steps and
#: the control texts of `judge --blind` decode with the same weights; loading takes seconds).
_LOADED: weakref.WeakValueDictionary[str, _Weights] = weakref.WeakValueDictionary()


@dataclass
class _Unit:
    """One completion to produce: a request's sample, with its prompt tokens and generator seed."""

    request: ChatRequest
    sample: int
    ids: list[int]
    seed: int
    params: GenerationParams
    group: int = 0  # which of `complete_groups`' groups it belongs to


class LocalBackend(ModelAPI):
    """Batched chat generation with a local causal language model.

    Of the optional capabilities it has a weights fingerprint and free completions (cost 0);
    it has no server, prices, live counters or batch service, and it ignores `budget`.
    """

    name = "local"

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        precision: str = LocalSettings.precision,
        lm: Any = None,
        tokenizer: Any = None,
    ) -> None:
        if batch_size < 1:
            raise HarnessError(f"batch size must be at least 1 (got {batch_size})")
        _, self.path = embedded.resolve(model)
        self._requested = model
        self.model = model or EMBEDDED_MODEL_NAME
        self.batch_size = batch_size
        self.threads = threads
        self.precision = LocalSettings(batch_size, threads, precision).precision  # checked
        self._lm, self._tokenizer = lm, tokenizer
        self._fingerprint: str | None = None

    @classmethod
    def from_settings(cls, model: str | None, settings: LocalSettings) -> LocalBackend:
        return cls(
            model,
            batch_size=settings.batch_size,
            threads=settings.threads,
            precision=settings.precision,
        )

    def cost(
        self,
        model_reported: str | None,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        batch: bool = False,
    ) -> float | None:
        """Nothing: the model runs on this machine."""
        return 0.0

    # -- loading -----------------------------------------------------------------------------
    def load(self) -> LocalBackend:
        """Load tokenizer and weights now (otherwise on the first request); a model another
        backend of this process holds already is shared, not loaded again."""
        set_threads(self.threads)
        if self._lm is None and self._tokenizer is None:
            key = f"{self.path.resolve()}|{self.precision}"  # precisions convert the weights
            self._weights = _LOADED.get(key) or _Weights(
                embedded.load_model(self._requested), embedded.load_tokenizer(self._requested)
            )
            _LOADED[key] = self._weights
            self._lm, self._tokenizer = self._weights.lm, self._weights.tokenizer
        if self._tokenizer is None:
            self._tokenizer = embedded.load_tokenizer(self._requested)
        if self._lm is None:
            self._lm = embedded.load_model(self._requested)
        tok = self._tokenizer
        tok.padding_side = "left"
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        self._eos = eos_ids(self._lm, tok)
        self._cache_arg = (
            "cache"
            if "cache" in inspect.signature(self._lm.forward).parameters
            else "past_key_values"
        )
        return self

    @property
    def fingerprint(self) -> str:
        """Identity of the weights: SHA-256 of the GGUF file, or of a folder's config and files."""
        if self._fingerprint is None:
            self._fingerprint = "sha256:" + weights_digest(self.path)[:16]
        return self._fingerprint

    def run_settings(self) -> JsonObject:
        """What the texts of the last run depend on beyond the seed: the CPU threads (the matrix
        kernels split their sums by thread, so with `threads` unset, as many as are idle, a busy
        machine can draw other tokens), the decoder, and the precision of the matrix products
        (`matmul_dtype`; int8's scheme in `quantisation`)."""
        if self._lm is None:
            return {}
        import torch

        rows = _rowcache.supports(self._lm)
        settings: JsonObject = {
            "threads_used": torch.get_num_threads(),
            "decoder": "row caches" if rows else "generic",
            "matmul_dtype": self.matmul_precision(),
        }
        if settings["matmul_dtype"] == "int8":
            settings["quantisation"] = _int8.DESCRIPTION
        return settings

    def matmul_precision(self) -> str:
        """float32, bfloat16 or int8: what `precision` gives for this model on this machine.
        `auto` is bfloat16 where the CPU multiplies it natively, else int8 where fbgemm runs
        (both about twice as fast as float32), else the model's own dtype."""

        loaded = str(next(self._lm.parameters()).dtype).removeprefix("torch.")
        if not _rowcache.supports(self._lm):
            return loaded
        if self.precision != "auto":
            return self.precision
        weight = next(self._lm.parameters())
        if weight.device.type != "cpu" or loaded not in ("float32", "bfloat16"):
            return loaded
        if _rowcache.native_bf16():
            return "bfloat16"
        return "int8" if _int8.supports(self._lm) else "float32"

    # -- generation --------------------------------------------------------------------------
    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        """Yield each completion as it finishes (shortest prompts are started first)."""
        for _, completion in self.complete_groups([(requests, params)]):
            yield completion

    def complete_groups(
        self, groups: Sequence[tuple[Sequence[ChatRequest], GenerationParams]]
    ) -> Iterator[tuple[int, Completion]]:
        """Several calls' requests, each group with its own params, decoded in shared batches;
        yields (group index, completion). A completion is the one `complete` gives for its
        group alone: its seed comes from its group's params and its key, and rows sample and
        stop by their own params."""
        for requests, params in groups:
            validate(requests, params)
        if not any(requests for requests, _ in groups):
            return
        if self._lm is None or self._tokenizer is None or not hasattr(self, "_eos"):
            self.load()
        units: list[_Unit] = []
        for group, (requests, params) in enumerate(groups):
            mine, too_long = self._units(requests, params, group)
            units += mine
            yield from ((group, c) for c in too_long)
        units.sort(key=lambda u: len(u.ids))  # similar lengths together: little padding
        yield from self._decode(units, groups[0][1])

    def _units(
        self, requests: Sequence[ChatRequest], params: GenerationParams, group: int = 0
    ) -> tuple[list[_Unit], list[Completion]]:
        limit = getattr(self._lm.config, "max_position_embeddings", None)
        base = params.seed if params.seed is not None else secrets.randbits(62)
        units, too_long = [], []
        for request in requests:
            ids = self._prompt_ids(request.messages)
            if limit and len(ids) + params.max_tokens > limit:
                now = utc_now()
                too_long += failed(
                    request,
                    f"prompt of {len(ids)} tokens + max_tokens "
                    f"{params.max_tokens} exceeds the model's {limit} positions",
                    started_at=now,
                    finished_at=now,
                    attempts=0,
                )
                continue
            units += [
                _Unit(request, s, ids, unit_seed(base, request.seed_source, s), params, group)
                for s in request.sample_numbers
            ]
        return units, too_long

    def _prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        tok = self._tokenizer
        if getattr(tok, "chat_template", None):
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        else:  # a base model without a template: a plain transcript
            text = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant:"
        return list(tok(text, add_special_tokens=False)["input_ids"])

    def _decoder(self, params: GenerationParams, shared: Sequence[Sequence[int]] = ()) -> Decoder:
        """The decoder of this model; `shared`: prompt beginnings it may prefill once for every
        row that starts with them (row caches only; see `_rowcache.RowDecoder.share`)."""
        if _rowcache.supports(self._lm):
            import torch

            precision = self.matmul_precision()
            pad = self._tokenizer.pad_token_id
            if precision == "int8":
                rows = _rowcache.RowDecoder(
                    self._lm, pad, self._eos, params, sample_tokens, int8=self._int8()
                )
            else:
                dtype = getattr(torch, precision)
                rows = _rowcache.RowDecoder(self._lm, pad, self._eos, params, sample_tokens, dtype)
            rows.share(shared)
            return rows
        return Decoder(
            self._lm,
            self._cache_arg,
            self._tokenizer.pad_token_id,
            self._eos,
            params,
            sample_tokens,
        )

    def _int8(self) -> Any:
        """The model's int8 projections, packed from its float32 weights (once per model)."""
        import torch

        if not _int8.supports(self._lm):
            raise HarnessError(
                "precision int8 needs fbgemm (an x86 torch build) and a model "
                "whose projections have no bias"
            )
        if next(self._lm.parameters()).dtype != torch.float32:
            self._lm.to(torch.float32)
        return _int8.packed(
            self._lm, lambda text: self._prompt_ids([{"role": "user", "content": text}])
        )

    def _decode(
        self, units: list[_Unit], params: GenerationParams
    ) -> Iterator[tuple[int, Completion]]:
        """Continuous batching: a finished row's place goes to the next waiting prompt."""
        waiting = deque(units)
        shared = shared_prefixes(units)
        decoder = self._decoder(params, shared)
        while waiting or decoder.rows:
            free = self.batch_size - len(decoder.rows)
            joining: list[Row] = []
            try:
                if waiting and free > 0 and decoder.can_join:
                    joining = [_row(waiting.popleft()) for _ in range(min(free, len(waiting)))]
                    decoder.join(joining)
                    joining = []
                finished = decoder.step()
            except (RuntimeError, ValueError, IndexError) as error:  # e.g. out of memory
                reason = f"generation failed: {type(error).__name__}: {str(error)[:300]}"
                for row in decoder.rows + joining:
                    yield row.tag.group, self._failure(row, reason)
                decoder = self._decoder(params, shared)
                continue
            for row in finished:
                yield row.tag.group, self._completion(row)

    def _completion(self, row: Row) -> Completion:
        unit: _Unit = row.tag
        return Completion(
            key=unit.request.key,
            sample=unit.sample,
            text=self._tokenizer.decode(row.tokens, skip_special_tokens=True).strip(),
            finish_reason=row.reason,
            prompt_tokens=len(row.ids),
            completion_tokens=len(row.tokens),
            model_reported=self.path.name,
            system_fingerprint=self.fingerprint,
            latency_s=time.perf_counter() - row.started,
            attempts=1,
            error=None,
            started_at=_ago(row.started),
            finished_at=utc_now(),
            cost_usd=self.cost(self.path.name, len(row.ids), len(row.tokens)),
        )

    def _failure(self, row: Row, reason: str) -> Completion:
        unit: _Unit = row.tag
        return failed(
            unit.request,
            reason,
            started_at=_ago(row.started or time.perf_counter()),
            finished_at=utc_now(),
            samples=[unit.sample],
        )[0]

    def generate(
        self, prompts: list[list[int]], seeds: list[int], params: GenerationParams
    ) -> tuple[list[list[int]], list[str]]:
        """Decode token-id prompts together; new tokens and finish reason per prompt, in order."""
        if self._lm is None or not hasattr(self, "_eos"):
            self.load()
        rows = [
            Row(ids, seed, tag=i) for i, (ids, seed) in enumerate(zip(prompts, seeds, strict=True))
        ]
        decoder = self._decoder(params)
        decoder.join(rows)
        while decoder.rows:
            decoder.step()
        return [r.tokens for r in rows], [r.reason for r in rows]


def shared_prefixes(units: Sequence[_Unit]) -> list[list[int]]:
    """The tokens every prompt of a group begins with (the chat template's opening, a blinded
    step's instruction), per group of two or more completions."""
    groups: dict[int, list[list[int]]] = {}
    for unit in units:
        groups.setdefault(unit.group, []).append(unit.ids)
    return [common_prefix(prompts) for prompts in groups.values() if len(prompts) > 1]


def common_prefix(sequences: Sequence[list[int]]) -> list[int]:
    """The longest beginning all `sequences` share: that of the first and the last in sorted
    order."""
    first, last = min(sequences), max(sequences)
    length = next(
        (i for i, (a, b) in enumerate(zip(first, last, strict=False)) if a != b), len(first)
    )
    return list(first[:length])


def _row(unit: _Unit) -> Row:
    return Row(unit.ids, unit.seed, tag=unit, params=unit.params)


def _ago(perf: float) -> str:
    """UTC timestamp of an earlier `time.perf_counter()` reading."""
    moment = datetime.now(UTC) - timedelta(seconds=max(0.0, time.perf_counter() - perf))
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sample_tokens(
    logits: torch.Tensor, params: GenerationParams, generators: Sequence[torch.Generator | None]
) -> torch.Tensor:
    """Next token per row: greedy at temperature 0, else temperature + nucleus (top-p) sampling.

    Each row draws one uniform number from its own generator and inverts the cumulative
    distribution, so rows never share random state; whether a row's nucleus needs the whole
    vocabulary is decided per row, so a row's pick never depends on the others in the batch.
    """
    import torch

    if params.temperature == 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / params.temperature, dim=-1)
    u = torch.stack([torch.rand((), generator=g) for g in generators]).to(probs.device)
    if params.top_p >= 1:
        return _invert(probs, None, u, 1.0)
    ranked, order = probs.topk(min(_TOP_P_SHORTLIST, probs.shape[-1]), dim=-1)
    choice = _invert(ranked, order, u, params.top_p)
    wide = (ranked.sum(-1) < params.top_p).nonzero()[:, 0]  # nucleus wider than the shortlist
    if len(wide):
        ranked, order = probs[wide].sort(dim=-1, descending=True)
        choice[wide] = _invert(ranked, order, u[wide], params.top_p)
    return choice


def _invert(
    ranked: torch.Tensor, order: torch.Tensor | None, u: torch.Tensor, top_p: float
) -> torch.Tensor:
    """Token at quantile `u` of each row's distribution, cut to its smallest prefix holding
    `top_p` of the mass (`ranked` sorted descending, `order` its token ids; None: unsorted)."""
    import torch

    if top_p < 1:
        before = ranked.cumsum(-1) - ranked
        ranked = ranked * (before < top_p)
    cumulative = ranked.cumsum(-1)
    target = (u * cumulative[:, -1]).unsqueeze(-1)
    choice = torch.searchsorted(cumulative, target, right=True).clamp(max=ranked.shape[-1] - 1)
    if order is not None:
        choice = order.gather(-1, choice)
    return choice.squeeze(-1)


def eos_ids(lm: Any, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    configured = getattr(getattr(lm, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def set_threads(threads: int | None) -> None:
    """Use `threads` CPU threads; by default as many as are idle (at least one).

    Intra-op threads that must wait for busy cores make each step many times slower than one
    thread would, so the default counts only CPUs not already loaded by other processes.
    """
    import torch

    threads = threads or max(1, min(available_cpus(), round(idle_cpus())))
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)


def idle_cpus(window: float = 0.1) -> float:
    """How many CPUs sat idle over the last `window` seconds (from /proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return fields[3] + fields[4], sum(fields[:8])  # idle + iowait, total

    try:
        idle0, total0 = sample()
        time.sleep(window)
        idle1, total1 = sample()
    except (OSError, ValueError, IndexError):
        return float(available_cpus())
    if total1 <= total0:
        return float(available_cpus())
    return (idle1 - idle0) / (total1 - total0) * (os.cpu_count() or 1)


def weights_digest(path: Path) -> str:
    """SHA-256 of a weights file, or of a model folder's file names, sizes and config."""
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    for item in sorted(path.iterdir()):
        if item.is_file():
            digest.update(f"{item.name}|{item.stat().st_size}|".encode())
            if item.suffix == ".json":
                digest.update(item.read_bytes())
    return digest.hexdigest()
