"""Adjudicators' control reviews: their own frame (`adjudicator_controls`), never part of the
primary reviewers' accuracy, its gate or its correction."""

from __future__ import annotations

import itertools

import numpy as np

from harness.analysis.data import adjudicator_controls, load_study, primary_controls
from harness.analysis.run import analyze
from harness.analysis.statistics.accuracy import accuracy_table, coded_controls
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.analysis.helpers import CONDITIONS, TWO_HUMANS, build_study, control_judgments

ADJ = {"ada": "human", "abe": "automated"}
ROLES = {"ada": "adjudicator", "abe": "adjudicator"}


def _study(tmp_path, name: str, *, adjudicator_controls_too: bool):
    """Primary reviewers right 80% of the time on real items and on their controls; adjudicators
    judge the drawn topics' truth, and (when asked) their own controls with the opposite of the
    expected answer, so that any of their control reviews in the primary accuracy would show."""
    rng = np.random.default_rng(5)
    topics = [f"t{t:03d}" for t in range(80)]
    sample = topics[::4]
    verdict = ("published", "not_published")
    rows = []
    for t, c in itertools.product(topics, CONDITIONS):
        truth = int(rng.random() < 0.3 + (0.2 if c == "cross" else 0.0))
        for r in TWO_HUMANS:
            rows.append((t, c, 0, r, verdict[truth if rng.random() < 0.8 else 1 - truth]))
        if t in sample:
            rows += [(t, c, 0, a, verdict[truth]) for a in ADJ]
    controls = control_judgments(30, list(TWO_HUMANS), sensitivity=0.9, specificity=0.85, seed=2)
    if adjudicator_controls_too:
        controls += control_judgments(12, ["ada"], sensitivity=0.0, specificity=0.0, seed=3)
        # 'abe' is automated: its first 6 controls are calibration ones, which never count
        controls += [
            (c, e, k, "calibration" if n < 6 else "held_out", r, v)
            for n, (c, e, k, _, r, v) in enumerate(
                control_judgments(12, ["abe"], sensitivity=0.0, specificity=0.0, seed=4)
            )
        ]
    reviewers = TWO_HUMANS | ADJ
    study = build_study(
        tmp_path / name, rows, reviewers=reviewers, roles=ROLES, sample=sample, controls=controls
    )
    return study


def test_primary_accuracy_is_unchanged_by_adjudicators_control_reviews(tmp_path, fast_plan):
    # `report`: the adjudicators' own controls (all wrong here) would otherwise decide whether a
    # `supported` is robust to their differential error, which is theirs to decide, not the
    # primary reviewers'
    text = fast_plan.read_text(encoding="utf-8")
    fast_plan = tmp_path / "plan.yaml"
    fast_plan.write_text(text.replace("differential_error: auto", "differential_error: report"))
    without = analyze(
        _study(tmp_path, "a", adjudicator_controls_too=False), fast_plan, write_report=False
    )
    study = _study(tmp_path, "b", adjudicator_controls_too=True)
    with_them = analyze(study, fast_plan, write_report=False)
    assert with_them.controls.model_dump() == without.controls.model_dump()
    labels = {row["label"] for row in with_them.controls.accuracy}
    assert labels >= set(TWO_HUMANS) and not labels & set(ADJ)
    assert with_them.verdict.label == without.verdict.label
    # the adjudicators' own controls measure them (the verdict's instrument), not the primaries
    assert with_them.adjudication.adjudicator_reason != without.adjudication.adjudicator_reason


def test_adjudicator_controls_is_the_adjudicators_frame(tmp_path) -> None:
    path = _study(tmp_path, "s", adjudicator_controls_too=True)
    manifest = read_manifest(path)
    with Study.open(path) as study:
        data = load_study(study, manifest)
    theirs, ours = adjudicator_controls(data), primary_controls(data)
    assert list(theirs.columns) == list(data.controls.columns)
    assert set(theirs.reviewer_id) == set(ADJ) and set(ours.reviewer_id) == set(TWO_HUMANS)
    assert len(theirs) + len(ours) == len(data.controls) == 2 * 30 + 2 * 12
    coded = coded_controls(theirs, "not_novel")
    rows = {a.label: a for a in accuracy_table(coded, 0.95)}
    ada, abe = rows["ada"], rows["abe"]
    assert (ada.published, ada.unpublished) == (6, 6)  # a person: every control counts
    assert ada.published_correct == ada.unpublished_correct == 0
    assert abe.published + abe.unpublished == 6  # automated: held-out controls only
    assert rows["all reviewers, pooled"].published + rows["all reviewers, pooled"].unpublished == 18
    # a study without adjudicators: an empty frame of the same columns
    bare = type(data)(**{**data.__dict__, "roles": None})
    assert adjudicator_controls(bare).empty
    assert list(adjudicator_controls(bare).columns) == list(data.controls.columns)
