"""The misclassification-corrected difference: Rogan-Gladen on hand-computed tables, the
per-reviewer mapping against brute force, and the bootstrap against exact enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.analysis.statistics.consensus import Judgments, code_outcome, topic_table
from harness.analysis.statistics.corrected import (
    ControlCounts,
    _bootstrap,
    corrected_difference,
    topic_weights,
)


def _counts(pub_n, pub_k, unpub_n, unpub_k) -> ControlCounts:
    return ControlCounts(
        [str(i) for i in range(len(pub_n))],
        np.array(pub_n),
        np.array(pub_k),
        np.array(unpub_n),
        np.array(unpub_k),
    )


def test_pooled_rogan_gladen_on_a_hand_computed_table():
    # observed mean difference 0.16; sensitivity 45/50 = 0.9, specificity 36/40 = 0.9: J = 0.8;
    # var(J) = 0.9 * 0.1 / 50 + 0.9 * 0.1 / 40 = 0.00405; 1/J becomes J / (J^2 + var)
    a = np.array([[0.2], [0.1], [0.3], [0.04]])
    b = np.zeros_like(a)
    out = corrected_difference(
        a, b, _counts([50], [45], [40], [36]), method="pooled", resamples=400, level=0.95, seed=1
    )
    assert out.observed == pytest.approx(0.16)
    assert out.estimate == pytest.approx(0.16 * 0.8 / (0.64 + 0.00405))
    assert out.ci_low < 0.2 < out.ci_high


def test_prevalence_form_of_rogan_gladen():
    # one reviewer, a single arm: (q - (1 - sens)) / J; q = 0.45, sens 0.8, spec 0.85
    a, b = np.array([[0.45]]), np.array([[1.0]])
    out = corrected_difference(
        a,
        b,
        _counts([20], [16], [20], [17]),
        method="per_reviewer",
        resamples=200,
        level=0.95,
        seed=1,
    )
    var = 0.8 * 0.2 / 20 + 0.85 * 0.15 / 20
    assert out.estimate == pytest.approx((0.45 - 0.2) * 0.65 / (0.65**2 + var))


@pytest.mark.parametrize(("pub", "unpub"), [([10], [0]), ([0], [10])])
def test_unestimable_or_non_discriminating_accuracy_gives_no_estimate(pub, unpub):
    a = np.array([[0.1], [0.2]])
    counts = (
        _counts([10], pub, [10], unpub) if pub[0] + unpub[0] else _counts([10], pub, [0], unpub)
    )
    out = corrected_difference(
        a, np.zeros_like(a), counts, method="pooled", resamples=200, level=0.95, seed=1
    )
    assert out.estimate is None and out.ci_low is None


def test_per_reviewer_weights_equal_the_brute_force_mapping():
    rng = np.random.default_rng(2)
    topics, reviewers = 6, 3
    rows = []
    for t, c, s in itertools.product(range(topics), range(3), range(2)):
        for r in rng.choice(reviewers, size=2, replace=False):
            rows.append((t, c, s, int(r), int(rng.integers(0, 3))))
    frame = pd.DataFrame(rows, columns=["t", "c", "s", "r", "v"])
    item = frame["t"] * 6 + frame["c"] * 2 + frame["s"]
    items = np.arange(topics * 6)
    j = Judgments(
        item=item.to_numpy(),
        reviewer=frame["r"].to_numpy(),
        verdict=frame["v"].to_numpy().astype(np.int8),
        item_topic=items // 6,
        item_condition=(items // 2) % 3,
        n_topics=topics,
        n_reviewers=reviewers,
    )
    sens, youden = np.array([0.9, 0.7, 0.8]), np.array([0.8, 0.5, 0.6])
    y = code_outcome(j.verdict, "exclude")
    table = topic_table(j, unsure="exclude", min_reviewers=1)
    a, b = topic_weights(j, y, table, j.reviewer, reviewers)
    ours = ((a - b * (1 - sens)) / youden).sum(axis=1)
    # brute force: map each judgment, average per item, per cell, then the mean of singles
    frame = frame.assign(y=y)
    frame = frame[~np.isnan(frame["y"])]
    frame["y"] = (frame["y"] - (1 - sens[frame["r"]])) / youden[frame["r"]]
    cell = frame.groupby(["t", "c", "s"])["y"].mean().groupby(["t", "c"]).mean().unstack()
    brute = (cell[2] - (cell[0] + cell[1]) / 2).dropna().to_numpy()
    assert ours == pytest.approx(brute)
    assert a.sum(axis=1) == pytest.approx(table.d)  # with perfect accuracy: d itself


def test_bootstrap_mean_matches_exact_enumeration():
    # 3 topics, one pooled group with 3 published and 3 unpublished control judgments
    a = np.array([[0.3], [-0.1], [0.4]])
    b = np.zeros_like(a)
    counts = _counts([3], [3], [3], [2])
    exact = 0.0
    for picks in itertools.product(range(3), repeat=3):
        mean = a[list(picks)].mean()
        for k, m in itertools.product(range(4), range(4)):
            youden = k / 3 + m / 3 - 1
            weight = (stats.binom.pmf(k, 3, 1.0) * stats.binom.pmf(m, 3, 2 / 3)) / 27
            if weight:
                exact += weight * (mean / max(youden, 0.05))
    draws, bad = _bootstrap(a, b, counts, None, 200_000, seed=3)
    assert draws.mean() == pytest.approx(exact, abs=0.01)
    # resamples with J* <= 0.05 (here: m = 0, probability 1/27) are flagged
    assert bad.mean() == pytest.approx(1 / 27, abs=0.003)
    assert math.isfinite(draws.mean())


def _relative_bias(sens: float, spec: float, n: int, estimator: str) -> float:
    """E[estimate] / truth - 1 by enumeration of both control counts (n + n judgments), true
    difference 0.2 observed as 0.2 J; studies with J-hat <= MIN_J have no estimate."""
    youden = sens + spec - 1.0
    a = np.array([[0.2 * youden]])
    total = weight = 0.0
    for k, m in itertools.product(range(n + 1), repeat=2):
        p = stats.binom.pmf(k, n, sens) * stats.binom.pmf(m, n, spec)
        if estimator == "second":
            j_hat = (k + m) / n - 1.0
            var = (k / n) * (1 - k / n) / n + (m / n) * (1 - m / n) / n
            value = a[0, 0] * j_hat / (j_hat**2 + var) if j_hat > 0.05 else None
        elif estimator == "plain":
            j_hat = (k + m) / n - 1.0
            value = a[0, 0] / j_hat if j_hat > 0.05 else None
        else:
            value = corrected_difference(
                a,
                np.zeros_like(a),
                _counts([n], [k], [n], [m]),
                method="pooled",
                resamples=1,
                level=0.95,
                seed=1,
            ).estimate
        if value is not None:
            total += p * value
            weight += p
    return total / weight / 0.2 - 1.0


@pytest.mark.parametrize(("sens", "spec"), [(0.6, 0.8), (0.8, 0.6), (0.6, 0.95), (0.8, 0.8)])
def test_second_order_estimate_removes_most_of_the_ratio_bias(sens: float, spec: float):
    # 45 + 45 control judgments: the benchmark's 3 reviewers with 30 controls each
    plain, ours = _relative_bias(sens, spec, 45, "plain"), _relative_bias(sens, spec, 45, "ours")
    assert plain > 0.02  # 1 / J-hat over-corrects
    assert abs(ours) < 0.015  # |bias| < 0.003 at a true difference of 0.2
    assert abs(ours) < plain / 4


def test_at_j_0_2_the_estimate_is_less_biased_than_either_fixed_form():
    # 45 + 45 controls, J = 0.2: 1/J-hat over-corrects (+13 %), J / (J^2 + v) over-shrinks
    # (-25 %); switching on v / J-hat^2 leaves less than either
    plain = _relative_bias(0.6, 0.6, 45, "plain")
    second = _relative_bias(0.6, 0.6, 45, "second")
    ours = _relative_bias(0.6, 0.6, 45, "ours")
    assert second < -0.2 and plain > 0.1
    assert abs(ours) < min(plain, -second) / 1.5


def test_an_uncertain_j_uses_the_plain_ratio_and_is_flagged():
    a = np.array([[0.04], [0.04]])
    low, high = (
        corrected_difference(
            a,
            np.zeros_like(a),
            _counts([45], [k], [45], [k]),
            method="pooled",
            resamples=50,
            level=0.95,
            seed=1,
        )
        for k in (27, 41)
    )
    # J-hat = 27/45 + 27/45 - 1 = 0.2, v = 2 * 0.24 / 45: v / J^2 = 0.27 > RELIABLE
    assert low.estimate == pytest.approx(0.04 / 0.2)
    assert low.unreliable and "UNRELIABLE" in low.note
    # J-hat = 0.82: second order, below 1/J-hat
    assert not high.unreliable and high.estimate is not None
    assert high.estimate < 0.04 / (82 / 45 - 1)
