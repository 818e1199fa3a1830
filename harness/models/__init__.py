"""Model backends: one interface, a local transformers backend and an OpenAI-compatible backend.

    from harness.models import open_backend, chat, GenerationParams
    backend = open_backend("local")                     # the embedded SmolLM2-135M-Instruct
    text = chat(backend, [{"role": "user", "content": "Hi"}], GenerationParams(max_tokens=16))

Backends are imported lazily: importing this package loads neither torch nor openai.
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError, PartialWork
from harness.models.base import Backend, ChatRequest, Completion, GenerationParams

BACKENDS = ("local", "openai")

__all__ = [
    "BACKENDS",
    "Backend",
    "ChatRequest",
    "Completion",
    "GenerationParams",
    "chat",
    "open_backend",
]


def open_backend(backend: str = "local", model: str | None = None, **options: Any) -> Backend:
    """A backend by name. `local`: model None = the embedded model; options `batch_size`,
    `threads`. `openai`: options `api_key`, `base_url` (one URL, or several replicas as a list or separated
    by commas), `concurrency` (per replica), `rpm`, `tpm`, `timeout`, `max_attempts`, `prices`,
    `batch_api`, `batch_state`, `poll_interval` (see OpenAIBackend).
    """
    if backend == "local":
        from harness.models.local import LocalBackend

        return LocalBackend(model, **options)
    if backend == "openai":
        from harness.models.openai_api import OpenAIBackend

        if not model:
            raise HarnessError("the openai backend needs --model (e.g. gpt-4o-mini)")
        return OpenAIBackend(model, **options)
    raise HarnessError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")


def chat(backend: Backend, messages: list[dict[str, str]], params: GenerationParams) -> str:
    """One request, one sample; returns the text or raises HarnessError with the failure reason."""
    result = None
    for completion in backend.complete([ChatRequest("chat", messages, 1)], params):
        result = completion
    if result is None:
        raise HarnessError(f"{backend.name} backend returned no completion")
    if result.error is not None or result.text is None:
        # the server's failure, not the user's: failed work (exit 1)
        raise PartialWork(f"{backend.name} model {backend.model}: {result.error or 'no text'}")
    return result.text
