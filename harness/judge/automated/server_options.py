"""Server options of the judge stage's model backend (`--base-url`, `--concurrency`).

They apply to the `openai` backend only and go straight to `harness.models.open_backend`;
secrets (OPENAI_API_KEY) still come only from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError


@dataclass(frozen=True)
class ServerOptions:
    """`--base-url` and `--concurrency` as given (None: not given, the backend's default)."""

    base_url: str | None = None
    concurrency: int | None = None

    def check(self, backend: Any) -> dict[str, Any]:
        """The options given, refused for a backend that would ignore them (`backend_options`)."""
        return backend_options(backend, base_url=self.base_url, concurrency=self.concurrency)

    def given(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in (("base_url", self.base_url), ("concurrency", self.concurrency))
            if value is not None
        }

    def record(self) -> dict[str, Any]:
        """What the manifest records: the URL without credentials or query."""
        return public_options(self.given())

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ServerOptions:
        return cls(base_url=record.get("base_url"), concurrency=record.get("concurrency"))


def backend_options(
    backend: Any, *, base_url: str | None = None, concurrency: int | None = None
) -> dict[str, Any]:
    """The options given, checked: refused for a backend that would ignore them."""
    options = ServerOptions(base_url, concurrency).given()
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
