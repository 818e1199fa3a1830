"""Model backends: one contract (`ModelAPI`), a local transformers backend and an
OpenAI-compatible backend. docs/backends.md says how to add another.

    from harness.models import open_backend, chat, GenerationParams
    backend = open_backend("local")                     # the embedded SmolLM2-135M-Instruct
    text = chat(backend, [{"role": "user", "content": "Hi"}], GenerationParams(max_tokens=16))

Importing this package loads neither torch nor openai: the OpenAI backend imports its client
when it opens, and the local backend (torch code from its first line) is named by its module,
`LOCAL_BACKEND`, and imported when one is opened.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError, PartialWork
from harness.models.base import (
    Backend,
    BackendStats,
    ChatRequest,
    Completion,
    GenerationParams,
    ModelAPI,
)
from harness.models.batch import BatchState
from harness.models.openai_api import OpenAIBackend
from harness.models.providers import ModelSpec, endpoint, parse_model
from harness.models.settings import (
    SETTINGS,
    BackendSettings,
    LocalSettings,
    OpenAISettings,
    build_settings,
)

if TYPE_CHECKING:
    from harness.models.throughput import Meter

BACKENDS = tuple(SETTINGS)

#: the local backend's module: it imports torch at its top, so it is loaded only when opened
LOCAL_BACKEND = "harness.models.local"

__all__ = [
    "LOCAL_BACKEND",
    "BACKENDS",
    "Backend",
    "BackendSettings",
    "BackendStats",
    "ChatRequest",
    "Completion",
    "GenerationParams",
    "LocalSettings",
    "ModelAPI",
    "OpenAISettings",
    "chat",
    "open_backend",
    "open_configured",
    "open_spec",
]


def open_backend(
    backend: str = "local",
    model: str | None = None,
    *,
    api_key: str | None = None,
    batch_state: BatchState | None = None,
    **options: Any,
) -> ModelAPI:
    """A backend by name, its `options` those of `LocalSettings` or `OpenAISettings`.

    `local`: model None is the embedded model. `openai`: `api_key` (else OPENAI_API_KEY) and
    `batch_state` (where Batch API batches are remembered) are not settings: one is a secret,
    the other a live object. `base_url` may name several replicas of one model (a list, or
    URLs separated by commas); `concurrency` counts per replica.
    """
    settings = build_settings(backend, options)
    return open_configured(model, settings, api_key=api_key, batch_state=batch_state)


def open_spec(model: str | ModelSpec, *, base_url: str | None = None, **options: Any) -> ModelAPI:
    """A model named by a provider string (or a parsed `ModelSpec`), opened as every stage but
    `collect` opens it (`collect` also settles the server against the study's record).

    An OpenAI-compatible model goes to `base_url` (the run's `--base-url`, which serves every
    model without its own) or its provider's usual server, with OPENAI_API_KEY only for the
    providers that get it; `options` are its backend's settings (`concurrency`, ...).
    """
    spec = parse_model(model) if isinstance(model, str) else model
    if spec.backend == "local":
        if base_url:
            raise HarnessError(
                f"--base-url applies to OpenAI-compatible models only ({spec.key} is local)",
                column="--base-url",
            )
        return open_backend("local", spec.name, **options)
    url, key = endpoint(spec, base_url)
    if url:
        return open_backend("openai", spec.name, api_key=key, base_url=url, **options)
    return open_backend("openai", spec.name, api_key=key, **options)


def open_configured(
    model: str | None,
    settings: BackendSettings,
    *,
    api_key: str | None = None,
    batch_state: BatchState | None = None,
) -> ModelAPI:
    """The backend that `settings` configure (the settings type says which)."""
    if isinstance(settings, LocalSettings):
        local = importlib.import_module(LOCAL_BACKEND)
        backend: ModelAPI = local.LocalBackend.from_settings(model, settings)
        return backend

    if not model:
        raise HarnessError("the openai backend needs --model (e.g. gpt-4o-mini)")
    return OpenAIBackend.from_settings(model, settings, api_key=api_key, batch_state=batch_state)


def chat(
    backend: ModelAPI,
    messages: list[dict[str, str]],
    params: GenerationParams,
    meter: Meter | None = None,
) -> str:
    """One request, one sample; returns the text or raises HarnessError with the failure reason.
    A `meter` counts the completion's tokens and the time it took."""
    result = None
    completions = backend.complete([ChatRequest("chat", messages, 1)], params)
    for completion in meter.timed(completions) if meter else completions:
        result = completion
        if meter is not None:
            meter.count(completion)
    if result is None:
        raise HarnessError(f"{backend.name} backend returned no completion")
    if result.error is not None or result.text is None:
        # the server's failure, not the user's: failed work (exit 1)
        raise PartialWork(f"{backend.name} model {backend.model}: {result.error or 'no text'}")
    return result.text
