"""The limiter's schedule (on a simulated clock) and the Retry-After rules."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from harness.literature.ratelimit import (
    RateLimiter,
    backoff_seconds,
    retry_after_seconds,
    shared_limiter,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_calls_are_spaced_by_the_interval():
    clock = FakeClock()
    limiter = RateLimiter(3.0, clock=clock, sleep=clock.sleep)
    sends = []
    for _ in range(4):
        limiter.wait()
        sends.append(clock.now)
    assert [b - a for a, b in zip(sends, sends[1:], strict=False)] == [3.0, 3.0, 3.0]
    assert clock.slept == [3.0, 3.0, 3.0]


def test_time_already_passed_counts_toward_the_interval():
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock, sleep=clock.sleep)
    limiter.wait()
    clock.now += 0.75
    assert limiter.wait() == 0.25
    clock.now += 5
    assert limiter.wait() == 0.0


def test_the_interval_also_runs_from_the_answer():
    clock = FakeClock()
    limiter = RateLimiter(1.0, clock=clock, sleep=clock.sleep)
    limiter.wait()
    clock.now += 0.4  # the request took 0.4 s to answer
    limiter.done()
    assert limiter.wait() == 1.0


def test_retry_after_pushes_everyone_back():
    clock = FakeClock()
    limiter = RateLimiter(0.5, clock=clock, sleep=clock.sleep)
    limiter.wait()
    limiter.defer(10.0)
    assert limiter.wait() == 10.0


def test_threads_get_distinct_slots_an_interval_apart():
    clock = FakeClock()  # time stands still: only reservations move
    limiter = RateLimiter(2.0, clock=clock, sleep=lambda seconds: None)
    delays: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        waited = limiter.wait()
        with lock:
            delays.append(waited)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(delays) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]


def test_shared_limiter_is_one_object_per_endpoint_and_spacing():
    a = shared_limiter("http://example.test/api", 0.5)
    assert shared_limiter("http://example.test/api", 0.5) is a
    assert shared_limiter("http://example.test/other", 0.5) is not a


def test_retry_after_in_seconds_and_as_a_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("0.25") == 0.25
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_backoff_doubles_unless_the_server_says_how_long():
    assert [backoff_seconds(n, None, 0.5) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert backoff_seconds(3, 4.0, 0.5) == 4.0
