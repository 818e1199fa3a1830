"""OpenAlex, Semantic Scholar, arXiv and Crossref via their wire formats on a loopback server."""

from __future__ import annotations

import json

import pytest

from harness.errors import HarnessError
from harness.literature import open_source
from harness.literature.arxiv import arxiv_query
from tests.literature.conftest import REMOTE

# Filler works 0..19 all mention "lattice signal"; W5 ("crystal lattice") mentions lattice only.
FILLER = 20


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_paging_collects_hits_across_pages(remote, server, name, api):
    record = remote(name, api).search("lattice signal", limit=5)
    assert [h.rank for h in record.hits] == [1, 2, 3, 4, 5]
    assert len({h.id for h in record.hits}) == 5
    assert all(h.title.startswith("Filler study") and h.doi and h.year for h in record.hits)
    assert record.total_hits == (FILLER if api == "arxiv" else FILLER + 1)  # arXiv ANDs terms
    sent = record.parameters["requests"]
    assert len(sent) == 3 == server.count(api)  # pages of 2, 2 and 1
    assert [r["from_cache"] for r in sent] == [False, False, False]
    assert record.database == open_source(name).database
    assert record.interface.startswith(record.database)


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_later_pages_continue_where_the_server_left_off(remote, server, name, api):
    remote(name, api).search("lattice signal", limit=5)
    pages = [a.params for a in server.arrivals(api)]
    if api == "openalex":
        assert pages[0]["cursor"] == "*" and pages[1]["cursor"] != "*"
    else:
        key = {"s2": "offset", "arxiv": "start", "crossref": "offset"}[api]
        assert [p[key] for p in pages] == ["0", "2", "4"]


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_cutoff_travels_to_the_server_and_is_recorded(remote, server, name, api):
    record = remote(name, api).search("lattice signal", limit=30, cutoff="2009-12-31")
    assert record.hits and all(h.year <= 2009 for h in record.hits)
    assert record.total_hits == len(record.hits) == 10  # filler works of 2000-2009
    assert record.filters["cutoff"] == "2009-12-31"
    assert "2009" in record.filters["applied_as"].replace("-", "")
    assert "2009" in server.arrivals(api)[0].raw_query.replace("-", "").replace("%2D", "")


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_second_identical_query_is_answered_from_the_cache(remote, server, name, api):
    source = remote(name, api)
    first = source.search("lattice signal", limit=3)
    count = server.count(api)
    second = source.search("lattice signal", limit=3)
    assert server.count(api) == count  # no request reached the server
    assert [h.id for h in second.hits] == [h.id for h in first.hits]
    assert all(r["from_cache"] for r in second.parameters["requests"])
    assert second.run_at == first.run_at  # when the database was searched
    assert second.dedup_key == first.dedup_key
    source.search("lattice", limit=3)  # another query goes to the server
    assert server.count(api) > count


def test_a_damaged_cache_entry_is_fetched_again(remote, server, tmp_path):
    source = remote("crossref", "crossref")
    source.search("enzyme", limit=1)
    [entry] = [p for p in (tmp_path / "cache").rglob("*.json")]
    entry.write_text("{truncated", encoding="utf-8")
    record = source.search("enzyme", limit=1)
    assert server.count("crossref") == 2 and record.total_hits == 1
    assert json.loads(entry.read_text(encoding="utf-8"))["status"] == 200


def test_without_cache_every_search_asks_the_server(remote, server):
    source = remote("openalex", "openalex", cache=False)
    source.search("enzyme", limit=1)
    source.search("enzyme", limit=1)
    assert server.count("openalex") == 2


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_429_waits_as_long_as_retry_after_asks(remote, server, name, api):
    server.fail_next(api, 429, retry_after="0.3")
    record = remote(name, api).search("enzyme", limit=1)
    assert record.hits[0].title == "Enzyme kinetics as queueing networks"
    first, second = server.arrivals(api)
    assert second.at - first.at >= 0.3 - 0.02


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_503_without_retry_after_backs_off_and_retries(remote, server, name, api):
    server.fail_next(api, 503, times=2)
    record = remote(name, api, backoff=0.05).search("enzyme", limit=1)
    assert record.total_hits == 1
    times = [a.at for a in server.arrivals(api)]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.05 - 0.01 and times[2] - times[1] >= 0.10 - 0.01


