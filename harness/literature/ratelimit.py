"""Request spacing per source, and the backoff rules for 429/503 answers.

A limiter hands out send times at least `interval` apart (and at least `interval` after the
previous answer); every source object that talks to the
same endpoint shares one limiter, so two reviewers in one process cannot double the rate. A
`Retry-After` answer pushes the next send time back for everyone using that endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from harness.literature.defaults import BACKOFF_S

RETRY_STATUSES = frozenset({429, 503})


class RateLimiter:
    """Spaces calls to `wait()` at least `interval` seconds apart (thread-safe)."""

    def __init__(
        self,
        interval: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if interval < 0:
            raise ValueError("interval must be >= 0")
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = float("-inf")  # earliest time the next request may go out

    def wait(self) -> float:
        """Block until this caller may send; returns the seconds waited."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        delay = slot - now
        if delay > 0:
            self._sleep(delay)
        return max(delay, 0.0)

    def done(self) -> None:
        """The request answered: the next may go no sooner than `interval` from now.

        Counting from the answer as well as from the send keeps the spacing at the server at
        least `interval` even when a request spent time connecting or in flight.
        """
        with self._lock:
            self._next = max(self._next, self._clock() + self.interval)

    def defer(self, seconds: float) -> None:
        """No request before `seconds` from now (a server asked us to back off)."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)


_shared: dict[tuple[str, float], RateLimiter] = {}
_shared_lock = threading.Lock()


def shared_limiter(endpoint: str, interval: float) -> RateLimiter:
    """The process-wide limiter for an endpoint and spacing."""
    with _shared_lock:
        key = (endpoint, float(interval))
        if key not in _shared:
            _shared[key] = RateLimiter(interval)
        return _shared[key]


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds asked for by a `Retry-After` header (delta seconds or an HTTP date), if valid."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def backoff_seconds(attempt: int, retry_after: float | None, base: float = BACKOFF_S) -> float:
    """Wait before retry `attempt` (1-based): the server's Retry-After, else doubling backoff."""
    if retry_after is not None:
        return retry_after
    return base * 2.0 ** (attempt - 1)
