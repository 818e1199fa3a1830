"""The two tiers' per-topic differences, the real-item accuracy frame and the adjudicated verdict,
on judgments built by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from harness.analysis.planning.plan_file import bundled_plan_path, load_plan
from harness.analysis.statistics.adjudicated import labelled_judgments, tiers
from harness.analysis.statistics.consensus import Judgments
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.verdict import decide_adjudicated

PLAN = load_plan(bundled_plan_path()).plan
PUB, NOVEL = 0, 1  # verdict codes: published, not_published


def _study(novel: dict[tuple[int, int, int], int], n_topics: int, roles: list[str]) -> Judgments:
    """novel[(topic, condition, reviewer)] = 1 (not_published) or 0; one item per cell."""
    cells = sorted({(t, c) for t, c, _ in novel})
    code = {cell: i for i, cell in enumerate(cells)}
    keys = sorted(novel)
    return Judgments(
        item=np.array([code[(t, c)] for t, c, _ in keys]),
        reviewer=np.array([r for _, _, r in keys]),
        verdict=np.array([NOVEL if novel[k] else PUB for k in keys], dtype=np.int8),
        item_topic=np.array([t for t, _ in cells]),
        item_condition=np.array([c for _, c in cells], dtype=np.int8),
        n_topics=n_topics,
        n_reviewers=len(roles),
        topic_ids=np.array([f"t{i}" for i in range(n_topics)], dtype=object),
        reviewer_ids=np.array([f"r{i}" for i in range(len(roles))], dtype=object),
        reviewer_kind=np.array(["automated"] * len(roles), dtype=object),
    )


def _plan(**adjudication):
    return PLAN.model_copy(
        update={"adjudication": PLAN.adjudication.model_copy(update=adjudication)}
    )


ROLES = ["primary", "primary", "adjudicator", "adjudicator", "adjudicator"]


def _two_topics() -> Judgments:
    novel = {}
    for t in range(2):
        for c in range(3):
            cross = c == 2
            novel[(t, c, 0)] = int(cross)  # primary reviewers: cross novel, singles not
            novel[(t, c, 1)] = 1
            if t == 0:  # adjudicators judge topic 0 only: cross novel by 2 of 3
                novel[(t, c, 2)] = int(cross)
                novel[(t, c, 3)] = int(cross)
                novel[(t, c, 4)] = 0
    return _study(novel, 2, ROLES)


def test_tiers_split_by_role_and_sample():
    j = _two_topics()
    t = tiers(j, np.array(ROLES, dtype=object), np.array([True, False]), _plan(per_item=2))
    # primary: cross 1.0, singles 0.5 -> f = 0.5 on both topics
    assert t.f.tolist() == [0.5, 0.5]
    # adjudicators, mean of three: cross 2/3, singles 0 -> d = 2/3; topic 1 not adjudicated
    assert t.d[0] == pytest.approx(2 / 3) and np.isnan(t.d[1])
    assert t.labelled.tolist() == [True, False] and t.unlabelled.tolist() == [False, True]
    assert t.missing == []


def test_majority_settles_a_disagreement():
    j = _two_topics()
    plan = _plan(per_item=3, combine="majority")
    t = tiers(j, np.array(ROLES, dtype=object), np.array([True, False]), plan)
    assert t.d[0] == 1.0


def test_a_drawn_topic_without_enough_adjudicators_is_missing():
    j = _two_topics()
    t = tiers(j, np.array(ROLES, dtype=object), np.array([True, True]), _plan(per_item=2))
    assert t.missing == ["t1"]  # drawn, primary-complete, never adjudicated


def test_accuracy_frame_scores_primary_judgments_against_clear_labels():
    j = _two_topics()
    roles = np.array(ROLES, dtype=object)
    t = tiers(j, roles, np.array([True, False]), _plan(per_item=3, combine="majority"))
    coded = labelled_judgments(j, roles, t.adjudicated, "not_novel")
    # topic 0: 3 items x 2 primary reviewers; labels: cross novel, singles published
    assert len(coded) == 6
    assert set(coded["reviewer_id"]) == {"r0", "r1"}
    r0 = coded[coded.reviewer_id == "r0"]
    assert r0["correct"].all()  # r0 called exactly the adjudicated labels
    r1 = coded[coded.reviewer_id == "r1"]  # calls everything novel: right only on cross
    assert r1.set_index("control_kind")["correct"].to_dict() == {"cross": True, "single": False}


def test_primary_reviewers_answering_alike_leave_the_classical_test():
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=20)
    r = ppi_mean(d, np.full(20, 0.5), np.full(80, 0.5))
    t = stats.ttest_1samp(d, 0.0, alternative="greater")
    assert r.lam == 0.0
    assert r.estimate == pytest.approx(d.mean())
    assert r.p_greater() == pytest.approx(t.pvalue, rel=1e-12)


def _ppi(estimate: float, se: float, n: int = 40):
    d = np.array([estimate - se * np.sqrt(n), estimate + se * np.sqrt(n)] * (n // 2))
    return ppi_mean(d, d, np.array([]), estimator="classical")


@pytest.mark.parametrize(
    ("estimate", "se", "label"),
    [
        (0.2, 0.05, "supported"),
        (-0.2, 0.05, "refuted"),
        (0.0, 0.02, "refuted"),
        (0.0, 0.08, "inconclusive"),
    ],
)
def test_the_adjudicated_verdict(estimate, se, label):
    decision = decide_adjudicated(_ppi(estimate, se), PLAN, [])
    assert decision.label == label, decision.reason


def test_non_superiority_refutes_below_the_margin_only():
    plan = PLAN.model_copy(
        update={"equivalence": PLAN.equivalence.model_copy(update={"refute_by": "non_superiority"})}
    )
    assert decide_adjudicated(_ppi(-0.05, 0.05), plan, []).label == "refuted"
    assert decide_adjudicated(_ppi(-0.05, 0.05), PLAN, []).label == "inconclusive"


def test_withheld_reasons_give_no_verdict():
    decision = decide_adjudicated(_ppi(0.3, 0.01), PLAN, ["drawn topics lack adjudication"])
    assert decision.label == "no verdict"
