"""The Batch API path: JSONL upload, batch creation, polling, download, ingest, resume."""

from __future__ import annotations

import pytest

from harness.models import ChatRequest, GenerationParams
from harness.models.batch import MemoryBatchState
from harness.models.openai_api import OpenAIBackend

KEY = "sk-test-batch-key-000000"
PARAMS = GenerationParams(temperature=0.5, max_tokens=20, seed=3)


def requests(n, samples=1):
    return [
        ChatRequest(f"p{i:03d}", [{"role": "user", "content": f"Q{i}"}], samples) for i in range(n)
    ]


def backend(server, state=None, **options):
    return OpenAIBackend(
        "gpt-4o-mini",
        api_key=KEY,
        base_url=server.base_url,
        batch_api=True,
        batch_state=state if state is not None else MemoryBatchState(),
        poll_interval=0.02,
        base_delay=0.01,
        **options,
    )


def by_unit(completions):
    return {(c.key, c.sample): c for c in completions}


class Crash(Exception):
    pass


class CrashingState(MemoryBatchState):
    """Raises once a batch id is about to be saved: before storing it, or right after."""

    def __init__(self, after_store):
        super().__init__()
        self.after_store, self.armed = after_store, True

    def save(self, batches):
        has_id = any(b.get("id") for b in batches)
        if self.armed and has_id and not self.after_store:
            self.armed = False
            raise Crash("killed before the id was stored")
        super().save(batches)
        if self.armed and has_id and self.after_store:
            self.armed = False
            raise Crash("killed right after the id was stored")


def test_batch_results_match_direct_requests_at_half_price(serve):
    server = serve(batch_delay=0.05)
    with backend(server) as engine:
        batched = by_unit(engine.complete(requests(5, samples=2), PARAMS))
    direct_engine = OpenAIBackend("gpt-4o-mini", api_key=KEY, base_url=server.base_url)
    with direct_engine:
        direct = by_unit(direct_engine.complete(requests(5, samples=2), PARAMS))
    assert batched.keys() == direct.keys() and len(batched) == 10
    for unit, completion in batched.items():
        assert completion.ok and completion.text == direct[unit].text
        assert completion.cost_usd == pytest.approx(direct[unit].cost_usd / 2)
        assert completion.model_reported == direct[unit].model_reported
    assert server.log.counts["batches"] == 1
    assert engine.stats.batch_ids and engine.stats.status.startswith("batch ")


@pytest.mark.parametrize("after_store", [True, False])
def test_interrupted_run_resumes_the_same_batch(serve, after_store):
    server = serve(batch_delay=0.3)
    state = CrashingState(after_store)
    with backend(server, state) as engine, pytest.raises(Crash):
        list(engine.complete(requests(4), PARAMS))
    [record] = state.batches
    assert (record["id"] is not None) == after_store  # else only its token is known
    with backend(server, state) as engine:
        out = by_unit(engine.complete(requests(4), PARAMS))
    assert len(out) == 4 and all(c.ok for c in out.values())
    assert server.log.counts["batches"] == 1  # picked up, not paid for twice
    assert state.batches[0]["id"] and state.batches[0]["ingested"]


def test_error_lines_fail_then_a_retry_submits_a_fresh_batch(serve, faults):
    server = serve(batch_delay=0.02, faults=faults(rate=1.0))
    state = MemoryBatchState()
    with backend(server, state) as engine:
        out = list(engine.complete(requests(3), PARAMS))
    assert all(not c.ok and c.error == "HTTP 500: internal error" for c in out)
    server.faults = faults(rate=0.0)
    with backend(server, state) as engine:
        out = list(engine.complete(requests(3), PARAMS))
    assert all(c.ok for c in out) and server.log.counts["batches"] == 2


def test_expired_batch_keeps_partial_results(serve):
    server = serve(batch_delay=0.02, batch_outcome="expired")
    with backend(server) as engine:
        out = by_unit(engine.complete(requests(4), PARAMS))
    ok = [u for u, c in out.items() if c.ok]
    assert len(ok) == 2
    assert all(c.error == "batch expired before this request ran" for c in out.values() if not c.ok)


def test_failed_batch_reports_why(serve):
    server = serve(batch_delay=0.02, batch_outcome="failed")
    with backend(server) as engine:
        out = list(engine.complete(requests(2), PARAMS))
    assert all(not c.ok and c.error == "batch failed before this request ran: bad" for c in out)


def test_stored_batches_for_other_settings_are_ignored(serve):
    server = serve(batch_delay=0.02)
    state = MemoryBatchState()
    with backend(server, state) as engine:
        list(engine.complete(requests(2), PARAMS))
        list(engine.complete(requests(2), GenerationParams(temperature=0.9)))
    assert server.log.counts["batches"] == 2


def test_a_lost_create_reply_does_not_create_a_second_batch(serve):
    server = serve(batch_delay=0.02)
    server.lose_next_batch_reply = True
    with backend(server) as engine:
        out = list(engine.complete(requests(3), PARAMS))
    assert all(c.ok for c in out) and len(out) == 3
    assert server.log.counts["batches"] == 1 and not server.lose_next_batch_reply
