"""Reviewers weighted by their share of the real judgments: the pooled exact interval when the
shares follow the controls, fewer effective counts than Kish's when reviewers' rates differ, and
the renormalised shares of reviewers without controls."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.weighted import kish, weighted_accuracy


def _acc(label: str, pub: int, pub_k: int, unpub: int, unpub_k: int) -> Accuracy:
    return Accuracy(label, "reviewer", "human", pub, pub_k, unpub, unpub_k, 0.95)


def test_shares_proportional_to_controls_give_the_exact_pooled_interval():
    reviewers = [_acc("a", 20, 18, 20, 15), _acc("b", 10, 6, 10, 9), _acc("c", 30, 27, 30, 28)]
    pooled = Accuracy("all", "pooled", "human", 60, 51, 60, 52, 0.95)
    w = weighted_accuracy(reviewers, {"a": 20 / 60, "b": 10 / 60, "c": 30 / 60}, 0.95)
    assert w.uncovered == 0.0
    assert w.accuracy.published == pytest.approx(60) and w.accuracy.unpublished == pytest.approx(60)
    assert w.accuracy.youden == pytest.approx(pooled.youden)
    assert w.accuracy.youden_ci() == pytest.approx(pooled.youden_ci())


def test_shares_following_the_controls_keep_the_pooled_interval_at_extreme_rates():
    # one perfect reviewer beside weaker ones: the smoothed variance must not shrink n below N
    reviewers = [_acc("a", 12, 12, 12, 12), _acc("b", 6, 3, 6, 4), _acc("c", 30, 29, 30, 30)]
    pooled = Accuracy("all", "pooled", "human", 48, 44, 48, 46, 0.95)
    w = weighted_accuracy(reviewers, {"a": 12 / 48, "b": 6 / 48, "c": 30 / 48}, 0.95)
    assert w.accuracy.published == pytest.approx(48) and w.accuracy.unpublished == pytest.approx(48)
    assert w.accuracy.youden_ci() == pytest.approx(pooled.youden_ci())


@pytest.mark.parametrize(
    ("n", "rate", "shares"),
    [((10, 300), (0.5, 0.98), (0.35, 0.65)), ((5, 500), (0.5, 1.0), (0.2, 0.8))],
)
def test_weighted_interval_covers_when_a_weak_reviewer_has_few_controls(n, rate, shares):
    # seeded Monte Carlo; Kish's n alone covered 89.8 % and 78.3 % here
    rng = np.random.default_rng(11)
    n, rate, w = np.array(n, float), np.array(rate), np.array(shares)
    k = rng.binomial(n.astype(int), rate, (8000, 2)).astype(float)
    s_w, n_eff = kish(np.broadcast_to(w, k.shape), k, np.broadcast_to(n, k.shape))
    low = np.where(s_w > 0, stats.beta.ppf(0.025, s_w * n_eff, n_eff - s_w * n_eff + 1), 0.0)
    high = np.where(
        s_w < 1, stats.beta.ppf(0.975, s_w * n_eff + 1, np.maximum(n_eff - s_w * n_eff, 1e-12)), 1.0
    )
    truth = float((w * rate).sum())
    assert ((low <= truth) & (truth <= high)).mean() >= 0.935
    assert (low > truth).mean() <= 0.02


def test_a_busy_weak_reviewer_pulls_the_weighted_j_down():
    # "busy" judges 90 % of the real items with J 0.3 on 10 controls; two others are strong
    reviewers = [_acc("busy", 5, 3, 5, 3), _acc("x", 20, 19, 20, 19), _acc("y", 20, 19, 20, 19)]
    shares = {"busy": 0.9, "x": 0.05, "y": 0.05}
    w = weighted_accuracy(reviewers, shares, 0.95)
    expected_j = 0.9 * (0.6 + 0.6 - 1) + 0.1 * (0.95 + 0.95 - 1)
    assert w.accuracy.youden == pytest.approx(expected_j)
    # the weak reviewer's rate differs from the others': fewer effective counts than Kish's
    assert w.accuracy.published < 1 / (0.81 / 5 + 2 * 0.0025 / 20)
    pooled = Accuracy("all", "pooled", "human", 45, 41, 45, 41, 0.95)
    assert w.accuracy.youden_ci()[0] < pooled.youden_ci()[0] - 0.3


def test_reviewers_without_both_kinds_are_left_out_and_reported():
    reviewers = [_acc("a", 10, 9, 10, 9), _acc("b", 10, 9, 0, 0)]
    w = weighted_accuracy(reviewers, {"a": 0.6, "b": 0.3, "<none>": 0.1}, 0.95)
    assert w.uncovered == pytest.approx(0.4)
    assert w.shares == {"a": 1.0}
    assert w.accuracy.youden == pytest.approx(0.8)
    empty = weighted_accuracy([_acc("b", 10, 9, 0, 0)], {"b": 1.0}, 0.95)
    assert not empty.accuracy.estimable and empty.uncovered == 1.0


def test_kish_vectorised_over_studies():
    shares = np.array([0.5, 0.5])
    rate, n_eff = kish(shares, np.array([[8.0, 4.0], [10.0, 0.0]]), np.array([[10.0, 5.0]] * 2))
    assert rate == pytest.approx([0.8, 0.5])
    kish_n = 1 / (0.25 / 10 + 0.25 / 5)
    assert n_eff[0] == pytest.approx(kish_n, rel=0.02)  # equal rates: about Kish's n
    assert n_eff[1] == pytest.approx(kish_n)  # rates 1.0 and 0.0: pooled p(1 - p) is large
