"""From judgments to per-topic proportions, and a consensus table that is fair to both arms."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.full_design import latent_parameters, simulate_judgments
from harness.analysis.statistics.consensus import (
    NOT_PUBLISHED,
    PUBLISHED,
    UNSURE,
    Judgments,
    code_outcome,
    consensus_counts,
    topic_table,
)


def test_code_outcome_follows_the_unsure_rule():
    verdict = np.array([PUBLISHED, NOT_PUBLISHED, UNSURE])
    assert code_outcome(verdict, "not_novel").tolist() == [0.0, 1.0, 0.0]
    assert code_outcome(verdict, "novel").tolist() == [0.0, 1.0, 1.0]
    assert np.isnan(code_outcome(verdict, "exclude")[2])


def test_topic_table_by_hand():
    # topic 0: single_a item (2 reviews: 1, 0), single_b item (1, 1), cross items (1, 1), (0, 0)
    # topic 1: cross item has one review only -> left out -> topic incomplete
    item_topic = np.array([0, 0, 0, 0, 1, 1, 1])
    item_condition = np.array([0, 1, 2, 2, 0, 1, 2])
    item = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6])
    verdict = np.array([1, 0, 1, 1, 1, 1, 0, 0, 0, 2, 1, 1, 1])
    j = Judgments(
        item=item,
        reviewer=np.array([0, 1] * 6 + [0]),
        verdict=verdict,
        item_topic=item_topic,
        item_condition=item_condition,
        n_topics=2,
        n_reviewers=2,
    )
    table = topic_table(j, unsure="exclude", min_reviewers=2)
    assert table.p[0].tolist() == [0.5, 1.0, 0.5]
    assert table.p_single[0] == 0.75 and table.d.tolist() == [-0.25]
    assert table.complete.tolist() == [True, False]
    assert table.item_eligible.tolist() == [True] * 6 + [False]
    assert table.p[1, 0] == 0.0  # the unsure verdict is left out, one coded verdict remains
    a = topic_table(j, unsure="not_novel", min_reviewers=1, single="single_a")
    assert a.p_single.tolist() == [0.5, 0.0] and a.d.tolist() == [0.0, 1.0]


def test_consensus_table_is_balanced_under_the_null():
    design = Design(samples=1, reviewers=3)
    mu, beta = latent_parameters(design, 0.3, 0.0)
    j = simulate_judgments(design, 20000, mu, beta, np.random.default_rng(1))
    table = topic_table(j, unsure="not_novel", min_reviewers=2)
    counts = consensus_counts(*table.consensus(0.5, seed=3))
    # b and c are equally likely when nothing differs: |b - c| within 3 standard errors
    assert abs(counts["b"] - counts["c"]) < 3 * np.sqrt(counts["b"] + counts["c"])
    # the mean of the two single arms would not be: it crosses 0.5 less often
    cross = table.p_cross > 0.5
    mean_single = table.p_single > 0.5
    assert (cross & ~mean_single).sum() > 1.2 * (~cross & mean_single).sum()
    assert table.d.mean() == pytest.approx(0.0, abs=0.01)
