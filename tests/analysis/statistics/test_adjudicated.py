"""The two tiers' per-topic differences, the real-item accuracy frame and the adjudicated verdict,
on judgments built by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.analysis.adjudication import _degenerate
from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.statistics.adjudicated import labelled_judgments, tiers
from harness.analysis.statistics.consensus import Judgments
from harness.analysis.statistics.instrument import measure
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


def test_two_of_three_who_agree_settle_an_item():
    """Majority of three: two adjudicators who agree decide an item whatever the third would
    say, so it is complete without them; two who disagree leave it open."""
    novel = {}
    for c in range(3):
        novel[(0, c, 0)] = novel[(0, c, 1)] = 0  # primary reviewers
        novel[(0, c, 2)] = int(c == 2)  # adjudicator 2: cross novel
        if c != 1:  # adjudicator 3 agrees on cross and single_a, says nothing on single_b
            novel[(0, c, 3)] = int(c == 2)
    novel[(0, 1, 3)] = 1  # ... and disagrees on single_b
    j = _study(novel, 1, ["primary", "primary", "adjudicator", "adjudicator"])
    roles = np.array(["primary", "primary", "adjudicator", "adjudicator"], dtype=object)
    table = tiers(j, roles, np.array([True]), _plan(per_item=3, combine="majority")).adjudicated
    assert table.item_eligible.tolist() == [True, False, True]  # single_a, single_b, cross
    assert table.item_score[[0, 2]].tolist() == [0.0, 1.0]


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
    decision = decide_adjudicated(_ppi(estimate, se), PLAN, [], None, _instrument(98, 98))
    assert decision.label == label, decision.reason


def _instrument(published_correct: int, unpublished_correct: int, per_kind: int = 100):
    """Two adjudicators, each with half of `per_kind` published and unpublished controls."""
    rows = []
    for expected, correct in (
        ("published", published_correct),
        ("not_published", unpublished_correct),
    ):
        wrong = "not_published" if expected == "published" else "published"
        for i in range(per_kind):
            rows.append(
                {
                    "item_id": f"c{expected}{i}",
                    "control_id": f"k{expected}{i}",
                    "reviewer_id": f"adj{i % 2}",
                    "reviewer_kind": "human",
                    "verdict": expected if i < correct else wrong,
                    "expected": expected,
                    "control_kind": "cross",
                    "split": "evaluation",
                }
            )
    return measure(pd.DataFrame(rows), {"adj0": 0.5, "adj1": 0.5}, PLAN)


def test_the_margin_is_the_sesoi_times_the_adjudicators_lower_bound_of_j():
    inst = _instrument(98, 98)
    assert inst.ok
    assert inst.margin(0.1) == pytest.approx(0.1 * inst.weighted.accuracy.youden_lower(0.025))
    assert 0.8 < inst.margin(0.1) / 0.1 < 0.96


@pytest.mark.parametrize(
    ("instrument", "why"),
    [
        (None, "not measured"),
        ("chance", "could not be shown to discriminate"),
        ("empty", "cannot be estimated"),
    ],
)
def test_adjudicators_not_shown_to_discriminate_never_refute(instrument, why):
    inst = {
        None: None,
        "chance": _instrument(50, 50),
        "empty": measure(_instrument(98, 98).coded.iloc[:0], {}, PLAN),
    }[instrument]
    for estimate in (0.0, -0.2):  # inside the margin, and significantly below 0
        decision = decide_adjudicated(_ppi(estimate, 0.01), PLAN, [], None, inst)
        assert decision.label == "inconclusive", decision.reason
        assert why in decision.reason
    assert decide_adjudicated(_ppi(0.3, 0.05), PLAN, [], None, inst).label == "supported"


def test_imperfect_adjudicators_shrink_the_margin():
    """The joint rule tests theta - SESOI x J: at J 0.98 an adjudicated +0.01 (se 0.03) shows
    the true difference inside +/-0.10 (T = -2.9), at J 0.5 it does not (T = -1.3), although
    the adjudicators pass the gate (J's score bound about 0.37)."""
    good, weak = _instrument(99, 99), _instrument(75, 75)
    assert weak.joint_gate(PLAN)[0]
    ppi = _ppi(0.01, 0.03)
    assert decide_adjudicated(ppi, PLAN, [], None, good).label == "refuted"
    decision = decide_adjudicated(ppi, PLAN, [], None, weak)
    assert decision.label == "inconclusive" and "joint test" in decision.reason


def test_non_superiority_refutes_below_the_margin_only():
    plan = PLAN.model_copy(
        update={"equivalence": PLAN.equivalence.model_copy(update={"refute_by": "non_superiority"})}
    )
    inst = _instrument(98, 98)
    assert decide_adjudicated(_ppi(-0.05, 0.05), plan, [], None, inst).label == "refuted"
    assert decide_adjudicated(_ppi(-0.05, 0.05), PLAN, [], None, inst).label == "inconclusive"


def test_verdicts_that_never_differ_within_a_topic_are_a_degenerate_scale():
    """Adjudicators who answer by topic: every adjudicated d_t is 0, however many topics."""
    n_topics, roles = 40, ["primary", "primary", "adjudicator", "adjudicator"]
    rng = np.random.default_rng(0)
    topic_novel = rng.random(n_topics) < 0.5
    novel = {}
    for t in range(n_topics):
        for c in range(3):
            for r in (0, 1):
                novel[(t, c, r)] = int(rng.random() < 0.4)
            if t < 20:
                for r in (2, 3):
                    novel[(t, c, r)] = int(topic_novel[t])
    sampled = np.arange(n_topics) < 20
    plan = _plan()
    t = tiers(_study(novel, n_topics, roles), np.array(roles, dtype=object), sampled, plan)
    ppi = t.estimate(plan)
    why = _degenerate(t, ppi, plan)
    assert why is not None and "never differ within" in why
    decision = decide_adjudicated(ppi, plan, [], why, _instrument(98, 98))
    assert decision.label == "inconclusive"


def test_withheld_reasons_give_no_verdict():
    decision = decide_adjudicated(_ppi(0.3, 0.01), PLAN, ["drawn topics lack adjudication"])
    assert decision.label == "no verdict"


def test_a_majority_of_adjudicators_is_bounded_by_its_own_j():
    """Sensitivity 0.99 and specificity 0.35: J 0.34 each, but a majority of three has 0.28."""
    plan = _plan(combine="majority", per_item=3)
    frame = _instrument(198, 70, per_kind=200).coded
    inst = measure(frame, {"adj0": 0.5, "adj1": 0.5}, plan)
    mean_scale = measure(frame, {"adj0": 0.5, "adj1": 0.5}, PLAN)
    assert inst.bound < mean_scale.bound
    acc = inst.weighted.accuracy
    s, p = acc.sensitivity_ci(0.975)[0], acc.specificity_ci(0.975)[0]
    majority = stats.binom.sf(1, 3, s) + stats.binom.sf(1, 3, p) - 1
    assert inst.bound == pytest.approx(majority)


def test_study_topics_gives_way_to_the_population_with_most_topics_adjudicated():
    from harness.analysis.statistics.adjudicated import estimand_used

    plan = _plan(estimand="study_topics")
    assert estimand_used(plan, 25, 75) == "study_topics"
    assert estimand_used(plan, 60, 40) == "topic_population"
    assert estimand_used(_plan(), 60, 40) == "topic_population"


def test_a_model_whose_own_scale_is_degenerate_is_not_refuted():
    from harness.analysis.statistics.model_verdict import adjudicated_model_verdicts

    per_model = [("a", _ppi(0.0, 0.02)), ("b", _ppi(0.0, 0.02))]
    inst = _instrument(98, 98)
    assert [v.label for v in adjudicated_model_verdicts(per_model, PLAN, None, inst)] == [
        "refuted",
        "refuted",
    ]
    why = "the adjudicators' verdicts never differ within any of the 10 adjudicated topics"
    verdicts = adjudicated_model_verdicts(per_model, PLAN, None, inst, {"a": why, "b": None})
    assert [v.label for v in verdicts] == ["inconclusive", "refuted"]
    assert why in verdicts[0].reason
