"""The `retrieval-hybrid` reviewer: a hit scored by the mean of its lexical match and its cosine
similarity, over a deeper list of densely re-ranked hits; wired through the roster, the
calibration defaults and `judge --auto`. A bag-of-words embedding stands in for the MiniLM model
(the real one is in the slow test of test_automated.py)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness.judge.automated.auto_review import run_automated
from harness.judge.routing.roster import Reviewer
from harness.literature.base import Hit
from harness.literature.defaults import HYBRID_LIMIT, HYBRID_THRESHOLD
from harness.literature.review_methods import METHODS
from harness.literature.reviewers import hybrid_match, lexical_match
from harness.literature.text import tokenize
from tests.literature.conftest import CORPUS, write_jsonl
from tests.literature.study import build_study

MATCHING = {"I-0000000000": "w1", "I-0000000001": "w3", "I-0000000002": "w5"}


def fake_encode(texts: list[str]) -> np.ndarray:
    """Unit vectors of hashed word stems: texts sharing words have a positive cosine."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in tokenize(text):
            out[row, hashlib.sha256(word.encode()).digest()[0] % 64] += 1.0
        norm = np.linalg.norm(out[row])
        out[row] /= norm if norm else 1.0
    return out


@pytest.fixture
def embedded(monkeypatch):
    monkeypatch.setattr("harness.literature.embedding.encode", fake_encode)


@pytest.fixture
def corpus(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


def test_the_method_is_known_to_the_roster_and_to_calibration() -> None:
    assert "retrieval-hybrid" in METHODS
    Reviewer(id="adj", kind="automated", method="retrieval-hybrid", capacity=10)
    assert METHODS["retrieval-hybrid"].default_threshold == HYBRID_THRESHOLD
    default = {name: m.default_threshold for name, m in METHODS.items()}
    assert default["retrieval"] < HYBRID_THRESHOLD < default["retrieval-dense"]
    assert "mean" in METHODS["retrieval-hybrid"].rule


def test_a_hit_scores_the_mean_of_its_two_matches(embedded) -> None:
    combination = "Combines predictive coding with river sediment transport."
    hits = [
        Hit(id=r["id"], doi=None, title=r["title"], year=r["year"], abstract=r["abstract"], rank=n)
        for n, r in enumerate(CORPUS[:4], start=1)
    ]
    cosines = fake_encode([combination, *[h.text() for h in hits]])
    expected = [
        (lexical_match(combination, h) + float(cosines[0] @ v)) / 2
        for h, v in zip(hits, cosines[1:], strict=True)
    ]
    assert hybrid_match(combination, hits) == pytest.approx(expected)
    assert hybrid_match(combination, []) == []


def test_judge_auto_runs_the_hybrid_reviewer(tmp_path, corpus, embedded) -> None:
    study = build_study(tmp_path / "s", [("lex", "retrieval"), ("hyb", "retrieval-hybrid")])
    summary = run_automated(study, sources=[f"local:{corpus}"]).set_index("reviewer_id")
    row = summary.loc["hyb"]
    assert (row["method"], row["threshold"], row["reviewed"]) == (
        "retrieval-hybrid",
        HYBRID_THRESHOLD,
        6,
    )
    got = {r["item_id"]: r for r in study.rows("SELECT * FROM reviews WHERE reviewer_id = 'hyb'")}
    for item_id, work_id in MATCHING.items():  # the works the combinations restate
        assert got[item_id]["verdict"] == "published"
        assert f"[{work_id}]" in got[item_id]["prior_work"]
    notes = json.loads(got["I-0000000000"]["notes"])
    assert notes["reviewer"] == "retrieval-hybrid" and "mean of" in notes["match"]
    assert notes["threshold"] == HYBRID_THRESHOLD
    searches = study.rows("SELECT filters, parameters FROM searches WHERE reviewer_id = 'hyb'")
    assert searches and all(json.loads(s["filters"])["limit"] == HYBRID_LIMIT for s in searches)
    assert all(json.loads(s["parameters"])["dense"] for s in searches)  # re-ranked densely
    lexical = study.rows("SELECT filters FROM searches WHERE reviewer_id = 'lex'")
    assert all(json.loads(s["filters"])["limit"] == 10 for s in lexical)
    study.close()
