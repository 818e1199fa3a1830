"""The one contract every model backend implements: chat requests in, completions out.

`ModelAPI` is the base class. Its one required method is `complete`; every other capability
that a caller (mostly `harness.collection`) may use is declared here with a default that means
"this backend does not have it", so callers read attributes instead of probing for them.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Self

from harness.errors import HarnessError
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from harness.models.budget import Budget
    from harness.models.prices import PriceTable


@dataclass(frozen=True)
class GenerationParams:
    """Sampling parameters shared by every backend (temperature 0 means greedy decoding)."""

    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 256
    seed: int | None = 0

    def as_dict(self) -> dict[str, float | int | None]:
        figures: dict[str, float | int | None] = asdict(self)
        return figures


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


@dataclass
class BackendStats:
    """Live counters a progress display can read while requests run."""

    retries: int = 0
    rate_limited: int = 0
    concurrency: int = 0
    status: str = ""
    retried: str = ""  # why the latest attempt that is tried again failed, the server's words
    batch_ids: list[str] = field(default_factory=list)


class ModelAPI(ABC):
    """A model backend: `complete` is required, every other capability has a default.

    Subclasses set `name` (the backend's name, recorded with each output) and `model` (the model
    as requested) and override only the capabilities they have. Callers use the attributes as
    declared here: a default means "not supported", never an error.
    """

    #: the backend's name ("local", "openai", ...), stored in outputs.backend
    name: str
    #: the model as requested, stored in outputs.model and priced by `prices`
    model: str
    #: Cost cap for direct requests. `collect` sets it to a Budget for a run with --max-cost and
    #: back to None afterwards; a backend that spends money reserves each request's worst-case
    #: cost from it before sending and stops sending once a reservation is refused. A free
    #: backend may ignore it.
    budget: Budget | None = None
    #: Live counters (retries, status line, Batch API ids) that `collect` shows in its progress
    #: bar and records in the manifest; None when the backend keeps none (retries are then
    #: counted from the completions' attempts).
    stats: BackendStats | None = None
    #: Prices per model. `collect` refuses a cost cap it cannot enforce (no price for the model)
    #: and sizes Batch API submissions by them; None for a backend whose cost is not priced.
    prices: PriceTable | None = None
    #: True when `complete` goes through an asynchronous batch service: a submitted batch cannot
    #: be stopped, so `collect` submits only what fits the budget at worst, and records the flag
    #: with each output's parameters.
    batch_api: bool = False
    #: Set by `collect`: a server that fails several requests in a row alike for a reason no
    #: retry heals, whatever their prompt (a model name it does not know, a key it does not
    #: take, nothing listening at its address, an HTML page instead of JSON), stops the run
    #: with `harness.models.openai_api.ServerRefused` instead of failing every request; such a
    #: failure is not retried, and until the server has answered otherwise requests go one at
    #: a time. A backend without a server ignores it.
    stop_on_refusals: bool = False

    @abstractmethod
    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        """Yield one completion per sample of every request, as they finish (any order, but
        a request's samples one after another). Failures come back with `error` set."""

    def cost(
        self,
        model_reported: str | None,
        prompt_tokens: int | None,
        completion_tokens: int | None,
        batch: bool = False,
    ) -> float | None:
        """USD for one response's usage, or None when unknown; backends fill
        `Completion.cost_usd` with it and `collect` adds it up against --max-cost.

        By default the price table prices the model the server reported, else the model as
        requested; `batch` applies the table's Batch API discount.
        """
        if self.prices is None:
            return None
        cost = None
        if model_reported:
            cost = self.prices.cost(model_reported, prompt_tokens, completion_tokens, batch=batch)
        if cost is None:
            cost = self.prices.cost(self.model, prompt_tokens, completion_tokens, batch=batch)
        return cost

    @property
    def public_base_url(self) -> str | None:
        """The server's URL without credentials or query, for the manifest (which records it so
        that a rerun goes back to the same server); None for a backend without a server."""
        return None

    @property
    def replica_urls(self) -> list[str]:
        """Every replica's URL without credentials when a model is served by several servers
        (the manifest records the list); empty for a backend with one server or none."""
        return []

    def run_settings(self) -> JsonObject:
        """Settings the backend chose for itself in its last run that can change its texts (the
        local backend's CPU thread count), for the manifest; empty when it chose none."""
        return {}

    def replica_record(self) -> JsonObject:
        """Per replica, after a run: answers served and times taken out (for the manifest);
        empty for a backend with one server or none."""
        return {}

    @property
    def fingerprint(self) -> str | None:
        """An identity of the weights (a digest), recorded in the manifest as `weights`; None
        where the backend cannot see the weights (a remote server reports its own)."""
        return None

    def close(self) -> None:  # noqa: B027 (a no-op unless a backend holds resources)
        """Release connections, threads or memory; called once a caller that opened the backend
        is done with it. The backend may still be used afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: The name older code and notebooks use for the contract.
Backend = ModelAPI


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
