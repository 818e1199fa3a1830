"""A reviewer method added through the registry alone: a toy method defined here, registered by
`harness.literature.review_methods.register`, then read by the roster, calibrated and run by
`judge --auto` through the functions the CLI calls. Every step fails if a consumer keeps its
own list of methods instead of reading the registry."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness.judge.automated.auto_calibration import stored_rule
from harness.judge.automated.auto_review import calibrate_automated, run_automated
from harness.judge.judge_settings import AutoSettings
from harness.judge.routing.roster import Reviewer, load_roster
from harness.literature import review_methods
from harness.literature.reviewer_base import (
    Decision,
    ReviewerContext,
    ReviewerMethod,
)
from harness.literature.reviewer_base import (
    Reviewer as AutoReviewer,
)
from harness.study.manifest import read_manifest
from tests.judge.calibration_study import CALIBRATION, HELD_OUT, controls_study, texts
from tests.literature.conftest import CORPUS, write_jsonl

#: Words of the published controls: the toy's whole notion of prior work.
KNOWN = ("predictive", "enzyme", "auction")


@dataclass
class ToyAssessment:
    score: float | None
    otherwise: str = "not_published"

    def decide(self, threshold: float) -> Decision:
        published = self.score is not None and self.score >= threshold
        verdict = "published" if published else "not_published"
        return Decision(verdict, None, None, {"reviewer": "toy", "threshold": threshold}, [])


class ToyReviewer(AutoReviewer):
    """Scores 0.9 when the text names a known word, else 0.1; reads the full text."""

    reads_full_text = True

    def __init__(self, context: ReviewerContext) -> None:
        self.context = context
        self.threshold = context.threshold
        self.seen: list[str] = []

    def assess(self, text: str, stop_at: float | None = None) -> ToyAssessment:
        self.seen.append(text)
        return ToyAssessment(0.9 if any(w in text.lower() for w in KNOWN) else 0.1)


BUILT: list[ToyReviewer] = []


def build(context: ReviewerContext) -> ToyReviewer:
    BUILT.append(ToyReviewer(context))
    return BUILT[-1]


TOY = ReviewerMethod(
    name="toy",
    label="a known word in the text",
    rule="published when the toy score >= threshold",
    default_threshold=0.95,  # above every score: calibration must lower it
    build=build,
)


@pytest.fixture
def toy(monkeypatch):
    """The registry with the toy method added, restored afterwards."""
    monkeypatch.setattr(review_methods, "METHODS", dict(review_methods.METHODS))
    review_methods.register(TOY)
    BUILT.clear()
    yield TOY
    BUILT.clear()


@pytest.fixture
def corpus(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


def test_the_roster_reads_the_registry(toy, tmp_path) -> None:
    Reviewer(id="t", kind="automated", method="toy", capacity=3)
    # the message lists every registered method, the one registered last at the end
    with pytest.raises(ValueError, match=r"need method: retrieval, .*llm:MODEL.* or toy\b"):
        Reviewer(id="t", kind="automated", method="toy:extra", capacity=3)
    path = tmp_path / "roster.yaml"
    path.write_text("reviewers:\n  - {id: t, kind: automated, method: toy, capacity: 3}\n")
    assert load_roster(path).reviewers[0].method == "toy"


def test_an_unregistered_method_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="automated reviewers need method"):
        Reviewer(id="t", kind="automated", method="toy", capacity=3)


def test_the_toy_method_is_calibrated_and_reviews_end_to_end(toy, tmp_path, corpus) -> None:
    study = controls_study(tmp_path / "study", [("t", "toy")])
    settings = AutoSettings(sources=(f"local:{corpus}",), cutoff="2024-01-01")
    frame, lines = calibrate_automated(study, settings)
    assert list(frame["rule"]) == ["calibrated"], lines
    rule = stored_rule(study, "t")
    assert rule is not None
    assert (rule.method, rule.default_threshold, rule.youden) == ("toy", 0.95, 1.0)
    assert 0.1 < rule.threshold <= 0.9
    entry = read_manifest(study.path).record()["calibration"]["t"]
    assert entry["rule"] == TOY.rule  # the record's rule, as the manifest holds it

    # the build got the run's settings; the reviewer read the full text (its capability)
    (reviewer,) = BUILT
    assert reviewer.context.reviewer_id == "t" and reviewer.context.method == "toy"
    assert reviewer.context.cutoff == "2024-01-01" and reviewer.context.threshold == 0.95
    assert all(text.startswith("Core combination: ") for text in reviewer.seen)
    assert {t.split("\n\n")[0].removeprefix("Core combination: ") for t in reviewer.seen} == (
        texts(CALIBRATION)
    )

    summary = run_automated(study, AutoSettings(sources=(f"local:{corpus}",)))
    row = summary.iloc[0]
    assert (row["method"], row["rule"], row["pending"]) == ("toy", "calibrated", 0)
    verdicts = dict(study.rows("SELECT item_id, verdict FROM reviews WHERE reviewer_id = 't'"))
    assert verdicts["I-H-pub-1"] == "published" and verdicts["I-H-unp-1"] == "not_published"
    assert {f"I-{c}" for c, _, _ in HELD_OUT} <= set(verdicts)
    study.close()
