"""`--model-arg KEY=VALUE`: per-model generation settings and run options.

`KEY=VALUE` applies to every model of the run; `MODEL@KEY=VALUE` to the model whose `--model`
string is MODEL, or to the configuration `MODEL#LABEL` named by its LABEL alone (when no other
model has that label). Keys:

    temperature, top_p, seed   a number, or `omit` (not sent: reasoning models reject them)
    max_tokens                 the completion limit (sent under `token_param`)
    token_param                max_tokens (default) or max_completion_tokens
    reasoning_effort           sent as is (e.g. low, medium, high)
    stop                       a string or a JSON list of strings
    extra.NAME                 any other request body field; VALUE is JSON when it parses
    samples                    completions per prompt for this model
    base_url, concurrency, rpm, tpm, timeout, max_attempts, batch_size, threads, precision,
    max_cost, prices (a price table file for this model)
                               run options (not part of the model's identity); base_url may
                               list replicas separated by commas, and a repeated
                               MODEL@base_url adds replicas
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from pydantic import JsonValue

from harness.errors import HarnessError
from harness.study.records import JsonObject

OMIT = "omit"
#: settings that make a model configuration what it is: fixed once it has outputs
IDENTITY_KEYS = (
    "temperature",
    "top_p",
    "max_tokens",
    "seed",
    "token_param",
    "reasoning_effort",
    "stop",
)
OMITTABLE = frozenset({"temperature", "top_p", "seed"})
FLOATS = frozenset({"temperature", "top_p", "rpm", "tpm", "timeout", "max_cost"})
INTS = frozenset(
    {"max_tokens", "seed", "samples", "concurrency", "max_attempts", "batch_size", "threads"}
)
STRINGS = frozenset({"token_param", "reasoning_effort", "base_url", "prices", "precision"})
#: Options of how a run reaches a model, not of what it asks: they may change between runs
#: (`collection.model_plan.KEPT_OPTIONS` keeps all but the endpoint and the cost cap, in this order).
RUN_OPTIONS = (
    "base_url",
    "concurrency",
    "rpm",
    "tpm",
    "timeout",
    "max_attempts",
    "batch_size",
    "threads",
    "precision",
    "max_cost",
    "prices",
)
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
EXTRA = "extra."
#: body fields the harness sets itself (or that have their own key): extra.NAME may not set them
RESERVED = frozenset(
    {
        "model",
        "messages",
        "n",
        "stream",
        "temperature",
        "top_p",
        "seed",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
        "stop",
    }
)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def known_key(key: str) -> bool:
    return (
        key in FLOATS | INTS | STRINGS
        or key == "stop"
        or (key.startswith(EXTRA) and bool(_NAME.match(key[len(EXTRA) :])))
    )


def parse_model_args(args: list[str], models: list[str]) -> dict[str | None, JsonObject]:
    """{model string or None (every model): {key: value}} from `--model-arg` values."""
    out: dict[str | None, JsonObject] = {}
    for arg in args:
        target, key, value = _split(arg, models)
        scoped = out.setdefault(target, {})
        if key == "base_url" and key in scoped:  # repeated: replicas of one model
            value = f"{scoped[key]},{value}"
        scoped[key] = parse_value(key, value)
    return out


def _split(arg: str, models: list[str]) -> tuple[str | None, str, str]:
    left, sep, value = arg.partition("=")
    if not sep:
        raise HarnessError(f"--model-arg {arg!r} is not KEY=VALUE", column="model_arg")
    target, at, key = left.rpartition("@")
    key = key.strip()
    if not known_key(key):
        raise HarnessError(
            f"--model-arg {arg!r}: unknown key {key!r} (see harness collect "
            "--help; other body fields go in extra.NAME)",
            column="model_arg",
        )
    if key.startswith(EXTRA) and key[len(EXTRA) :] in RESERVED:
        raise HarnessError(
            f"--model-arg {arg!r}: {key[len(EXTRA) :]} is not an extra body field "
            "(the harness sets it, or it has a key of its own)",
            column="model_arg",
        )
    if not at:
        return None, key, value.strip()
    if target not in models:
        raise HarnessError(
            f"--model-arg {arg!r}: {target!r} is not one of this run's --model "
            f"values ({', '.join(models) or 'none given'})",
            column="model_arg",
        )
    return target, key, value.strip()


def parse_value(key: str, text: str) -> JsonValue:
    """The typed value of one setting; `omit` where it may be left out of requests."""
    if text == OMIT:
        if key in OMITTABLE or key.startswith(EXTRA) or key in ("stop", "reasoning_effort"):
            return OMIT
        raise HarnessError(f"{key} cannot be omitted", column=key)
    try:
        if key in INTS:
            return int(text)
        if key in FLOATS:
            return float(text)
    except ValueError:
        kind = "an integer" if key in INTS else "a number"
        raise HarnessError(f"{key} must be {kind} (got {text!r})", column=key) from None
    if key == "token_param" and text not in TOKEN_PARAMS:
        raise HarnessError(
            f"token_param must be one of {', '.join(TOKEN_PARAMS)} (got {text!r})", column=key
        )
    if key == "stop":
        return _stop(text)
    if key.startswith(EXTRA):
        try:
            parsed: JsonValue = json.loads(text)
        except json.JSONDecodeError:
            return text
        return parsed
    if not text:
        raise HarnessError(f"{key} is empty", column=key)
    return text


def _stop(text: str) -> list[JsonValue]:
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise HarnessError(f"stop is not a JSON list (got {text!r})", column="stop") from None
        if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
            raise HarnessError("stop must be a non-empty list of non-empty strings", column="stop")
        stops: list[JsonValue] = value
        return stops
    if not text:
        raise HarnessError("stop is empty", column="stop")
    return [text]


def request_fields(settings: Mapping[str, JsonValue]) -> tuple[JsonObject, frozenset[str]]:
    """(extra body fields, omitted sampling parameters) of a model's settings."""
    body: JsonObject = {}
    for key in ("reasoning_effort", "stop"):
        if settings.get(key) not in (None, OMIT):
            body[key] = settings[key]
    for key, value in settings.items():
        if key.startswith(EXTRA) and value != OMIT:
            body[key[len(EXTRA) :]] = value
    omitted = frozenset(k for k in OMITTABLE if settings.get(k) == OMIT)
    return body, omitted
