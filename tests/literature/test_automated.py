"""`run_automated` end to end on a small study: the retrieval reviewers, resuming, records."""

from __future__ import annotations

import json

import pytest

from harness.errors import HarnessError
from harness.judge.automated.auto_review import run_automated
from tests.literature.conftest import CORPUS, write_jsonl
from tests.literature.study import HIDDEN_WORDS, ITEMS, build_study

MATCHING = {"I-0000000000": "w1", "I-0000000001": "w3", "I-0000000002": "w5"}


@pytest.fixture
def corpus(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


@pytest.fixture
def study(tmp_path):
    opened = build_study(tmp_path / "study", [("lex", "retrieval")])
    yield opened
    opened.close()


def reviews(study, reviewer_id):
    return {
        r["item_id"]: dict(r)
        for r in study.rows("SELECT * FROM reviews WHERE reviewer_id = ?", (reviewer_id,))
    }


def test_retrieval_reviewer_judges_cites_and_records_every_search(study, corpus):
    summary = run_automated(study, sources=[f"local:{corpus}"])
    row = summary.set_index("reviewer_id").loc["lex"]
    assert (row["assigned"], row["reviewed"], row["new"]) == (6, 6, 6)
    assert (row["published"], row["not_published"], row["unsure"]) == (3, 3, 0)
    got = reviews(study, "lex")
    for item_id, work_id in MATCHING.items():
        assert got[item_id]["verdict"] == "published"
        assert got[item_id]["prior_work"].endswith(f"[{work_id}] via Local corpus works.jsonl")
    assert {r["source"] for r in got.values()} == {"automated"}
    nothing = json.loads(got["I-0000000003"]["notes"])
    # 1 of its 8 terms: "changes" meets w1's "riverbed change" (one Snowball stem)
    assert nothing["reviewer"] == "retrieval" and nothing["best_score"] == 0.125
    assert len(nothing["queries"]) == 3  # all broader queries were tried
    partial = json.loads(got["I-0000000004"]["notes"])  # shares "sediment transport" only
    assert 0 < partial["best_score"] < partial["threshold"] == 0.6
    assert partial["closest"]["id"] in ("w1", "w4")
    searches = study.rows("SELECT * FROM searches WHERE reviewer_id = 'lex'")
    assert {s["item_id"] for s in searches} == {f"I-{n:010d}" for n in range(6)}
    for search in searches:
        assert search["source"] == "automated" and len(search["dedup_key"]) == 64
        assert search["database"] == "Local corpus works.jsonl" and search["run_at"]
        assert json.loads(search["filters"])["limit"] == 10
        hits = json.loads(search["hits"])
        assert all(set(h) == {"id", "doi", "title", "year", "score", "rank"} for h in hits)
    cited = study.rows("SELECT relevant_ids FROM searches WHERE item_id = 'I-0000000000'")
    assert any("w1" in json.loads(r["relevant_ids"]) for r in cited)


def test_each_run_is_recorded_in_the_manifest(study, corpus):
    from harness.study.manifest import read_manifest

    run_automated(study, sources=[f"local:{corpus}"], cutoff="2024-01-01", max_queries=2)
    entry = read_manifest(study.path).record()["commands"][-1]
    assert entry["stage"] == "judge --auto"
    assert entry["params"]["cutoff"] == "2024-01-01" and entry["params"]["max_queries"] == 2
    assert entry["params"]["reviewers"] == [
        {"id": "lex", "method": "retrieval", "threshold": 0.6, "rule": "uncalibrated"}
    ]


def test_reviewers_see_only_the_item_text(study, corpus):
    run_automated(study, sources=[f"local:{corpus}"])
    for row in study.rows("SELECT query, parameters FROM searches"):
        text = (row["query"] + row["parameters"]).lower()
        assert not any(word in text for word in HIDDEN_WORDS)
    # the item without a core combination is searched by its display text
    queries = study.rows("SELECT query FROM searches WHERE item_id = 'I-0000000005'")
    assert queries[0]["query"].startswith("apply jazz improvisation")


def test_a_second_run_resumes_and_adds_nothing(study, corpus):
    run_automated(study, sources=[f"local:{corpus}"])
    before = (study.count("reviews"), study.count("searches"))
    summary = run_automated(study, sources=[f"local:{corpus}"])
    assert summary.loc[0, "new"] == 0 and summary.loc[0, "reviewed"] == 6
    assert (study.count("reviews"), study.count("searches")) == before


def test_an_interrupted_run_keeps_finished_items_only(study, corpus):
    def stop_after_two(reviewer_id, done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_automated(study, sources=[f"local:{corpus}"], progress=stop_after_two)
    assert study.count("reviews") == 2
    reviewed = {r["item_id"] for r in study.rows("SELECT item_id FROM reviews")}
    assert {r["item_id"] for r in study.rows("SELECT DISTINCT item_id FROM searches")} == reviewed
    summary = run_automated(study, sources=[f"local:{corpus}"])
    assert summary.loc[0, "new"] == 4 and study.count("reviews") == 6


def test_threshold_and_cutoff_are_the_users_to_set(study, corpus):
    run_automated(study, sources=[f"local:{corpus}"], threshold=1.01, cutoff="2020-01-01")
    assert {r["verdict"] for r in reviews(study, "lex").values()} == {"not_published"}
    filters = {r["filters"] for r in study.rows("SELECT filters FROM searches")}
    assert all(json.loads(f)["cutoff"] == "2020-01-01" for f in filters)
    hits = [h for r in study.rows("SELECT hits FROM searches") for h in json.loads(r["hits"])]
    assert hits and all(h["year"] <= 2020 for h in hits)


def test_unknown_method_and_bad_cutoff_are_user_errors(tmp_path, corpus):
    study = build_study(tmp_path / "odd", [("odd", "telepathy")])
    with pytest.raises(HarnessError, match="unknown automated method 'telepathy'"):
        run_automated(study, sources=[f"local:{corpus}"])
    with pytest.raises(HarnessError, match="cut-off"):
        run_automated(study, cutoff="yesterday")
    assert study.count("reviews") == 0
    study.close()


def test_remote_sources_leave_no_secret_in_the_study(tmp_path, monkeypatch):
    from tests.servers.literature_server import LiteratureServer

    key = "oa-STUDY-SECRET-42"
    monkeypatch.setenv("OPENALEX_API_KEY", key)
    monkeypatch.setenv("HARNESS_OPENALEX_INTERVAL", "0")
    study = build_study(tmp_path / "remote", [("lex", "retrieval")])
    with LiteratureServer(openalex_key=key) as server:
        monkeypatch.setenv("HARNESS_OPENALEX_URL", server.base("openalex"))
        run_automated(study, sources=["openalex"], max_queries=1)
        assert server.count("openalex") == len(ITEMS)
    assert study.count("searches", "database = 'OpenAlex'") == len(ITEMS)
    for table in ("reviews", "searches", "meta"):
        dump = json.dumps([list(r) for r in study.rows(f"SELECT * FROM {table}")])
        assert key not in dump
    study.close()
    for name in ("study.sqlite", "manifest.json"):
        assert key.encode() not in (tmp_path / "remote" / name).read_bytes()


@pytest.mark.slow
def test_dense_reviewer_finds_paraphrased_prior_work(tmp_path, corpus):
    study = build_study(tmp_path / "dense", [("lex", "retrieval"), ("emb", "retrieval-dense")])
    summary = run_automated(study, sources=[f"local:{corpus}"]).set_index("reviewer_id")
    assert summary.loc["emb", "reviewed"] == 6
    got = reviews(study, "emb")
    for item_id, work_id in MATCHING.items():
        assert got[item_id]["verdict"] == "published"
        assert f"[{work_id}]" in got[item_id]["prior_work"]
    assert {got[f"I-{n:010d}"]["verdict"] for n in (3, 4, 5)} == {"not_published"}
    notes = json.loads(got["I-0000000000"]["notes"])
    assert notes["reviewer"] == "retrieval-dense" and notes["best_score"] >= 0.65
    params = study.rows("SELECT parameters FROM searches WHERE reviewer_id = 'emb' LIMIT 1")
    assert json.loads(params[0]["parameters"])["dense"] is True
    study.close()


@pytest.mark.slow
def test_hybrid_reviewer_with_the_embedding_model(tmp_path, corpus):
    study = build_study(tmp_path / "hybrid", [("hyb", "retrieval-hybrid")])
    summary = run_automated(study, sources=[f"local:{corpus}"]).set_index("reviewer_id")
    assert summary.loc["hyb", "reviewed"] == 6
    got = reviews(study, "hyb")
    for item_id, work_id in MATCHING.items():
        assert got[item_id]["verdict"] == "published"
        assert f"[{work_id}]" in got[item_id]["prior_work"]
    assert {got[f"I-{n:010d}"]["verdict"] for n in (3, 4, 5)} == {"not_published"}
    notes = json.loads(got["I-0000000004"]["notes"])  # shares "sediment transport" only
    assert notes["reviewer"] == "retrieval-hybrid" and notes["best_score"] < notes["threshold"]
    study.close()


def test_a_combination_without_content_words_is_unsure(tmp_path, corpus):
    from harness.literature import open_source
    from harness.literature.reviewers import RetrievalReviewer

    reviewer = RetrievalReviewer([open_source("local", corpus=corpus)], threshold=0.6)
    decision = reviewer.review("It is what it is.")
    assert decision.verdict == "unsure" and decision.searches == []
    assert "no content words" in decision.notes["rejected"]


def test_calibration_reviews_of_unassigned_controls_leave_no_work_pending():
    """Calibration also reviews controls not assigned to a reviewer (an adjudicator's are all
    unassigned): more reviews than assignments is finished work, not a negative shortfall."""
    import pandas as pd

    from harness.judge.automated.auto_review import unfinished

    done = pd.DataFrame(
        {"reviewer_id": ["adj", "prim"], "assigned": [6, 10], "reviewed": [9, 10]}
        | {"pending": [0, 0], "failed": ["", ""]}
    )
    assert unfinished(done) is None
    left = done.assign(pending=[0, 2], reviewed=[9, 8])
    assert (unfinished(left) or "").startswith("2 of 16 assigned items are not reviewed yet")
