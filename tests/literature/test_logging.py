"""Literature requests log method, host, path, status, retries and cache use; never a secret."""

from __future__ import annotations

import logging

import pytest

from tests.literature.conftest import REMOTE
from tests.literature.test_secrets import keyed_server, leaked, open_keyed  # noqa: F401


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_requests_retries_and_cache_hits_are_logged_without_secrets(
    keyed_server,  # noqa: F811
    tmp_path,
    caplog,
    name,
    api,
):
    caplog.set_level(logging.DEBUG, logger="harness")
    keyed_server.fail_next(api, 429, retry_after="0.05")
    source = open_keyed(keyed_server, name, api, tmp_path / "cache")
    source.search("enzyme", limit=1)
    source.search("enzyme", limit=1)
    text = caplog.text
    assert "HTTP 429, retry 1 in 0.1 s (Retry-After)" in text
    host = keyed_server.base(api).split("://", 1)[1]
    assert f"GET {host}/" in text and "-> 200 in" in text
    assert "-> 429 in" in text
    assert "cache miss: GET" in text and "cache hit: GET" in text
    assert "?" not in "".join(r.getMessage() for r in caplog.records if "GET" in r.getMessage())
    assert leaked(text) == []
