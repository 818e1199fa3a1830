"""Replicas of one model: the pool's choice and out-taking, and failover on loopback servers."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections import Counter

import pytest

from harness.errors import HarnessError
from harness.models import ChatRequest, GenerationParams
from harness.models.openai_api import OpenAIBackend
from harness.models.replicas import ReplicaPool, split_urls
from tests.servers.openai_server import Faults, OpenAIServer

KEY = "sk-test-replicas-secret-0001"
FAST = {"base_delay": 0.01, "max_delay": 0.05}
PARAMS = GenerationParams(max_tokens=8)


def requests(n: int, samples: int = 1) -> list[ChatRequest]:
    return [
        ChatRequest(f"p{i:04d}", [{"role": "user", "content": f"Question {i}?"}], samples)
        for i in range(n)
    ]


def pool(n: int, limit: int = 2, probe_ok: bool = True, **kw) -> ReplicaPool:
    async def probe(replica):
        return probe_ok

    urls = [f"http://10.0.0.{i}:8000/v1" for i in range(1, n + 1)]
    return ReplicaPool(urls, limit, probe, **kw)


def test_split_urls_takes_lists_and_commas_and_refuses_repeats():
    assert split_urls("http://a:1/v1/, http://b:2/v1") == ["http://a:1/v1", "http://b:2/v1"]
    assert split_urls(["http://a:1/v1", "http://b:2/v1,http://c:3/v1"])[2] == "http://c:3/v1"
    with pytest.raises(HarnessError, match="given twice"):
        split_urls(["http://a:1/v1", "http://a:1/v1/"])
    with pytest.raises(HarnessError, match="not an http"):
        split_urls("http://a:1/v1,ftp://b/v1")


def test_fewest_in_flight_wins_and_ties_go_in_turn():
    async def run():
        p = pool(3, limit=4)
        order = [await p.acquire(set()) for _ in range(6)]
        assert [p.replicas.index(r) for r in order] == [0, 1, 2, 0, 1, 2]
        p.release(order[1])
        p.release(order[4])  # replica 1 now has none in flight
        assert p.replicas.index(await p.acquire(set())) == 1
        # a replica at its limit is skipped; a request waits when every replica is full
        full = pool(1, limit=1)
        first = await full.acquire(set())
        waiting = asyncio.ensure_future(full.acquire(set()))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        full.release(first)
        assert await waiting is first

    asyncio.run(run())


def test_a_failed_replica_is_taken_out_probed_and_back():
    async def run():
        p = pool(2, probe_after=0.05)
        a = await p.acquire(set())
        p.release(a, "connection error")
        assert not a.up and a.taken_out == 1
        # while it is out, everything goes to the other one; an attempt that tried it is done
        b = await p.acquire({a})
        assert b is not a
        assert await p.acquire({b}) is None
        p.release(b)
        await asyncio.sleep(0.08)
        again = await p.acquire(set())  # the probe is due: started, and it succeeds
        p.release(again)
        await asyncio.sleep(0.01)
        assert a.up and p.record()[a.shown] == {"served": 0, "taken_out": 1}

    asyncio.run(run())


def test_when_every_replica_is_out_a_request_waits_for_one_probe_round():
    async def run():
        p = pool(2, probe_after=0.05, probe_ok=False)
        a, b = await p.acquire(set()), await p.acquire(set())
        p.release(a, "HTTP 503")
        p.release(b, "timed out")
        assert await p.acquire(set()) is None  # after a failed probe, not at once
        assert a.backoff > 0.05 and "HTTP 503" in p.out_reasons()
        await p.close()

    asyncio.run(run())


def test_a_single_replica_is_never_taken_out():
    async def run():
        p = pool(1)
        a = await p.acquire(set())
        p.release(a, "connection error")
        assert a.up and await p.acquire(set()) is a

    asyncio.run(run())


# -- on loopback servers ---------------------------------------------------------------------
def backend(servers, **options) -> OpenAIBackend:
    urls = [s.base_url if isinstance(s, OpenAIServer) else s for s in servers]
    return OpenAIBackend("gpt-4o-mini", api_key=KEY, base_url=urls, **{**FAST, **options})


def test_requests_spread_over_replicas_and_match_one_server(serve):
    servers = [serve(latency=0.02) for _ in range(3)]
    with backend(servers, concurrency=4) as engine:
        out = list(engine.complete(requests(60, samples=2), PARAMS))
        record = engine.replica_record()
    alone = serve()
    with backend([alone]) as engine:
        reference = {(c.key, c.sample): c.text for c in engine.complete(requests(60, 2), PARAMS)}
    assert {(c.key, c.sample): c.text for c in out} == reference
    served = [s.log.counts["requests"] for s in servers]
    assert sum(served) == 60 and min(served) >= 10, served
    assert sorted(r["served"] for r in record.values()) == sorted(served)


def test_replica_failover_with_no_lost_or_duplicated_output(serve):
    """One of three replicas dies mid-run: every request ends ok, exactly once, and the
    replica's failures cost no request an attempt."""
    servers = [serve(latency=0.03) for _ in range(3)]
    doomed = servers[1]
    seen: Counter[tuple[str, int]] = Counter()
    with backend(servers, concurrency=8, max_attempts=2) as engine:
        for completion in engine.complete(requests(300, samples=2), PARAMS):
            seen[(completion.key, completion.sample)] += 1
            assert completion.ok, completion.error
            assert completion.attempts == 1
            if sum(seen.values()) == 100:
                threading.Thread(target=doomed.kill).start()
        record = engine.replica_record()
    assert set(seen) == {(f"p{i:04d}", s) for i in range(300) for s in (0, 1)}
    assert set(seen.values()) == {1}
    assert record[doomed.base_url]["taken_out"] >= 1
    assert sum(r["served"] for r in record.values()) == 300


