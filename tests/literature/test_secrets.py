"""Keys and the Crossref mailto reach the server, and nothing else: not records, cache or errors."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from harness.errors import HarnessError
from harness.literature import open_source
from tests.literature.conftest import REMOTE
from tests.servers.literature_server import LiteratureServer

OPENALEX_KEY = "oa-SECRET-7f3a9c"
S2_KEY = "s2-SECRET-51be02"
MAILTO = "secret.person+lit@example.org"
SECRETS = (OPENALEX_KEY, S2_KEY, MAILTO)


def leaked(text: str) -> list[str]:
    forms = {f for s in SECRETS for f in (s, quote(s, safe=""), quote_plus(s))}
    return sorted(f for f in forms if f in text)


@pytest.fixture
def keyed_server(monkeypatch):
    monkeypatch.setenv("OPENALEX_API_KEY", OPENALEX_KEY)
    monkeypatch.setenv("SEMANTIC_SCHOLAR_API_KEY", S2_KEY)
    monkeypatch.setenv("CROSSREF_MAILTO", MAILTO)
    with LiteratureServer(openalex_key=OPENALEX_KEY, s2_key=S2_KEY) as server:
        yield server


def open_keyed(server: LiteratureServer, name: str, api: str, cache: Path):
    return open_source(
        name, base_url=server.base(api), interval=0, page_size=2, cache=cache, backoff=0.01
    )


def test_secrets_are_sent_where_each_api_expects_them(keyed_server, tmp_path):
    for name, api in REMOTE:
        open_keyed(keyed_server, name, api, tmp_path).search("enzyme", limit=1)
    assert keyed_server.arrivals("openalex")[0].params["api_key"] == OPENALEX_KEY
    assert keyed_server.arrivals("s2")[0].headers["x-api-key"] == S2_KEY
    assert keyed_server.arrivals("crossref")[0].params["mailto"] == MAILTO


def test_no_secret_in_records_or_cache_files(keyed_server, tmp_path):
    cache = tmp_path / "cache"
    for name, api in REMOTE:
        source = open_keyed(keyed_server, name, api, cache)
        for _ in range(2):  # the second answer comes from the cache
            record = source.search("lattice signal", limit=3, cutoff="2020-01-01")
            assert leaked(record.model_dump_json()) == []
    openalex = keyed_server.arrivals("openalex")
    assert openalex and all(a.params.get("api_key") == OPENALEX_KEY for a in openalex)
    files = list(cache.rglob("*"))
    assert any(f.suffix == ".json" for f in files)
    for path in files:
        assert leaked(path.name) == []
        if path.is_file():
            assert leaked(path.read_text(encoding="utf-8")) == []
    record = open_keyed(keyed_server, "crossref", "crossref", cache).search("lattice", limit=1)
    assert record.parameters["requests"][0]["params"]["mailto"] == "[removed]"


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_no_secret_in_error_messages(keyed_server, tmp_path, name, api):
    keyed_server.fail_next(api, 400)
    with pytest.raises(HarnessError) as caught:
        open_keyed(keyed_server, name, api, tmp_path).search("enzyme", limit=1)
    assert leaked(str(caught.value)) == []


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_no_secret_when_the_server_echoes_the_request(keyed_server, tmp_path, name, api):
    keyed_server.fail_next(api, 400, echo=True)
    with pytest.raises(HarnessError) as caught:
        open_keyed(keyed_server, name, api, tmp_path).search("enzyme", limit=1)
    message = str(caught.value)
    assert "injected fault for" in message
    if api in ("openalex", "crossref"):  # their secrets travel in the echoed query string
        assert "[removed]" in message
    assert leaked(message) == []


def test_no_secret_when_the_network_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("CROSSREF_MAILTO", MAILTO)
    source = open_source(
        "crossref", base_url="http://127.0.0.1:9", interval=0, cache=tmp_path, max_retries=0
    )
    with pytest.raises(HarnessError) as caught:
        source.search("enzyme", limit=1)
    assert leaked(str(caught.value)) == []
