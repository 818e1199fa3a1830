"""The checks of `judge --auto` / `--calibrate` settings that need nothing but the settings.

`AutoSettings` runs them when it is built, so a refusal comes before any review is stored and
before the command line reaches the manifest (a `--base-url` with a key in it would otherwise be
recorded). The checks that read the stored roster are in `harness.judge.automated.auto_settings`.
"""

from __future__ import annotations

import math

from harness.errors import HarnessError
from harness.judge.server_options import backend_options
from harness.literature.sources import check_source_spec
from harness.models.endpoint import check_base_url
from harness.models.providers import PROVIDERS

__all__ = ["check_auto_settings"]


def check_auto_settings(
    *,
    backend: str | None = None,
    base_url: str | None = None,
    concurrency: int | None = None,
    sources: list[str] | None = None,
    threshold: float | None = None,
    max_queries: int = 3,
) -> None:
    """Raise HarnessError naming the first setting that cannot work."""
    if backend is not None and backend not in PROVIDERS:
        raise HarnessError(
            f"unknown backend {backend!r} (choose from {', '.join(PROVIDERS)}; or name each "
            "reviewer's model by a provider string in the roster, method: llm:openai/NAME)",
            column="--backend",
        )
    # without --backend, --base-url and --concurrency serve every OpenAI-compatible reviewer
    name = "openai" if backend is None else PROVIDERS[backend].backend
    backend_options(name, base_url=base_url, concurrency=concurrency)
    if base_url is not None:
        check_base_url(base_url, column="--base-url")
    if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1:
        raise HarnessError(
            f"--max-queries must be a whole number of at least 1 (got {max_queries!r})",
            column="--max-queries",
        )
    if threshold is not None and not (
        isinstance(threshold, int | float) and math.isfinite(threshold)
    ):
        raise HarnessError(
            f"--threshold must be a finite number (got {threshold!r})", column="--threshold"
        )
    for spec in sources or []:
        check_source_spec(spec)
