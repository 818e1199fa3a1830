from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.judge.items.blinded_items import create_items
from harness.judge.routing.roster import Reviewer, Roster
from harness.judge.routing.route_items import plan_routing, route
from harness.study.tables.judge_reads import routing_items


def roster(*specs: tuple[str, str, int, tuple[str, ...]]) -> Roster:
    return Roster(
        reviewers=[
            Reviewer(
                id=i,
                kind=kind,
                capacity=cap,
                expertise=exp,
                method="retrieval" if kind == "automated" else None,
            )
            for i, kind, cap, exp in specs
        ]
    )


HUMANS = roster(
    *[
        (f"h{n}", "human", 10, exp)
        for n, exp in enumerate(
            [
                ("Medicine",),
                ("Computer Science",),
                ("Psychology",),
                ("Mathematics",),
                ("Agricultural and Biological Sciences",),
                ("Economics, Econometrics and Finance",),
                (),
                (),
            ]
        )
    ]
)


def routed_frame(study, result):
    items = routing_items(study)
    return result.assignments.merge(items, on="item_id")


def test_constraints_hold(make_study) -> None:
    study = make_study(n_topics=10)
    create_items(study)
    result = route(study, HUMANS, k=2, seed=5)
    frame = routed_frame(study, result)
    assert frame.groupby("item_id").reviewer_id.nunique().eq(2).all()
    assert len(frame) == 60 and frame.item_id.nunique() == 30
    assert frame.groupby("reviewer_id").size().le(10).all()
    assert frame.groupby(["reviewer_id", "topic_id"]).size().max() == 1
    per = frame.groupby(["reviewer_id", "condition"]).size().unstack(fill_value=0)
    assert (per.max(axis=1) - per.min(axis=1)).le(1).all()  # balanced within each reviewer
    positions = frame.groupby("reviewer_id").position.apply(sorted)
    assert all(p == list(range(1, len(p) + 1)) for p in positions)
    assert study.count("assignments") == 60
    balance = result.balance.set_index("reviewer")
    assert balance.assigned.sum() == 60 and set(balance.columns) >= {"cross", "expertise_match"}
    assert "k=2" in result.summary() and result.manifest_section()["n_assignments"] == 60


def test_expertise_is_preferred(make_study) -> None:
    study = make_study(n_topics=12)
    create_items(study)
    result = plan_routing(study, HUMANS, k=2, seed=1)
    balance = result.balance.set_index("reviewer")
    # each field is one of the two fields of 4 topics: an expert gets an item of each of them
    assert balance.loc[["h0", "h1", "h2", "h3", "h4", "h5"]].expertise_match.eq(4).all()


def test_same_seed_same_assignment_across_studies(make_study) -> None:
    a, b = make_study("a", n_topics=8), make_study("b", n_topics=8)
    for study in (a, b):
        create_items(study)

    def by_output(study, seed):
        frame = routed_frame(study, plan_routing(study, HUMANS, k=2, seed=seed))
        return sorted(zip(frame.output_id, frame.reviewer_id, frame.position, strict=True))

    assert by_output(a, 3) == by_output(b, 3)  # item ids differ, the assignment does not
    assert by_output(a, 3) != by_output(a, 4)


def test_automated_reviewers_may_see_a_whole_topic(make_study) -> None:
    study = make_study(n_topics=5)
    create_items(study)
    demo = roster(("retrieval", "automated", 1000, ()), ("dense", "automated", 1000, ()))
    frame = routed_frame(study, plan_routing(study, demo, k=2))
    assert frame.groupby("reviewer_id").size().tolist() == [15, 15]


def test_pilot_allows_k1(make_study) -> None:
    study = make_study(n_topics=3)
    create_items(study)
    with pytest.raises(HarnessError, match="k=1 only in a pilot"):
        plan_routing(study, HUMANS, k=1)
    pilot = make_study("pilot", n_topics=3, pilot=True)
    create_items(pilot)
    assert len(plan_routing(pilot, HUMANS, k=1).assignments) == 9


@pytest.mark.parametrize(
    ("reviewers", "k", "message"),
    [
        (
            roster(("a", "human", 50, ()), ("b", "human", 50, ())),
            3,
            "k=3 distinct reviewers per item, but the roster has 2 (short by 1)",
        ),
        (
            roster(*[(f"h{n}", "human", 2, ()) for n in range(6)]),
            2,
            "12 items x k=2 need 24 assignments, the roster offers 12 (short by 12",
        ),
        (
            roster(*[(f"h{n}", "human", 50, ()) for n in range(5)]),
            2,
            "topic topic-000: 3 items x k=2 need 6 reviewer slots but a human reviewer may take only "
            "one item per topic and the roster offers 5 (short by 1",
        ),
    ],
)
def test_infeasible_says_which_and_by_how_much(make_study, reviewers, k, message) -> None:
    study = make_study(n_topics=4)
    if "topic-000" in message:  # one full topic, the others with one item each
        with study.transaction() as conn:
            conn.execute(
                "UPDATE outputs SET status = 'failed' WHERE prompt_id IN (SELECT "
                "prompt_id FROM prompts WHERE topic_id != 'topic-000' AND condition "
                "!= 'cross')"
            )
    create_items(study)
    with pytest.raises(HarnessError) as caught:
        plan_routing(study, reviewers, k=k)
    assert message in str(caught.value)


def test_infeasible_names_same_topic_only_when_that_rule_binds(make_study) -> None:
    study = make_study(n_topics=4)
    create_items(study)
    few = roster(*[(f"h{n}", "human", 20, ()) for n in range(3)])  # enough capacity, 1 per topic
    with pytest.raises(HarnessError, match="short by 12.*--same-topic lifts that rule"):
        plan_routing(study, few, k=2)
    assert len(plan_routing(study, few, k=2, distinct_topics=False).assignments) == 24
    small = roster(*[(f"h{n}", "human", 2, ()) for n in range(6)])  # capacity is what binds
    with pytest.raises(HarnessError) as caught:
        plan_routing(study, small, k=2)
    assert "--same-topic" not in str(caught.value)


def test_routing_twice_is_refused(make_study) -> None:
    study = make_study(n_topics=4)
    create_items(study)
    route(study, HUMANS)
    with pytest.raises(HarnessError, match="already routed"):
        route(study, HUMANS)


def test_several_models_are_balanced_within_each_reviewer(make_study) -> None:
    study = make_study(n_topics=12)
    create_items(study)
    # the first 40% of outputs (by id) from one model: without the model in the balance a
    # reviewer could get mostly one model's items
    ids = [r[0] for r in study.rows("SELECT output_id FROM outputs ORDER BY output_id")]
    with study.transaction() as conn:
        conn.executemany(
            "UPDATE outputs SET model_key = ? WHERE output_id = ?",
            [("model-a" if n < 0.4 * len(ids) else "model-b", o) for n, o in enumerate(ids)],
        )
    automated = roster(*[(f"a{n}", "automated", 20, ()) for n in range(4)])
    result = plan_routing(study, automated, k=2, seed=3)
    assert result.solver.endswith("optimal")
    frame = routed_frame(study, result)
    share = (frame.model == "model-a").mean()
    for _, mine in frame.groupby("reviewer_id"):
        expected = share * len(mine)
        assert abs((mine.model == "model-a").sum() - expected) <= 1.5
