"""Replicas of one model: several OpenAI-compatible servers (one vLLM server per GPU node, say)
that serve the same weights under one model key.

Each request goes to the replica with the fewest requests in flight (ties in turn). A replica
that fails (connection error, server error, timeout) is taken out and probed again later with
`GET {base}/models`, after a back-off that doubles while the probes fail; the request that met
the failure moves to another replica. A request is on one replica at a time, so it completes
once: the call to a failed replica has ended (or was cancelled on its timeout) before the
request moves on. With a single replica nothing is taken out: the retry policy alone applies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import HarnessError
from harness.models._redact import public_url
from harness.models.endpoint import check_base_url
from harness.study.records import JsonObject

log = logging.getLogger(__name__)

#: First wait before a failed replica is probed, and the longest wait between probes (seconds).
PROBE_AFTER, PROBE_MAX = 1.0, 30.0


def split_urls(value: str | Sequence[str] | None) -> list[str]:
    """Base URLs from one URL, a comma-separated list or a sequence of either; checked, in
    order, a repeated one refused."""
    if value is None:
        return []
    parts = [value] if isinstance(value, str) else list(value)
    urls = [check_base_url(u.strip()) for part in parts for u in part.split(",") if u.strip()]
    shown = [public_url(u) for u in urls]
    for i, url in enumerate(shown):
        if url in shown[:i]:
            raise HarnessError(f"the base URL {url} is given twice", column="base_url")
    return urls


@dataclass(eq=False)
class Replica:
    """One server of the pool and its live state."""

    url: str
    client: Any = None  # the HTTP client of this replica, made inside the loop
    in_flight: int = 0
    served: int = 0  # answers received
    taken_out: int = 0  # times it was taken out
    out_since: float | None = None  # None while it is in
    probe_at: float = 0.0
    backoff: float = PROBE_AFTER
    reason: str = ""  # why it was last taken out
    probing: bool = False

    @property
    def shown(self) -> str:
        return public_url(self.url) or self.url

    @property
    def where(self) -> str:
        """Host and path only, for log lines."""
        return self.shown.split("://", 1)[-1]

    @property
    def up(self) -> bool:
        return self.out_since is None


@dataclass
class ReplicaPool:
    """Least-in-flight choice among the replicas that are in, with out-taking and probes.

    `limit` is the number of requests one replica takes at a time. `probe(replica)` answers
    whether a replica that was taken out serves again.
    """

    urls: Sequence[str]
    limit: int
    probe: Callable[[Replica], Awaitable[bool]]
    probe_after: float = PROBE_AFTER
    probe_max: float = PROBE_MAX
    clock: Callable[[], float] = time.monotonic
    replicas: list[Replica] = field(init=False)

    def __post_init__(self) -> None:
        if not self.urls:
            raise HarnessError("no base URL given", column="base_url")
        self.replicas = [Replica(u, backoff=self.probe_after) for u in self.urls]
        self._turn = 0
        self._probes_done = 0
        self._tasks: set[asyncio.Task[None]] = set()
        # futures of the requests waiting for a change (a free slot, a probe's outcome); the
        # loop runs one task at a time, so the state needs no lock and release() can be
        # synchronous, which keeps it safe inside `finally` of a cancelled request
        self._waiters: set[asyncio.Future[None]] = set()

    async def acquire(self, tried: set[Replica]) -> Replica | None:
        """A replica not in `tried` with a free slot, counted in flight; None when every
        replica is tried or out (after waiting for one round of probes when all are out)."""
        probes_seen = self._probes_done
        while True:
            self._start_due_probes()
            choice = self._pick(tried)
            if choice is not None:
                choice.in_flight += 1
                return choice
            if any(r.up and r not in tried for r in self.replicas):
                await self._wait(None)  # every untried replica that is in is full
            elif any(r.up for r in self.replicas) or self._probes_done > probes_seen:
                return None
            elif any(r.probing for r in self.replicas):
                await self._wait(None)  # all out, a probe under way: its outcome wakes us
            else:  # all out: wait until the next probe is due
                wait = min(r.probe_at for r in self.replicas) - self.clock()
                await self._wait(max(wait, 0.0) + 0.01)

    async def _wait(self, timeout: float | None) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.add(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            pass
        finally:
            self._waiters.discard(waiter)

    def _notify(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def _pick(self, tried: set[Replica]) -> Replica | None:
        n = len(self.replicas)
        free = [
            (r.in_flight, (i - self._turn) % n, i)
            for i, r in enumerate(self.replicas)
            if r.up and r not in tried and r.in_flight < self.limit
        ]
        if not free:
            return None
        index = min(free)[2]
        self._turn = (index + 1) % n
        return self.replicas[index]

    def release(self, replica: Replica, fault: str | None = None) -> None:
        """The request's call to `replica` ended; `fault` says why the replica failed it
        (None when the replica answered, whatever the answer)."""
        replica.in_flight -= 1
        if fault is None:
            if replica.up:
                replica.backoff = self.probe_after
        elif len(self.replicas) > 1 and replica.up:
            replica.out_since = self.clock()
            replica.taken_out += 1
            replica.reason = fault
            self._schedule(replica)
            log.warning(
                "replica %s taken out (%s); probing it in %.1f s",
                replica.shown,
                fault,
                replica.probe_at - self.clock(),
            )
        self._notify()

    def out_reasons(self) -> str:
        return "; ".join(f"{r.shown}: {r.reason}" for r in self.replicas if not r.up)

    def _schedule(self, replica: Replica) -> None:
        replica.probe_at = self.clock() + replica.backoff
        replica.backoff = min(self.probe_max, replica.backoff * 2)

    def _start_due_probes(self) -> None:
        now = self.clock()
        for replica in self.replicas:
            if not replica.up and not replica.probing and now >= replica.probe_at:
                replica.probing = True
                task = asyncio.get_running_loop().create_task(self._probe(replica))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _probe(self, replica: Replica) -> None:
        try:
            ok = await self.probe(replica)
        except Exception:  # a probe that cannot even be sent is a failed probe
            ok = False
        replica.probing = False
        self._probes_done += 1
        if ok:
            log.warning("replica %s is back", replica.shown)
            replica.out_since = None
        else:
            self._schedule(replica)
        self._notify()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for replica in self.replicas:
            if replica.client is not None:
                client, replica.client = replica.client, None
                try:
                    await client.aclose()
                except Exception as error:  # closing is best effort
                    log.debug("closing the client of %s: %s", replica.shown, error)

    def record(self) -> JsonObject:
        """Per replica: answers served and times taken out (for the manifest)."""
        return {r.shown: {"served": r.served, "taken_out": r.taken_out} for r in self.replicas}
