"""What the replies of an OpenAI-compatible server mean, for single requests (`openai_api`) and
the Batch API (`batch`) alike: an exception turned into a retry decision, a body checked to be a
chat completion, and one Completion per sample of it.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

from pydantic import JsonValue

from harness.models._answer_text import answer_text, looks_like_json
from harness.models._redact import public_url, redact
from harness.models.base import ChatRequest, Completion, failed
from harness.models.retry import (
    NO_SERVER,
    NOT_JSON,
    REFUSED,
    RETRYABLE_STATUS,
    AttemptError,
    parse_retry_after,
)
from harness.study.records import JsonObject

if TYPE_CHECKING:
    from openai import APIResponseValidationError

#: What a request cost from what its reply reports: (model reported, prompt tokens, completion
#: tokens, through the Batch API) -> USD, None where unknown (`ModelAPI.cost`).
CostOf = Callable[[str | None, int | None, int | None, bool], float | None]


def classify(error: Exception, clean: Callable[[str], str] = redact) -> AttemptError:
    """Turn an exception from the openai client into a retry decision with a clean reason, in
    the server's words; `lasting` marks a failure no retry heals (`retry.REFUSED`, ...)."""
    import openai

    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        headers = dict(error.response.headers) if error.response is not None else {}
        retryable = status in RETRYABLE_STATUS
        return AttemptError(
            clean(f"HTTP {status}: {error_message(error)}"),
            retryable=retryable,
            retry_after=parse_retry_after(headers),
            rate_limited=status == 429,
            status=status,
            lasting=REFUSED if status < 500 and not retryable else None,
        )
    if isinstance(error, openai.APITimeoutError):
        return AttemptError("timed out", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        return _connection_failure(error, clean)
    if isinstance(error, openai.APIResponseValidationError) and error.response is not None:
        return _unreadable(error, clean)
    # malformed bodies surface as validation or JSON decoding errors
    return AttemptError(
        clean(f"malformed response: {type(error).__name__}: {error}"), retryable=True
    )


def _connection_failure(error: Exception, clean: Callable[[str], str]) -> AttemptError:
    """A connection that failed: refused, or to a host that does not exist, is NO_SERVER (no
    server listens there); any other (reset, dropped) may heal."""
    request = getattr(error, "request", None)
    url = public_url(str(request.url)) if request is not None else None
    at = f" at {url}" if url else ""
    for cause in _causes(error):
        if isinstance(cause, ConnectionRefusedError) or (
            isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED
        ):
            return AttemptError(clean(f"connection refused{at}"), retryable=True, lasting=NO_SERVER)
        if isinstance(cause, socket.gaierror) and cause.errno == socket.EAI_NONAME:
            host = request.url.host if request is not None else "?"
            return AttemptError(
                clean(f"no such host {host!r}{at}"), retryable=True, lasting=NO_SERVER
            )
    cause = error.__cause__ or error
    return AttemptError(clean(f"connection error: {type(cause).__name__}: {cause}"), retryable=True)


def _causes(error: BaseException) -> list[BaseException]:
    """`error` and the exceptions it was raised from or while handling, innermost last."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _unreadable(error: APIResponseValidationError, clean: Callable[[str], str]) -> AttemptError:
    """An answer without an error status that is not the JSON expected: NOT_JSON when it is
    something else altogether (an HTML page, plain text, nothing), else a body cut short in
    transit, which may heal."""
    response = error.response
    content: bytes = response.content
    if looks_like_json(content):
        return AttemptError(
            clean(f"malformed response: broken JSON: {answer_text(content, 80)}"), retryable=True
        )
    kind = response.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    words = answer_text(content) or "an empty body"
    try:
        where = f" from {public_url(str(response.request.url))}"
    except RuntimeError:  # a response made without its request
        where = ""
    return AttemptError(
        clean(f"HTTP {response.status_code}{where}, not JSON ({kind}): {words}"),
        retryable=True,
        status=response.status_code,
        lasting=NOT_JSON,
    )


def error_message(error: Exception) -> str:
    """The server's words in an error: an OpenAI-style `message` (or a `detail`), else the
    body's text, HTML stripped."""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            for name in ("message", "detail"):
                if inner.get(name):
                    return str(inner[name])[:500]
    if isinstance(body, str | bytes) and (text := answer_text(body)):
        return text
    return str(getattr(error, "message", error))[:500]


def check_reply(reply: object) -> JsonObject:
    """The body of a chat completion, or AttemptError when it is not one."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(reply, dict) or not isinstance(choices, list) or not choices:
        raise AttemptError("malformed response: no choices", retryable=True)
    if not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
        raise AttemptError("malformed response: a choice without a message", retryable=True)
    result: JsonObject = reply
    return result


MISSING_CHOICE = "server returned"


def missing_choice(completion: Completion) -> bool:
    return bool(completion.error and completion.error.startswith(MISSING_CHOICE))


def to_completions(
    request: ChatRequest,
    reply: JsonObject,
    *,
    started_at: str,
    finished_at: str,
    latency_s: float,
    attempts: int,
    cost: CostOf,
    batch: bool = False,
) -> list[Completion]:
    """One Completion per sample of a chat-completions response body.

    With n > 1 the server reports usage for the whole request: each sample keeps the prompt's
    token count, the completion tokens are split in proportion to text length, and the cost is
    split so that the samples' costs add up to the request's cost.
    """
    # a choice whose index is not an integer is keyed None and so matches no sample
    # `check_reply` found a list of choices, each a JSON object with a message object
    choices: dict[int | None, JsonObject] = {
        int_or_none(c.get("index")) if c.get("index") is not None else i: c
        for i, c in enumerate(cast(list[JsonObject], reply["choices"]))
    }
    usage = sub_object(reply.get("usage"))
    prompt_tokens = int_or_none(usage.get("prompt_tokens"))
    completion_total = int_or_none(usage.get("completion_tokens"))
    model_reported = _text(reply.get("model"))
    texts = {i: _text(cast(JsonObject, c["message"]).get("content")) for i, c in choices.items()}
    shares = _shares({i: t or "" for i, t in texts.items()}, request.samples)
    split = _split(completion_total, shares)
    total_cost = cost(model_reported, prompt_tokens, completion_total, batch)
    out = []
    for index, sample in enumerate(request.sample_numbers):  # choice i is sample first + i
        choice = choices.get(index)
        if choice is None:
            out += failed(
                request,
                f"{MISSING_CHOICE} {len(choices)} of {request.samples} choices",
                started_at=started_at,
                finished_at=finished_at,
                latency_s=latency_s,
                attempts=attempts,
                samples=[sample],
            )
            continue
        out.append(
            Completion(
                key=request.key,
                sample=sample,
                text=texts[index],
                finish_reason=_text(choice.get("finish_reason")),
                prompt_tokens=prompt_tokens,
                completion_tokens=split[index],
                model_reported=model_reported,
                system_fingerprint=_text(reply.get("system_fingerprint")),
                latency_s=latency_s,
                attempts=attempts,
                error=None,
                started_at=started_at,
                finished_at=finished_at,
                cost_usd=None if total_cost is None else total_cost * shares[index],
            )
        )
    return out


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sub_object(value: JsonValue) -> JsonObject:
    """A reply's sub-object (`usage`); empty where the server sent none."""
    return value if isinstance(value, dict) else {}


def _text(value: JsonValue) -> str | None:
    """A text field of a reply, kept as the server sent it (a string, or null)."""
    return cast(str | None, value)


def _shares(texts: Mapping[int | None, str], samples: int) -> list[float]:
    if samples == 1:
        return [1.0]
    lengths = [len(texts.get(s, "")) + 1 for s in range(samples)]  # +1: empty texts still cost
    total = sum(lengths)
    return [n / total for n in lengths]


def _split(total: int | None, shares: list[float]) -> list[int | None]:
    """Integer parts of `total` in proportion to `shares`, summing exactly to `total`."""
    if total is None:
        return [None] * len(shares)
    parts = [int(total * s) for s in shares]
    order = sorted(range(len(shares)), key=lambda i: total * shares[i] - parts[i], reverse=True)
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return list(parts)
