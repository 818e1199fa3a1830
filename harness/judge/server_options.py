"""Server options of the judge stage's model backend (`--base-url`, `--concurrency`).

They apply to the `openai` backend only and go straight to `harness.models.open_backend`;
secrets (OPENAI_API_KEY) still come only from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict, cast

from harness.errors import HarnessError
from harness.models._redact import public_url
from harness.models.settings import ServerOptions
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from harness.models.base import ModelAPI

__all__ = [
    "JUDGE_SERVER",
    "ServerChoice",
    "backend_options",
    "judge_server",
    "public_options",
    "server_from_record",
    "server_record",
]


#: the server options the judge stage takes (of `harness.models.settings.ServerOptions`)
JUDGE_SERVER = ("base_url", "concurrency")


class ServerChoice(TypedDict, total=False):
    """The server options given to a judge stage, as its backend takes them."""

    base_url: str
    concurrency: int


def judge_server(server: ServerOptions, backend: str | ModelAPI | None) -> ServerChoice:
    """The server options of a judge stage's settings, checked: those the stage does not take
    (`rpm`, replicas of a model) and those its backend would ignore are refused."""
    given = server.given()
    for name in given:
        if name not in JUDGE_SERVER:
            flag = "--" + name.replace("_", "-")
            raise HarnessError(f"{flag} does not apply to `harness judge`", column=flag)
    if not isinstance(server.base_url, str | None):
        raise HarnessError("--base-url of `harness judge` is one server URL", column="--base-url")
    return backend_options(backend, base_url=server.base_url, concurrency=server.concurrency)


def server_record(server: ServerOptions) -> JsonObject:
    """The options as the manifest records them (`public_options`): text and numbers."""
    return cast("JsonObject", public_options(dict(server.given())))


def server_from_record(record: Mapping[str, object]) -> ServerOptions:
    """The options a `server_record` was made from (the URL as recorded, without credentials)."""
    base_url = cast("str | None", record.get("base_url"))
    return ServerOptions(
        base_url=base_url, concurrency=cast("int | None", record.get("concurrency"))
    )


def backend_options(
    backend: str | ModelAPI | None, *, base_url: str | None = None, concurrency: int | None = None
) -> ServerChoice:
    """The options given, checked: refused for a backend that would ignore them."""
    options: ServerChoice = {}
    if base_url is not None:
        options["base_url"] = base_url
    if concurrency is not None:
        options["concurrency"] = concurrency
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


def public_options(options: Mapping[str, object]) -> dict[str, object]:
    """The options as the manifest records them: the URL without credentials or query."""
    return {
        **options,
        **({"base_url": public_url(str(options["base_url"]))} if "base_url" in options else {}),
    }
