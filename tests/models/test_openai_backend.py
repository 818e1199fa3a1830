"""The openai backend driven through the real `openai` client against the loopback server."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models import ChatRequest, GenerationParams, chat, open_backend
from harness.models.base import unit_seed
from harness.models.openai_api import OpenAIBackend
from tests.servers.openai_server import chat_reply

KEY = "sk-test-very-secret-key-123456"
FAST = {"base_delay": 0.01, "max_delay": 0.05}


def requests(n, samples=1):
    return [
        ChatRequest(
            f"p{i:03d}",
            [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": f"Question {i}?"},
            ],
            samples,
        )
        for i in range(n)
    ]


def backend(server, **options):
    return OpenAIBackend(
        "gpt-4o-mini", api_key=KEY, base_url=server.base_url, **{**FAST, **options}
    )


def test_completions_carry_provenance_usage_and_cost(serve):
    server = serve()
    params = GenerationParams(temperature=0.3, top_p=0.9, max_tokens=12, seed=7)
    with backend(server, concurrency=4) as engine:
        out = sorted(
            engine.complete(requests(6, samples=3), params), key=lambda c: (c.key, c.sample)
        )
    assert [(c.key, c.sample) for c in out] == [
        (f"p{i:03d}", s) for i in range(6) for s in range(3)
    ]
    body = server.log.chat_bodies[0]
    assert body["n"] == 3 and body["max_tokens"] == 12
    # each request carries its first sample's own seed, derived from seed, key and sample
    assert {b["seed"] for b in server.log.chat_bodies} == {
        unit_seed(7, f"p{i:03d}", 0, bits=31) for i in range(6)
    }
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9
    assert len(server.log.chat_bodies) == 6  # n samples in one request each
    expected = chat_reply(body, 0)
    assert all(c.ok and c.attempts == 1 for c in out)
    assert all(c.model_reported == "gpt-4o-mini-2024-test" for c in out)
    assert all(c.system_fingerprint == expected["system_fingerprint"] for c in out)
    assert all(c.started_at <= c.finished_at and c.latency_s >= 0 for c in out)
    by_key = {}
    for c in out:
        by_key.setdefault(c.key, []).append(c)
    for key, group in by_key.items():
        sent = next(
            b
            for b in server.log.chat_bodies
            if b["messages"][-1]["content"] == f"Question {int(key[1:])}?"
        )
        reply = chat_reply(sent, 0)
        assert [c.text for c in group] == [ch["message"]["content"] for ch in reply["choices"]]
        assert sum(c.completion_tokens for c in group) == reply["usage"]["completion_tokens"]
        cost = (
            reply["usage"]["prompt_tokens"] * 0.15 + reply["usage"]["completion_tokens"] * 0.60
        ) / 1e6
        assert sum(c.cost_usd for c in group) == pytest.approx(cost)


def test_rate_limits_cut_concurrency_and_retries_are_ours_only(serve, faults):
    server = serve(faults=faults(rate=1.0, kinds=("429",), retry_after="0.01"))
    with backend(server, concurrency=8, max_attempts=3) as engine:
        out = list(engine.complete(requests(4), GenerationParams()))
        assert engine._limiter.limit < 8 and engine.stats.rate_limited == 8
    assert server.log.counts["requests"] == 12  # 4 requests x 3 attempts: no hidden retries
    assert all(not c.ok and c.attempts == 3 and "HTTP 429" in c.error for c in out)


@pytest.mark.parametrize("kind", ["429-bare", "500", "503", "malformed", "drop", "timeout"])
def test_every_fault_kind_is_retried_to_success(serve, faults, kind):
    # the first request of the run fails with `kind`, every later one succeeds
    server = serve(faults=faults(rate=1.0, kinds=(kind,), hang_s=2.0))
    engine = backend(server, concurrency=1, timeout=0.3, max_attempts=3)
    real = server._draw_fault
    calls = []

    def once():
        calls.append(1)
        return real() if len(calls) == 1 else None

    server._draw_fault = once
    try:
        [completion] = engine.complete(requests(1), GenerationParams())
    finally:
        engine.close()
    assert completion.ok and completion.attempts == 2, completion.error
    assert engine.stats.retries == 1


def test_non_retryable_error_fails_fast_and_hides_the_key(serve):
    server = serve(api_key="the-right-key")
    with backend(server, max_attempts=5) as engine:
        [completion] = engine.complete(requests(1), GenerationParams())
    assert completion.error.startswith("HTTP 401") and completion.attempts == 1
    assert KEY not in completion.error


def test_echoed_credentials_are_redacted(serve, faults):
    server = serve(faults=faults(rate=1.0, kinds=("500",)), echo_auth=True)
    with backend(server, max_attempts=2) as engine:
        [completion] = engine.complete(requests(1), GenerationParams())
    assert f"Bearer {KEY}" in server.log.auth_headers  # the server did see (and echo) it
    assert "HTTP 500" in completion.error and KEY not in completion.error


def test_timeouts_exhaust_attempts_with_reason(serve, faults):
    server = serve(faults=faults(rate=1.0, kinds=("timeout",), hang_s=1.0))
    with backend(server, timeout=0.1, max_attempts=2) as engine:
        [completion] = engine.complete(requests(1), GenerationParams())
    assert not completion.ok and "timed out" in completion.error and completion.attempts == 2


def test_chat_helper_returns_text_or_raises(serve, faults):
    server = serve()
    engine = open_backend("openai", "gpt-4o-mini", api_key=KEY, base_url=server.base_url)
    text = chat(engine, [{"role": "user", "content": "Hi"}], GenerationParams(max_tokens=5))
    assert text and len(text.split()) <= 5
    server.faults = faults(rate=1.0, kinds=("500",))
    server._draw_fault = lambda: "500"
    engine.policy.max_attempts = 1
    with pytest.raises(HarnessError, match="HTTP 500"):
        chat(engine, [{"role": "user", "content": "Hi"}], GenerationParams())
    engine.close()


def test_closing_the_stream_early_cancels_the_rest(serve):
    server = serve(latency=0.05)
    with backend(server, concurrency=2) as engine:
        stream = engine.complete(requests(40), GenerationParams())
        next(stream)
        stream.close()
        seen = server.log.counts["requests"]
    assert seen < 40


def test_missing_key_for_openai_and_bad_options(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(HarnessError, match="OPENAI_API_KEY"):
        open_backend("openai", "gpt-4o-mini")
    with pytest.raises(HarnessError, match="needs --model"):
        open_backend("openai", None)
    with pytest.raises(HarnessError, match="unknown backend"):
        open_backend("vllm", "x")
    engine = open_backend("openai", "m", base_url="http://127.0.0.1:9/v1?region=eu")
    assert engine.public_base_url == "http://127.0.0.1:9/v1"
    for url in ("http://user:pw@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api_key=z"):
        with pytest.raises(HarnessError, match="carries a credential") as caught:
            open_backend("openai", "m", base_url=url)
        assert "pw" not in str(caught.value) and "=z" not in str(caught.value)


def test_requests_are_validated():
    engine = OpenAIBackend("m", api_key=KEY, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(HarnessError, match="duplicate"):
        list(engine.complete(requests(1) * 2, GenerationParams()))
    with pytest.raises(HarnessError, match="top_p"):
        list(engine.complete(requests(1), GenerationParams(top_p=0)))


def test_a_server_that_ignores_n_gets_each_missing_sample_alone(serve):
    server = serve(ignore_n=True)
    params = GenerationParams(temperature=0.7, max_tokens=12, seed=7)
    with backend(server, concurrency=2) as engine:
        out = list(engine.complete(requests(3, samples=3), params))
    assert len(out) == 9 and all(c.ok for c in out)
    for key in {c.key for c in out}:  # three different texts: each sample had its own seed
        assert len({c.text for c in out if c.key == key}) == 3
    seeds = [b["seed"] for b in server.log.chat_bodies]
    assert len(server.log.chat_bodies) == 9 and len(set(seeds)) == 9


def test_omitted_parameters_are_not_sent_and_the_token_parameter_is_renamed(serve):
    server = serve(reject_params={"*": ("temperature", "top_p", "max_tokens")})
    params = GenerationParams(temperature=0.3, top_p=0.9, max_tokens=12, seed=7)
    with backend(
        server,
        omit=frozenset({"temperature", "top_p", "seed"}),
        token_param="max_completion_tokens",
        extra_body={"reasoning_effort": "low", "stop": ["END"]},
    ) as engine:
        out = list(engine.complete(requests(3), params))
    assert all(c.ok for c in out) and server.log.counts["rejected"] == 0
    body = server.log.chat_bodies[0]
    assert set(body) == {"model", "messages", "max_completion_tokens", "reasoning_effort", "stop"}
    assert body["max_completion_tokens"] == 12 and body["stop"] == ["END"]


@pytest.mark.parametrize("name_param", [True, False])
def test_a_rejected_parameter_stops_the_run_with_one_error_naming_it(serve, name_param):
    server = serve(reject_params={"gpt-4o-mini": ("temperature",)}, name_param=name_param)
    with backend(server, concurrency=4) as engine, pytest.raises(HarnessError) as caught:
        list(engine.complete(requests(40), GenerationParams()))
    assert caught.value.column == "temperature"
    assert "rejected the request parameter 'temperature'" in str(caught.value)
    assert "HTTP 400" in str(caught.value) and "\n" not in str(caught.value)
    # no retries and no storm: at most one request per worker reached the server
    assert server.log.counts["rejected"] <= 4 and server.log.counts["requests"] <= 4


def test_refusing_every_request_stops_the_run_after_three(serve):
    from harness.models.openai_api import ServerRefused

    server = serve(api_key="the-right-key")  # a key the server does not take: 401 to all
    got = []
    with backend(server, concurrency=16) as engine:
        engine.stop_on_refusals = True  # as `collect` runs it
        with pytest.raises(ServerRefused, match=r"refused 3 requests in a row \(HTTP 401"):
            got.extend(engine.complete(requests(40), GenerationParams()))
    assert len(got) == 3 and all(c.error.startswith("HTTP 401") for c in got)
    with backend(server, concurrency=16) as engine:  # not asked to stop: every request fails
        assert [c.ok for c in engine.complete(requests(40), GenerationParams())] == [False] * 40


def test_an_unknown_model_costs_three_requests_sent_one_at_a_time():
    from harness.models.openai_api import ServerRefused
    from tests.servers.model_server import ModelServer

    with ModelServer(models={"gpt-4o"}, latency=0.02) as server:
        with backend(server, concurrency=16) as engine:
            engine.stop_on_refusals = True
            with pytest.raises(ServerRefused, match="The model `gpt-4o-mini` does not exist"):
                list(engine.complete(requests(40), GenerationParams()))
        assert server.unknown == ["gpt-4o-mini"] * 3 and server.max_in_flight == 1
        # a model it knows: the first answer lets the concurrency out
        server.reset_peak()
        known = OpenAIBackend("gpt-4o", api_key=KEY, base_url=server.base_url, concurrency=8)
        with known as engine:
            engine.stop_on_refusals = True
            done = list(engine.complete(requests(40), GenerationParams()))
        assert all(c.ok for c in done) and server.max_in_flight == 8


def test_refusals_stop_only_when_alike_and_in_a_row():
    from harness.models.openai_api import RefusalWatch, ServerRefused
    from harness.models.retry import NO_SERVER, REFUSED

    watch = RefusalWatch()
    outcomes = [
        (REFUSED, 404), (REFUSED, 404), None, (REFUSED, 404), (REFUSED, 404),
        (None, 500), (REFUSED, 404), (REFUSED, 401), (NO_SERVER, None), (NO_SERVER, None),
        (REFUSED, 404), (REFUSED, 404),
    ]  # fmt: skip
    for outcome in outcomes:
        if outcome is None:
            watch.served()
        else:
            watch.failed(*outcome, f"reason {outcome}")
        watch.check()  # never three alike in a row
    assert watch.answered  # the 500: a failure that may heal is an answer
    watch.failed(REFUSED, 404, "HTTP 404")
    with pytest.raises(ServerRefused) as caught:
        watch.check()
    assert caught.value.status == 404 and caught.value.count == 3
    assert caught.value.reason == f"reason {(REFUSED, 404)}"  # the first of the streak's

    fresh = RefusalWatch()
    for _ in range(3):
        fresh.failed(NO_SERVER, None, "connection refused at http://127.0.0.1:9/v1")
    assert not fresh.answered
    with pytest.raises(ServerRefused, match=r"no server answered 3 requests in a row \(conn"):
        fresh.check()