def test_gives_up_after_the_retry_budget(remote, server):
    server.fail_next("crossref", 429, retry_after="0", times=3)
    with pytest.raises(HarnessError, match="HTTP 429"):
        remote("crossref", "crossref", max_retries=2).search("enzyme", limit=1)
    assert server.count("crossref") == 3


def test_a_long_retry_after_fails_at_once_with_the_reason(remote, server):
    server.fail_next("s2", 429, retry_after="86400")
    with pytest.raises(HarnessError, match="wait 86400 s"):
        remote("semanticscholar", "s2").search("enzyme", limit=1)
    assert server.count("s2") == 1


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_error_bodies_are_read_in_each_format(remote, server, name, api):
    server.fail_next(api, 400)
    with pytest.raises(HarnessError) as caught:
        remote(name, api).search("enzyme", limit=1)
    assert "HTTP 400" in str(caught.value) and "injected fault" in str(caught.value)
    assert server.count(api) == 1  # client errors are not retried


@pytest.mark.parametrize(("name", "api"), REMOTE)
def test_requests_are_spaced_as_configured_measured_at_the_server(remote, server, name, api):
    source = remote(name, api, interval=0.2, cache=False)
    for query in ("enzyme", "lattice", "auction", "sediment"):
        source.search(query, limit=1)
    times = [a.at for a in server.arrivals(api)]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(gaps) == 3 and min(gaps) >= 0.2 - 0.01


def test_sources_on_one_endpoint_share_the_spacing(remote, server):
    one = remote("arxiv", "arxiv", interval=0.15, cache=False)
    two = remote("arxiv", "arxiv", interval=0.15, cache=False)
    for source in (one, two, one, two):
        source.search("enzyme", limit=1)
    times = [a.at for a in server.arrivals("arxiv")]
    assert min(b - a for a, b in zip(times, times[1:], strict=False)) >= 0.15 - 0.01


def test_base_url_comes_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("HARNESS_CROSSREF_URL", server.base("crossref"))
    monkeypatch.setenv("HARNESS_CROSSREF_INTERVAL", "0")
    with open_source("crossref") as source:
        assert source.interval == 0
        record = source.search("auction spectrum", limit=2)
    assert record.hits[0].doi == "10.5555/test.3"
    assert server.count("crossref") == 1


def test_openalex_abstract_is_rebuilt_from_the_inverted_index(remote):
    hit = remote("openalex", "openalex").search("enzyme", limit=1).hits[0]
    assert hit.abstract == "Michaelis-Menten kinetics read as queues."
    assert "abstract" not in hit.model_dump()  # abstracts are read, never stored


def test_unreachable_server_is_a_clear_error():
    source = open_source(
        "openalex",
        base_url="http://127.0.0.1:9",
        interval=0,
        cache=False,
        max_retries=1,
        backoff=0.01,
    )
    with pytest.raises(HarnessError, match="no answer from http://127.0.0.1:9/works"):
        source.search("enzyme", limit=1)


def test_arxiv_free_text_becomes_field_terms():
    assert (
        arxiv_query('predictive coding "sediment transport"')
        == 'all:predictive AND all:coding AND all:"sediment transport"'
    )
    assert arxiv_query("ti:attention AND abs:entropy") == "ti:attention AND abs:entropy"


def test_arxiv_error_entry_in_a_200_feed_is_an_error():
    from harness.literature.arxiv import _parse_feed
    from tests.servers.literature_server import _error

    _, _, body = _error("arxiv", 200, "incorrect id format for 1234.12345")
    with pytest.raises(HarnessError, match="arXiv: error from .*incorrect id format"):
        _parse_feed(body, "http://127.0.0.1/api/query")


def test_bad_arguments_are_user_errors(remote):
    source = remote("openalex", "openalex")
    with pytest.raises(HarnessError, match="cut-off"):
        source.search("enzyme", cutoff="last year")
    with pytest.raises(HarnessError, match="limit"):
        source.search("enzyme", limit=0)
    with pytest.raises(HarnessError, match="unknown literature source"):
        open_source("scopus")
