"""Typed run settings of each backend, built in one place from option values.

Command-line flags, a study file's model entries and `--model-arg` values all arrive as option
names with values; `build_settings` turns those of one model into its backend's settings object
and refuses, with a one-line error, an option that the backend would silently ignore. Settings
hold no secrets (API keys come from the environment) and no live objects (batch state), so they
can be shown and recorded as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from harness.errors import HarnessError

PRECISIONS = ("auto", "float32", "bfloat16", "int8")


@dataclass(frozen=True)
class LocalSettings:
    """How the local (transformers) backend runs. The batch never changes what a completion is;
    the threads and the precision can change its last bits (recorded with every run)."""

    #: prompts decoded together (continuous batching keeps the batch full)
    batch_size: int = 8
    #: CPU threads; None: as many as are idle
    threads: int | None = None
    #: matrix products: auto (bfloat16 where the CPU multiplies it natively, else int8 where
    #: fbgemm runs, else as loaded), float32, bfloat16 or int8 (Llama models)
    precision: str = "auto"

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise HarnessError(
                f"{self.precision!r} is not one of {', '.join(PRECISIONS)}",
                column="precision",
            )


@dataclass(frozen=True)
class OpenAISettings:
    """How the OpenAI-compatible backend reaches its server, and the request body's shape."""

    #: server URL, or several replicas of the model (a tuple, or URLs separated by commas);
    #: None: $OPENAI_BASE_URL or api.openai.com
    base_url: str | tuple[str, ...] | None = None
    #: parallel requests to start with (cut when the server answers 429)
    concurrency: int = 16
    #: requests and tokens per minute; None: no limit of ours
    rpm: float | None = None
    tpm: float | None = None
    #: seconds per attempt, and attempts per request
    timeout: float = 120.0
    max_attempts: int = 6
    #: backoff between attempts, in seconds (jittered, doubled each time up to max_delay)
    base_delay: float = 0.5
    max_delay: float = 30.0
    #: a price table file; None: $HARNESS_PRICES or the built-in prices
    prices: str | Path | None = None
    #: send the requests through the Batch API (resumable, discounted), polled this often
    batch_api: bool = False
    poll_interval: float = 1.0
    #: the body field the completion limit goes in (max_tokens or max_completion_tokens)
    token_param: str = "max_tokens"
    #: further body fields (reasoning_effort, stop, extra.NAME), sent as they are
    extra_body: Mapping[str, JsonValue] = field(default_factory=dict)
    #: sampling parameters never sent (reasoning models reject them)
    omit: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ServerOptions:
    """How a run asks to reach an OpenAI-compatible server: the options given for this run, None
    where not given (the model's own arguments, its recorded endpoint or the defaults of
    OpenAISettings apply)."""

    #: server URL, or replicas of one model (a tuple, or URLs separated by commas)
    base_url: str | tuple[str, ...] | None = None
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    timeout: float | None = None
    max_attempts: int | None = None
    batch_api: bool | None = None

    def given(self) -> dict[str, object]:
        """The options given, by OpenAISettings field name."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        return {name: value for name, value in values.items() if value is not None}


BackendSettings = LocalSettings | OpenAISettings
#: backend name -> its settings type (providers.py maps provider strings to backend names)
SETTINGS: dict[str, type[LocalSettings] | type[OpenAISettings]] = {
    "local": LocalSettings,
    "openai": OpenAISettings,
}


def option_names(backend: str) -> frozenset[str]:
    """The options `backend` takes."""
    return frozenset(f.name for f in fields(SETTINGS[backend]))


def foreign(backend: str, name: str) -> bool:
    """True for an option of another backend that `backend` does not take."""
    return name not in option_names(backend) and any(name in option_names(b) for b in SETTINGS)


def build_settings(backend: str, options: Mapping[str, Any]) -> BackendSettings:
    """`backend`'s settings from option values (None: not given, the default applies).

    An option of another backend is refused rather than ignored, since a user who set it
    expects it to act.
    """
    if backend not in SETTINGS:
        raise HarnessError(
            f"unknown backend {backend!r} (choose from {', '.join(SETTINGS)})", column="backend"
        )
    known = option_names(backend)
    given = {name: value for name, value in options.items() if value is not None}
    for name in sorted(given):
        if name in known:
            continue
        flag = "--" + name.replace("_", "-")
        if foreign(backend, name):
            raise HarnessError(f"{flag} does not apply to the {backend} backend", column=name)
        raise HarnessError(f"unknown backend option {name!r}", column=name)
    if isinstance(given.get("base_url"), list):  # replicas of one model
        given["base_url"] = tuple(given["base_url"])
    return SETTINGS[backend](**given)
