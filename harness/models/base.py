"""The one interface every model backend implements: chat requests in, completions out."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters shared by every backend (temperature 0 means greedy decoding)."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 256
    seed: int | None = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ChatRequest:
    """One conversation to complete `samples` times; `key` is the caller's id, echoed back.

    The completions are numbered from `first_sample`, so a study that already holds samples 0
    and 1 asks only for 2, 3, ... when more are wanted.
    """

    key: str
    messages: list[dict[str, str]]
    samples: int = 1
    first_sample: int = 0
    #: what the samples' seeds derive from instead of `key` (a key that is random per run, such
    #: as a blinded item id, would make a rerun from scratch draw other completions)
    seed_key: str | None = None

    @property
    def seed_source(self) -> str:
        return self.key if self.seed_key is None else self.seed_key

    @property
    def sample_numbers(self) -> range:
        return range(self.first_sample, self.first_sample + self.samples)


def unit_seed(seed: int, key: str, sample: int, bits: int = 63) -> int:
    """A seed for one completion, fixed by the run seed, request key and sample number.

    Every backend seeds each sample with its own value, so the samples of a prompt differ even
    on servers that honour `seed` but ignore `n`. Servers take 31 bits safely (llama.cpp's is
    32-bit); the local backend uses 63.
    """
    digest = hashlib.sha256(f"{seed}|{key}|{sample}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << bits) - 1)


@dataclass
class Completion:
    """One completion (or its failure: `error` set means it failed after all retries)."""

    key: str
    sample: int
    text: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    model_reported: str | None
    system_fingerprint: str | None
    latency_s: float
    attempts: int
    error: str | None
    started_at: str
    finished_at: str
    cost_usd: float | None

    @property
    def ok(self) -> bool:
        return self.error is None


@runtime_checkable
class Backend(Protocol):
    name: str  # "local" | "openai"
    model: str  # as requested

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        """Yield completions as they finish (any order)."""
        ...


def failed(
    request: ChatRequest,
    error: str,
    *,
    started_at: str,
    finished_at: str,
    latency_s: float = 0.0,
    attempts: int = 1,
    samples: Iterable[int] | None = None,
) -> list[Completion]:
    """One failed completion per sample of a request (or per one of `samples`), same reason."""
    return [
        Completion(
            key=request.key,
            sample=s,
            text=None,
            finish_reason=None,
            prompt_tokens=None,
            completion_tokens=None,
            model_reported=None,
            system_fingerprint=None,
            latency_s=latency_s,
            attempts=attempts,
            error=error,
            started_at=started_at,
            finished_at=finished_at,
            cost_usd=None,
        )
        for s in (request.sample_numbers if samples is None else samples)
    ]


def validate(requests: Sequence[ChatRequest], params: GenerationParams) -> None:
    """Reject requests no backend can serve, with a message naming the request."""
    from harness.errors import HarnessError

    if params.max_tokens < 1:
        raise HarnessError(f"max_tokens must be at least 1 (got {params.max_tokens})")
    if params.temperature < 0:
        raise HarnessError(f"temperature must be >= 0 (got {params.temperature})")
    if not 0 < params.top_p <= 1:
        raise HarnessError(f"top_p must be in (0, 1] (got {params.top_p})")
    seen: set[str] = set()
    for request in requests:
        if request.key in seen:
            raise HarnessError("duplicate request key", row=request.key)
        seen.add(request.key)
        if request.samples < 1:
            raise HarnessError("samples must be at least 1", row=request.key)
        if request.first_sample < 0:
            raise HarnessError("first_sample must be at least 0", row=request.key)
        if not request.messages:
            raise HarnessError("request has no messages", row=request.key)
