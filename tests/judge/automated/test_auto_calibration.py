"""Calibration of automated reviewers on the calibration split of controls, and its lock."""

from __future__ import annotations

import json
import logging

import pytest

from harness.errors import HarnessError
from harness.judge.automated.auto_calibration import stored_rule
from harness.judge.automated.auto_review import calibrate_automated, run_automated
from harness.literature.reviewers import RetrievalReviewer
from harness.models.base import ModelAPI
from harness.study.manifest import read_manifest
from tests.judge.calibration_study import (
    CALIBRATED,
    CALIBRATION,
    HELD_OUT,
    REAL_TEXTS,
    add_controls,
    controls_study,
    texts,
)
from tests.literature.conftest import CORPUS, write_jsonl


@pytest.fixture
def corpus(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


@pytest.fixture
def study(tmp_path):
    opened = controls_study(tmp_path / "study")
    yield opened
    opened.close()


@pytest.fixture
def seen(monkeypatch):
    """Every text a retrieval reviewer is asked about, in order."""
    asked: list[str] = []
    assess = RetrievalReviewer.assess

    def recording(self, text, stop_at=None):
        asked.append(text)
        return assess(self, text, stop_at)

    monkeypatch.setattr(RetrievalReviewer, "assess", recording)
    return asked


def verdicts(study, reviewer_id="lex"):
    return {
        r["item_id"]: r["verdict"]
        for r in study.rows(
            "SELECT item_id, verdict FROM reviews WHERE reviewer_id = ?", (reviewer_id,)
        )
    }


def test_calibration_never_sees_held_out_controls_or_real_items(study, corpus, seen):
    calibrate_automated(study, sources=[f"local:{corpus}"])
    assert sorted(seen) == sorted(texts(CALIBRATION))
    assert not set(seen) & (texts(HELD_OUT) | REAL_TEXTS)
    # only calibration items were reviewed, each once
    assert set(verdicts(study)) == {f"I-{c}" for c, _, _ in CALIBRATION}


def test_auto_calibrates_before_it_reviews_anything_else(tmp_path, corpus, seen):
    study = controls_study(tmp_path / "s")
    run_automated(study, sources=[f"local:{corpus}"])
    n = len(CALIBRATION)
    assert sorted(seen[:n]) == sorted(texts(CALIBRATION))
    # the rest: every held-out control and real item once; calibration items not again
    assert sorted(seen[n:]) == sorted(texts(HELD_OUT) | REAL_TEXTS)
    study.close()


def test_calibrated_threshold_is_stored_recorded_and_used(study, corpus):
    run_automated(study, sources=[f"local:{corpus}"])
    rule = stored_rule(study, "lex")
    assert (rule.status, rule.threshold, rule.default_threshold) == ("calibrated", CALIBRATED, 0.6)
    assert (rule.youden, rule.sensitivity, rule.specificity) == (1.0, 1.0, 1.0)
    assert rule.youden_default == pytest.approx(2 / 3)
    assert (rule.n_published, rule.n_not_published, rule.unsure) == (3, 2, "not_novel")
    assert {item for item, _ in rule.scores} == {f"I-{c}" for c, _, _ in CALIBRATION}
    entry = read_manifest(study.path).record()["calibration"]["lex"]
    assert entry["threshold"] == CALIBRATED and entry["status"] == "calibrated"
    assert "match score" in entry["rule"] and entry["settings"]["max_queries"] == 3
    # H-pub-1 scores 0.57: published under the calibrated 0.5, not under the default 0.6
    got = verdicts(study)
    assert got["I-H-pub-1"] == "published" and got["I-H-unp-1"] == "not_published"
    note = json.loads(study.rows("SELECT notes FROM reviews WHERE item_id = 'I-H-pub-1'")[0][0])
    assert note["threshold"] == CALIBRATED
    run = read_manifest(study.path).record()["commands"][-1]
    assert run["params"]["reviewers"] == [
        {"id": "lex", "method": "retrieval", "threshold": CALIBRATED, "rule": "calibrated"}
    ]


def test_without_calibration_controls_the_default_is_used_and_recorded(tmp_path, corpus):
    study = controls_study(tmp_path / "s", calibration=False)  # every control held out
    summary = run_automated(study, sources=[f"local:{corpus}"])
    assert (summary.loc[0, "rule"], summary.loc[0, "threshold"]) == ("uncalibrated", 0.6)
    assert verdicts(study)["I-H-pub-1"] == "not_published"  # 0.57 < 0.6: the flip
    rule = stored_rule(study, "lex")
    assert rule.note == "no calibration controls in the study" and rule.youden is None
    assert read_manifest(study.path).record()["calibration"]["lex"]["status"] == "uncalibrated"
    study.close()


def test_calibration_reviews_are_the_calibration_split_only(study, corpus):
    calibrate_automated(study, sources=[f"local:{corpus}"])
    splits = study.rows(
        "SELECT DISTINCT c.split FROM reviews r JOIN items i ON i.item_id = r.item_id "
        "LEFT JOIN controls c ON c.control_id = i.control_id"
    )
    assert [s[0] for s in splits] == ["calibration"]
    searched = {r[0] for r in study.rows("SELECT DISTINCT item_id FROM searches")}
    assert searched == {f"I-{c}" for c, _, _ in CALIBRATION}  # PRISMA-S records kept
    assert all(r[0] == "automated" for r in study.rows("SELECT source FROM searches"))


def test_recalibration_replaces_until_the_rule_is_locked(study, corpus):
    source = [f"local:{corpus}"]
    calibrate_automated(study, sources=source)
    before = (study.count("reviews"), study.count("searches"))
    calibrate_automated(study, sources=source, max_queries=2)  # not locked: replaced
    assert study.count("reviews") == before[0] and study.count("searches") <= before[1]
    assert stored_rule(study, "lex").settings["max_queries"] == 2
    run_automated(study, sources=source, max_queries=2)  # reviews real items: locked
    locked = stored_rule(study, "lex")
    add_controls(
        study,
        [("C-unp-3", "Auction theory for spectrum allocation in coral reefs", "not_published")],
        "calibration",
        ["lex"],
    )
    frame, lines = calibrate_automated(study, sources=source, max_queries=2)
    assert "locked after" in lines[0] and frame.loc[0, "threshold"] == locked.threshold
    assert stored_rule(study, "lex") == locked
    with pytest.raises(HarnessError, match="locked; this run asks for threshold 0.7"):
        run_automated(study, sources=source, max_queries=2, threshold=0.7)
    with pytest.raises(HarnessError, match="max_queries 3 \\(locked: 2\\)"):
        run_automated(study, sources=source)
    with pytest.raises(HarnessError, match="locked"):
        calibrate_automated(study, sources=source)  # other settings, locked


def test_auto_under_other_settings_says_it_decides_the_rule_again(study, corpus, caplog):
    """`judge --auto` with options other than `judge --calibrate`'s calibrates again (nothing is
    locked yet), and says so with the settings that differ; with the same options it is silent."""
    source = [f"local:{corpus}"]
    calibrate_automated(study, sources=source)
    with caplog.at_level(logging.WARNING, logger="harness"):
        run_automated(study, sources=source, max_queries=2)
    said = [r.getMessage() for r in caplog.records if "decided again" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("lex: its calibrated decision rule of ")
    assert "max_queries 3 -> 2" in said[0]
    assert stored_rule(study, "lex").settings["max_queries"] == 2
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="harness"):
        run_automated(study, sources=source, max_queries=2)
    assert "decided again" not in caplog.text


def test_a_user_threshold_is_fixed_and_replaces_calibration_reviews(study, corpus):
    calibrate_automated(study, sources=[f"local:{corpus}"])
    summary = run_automated(study, sources=[f"local:{corpus}"], threshold=0.55)
    assert (summary.loc[0, "rule"], summary.loc[0, "threshold"]) == ("fixed", 0.55)
    got = verdicts(study)
    assert len(got) == len(CALIBRATION) + len(HELD_OUT) + len(REAL_TEXTS)
    assert got["I-C-pub-3"] == "not_published"  # 0.5 < 0.55, reviewed again
    assert stored_rule(study, "lex").note == "threshold set by the user"


class ByItem(ModelAPI):
    """A model backend that searches once, then answers by the item it was shown."""

    name, model = "scripted", "scripted-reviewer"
    #: statement start -> verdict line (published controls are claimed with confidence 4,
    #: unpublished calibration controls with confidence 2)
    ANSWERS = {
        "Predictive": "published [1] CONFIDENCE: 4",
        "Enzyme": "published [1] CONFIDENCE: 4",
        "Auction theory for spectrum allocation in coral": "published [1] CONFIDENCE: 4",
        "Origami": "published [1] CONFIDENCE: 2",
        "Sediment": "published [1] CONFIDENCE: 2",
        "Auction theory for spectrum allocation in desert": "published [1] CONFIDENCE: 5",
        "Jazz": "published [1] CONFIDENCE: 3",
    }

    def __init__(self) -> None:
        self.items: list[str] = []

    def complete(self, requests, params):
        from harness.models.base import Completion

        for request in requests:
            item = request.messages[1]["content"].split("Core combination: ", 1)[-1]
            if len(request.messages) == 2:
                self.items.append(item)
                text = "SEARCH: sediment transport"
            else:
                found = [v for k, v in self.ANSWERS.items() if item.startswith(k)]
                text = f"VERDICT: {found[0] if found else 'not_published'}"
            yield Completion(
                key=request.key,
                sample=0,
                text=text,
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


def test_llm_reviewer_is_calibrated_on_its_stated_confidence(tmp_path, corpus, monkeypatch):
    model = ByItem()
    monkeypatch.setattr("harness.models.open_backend", lambda *a, **kw: model)
    study = controls_study(tmp_path / "s", [("bot", "llm:openai/scripted-reviewer")])
    calibrate_automated(study, sources=[f"local:{corpus}"])
    assert {i.split("\n")[0].rstrip(".") for i in model.items} == texts(CALIBRATION)
    rule = stored_rule(study, "bot")
    # every calibration control is claimed published: J 0 at the default (accept all);
    # requiring confidence 4 separates them
    assert (rule.status, rule.threshold, rule.default_threshold) == ("calibrated", 4.0, 0.0)
    assert (rule.youden, rule.youden_default) == (1.0, 0.0)
    assert "stated confidence" in read_manifest(study.path).record()["calibration"]["bot"]["rule"]
    calls = len(model.items) * 2  # a search, then a verdict, per item
    run_automated(study, sources=[f"local:{corpus}"])
    got = verdicts(study, "bot")
    assert got["I-H-pub-1"] == "published" and got["I-H-unp-1"] == "not_published"
    # the reviews' decoding is in the manifest under the reviewer (calibration's replies not)
    decoded = read_manifest(study.path).record()["decoding"]["judge.auto"]["bot"]
    replies = len(model.items) * 2 - calls
    assert replies > 0 and decoded["completions"] == replies == decoded["completion_tokens"]
    assert decoded["calls"] == 1 and decoded["seconds"] >= 0
    note = json.loads(study.rows("SELECT notes FROM reviews WHERE item_id = 'I-H-unp-1'")[0][0])
    assert "below the calibrated minimum 4" in note["rule"]
    assert study.count("searches", "item_id = 'I-H-unp-1' AND relevant_ids = '[]'") == 1
    study.close()


def test_cli_calibrate_then_auto_then_locked(tmp_path, corpus, capsys):
    from tests.cli_run import run_cli

    controls_study(tmp_path / "s").close()
    args = ("--study", str(tmp_path / "s"), "--source", f"local:{corpus}")
    code, out, _ = run_cli(capsys, "judge", "--calibrate", *args)
    assert code == 0 and f"lex: calibrated threshold {CALIBRATED:g} (default 0.6)" in out
    assert "J 1.000" in out
    code, out, _ = run_cli(capsys, "judge", "--auto", *args)
    assert code == 0 and "calibrated" in out
    code, out, _ = run_cli(capsys, "judge", "--calibrate", *args)
    assert code == 0 and "lex: locked after 8 reviews" in out
    code, _, err = run_cli(capsys, "judge", "--calibrate", "--threshold", "0.5", *args)
    assert code == 2 and "--threshold fixes the threshold" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "judge", "--auto", "--max-queries", "1", *args)
    assert code == 2 and "max_queries 1 (locked: 3)" in err


def test_reviews_made_before_rules_were_stored_lock_the_default(study, corpus, seen):
    with study.transaction() as conn:  # a review written by an earlier harness, no rule stored
        conn.execute(
            "INSERT INTO reviews (item_id, reviewer_id, verdict, source, created_at) "
            "VALUES ('I-0000000000', 'lex', 'published', 'automated', '2026-01-01')"
        )
    summary = run_automated(study, sources=[f"local:{corpus}"])
    assert (summary.loc[0, "rule"], summary.loc[0, "threshold"]) == ("uncalibrated", 0.6)
    assert stored_rule(study, "lex").note == "reviews made before decision rules were stored"
    # calibration controls were reviewed as assigned items, at the default threshold
    assert seen.count("Predictive coding models of river sediment transport") == 1
    assert verdicts(study)["I-H-pub-1"] == "not_published"
    _, lines = calibrate_automated(study, sources=[f"local:{corpus}"])
    assert "locked after" in lines[0]
