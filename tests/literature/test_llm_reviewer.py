"""The `llm:MODEL` reviewer: reply parsing, the search loop, citation checks, the real model."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import pytest

from harness.errors import HarnessError
from harness.literature import open_source
from harness.literature.llm_reviewer import LlmReviewer, parse_reply
from harness.models.base import ChatRequest, Completion, GenerationParams, ModelAPI
from tests.literature.conftest import CORPUS, write_jsonl

IDEA = "Core combination: predictive coding with river sediment transport.\n\nForecast beds."


class Replies(ModelAPI):
    """A backend that answers with the next scripted reply and keeps every conversation."""

    name = "scripted"
    model = "scripted-reviewer"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.conversations: list[list[dict[str, str]]] = []

    def complete(
        self, requests: Sequence[ChatRequest], params: GenerationParams
    ) -> Iterator[Completion]:
        for request in requests:
            self.conversations.append(list(request.messages))
            yield Completion(
                key=request.key,
                sample=0,
                text=self.replies.pop(0),
                finish_reason="stop",
                prompt_tokens=1,
                completion_tokens=1,
                model_reported=self.model,
                system_fingerprint=None,
                latency_s=0.0,
                attempts=1,
                error=None,
                started_at="2026-01-01T00:00:00Z",
                finished_at="2026-01-01T00:00:00Z",
                cost_usd=None,
            )


@pytest.fixture
def local(tmp_path):
    return open_source("local", corpus=write_jsonl(tmp_path / "w.jsonl", [dict(r) for r in CORPUS]))


@pytest.mark.parametrize(
    ("reply", "kind", "value"),
    [
        ("SEARCH: predictive coding sediment", "search", "predictive coding sediment"),
        ('search: "sediment transport"\nthanks', "search", "sediment transport"),
        ("VERDICT: published [2] CONFIDENCE: 4", "verdict", ("published", 2, 4)),
        ("Verdict: **not published**", "verdict", ("not_published", None, None)),
        ("VERDICT: not_published", "verdict", ("not_published", None, None)),
        ("VERDICT: unsure, hit #3 is close", "verdict", ("unsure", 3, None)),
        ("I think this is novel.", "invalid", None),
        ("SEARCH:", "invalid", None),
    ],
)
def test_parse_reply(reply, kind, value):
    action = parse_reply(reply)
    assert action.kind == kind
    if kind == "search":
        assert action.query == value
    if kind == "verdict":
        assert (action.verdict, action.cited, action.confidence) == value


def test_search_then_cite_a_shown_hit(local):
    backend = Replies(
        "SEARCH: predictive coding sediment transport", "VERDICT: published [1]\nCONFIDENCE: 5"
    )
    decision = LlmReviewer(backend, [local], max_queries=2).review(IDEA)
    assert decision.verdict == "published" and decision.confidence == 5
    assert decision.prior_work.startswith("Predictive coding models of river sediment transport")
    assert [s.record.query for s in decision.searches] == ["predictive coding sediment transport"]
    assert decision.searches[0].relevant == ["w1"]
    shown = backend.conversations[1][-1]["content"]  # the hits the model read
    assert "[1] Predictive coding models of river sediment transport (2019)" in shown
    assert decision.notes["replies"][-1].startswith("VERDICT: published")
    assert backend.conversations[0][0]["role"] == "system"


def test_published_citing_nothing_retrieved_becomes_unsure(local):
    backend = Replies("SEARCH: enzyme queueing", "VERDICT: published [9]")
    decision = LlmReviewer(backend, [local]).review(IDEA)
    assert decision.verdict == "unsure" and decision.prior_work is None
    assert "cited no retrieved work" in decision.notes["rejected"]
    assert decision.searches[0].relevant == []


def test_a_verdict_before_any_search_is_sent_back(local):
    backend = Replies("VERDICT: not_published", "SEARCH: sediment", "VERDICT: not_published")
    decision = LlmReviewer(backend, [local]).review(IDEA)
    assert decision.verdict == "not_published" and len(decision.searches) == 1
    assert "Search first" in backend.conversations[1][-1]["content"]


def test_queries_stop_at_the_limit_and_a_verdict_is_demanded(local):
    backend = Replies(
        "SEARCH: sediment", "SEARCH: enzyme", "SEARCH: crystal", "VERDICT: not_published"
    )
    decision = LlmReviewer(backend, [local], max_queries=2).review(IDEA)
    assert [s.record.query for s in decision.searches] == ["sediment", "enzyme"]
    assert "No searches left" in backend.conversations[2][-1]["content"]
    assert decision.verdict == "not_published"


def test_no_valid_reply_after_a_reminder_is_unsure(local):
    backend = Replies("Hmm.", "Still thinking.")
    decision = LlmReviewer(backend, [local]).review(IDEA)
    assert decision.verdict == "unsure" and decision.searches == []
    assert "no valid verdict" in decision.notes["rejected"]


def test_llm_reviewer_runs_through_run_automated(tmp_path, monkeypatch):
    from harness.judge.automated import auto_review
    from tests.literature.study import build_study

    corpus = write_jsonl(tmp_path / "w.jsonl", [dict(r) for r in CORPUS])
    script = Replies(*["SEARCH: sediment transport", "VERDICT: published [1]"] * 6)
    monkeypatch.setattr("harness.models.open_backend", lambda *a, **kw: script)
    study = build_study(tmp_path / "s", [("bot", "llm:openai/scripted-reviewer")])
    summary = auto_review.run_automated(study, sources=[f"local:{corpus}"])
    assert summary.loc[0, "reviewed"] == 6 and summary.loc[0, "published"] == 6
    first_prompt = script.conversations[0][1]["content"]
    assert "Core combination: Combines predictive coding" in first_prompt
    assert "wombatprompt" not in json.dumps(script.conversations)
    assert study.count("searches", "reviewer_id = 'bot'") == 6
    study.close()


def test_llm_reviewer_reaches_the_given_server(tmp_path, monkeypatch):
    """`base_url` and `concurrency` reach the openai backend of `llm:MODEL` reviewers."""
    import harness.models
    from harness.judge.automated.auto_review import run_automated
    from harness.study.manifest import read_manifest
    from tests.literature.study import build_study
    from tests.servers.openai_server import OpenAIServer, review_protocol

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    real, opened = harness.models.open_backend, []
    monkeypatch.setattr(
        harness.models, "open_backend", lambda *a, **kw: opened.append(real(*a, **kw)) or opened[-1]
    )
    corpus = write_jsonl(tmp_path / "w.jsonl", [dict(r) for r in CORPUS])
    study = build_study(tmp_path / "s", [("bot", "llm:test-model")])
    with OpenAIServer(reply_text=review_protocol) as server:
        summary = run_automated(
            study,
            sources=[f"local:{corpus}"],
            backend="openai",
            base_url=server.base_url,
            concurrency=2,
        )
        models = {body["model"] for body in server.log.chat_bodies}
    assert summary.loc[0, "reviewed"] == 6 and models == {"test-model"}
    assert [b.concurrency for b in opened] == [2]
    run = [
        c for c in read_manifest(study.path).record()["commands"] if c["stage"] == "judge --auto"
    ]
    assert run[-1]["params"]["base_url"] == server.base_url
    with pytest.raises(HarnessError, match="--base-url applies to the openai backend only"):
        run_automated(study, base_url=server.base_url, backend="local")
    study.close()


@pytest.mark.slow
def test_embedded_model_reviews_end_to_end(tmp_path):
    from harness.judge.automated.auto_review import run_automated
    from tests.literature.study import build_study

    corpus = write_jsonl(tmp_path / "w.jsonl", [dict(r) for r in CORPUS])
    study = build_study(tmp_path / "s", [("smol", "llm:embedded")])
    with study.transaction() as conn:  # one item keeps the real model's run short
        conn.execute("DELETE FROM assignments WHERE item_id != 'I-0000000000'")
    # a 135M model often breaks the reply protocol: accepted, so its review is kept whatever it is
    summary = run_automated(
        study, sources=[f"local:{corpus}"], max_queries=1, accept_unsure=["smol"]
    )
    assert summary.loc[0, "reviewed"] == 1
    for review in study.rows("SELECT * FROM reviews"):
        assert review["verdict"] in ("published", "not_published", "unsure")
        notes = json.loads(review["notes"])
        assert notes["model"] == "SmolLM2-135M-Instruct" or notes["backend"] == "local"
        assert notes["replies"]
        if review["verdict"] == "published":  # only with a citation of a retrieved hit
            assert review["prior_work"] and "[w" in review["prior_work"]
    for search in study.rows("SELECT * FROM searches"):
        assert search["reviewer_id"] == "smol" and search["query"]
    study.close()