def test_a_hanging_replica_times_out_and_its_late_answer_is_not_kept(serve):
    slow = serve(faults=Faults(rate=1.0, kinds=("timeout",), hang_s=1.0))
    fast = [serve(), serve()]
    with backend([slow, *fast], concurrency=4, timeout=0.3, max_attempts=1) as engine:
        out = list(engine.complete(requests(40), PARAMS))
    assert len(out) == 40 and all(c.ok for c in out)
    assert len({(c.key, c.sample) for c in out}) == 40
    # every request the slow replica held was answered by another one, not by it
    assert sum(s.log.counts["requests"] for s in fast) == 40


def test_with_every_replica_down_a_request_fails_after_its_attempts(serve):
    dead = [serve(), serve()]
    for server in dead:
        server.kill()  # refused, and the port stays this server's
    with backend(dead, max_attempts=2, timeout=1.0) as engine:
        out = list(engine.complete(requests(2), PARAMS))
    assert all(not c.ok and c.attempts == 2 for c in out)
    assert f"connection refused at {dead[0].base_url}/chat/completions" in out[0].error


def test_with_every_replica_down_collect_stops_after_three_requests(serve):
    """As `collect` runs it (stop_on_refusals): no replica has a server listening, so the run
    stops on the third request that met only refused connections; the others stay unsent."""
    from harness.models.openai_api import ServerRefused
    from harness.models.retry import NO_SERVER

    dead = [serve(), serve()]
    for server in dead:
        server.kill()
    got = []
    with backend(dead, max_attempts=6, timeout=1.0) as engine:
        engine.stop_on_refusals = True
        with pytest.raises(ServerRefused) as caught:
            got.extend(engine.complete(requests(20), PARAMS))
    assert caught.value.lasting == NO_SERVER and caught.value.status is None
    assert len(got) == 3 and all(not c.ok and c.attempts == 1 for c in got)
    assert "connection refused at" in caught.value.reason


def test_a_killed_server_refuses_connections_and_no_other_socket_takes_its_port(serve):
    server = serve()
    address = (server.host, server.port)
    server.kill()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5).close()
    for reuse in (0, 1):  # asyncio's servers set SO_REUSEADDR
        with socket.socket() as other:
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, reuse)
            with pytest.raises(OSError, match="in use"):
                other.bind(address)
    server.revive()
    socket.create_connection(address, timeout=5).close()
    server.__exit__(None, None, None)
    with socket.socket() as other:  # given up at the end
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other.bind(address)


def test_the_batch_api_takes_one_server():
    with pytest.raises(HarnessError, match="one base URL"):
        OpenAIBackend("m", api_key=KEY, base_url="http://a:1/v1,http://b:2/v1", batch_api=True)


def test_a_replica_that_comes_back_is_probed_and_serves_again(serve):
    gone = serve(latency=0.01)
    gone.kill()
    live = serve(latency=0.01)
    with backend([gone, live], concurrency=2) as engine:
        assert all(c.ok for c in engine.complete(requests(10), PARAMS))
        assert engine.replica_record()[gone.base_url] == {"served": 0, "taken_out": 1}
        gone.revive()
        time.sleep(1.2)  # past the first probe's wait (1 s)
        out = list(engine.complete(requests(40), PARAMS))
    assert all(c.ok for c in out) and gone.log.counts["requests"] > 0
    assert sum(r["served"] for r in engine.replica_record().values()) == 50
