"""Retries for remote calls: exponential backoff with jitter that honours `Retry-After`.

The openai client's own retries are switched off (max_retries=0) so that this policy is the only
one: every attempt is counted, bounded, and recorded with the completion.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)

#: Status codes worth another attempt: timeouts, conflicts, rate limits, server errors.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524})
#: Failures no retry heals (`AttemptError.lasting`): a 4xx answer other than those above, no
#: server at the address (connection refused, no such host), an answer that is not JSON (an
#: HTML page, plain text). A run that meets several in a row may stop instead of retrying.
REFUSED, NO_SERVER, NOT_JSON = "status", "connection", "not_json"


@dataclass
class RetryPolicy:
    """At most `max_attempts` attempts; waits base * 2**(n-1) with jitter, capped at `max_delay`."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 300.0  # never wait longer than this, whatever the server says
    timeout: float = 120.0  # seconds per attempt
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            # the server knows when capacity returns; add a little jitter so waiters spread out
            return min(retry_after, self.max_retry_after) * (1 + 0.1 * self.rng.random())
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        # "equal jitter": never close to zero, never all at once
        return ceiling * (0.5 + 0.5 * self.rng.random())


class AttemptError(Exception):
    """One failed attempt, classified: retry it or not, and how long the server asked us to wait."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        rate_limited: bool = False,
        fault: bool = False,
        status: int | None = None,
        lasting: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.fault = fault  # the server failed (not the request): another replica may serve it
        self.status = status  # the HTTP status of the server's answer, None without one
        self.lasting = lasting  # REFUSED, NO_SERVER or NOT_JSON: no retry heals it


class RetriesExhausted(Exception):
    """The call failed for good; `reason` says why, `attempts` how many tries were made,
    `status` the HTTP status of the last answer (None without one) and `lasting` whether no
    retry heals the failure (its kind, as `AttemptError.lasting`)."""

    def __init__(
        self, reason: str, attempts: int, status: int | None = None, lasting: str | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts
        self.status = status
        self.lasting = lasting


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` (seconds or an HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = lowered.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if seconds == seconds and seconds >= 0:  # not NaN, not negative
            return seconds
    value = lowered.get("retry-after")
    if value:
        parsed = email.utils.parsedate_tz(value)
        if parsed is not None:
            current = time.time() if now is None else now
            return max(0.0, email.utils.mktime_tz(parsed) - current)
    return None


async def call_with_retry(
    attempt_fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    gate: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    on_retry: Callable[[AttemptError], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    timed: bool = True,
) -> tuple[T, int]:
    """Run `attempt_fn` until it succeeds; returns (result, attempts) or raises RetriesExhausted.

    `attempt_fn` raises AttemptError to classify a failure. Each attempt first passes `gate` (a
    concurrency slot, held only while the attempt runs, not while backing off), then gets
    `policy.timeout` seconds (unless `timed` is False: an `attempt_fn` that times its own
    calls, such as one that tries several replicas in turn).
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            limit = policy.timeout if timed else None
            async with gate() if gate else nullcontext(), asyncio.timeout(limit):
                return await attempt_fn(), attempt
        except TimeoutError:
            error = AttemptError(f"timed out after {policy.timeout:g} s", retryable=True)
        except AttemptError as caught:
            error = caught
        if not error.retryable:
            raise RetriesExhausted(error.reason, attempt, error.status, error.lasting) from None
        if attempt >= policy.max_attempts:
            raise RetriesExhausted(
                f"{error.reason} (gave up after {attempt} attempts)",
                attempt,
                error.status,
                error.lasting,
            ) from None
        if on_retry is not None:
            on_retry(error)
        delay = policy.delay(attempt, error.retry_after)
        log.info(
            "retry %d of %d in %.1f s%s: %s",
            attempt,
            policy.max_attempts - 1,
            delay,
            " (Retry-After)" if error.retry_after is not None else "",
            error.reason,
        )
        await sleep(delay)
