"""What a server said when it did not answer as the API does: the visible text of a page, and
which failures no retry heals (`AttemptError.lasting`) and which may."""

from __future__ import annotations

import socket

import pytest

from harness.models import ChatRequest, GenerationParams
from harness.models._answer_text import answer_text, looks_like_json
from harness.models.openai_api import OpenAIBackend, ServerRefused
from harness.models.openai_replies import classify
from harness.models.retry import NO_SERVER, REFUSED
from tests.servers.page_server import BAD_GATEWAY, NGINX_WELCOME, PageServer, refusing_port

PARAMS = GenerationParams(max_tokens=8)


def requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(f"p{i}", [{"role": "user", "content": f"Q{i}?"}], 1) for i in range(n)]


def test_a_page_is_quoted_by_its_visible_text():
    text = answer_text(NGINX_WELCOME)
    assert text.startswith("Welcome to nginx! If you see this page, the nginx web server is ")
    assert "<" not in text and "color-scheme" not in text and "Tahoma" not in text
    assert len(text) <= 120 and text.endswith("...")
    assert answer_text(BAD_GATEWAY) == "502 Bad Gateway nginx/1.24.0"
    assert answer_text("<html><head><title>Just a title</title></head><body></body></html>") == (
        "Just a title"
    )
    assert answer_text(b"  model\n   not\tloaded  ") == "model not loaded"
    assert answer_text("x" * 300, limit=20) == "x" * 17 + "..."


def test_json_cut_short_is_told_from_something_else():
    assert looks_like_json(b' {"id": "chatcmpl-x", "choi')
    assert looks_like_json(b"[1, 2")
    assert (
        not looks_like_json(NGINX_WELCOME)
        and not looks_like_json(b"")
        and not looks_like_json(b"OK")
    )


def test_a_page_with_status_200_is_not_json_and_lasting():
    with PageServer() as server:
        engine = OpenAIBackend("m", api_key="k", base_url=server.base_url, max_attempts=2)
        with engine:
            (done,) = list(engine.complete(requests(1), PARAMS))
        assert server.requests == 2  # not under `collect`: retried as before
    assert done.error.startswith(
        f"HTTP 200 from {server.base_url}/chat/completions, not JSON (text/html): Welcome to nginx!"
    )


def test_under_collect_lasting_failures_are_not_retried_and_stop_the_run():
    hold = refusing_port()
    url = f"http://127.0.0.1:{hold.getsockname()[1]}/v1"
    try:
        engine = OpenAIBackend("m", api_key="k", base_url=url, max_attempts=6, concurrency=8)
        got = []
        with engine:
            engine.stop_on_refusals = True
            with pytest.raises(ServerRefused) as caught:
                got.extend(engine.complete(requests(30), PARAMS))
            assert engine.stats.retries == 0
        assert caught.value.lasting == NO_SERVER and caught.value.status is None
        assert caught.value.reason == f"connection refused at {url}/chat/completions"
        assert [c.attempts for c in got] == [1, 1, 1]
        # not under `collect` (a judge's reviewer, a library caller): retried as before
        with OpenAIBackend(
            "m", api_key="k", base_url=url, max_attempts=2, base_delay=0.01
        ) as other:
            (done,) = list(other.complete(requests(1), PARAMS))
        assert done.attempts == 2 and "connection refused at" in done.error
    finally:
        hold.close()


@pytest.mark.parametrize(
    ("status", "lasting", "retried"),
    [(400, REFUSED, False), (405, REFUSED, False), (429, None, True), (409, None, True),
     (502, None, True), (503, None, True)],
)  # fmt: skip
def test_which_statuses_are_lasting(status: int, lasting: str | None, retried: bool):
    with PageServer(status=status, page=BAD_GATEWAY) as server:
        with OpenAIBackend("m", api_key="k", base_url=server.base_url, max_attempts=2,
                           base_delay=0.01, max_delay=0.02) as engine:  # fmt: skip
            (done,) = list(engine.complete(requests(1), PARAMS))
        assert server.requests == (2 if retried else 1)
    assert done.error.startswith(f"HTTP {status}: 502 Bad Gateway nginx/1.24.0")


def test_no_such_host_is_lasting_and_a_dropped_connection_is_not():
    import openai

    from harness.models.openai_api import _httpx

    http = _httpx()  # the HTTP package the installed openai is built on
    request = http.Request("POST", "http://gpu-node-7.invalid:8000/v1/chat/completions")

    def connection_error(cause: BaseException) -> openai.APIConnectionError:
        """As `_post` raises it: the openai error, from the HTTP package's, from the OS's."""
        outer = http.ConnectError(str(cause))
        outer.__cause__ = cause
        error = openai.APIConnectionError(request=request)
        error.__cause__ = outer
        return error

    unknown = classify(connection_error(socket.gaierror(socket.EAI_NONAME, "Name not known")))
    assert unknown.lasting == NO_SERVER and unknown.retryable
    assert unknown.reason == (
        "no such host 'gpu-node-7.invalid' at http://gpu-node-7.invalid:8000/v1/chat/completions"
    )
    dropped = classify(connection_error(ConnectionResetError("reset by peer")))
    assert dropped.lasting is None and dropped.reason.startswith("connection error: ")
    assert classify(connection_error(ConnectionRefusedError(111, "refused"))).lasting == NO_SERVER
