"""No secret reaches the manifest, whatever a command line or a server reply carries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.study.manifest import record_command, record_section
from harness.study.scrub import scrub, scrub_url


def test_urls_lose_credentials_and_key_parameters() -> None:
    assert scrub_url("http://user:pw@host:8080/v1?api_key=abc&q=x") == \
        "http://host:8080/v1?api_key=***&q=x"
    assert scrub_url("https://api.openalex.org/works?search=a+b&author=c") == \
        "https://api.openalex.org/works?search=a+b&author=c"  # no credential: unchanged


def test_manifest_never_holds_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-0123456789abcdef")
    monkeypatch.setenv("SEMANTIC_SCHOLAR_API_KEY", "s2-secret-value-42")
    monkeypatch.setattr(sys, "argv", ["harness", "judge", "--auto", "--base-url",
                                      "http://alice:hunter22@llm.example/v1"])
    record_command(tmp_path, "judge", {"echo": "server said sk-live-0123456789abcdef",
                                       "nested": [{"url": "http://h/x?token=t0k3n&a=1"}]})
    record_section(tmp_path, "search", {"reply": "x-api-key: s2-secret-value-42"})
    text = (tmp_path / "manifest.json").read_text()
    for secret in ("sk-live-0123456789abcdef", "s2-secret-value-42", "hunter22", "alice",
                   "t0k3n"):
        assert secret not in text
    data = json.loads(text)
    assert data["commands"][0]["argv"][-1] == "http://llm.example/v1"
    assert scrub({"n": 3, "ok": True}) == {"n": 3, "ok": True}
