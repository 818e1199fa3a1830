"""Whole simulated studies with a gold subsample (benchmarks/bench_gold.py in small)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.plan.plan_file import Design, bundled_plan_path, load_plan
from harness.analysis.simulation.gold import (
    Cell,
    GoldStudy,
    all_careful_rule,
    latent_correlations,
    new_rule,
    ppi_many,
    simulate_gold,
    topic_correlation,
    true_novelty,
)
from harness.analysis.simulation.known_accuracy import Reviewers
from harness.analysis.statistics.ppi import ppi_mean

PLAN = load_plan(bundled_plan_path()).plan
GOOD = Cell("good", Reviewers(0.85, 0.9), Reviewers(0.85, 0.9))


def _batch(cell: Cell, effect: float, studies: int, topics: int = 100, seed: int = 1):
    return simulate_gold(
        GoldStudy(topics),
        cell,
        Design(),
        studies=studies,
        p_single=0.3,
        effect=effect,
        rng=np.random.default_rng(seed),
    )


def test_true_and_adjudicated_differences():
    b = _batch(GOOD, 0.2, 1000)
    assert b.true_difference == 0.2
    assert b.adjudicated_difference == pytest.approx(0.9 * 0.2)
    # SE of the mean of 100,000 topics' d_t is about 0.002
    assert b.true_d.mean() == pytest.approx(0.2, abs=0.008)
    assert b.d.mean() == pytest.approx(0.18, abs=0.008)
    # primary reviewers: (1 - sens) + J pi per item, so f has mean J x 0.2 = 0.15
    assert b.f.mean() == pytest.approx(0.75 * 0.2, abs=0.008)
    # the current rule's batch is the primary reviewers' proportions
    assert np.allclose(b.current.d, b.f)
    assert b.current.pub_n.sum(axis=1).tolist() == [45] * 1000
    assert b.current.unpub_n.sum(axis=1).tolist() == [45] * 1000


def test_marginal_proportions_of_the_truth():
    truth = true_novelty(
        Design(), studies=400, topics=250, p_single=0.3, effect=0.1, rng=np.random.default_rng(2)
    )
    shares = truth.mean(axis=(0, 1))
    assert shares == pytest.approx([0.3, 0.3, 0.4], abs=0.01)


def test_latent_correlations_match_the_simulated_truth():
    cross, singles = latent_correlations(Design(), 0.3, 0.0)
    truth = true_novelty(
        Design(), studies=400, topics=250, p_single=0.3, effect=0.0, rng=np.random.default_rng(3)
    ).astype(float)
    r = np.corrcoef(truth.reshape(-1, 3).T)
    assert cross == pytest.approx(singles)  # no effect: the conditions are alike
    assert r[0, 2] == pytest.approx(cross, abs=0.015)
    assert r[0, 1] == pytest.approx(singles, abs=0.015)
    assert latent_correlations(Design(sd_topic=0.0), 0.3, 0.1)[0] == pytest.approx(0.0)


@pytest.mark.parametrize("estimator", ["ppi++", "ppi", "classical"])
@pytest.mark.parametrize("interval", ["t", "normal"])
def test_vectorised_ppi_equals_ppi_mean(estimator, interval):
    b = _batch(GOOD, 0.1, 5, seed=4)
    many = ppi_many(b.d[:, :25], b.f[:, :25], b.f[:, 25:], estimator=estimator, interval=interval)
    low, high = many.interval(0.95)
    for s in range(5):
        one = ppi_mean(
            b.d[s, :25], b.f[s, :25], b.f[s, 25:], estimator=estimator, interval=interval
        )
        assert many.estimate[s] == pytest.approx(one.estimate, abs=1e-12)
        assert many.se[s] == pytest.approx(one.se, abs=1e-12)
        assert many.lam[s] == pytest.approx(one.lam, abs=1e-12)
        assert many.p_greater()[s] == pytest.approx(one.p_greater(), abs=1e-12)
        assert many.p_tost(0.1)[s] == pytest.approx(one.p_tost(0.1), abs=1e-12)
        assert (low[s], high[s]) == pytest.approx(one.interval(0.95), abs=1e-12)


def test_every_topic_adjudicated_is_the_classical_paired_test():
    b = _batch(GOOD, 0.1, 50, seed=5)
    ppi = new_rule(b, 100, PLAN)
    careful = all_careful_rule(b, 100, PLAN)
    assert np.array_equal(ppi.estimate, careful.estimate)
    assert np.array_equal(ppi.supported, careful.supported)
    assert np.allclose(ppi.estimate, b.d.mean(axis=1))


def test_primary_reviewers_who_answer_alike_leave_the_classical_test():
    b = _batch(Cell("alike", Reviewers(0.0, 1.0), Reviewers(0.0, 1.0)), 0.1, 50, seed=6)
    assert np.all(b.f == 0)
    ppi = ppi_many(b.d[:, :25], b.f[:, :25], b.f[:, 25:])
    classical = ppi_many(b.d[:, :25], b.d[:, :25], b.d[:, :0])
    assert np.all(ppi.lam == 0)
    assert np.allclose(ppi.estimate, classical.estimate)
    assert np.allclose(ppi.se, classical.se)


def test_new_rule_keeps_its_size_where_reviewers_differ_by_condition():
    # sensitivity 0.8 on cross-field, 0.95 on single-field items: the current rule says
    # `supported` in about 2/3 of such studies at no effect; the adjudicated scale does not move
    cell = Cell("differential", Reviewers(0.95, 0.9, 0.8), Reviewers(0.95, 0.9, 0.8))
    b = _batch(cell, 0.0, 1500, seed=7)
    outcome = new_rule(b, 25, PLAN)
    assert outcome.supported.mean() < 0.075  # 5% with MC SE 0.6%
    assert outcome.covers(0.0).mean() > 0.92
    assert b.f.mean() > 0.02  # the primary reviewers' own difference is biased


def test_topic_correlation_grows_with_accuracy():
    low = topic_correlation(_batch(Cell("", Reviewers(0.6, 0.6), Reviewers(0.9, 0.9)), 0.0, 200))
    high = topic_correlation(_batch(Cell("", Reviewers(0.95, 0.95), Reviewers(0.9, 0.9)), 0.0, 200))
    chance = topic_correlation(_batch(Cell("", Reviewers(0.5, 0.5), Reviewers(0.5, 0.5)), 0.0, 200))
    assert abs(chance) < 0.03 < low < high
