"""Client-side limits for remote backends: adaptive concurrency and requests/tokens per minute.

Concurrency follows additive increase / multiplicative decrease: it starts at the configured
number of connections, halves on a rate-limit response (at most once per cool-down, so one burst
of 429s counts once) and grows by one after each run of `limit` consecutive successes, back up to
the configured number.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager


class AdaptiveConcurrency:
    """An asyncio semaphore whose size adapts to rate limiting."""

    def __init__(
        self,
        initial: int,
        *,
        minimum: int = 1,
        maximum: int | None = None,
        cooldown: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if initial < 1:
            raise ValueError("concurrency must be at least 1")
        self.maximum = max(initial, maximum or initial)
        self.minimum = max(1, min(minimum, initial))
        self.limit = initial
        self.in_flight = 0
        self.cuts = 0
        self._cooldown = cooldown
        self._clock = clock
        self._last_cut = -float("inf")
        self._streak = 0
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:  # created lazily, inside the running loop
            self._changed = asyncio.Condition()
        return self._changed

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
        try:
            yield
        finally:
            async with changed:
                self.in_flight -= 1
                changed.notify_all()

    def record_success(self) -> None:
        self._streak += 1
        if self._streak >= self.limit and self.limit < self.maximum:
            self.limit += 1
            self._streak = 0
            self._wake()

    def record_rate_limited(self) -> None:
        self._streak = 0
        now = self._clock()
        if now - self._last_cut < self._cooldown:
            return
        self._last_cut = now
        new = max(self.minimum, self.limit // 2)
        if new < self.limit:
            self.limit = new
            self.cuts += 1

    def _wake(self) -> None:
        changed = self._changed
        if changed is None:
            return

        async def notify() -> None:
            async with changed:
                changed.notify_all()

        asyncio.get_running_loop().create_task(notify())


class TokenBucket:
    """At most `per_minute` units per minute on average, with bursts of up to `burst_s` seconds.

    A single take larger than the bucket still passes once the bucket is full (the balance goes
    negative), so one huge request cannot wait forever.
    """

    def __init__(
        self,
        per_minute: float,
        *,
        burst_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute <= 0:
            raise ValueError("a per-minute limit must be positive")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_s)
        self.tokens = self.capacity
        self._clock = clock
        self._stamp = clock()
        self._lock: asyncio.Lock | None = None

    def _refill(self) -> None:
        now = self._clock()
        self.tokens = min(self.capacity, self.tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def wait_time(self, amount: float) -> float:
        """Seconds until `amount` can be taken (0 when it can be taken now)."""
        self._refill()
        need = min(amount, self.capacity)
        return 0.0 if self.tokens >= need else (need - self.tokens) / self.rate

    async def take(self, amount: float = 1.0) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # first come, first served
            while (wait := self.wait_time(amount)) > 0:
                await asyncio.sleep(wait)
            self.tokens -= amount

    def adjust(self, extra: float) -> None:
        """Account for `extra` more units than were taken (negative gives some back)."""
        self._refill()
        self.tokens = min(self.capacity, self.tokens - extra)


class RateLimits:
    """Optional requests-per-minute and tokens-per-minute buckets, taken together."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.requests = TokenBucket(rpm) if rpm else None
        self.tokens = TokenBucket(tpm) if tpm else None

    async def take(self, estimated_tokens: int) -> None:
        if self.requests is not None:
            await self.requests.take(1)
        if self.tokens is not None:
            await self.tokens.take(estimated_tokens)

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Replace the estimate with the tokens the server reported."""
        if self.tokens is not None and actual_tokens is not None:
            self.tokens.adjust(actual_tokens - estimated_tokens)
