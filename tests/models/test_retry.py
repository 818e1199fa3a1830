"""Backoff, Retry-After parsing and the bounded retry loop (sleeps recorded, never waited)."""

from __future__ import annotations

import asyncio
import email.utils
import random

import pytest

from harness.models.retry import (
    AttemptError,
    RetriesExhausted,
    RetryPolicy,
    call_with_retry,
    parse_retry_after,
)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "40", "Retry-After": "9"}, 0.04),
        ({"Retry-After": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_values(headers, expected):
    assert parse_retry_after(headers) == expected


def test_retry_after_http_date():
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == pytest.approx(30, abs=1)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"Retry-After": past}, now=now) == 0.0


def test_delay_grows_exponentially_with_jitter_and_cap():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, rng=random.Random(1))
    for attempt in range(1, 10):
        ceiling = min(8.0, 2 ** (attempt - 1))
        for _ in range(50):
            assert ceiling / 2 <= policy.delay(attempt) <= ceiling


def test_delay_honours_retry_after_with_cap():
    policy = RetryPolicy(max_retry_after=10.0, rng=random.Random(2))
    assert 5.0 <= policy.delay(1, retry_after=5.0) <= 5.5
    assert 10.0 <= policy.delay(1, retry_after=3600.0) <= 11.0


def run_sequence(outcomes, policy):
    """Drive call_with_retry through scripted outcomes: (result or error, sleeps, retries)."""
    sleeps, retried = [], []
    script = iter(outcomes)

    async def attempt():
        outcome = next(script)
        if isinstance(outcome, BaseException):
            raise outcome
        if outcome == "hang":
            await asyncio.sleep(3600)
        return outcome

    async def sleep(seconds):
        sleeps.append(seconds)

    async def main():
        try:
            return await call_with_retry(attempt, policy, on_retry=retried.append, sleep=sleep)
        except RetriesExhausted as error:
            return error

    return asyncio.run(main()), sleeps, retried


def test_success_after_retryable_failures_counts_attempts_and_uses_retry_after():
    policy = RetryPolicy(max_attempts=5, base_delay=0.1, rng=random.Random(0))
    outcomes = [
        AttemptError("HTTP 429", retryable=True, retry_after=2.0, rate_limited=True),
        AttemptError("HTTP 503", retryable=True),
        "done",
    ]
    result, sleeps, retried = run_sequence(outcomes, policy)
    assert result == ("done", 3)
    assert 2.0 <= sleeps[0] <= 2.2  # the server's Retry-After, not our own backoff
    assert 0.05 <= sleeps[1] <= 0.2
    assert [e.rate_limited for e in retried] == [True, False]


def test_non_retryable_fails_at_once():
    result, sleeps, _ = run_sequence(
        [AttemptError("HTTP 401: bad key", retryable=False)], RetryPolicy()
    )
    assert isinstance(result, RetriesExhausted)
    assert result.attempts == 1 and result.reason == "HTTP 401: bad key" and sleeps == []


def test_attempts_are_bounded_and_reason_kept():
    outcomes = [AttemptError("HTTP 500: boom", retryable=True)] * 3
    result, sleeps, _ = run_sequence(outcomes, RetryPolicy(max_attempts=3, base_delay=0.01))
    assert isinstance(result, RetriesExhausted)
    assert result.attempts == 3 and len(sleeps) == 2
    assert "HTTP 500: boom" in result.reason and "3 attempts" in result.reason


def test_timeout_is_an_attempt():
    result, _, retried = run_sequence(["hang", "ok"], RetryPolicy(timeout=0.05, base_delay=0.01))
    assert result == ("ok", 2)
    assert "timed out" in retried[0].reason
