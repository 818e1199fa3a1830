"""`harness search`: hits as a table, the record as JSON, user errors as one line."""

from __future__ import annotations

import json

import pytest

from tests.cli_run import run_cli as run
from tests.literature.conftest import CORPUS, write_jsonl


@pytest.fixture
def corpus(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


def test_prints_hits_as_a_table(capsys, corpus):
    code, out, _ = run(
        capsys, "search", "sediment transport rivers", "--corpus", str(corpus), "--limit", "2"
    )
    assert code == 0
    assert "Local corpus works.jsonl: sediment transport rivers" in out
    assert "Sediment transport in braided rivers" in out and "10.1/w1" in out
    assert "total hits 2; shown 2; cut-off none" in out


def test_json_output_is_the_search_record(capsys, corpus):
    code, out, _ = run(
        capsys, "search", "enzyme", "--corpus", str(corpus), "--json", "--cutoff", "2022-01-01"
    )
    record = json.loads(out)
    assert code == 0 and record["hits"][0]["id"] == "w3"
    assert record["filters"]["cutoff"] == "2022-01-01" and len(record["dedup_key"]) == 64


def test_remote_source_through_the_environment(capsys, server, monkeypatch):
    monkeypatch.setenv("HARNESS_ARXIV_URL", server.base("arxiv"))
    monkeypatch.setenv("HARNESS_ARXIV_INTERVAL", "0")
    code, out, _ = run(capsys, "search", "enzyme kinetics", "--source", "arxiv")
    assert code == 0 and "Enzyme kinetics as queueing networks" in out
    assert "arXiv: all:enzyme AND all:kinetics" in out
    assert server.count("arxiv") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("search", "x", "--source", "scopus"), "unknown literature source 'scopus'"),
        (("search", "x", "--source", "openalex", "--corpus", "c.jsonl"), "--source local only"),
        (("search", "x", "--corpus", "missing.jsonl"), "missing.jsonl: corpus not found"),
        (("search", "  "), "the query is empty"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_cutoff_is_a_usage_error_before_any_search(capsys):
    code, out, err = run(capsys, "search", "x", "--cutoff", "soon")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        "error: --cutoff: 'soon' is not a date (use YYYY-MM-DD or YYYY)"
    ]


@pytest.mark.parametrize(
    ("status", "retry_after", "code"),
    [
        (503, "99999", 1),  # the server cannot answer now: failed work, try again later
        (400, None, 2),  # the server refuses the query itself: an input error
    ],
)
def test_a_failing_server_exits_1_and_a_refused_query_2(
    capsys, server, monkeypatch, status, retry_after, code
):
    monkeypatch.setenv("HARNESS_ARXIV_URL", server.base("arxiv"))
    monkeypatch.setenv("HARNESS_ARXIV_INTERVAL", "0")
    server.fail_next("arxiv", status, retry_after=retry_after)
    got, out, err = run(capsys, "search", "enzyme kinetics", "--source", "arxiv")
    assert got == code and f"HTTP {status}" in err
    assert err.count("\n") == 1 and "Traceback" not in err
