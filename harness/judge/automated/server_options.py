"""Server options of the judge stage's model backend (`--base-url`, `--concurrency`).

They apply to the `openai` backend only and go straight to `harness.models.open_backend`;
secrets (OPENAI_API_KEY) still come only from the environment.
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError


def backend_options(
    backend: Any, *, base_url: str | None = None, concurrency: int | None = None
) -> dict[str, Any]:
    """The options given, checked: refused for a backend that would ignore them."""
    options = {
        name: value
        for name, value in (("base_url", base_url), ("concurrency", concurrency))
        if value is not None
    }
    if options and backend != "openai":
        name = backend if isinstance(backend, str) else getattr(backend, "name", "given")
        flag = "--" + next(iter(options)).replace("_", "-")
        raise HarnessError(
            f"{flag} applies to the openai backend only (backend is {name})", column=flag
        )
    if concurrency is not None and concurrency < 1:
        raise HarnessError(
            f"--concurrency must be at least 1 (got {concurrency})", column="--concurrency"
        )
    return options


def public_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options as the manifest records them: the URL without credentials or query."""
    from harness.models._redact import public_url

    return {
        **options,
        **({"base_url": public_url(options["base_url"])} if "base_url" in options else {}),
    }
