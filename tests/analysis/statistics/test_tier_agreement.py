"""The tiers' agreement on the adjudicated items: adjudicators whose controls look fine but whose
real verdicts do not fit the primary reviewers' (given both tiers' accuracy) keep `refuted` out
of reach, in the case an independent review measured (90% `refuted` at a true +0.1)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.consensus import Judgments
from harness.analysis.statistics.tier_agreement import implied_rate, tiers_disagree

PRIMARY = Accuracy("primary", "weighted", "mixed", 100, 80, 100, 80, 0.95)
ADJUDICATORS = Accuracy("adjudicators", "weighted", "mixed", 50, 49, 50, 49, 0.95)
ROLES = np.array(["primary", "primary", "adjudicator", "adjudicator"], dtype=object)


def study(adjudicator_rate: float | None, topics: int = 363, sampled: int = 91, seed: int = 1):
    """Truth: single-field items novel at 0.3, cross-field at 0.4; primary reviewers right with
    probability 0.8; adjudicators right with 0.98, or (`adjudicator_rate`) novel at that rate
    whatever the truth. Returns the judgments and the sampled-topic mask."""
    rng = np.random.default_rng(seed)
    item_topic = np.repeat(np.arange(topics), 3)
    item_condition = np.tile([0, 1, 2], topics)
    truth = rng.random(item_topic.size) < np.where(item_condition == 2, 0.4, 0.3)
    on_sample = np.zeros(topics, dtype=bool)
    on_sample[:sampled] = True
    item, reviewer, novel = [], [], []
    for i in range(item_topic.size):
        for r in (0, 1):
            item.append(i)
            reviewer.append(r)
            novel.append(truth[i] if rng.random() < 0.8 else not truth[i])
        if on_sample[item_topic[i]]:
            for r in (2, 3):
                item.append(i)
                reviewer.append(r)
                if adjudicator_rate is None:
                    novel.append(truth[i] if rng.random() < 0.98 else not truth[i])
                else:
                    novel.append(rng.random() < adjudicator_rate)
    j = Judgments(
        item=np.array(item),
        reviewer=np.array(reviewer),
        verdict=np.where(np.array(novel), 1, 0),  # not_published / published
        item_topic=item_topic,
        item_condition=item_condition,
        n_topics=topics,
        n_reviewers=4,
    )
    return j, on_sample


def test_adjudicators_who_answer_by_a_rule_of_their_own_are_caught() -> None:
    j, sampled = study(adjudicator_rate=0.01)
    why = tiers_disagree(j, ROLES, sampled, "not_novel", PRIMARY, ADJUDICATORS, 0.95)
    assert why is not None and why.startswith("on the adjudicated cross-field items")
    assert "cannot show that the conditions do not differ" in why


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_accurate_adjudicators_agree_with_the_primary_reviewers(seed: int) -> None:
    j, sampled = study(adjudicator_rate=None, seed=seed)
    assert tiers_disagree(j, ROLES, sampled, "not_novel", PRIMARY, ADJUDICATORS, 0.95) is None


def test_implied_rate_inverts_the_misclassification_model() -> None:
    exact = Accuracy("x", "reviewer", "human", 1e6, 0.9e6, 1e6, 0.8e6, 0.95)
    # q = (1 - 0.9) + (0.9 + 0.8 - 1) x 0.5 = 0.45
    low, high = implied_rate(45_000, 100_000, exact, 0.95)
    assert low == pytest.approx(0.5, abs=0.01) and high == pytest.approx(0.5, abs=0.01)
    chance = Accuracy("x", "reviewer", "human", 10, 5, 10, 5, 0.95)
    assert implied_rate(3, 10, chance, 0.95) == (0.0, 1.0)  # J may be 0: nothing implied
