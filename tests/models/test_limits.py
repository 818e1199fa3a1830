"""Adaptive concurrency and per-minute buckets."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.limits import AdaptiveConcurrency, RateLimits, TokenBucket


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_cut_on_rate_limit_once_per_cooldown_then_grow_back():
    clock = Clock()
    limiter = AdaptiveConcurrency(16, cooldown=1.0, clock=clock)
    limiter.record_rate_limited()
    limiter.record_rate_limited()  # same burst: ignored
    assert limiter.limit == 8 and limiter.cuts == 1
    clock.now = 2.0
    limiter.record_rate_limited()
    assert limiter.limit == 4
    for _ in range(200):
        limiter.record_success()
    assert limiter.limit == 16  # back to the configured number, never beyond


def test_never_below_minimum():
    clock = Clock()
    limiter = AdaptiveConcurrency(2, cooldown=0.0, clock=clock)
    for step in range(5):
        clock.now = step
        limiter.record_rate_limited()
    assert limiter.limit == 1


def test_slots_never_exceed_the_limit_even_after_a_cut():
    async def main():
        limiter = AdaptiveConcurrency(6, cooldown=0.0)
        peak = {"before": 0, "after": 0}
        phase = "before"

        async def job(i):
            nonlocal phase
            async with limiter.slot():
                peak[phase] = max(peak[phase], limiter.in_flight)
                await asyncio.sleep(0.005)
                if i == 10 and phase == "before":
                    limiter.record_rate_limited()
                    phase = "after"

        await asyncio.gather(*(job(i) for i in range(60)))
        return peak, limiter

    peak, limiter = asyncio.run(main())
    assert peak["before"] == 6
    assert peak["after"] <= 6 and limiter.in_flight == 0


def test_token_bucket_wait_times():
    clock = Clock()
    bucket = TokenBucket(600, burst_s=1.0, clock=clock)  # 10 per second, 10 at once
    assert bucket.capacity == 10
    assert bucket.wait_time(10) == 0
    bucket.tokens -= 10
    assert bucket.wait_time(5) == pytest.approx(0.5)
    clock.now = 0.5
    assert bucket.wait_time(5) == pytest.approx(0.0)
    assert bucket.wait_time(50) == pytest.approx(0.5)  # more than fits: waits for a full bucket


def test_rate_limits_settle_replaces_estimate():
    limits = RateLimits(rpm=None, tpm=6000)
    bucket = limits.tokens
    asyncio.run(limits.take(500))
    left = bucket.tokens
    limits.settle(500, 100)  # the server said 100: give 400 back
    assert bucket.tokens == pytest.approx(min(bucket.capacity, left + 400), abs=1)


def test_rejects_bad_limits():
    with pytest.raises(ValueError):
        AdaptiveConcurrency(0)
    with pytest.raises(ValueError):
        TokenBucket(0)
