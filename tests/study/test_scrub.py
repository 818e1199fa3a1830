"""No secret reaches the manifest, whatever a command line or a server reply carries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.study.manifest import record_command, record_section
from harness.study.manifest_sections import Section
from harness.study.scrub import scrub, scrub_url


def test_urls_lose_credentials_and_key_parameters() -> None:
    assert (
        scrub_url("http://user:pw@host:8080/v1?api_key=abc&q=x")
        == "http://host:8080/v1?api_key=***&q=x"
    )
    assert (
        scrub_url("https://api.openalex.org/works?search=a+b&author=c")
        == "https://api.openalex.org/works?search=a+b&author=c"
    )  # no credential: unchanged


def test_manifest_never_holds_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")
    monkeypatch.setenv("SEMANTIC_SCHOLAR_API_KEY", "s2-secret-value-42")
    monkeypatch.setattr(
        sys,
        "argv",
        ["harness", "judge", "--auto", "--base-url", "http://alice:hunter22@llm.example/v1"],
    )
    record_command(
        tmp_path,
        "judge",
        {
            "echo": "server said sk-live-0123456789abcdef",
            "nested": [{"url": "http://h/x?token=t0k3n&a=1"}],
        },
    )
    record_section(
        tmp_path, "search", Section.from_record({"reply": "x-api-key: s2-secret-value-42"})
    )
    text = (tmp_path / "manifest.json").read_text()
    for secret in ("sk-live-0123456789abcdef", "s2-secret-value-42", "hunter22", "alice", "t0k3n"):
        assert secret not in text
    data = json.loads(text)
    assert data["commands"][0]["argv"][-1] == "http://llm.example/v1"
    assert scrub({"n": 3, "ok": True}) == {"n": 3, "ok": True}


def test_echoed_keys_reach_neither_the_literature_cache_nor_the_search_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import astuple
    from types import SimpleNamespace

    from harness.judge.automated.review_records import search_record
    from harness.literature.cache import CachedResponse, ResponseCache

    key = "oa-key-0123456789"
    monkeypatch.setenv("OPENALEX_API_KEY", key)
    cache = ResponseCache("openalex", tmp_path / "cache")
    echoed = f'{{"meta": {{"api_key": "{key}"}}, "results": []}}'
    cache.put(
        "k1",
        {"url": f"https://api.openalex.org/works?api_key={key}&search=a+b"},
        CachedResponse(200, "application/json", echoed, "2026-12-02T00:00:00Z"),
    )
    files = list((tmp_path / "cache").rglob("*.json"))
    assert files and all(key not in f.read_text() for f in files)
    assert "search=a+b" in files[0].read_text()  # the rest of the URL is kept as it was
    record = SimpleNamespace(
        database="openalex",
        interface="api",
        query="predictive coding",
        parameters={"api_key": key, "search": "predictive coding"},
        filters={"to": "2024"},
        run_at="2026-12-02T00:00:00Z",
        total_hits=1,
        dedup_key="d",
        hits_json=lambda: f'[{{"id": "W1", "title": "echo {key}"}}]',
    )
    stored = search_record(record, [], "I-1", "auto")
    assert all(key not in str(v) for v in astuple(stored))
    assert "predictive coding" in stored.query
