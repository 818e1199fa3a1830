"""The betting equivalence test: a hand-computed capital, its size at the margin on the worst
cases for the t-test, and the zero-variance case."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.analysis.plan.plan_file import Design
from harness.analysis.simulation.known_accuracy import latent_batch
from harness.analysis.statistics.equivalence import betting, betting_capital, betting_p, paired_t


def test_capital_of_one_order_by_hand():
    d, m, alpha = np.array([0.5, -0.25, 0.0, 1.0]), 0.1, 0.05
    order = np.argsort(np.random.default_rng(0).random((1, d.size)), axis=1)[0]
    x_seq = d[order]
    capital, mean, sq, n, var = 1.0, 0.0, 0.0, d.size, 0.25
    for i, x in enumerate(x_seq, start=1):
        lam = min(math.sqrt(2 * math.log(1 / alpha) / (n * var)), 0.9 / (1 - m))
        capital *= 1 + lam * (m - x)
        sq += (x - mean) ** 2
        mean = x_seq[:i].sum() / (i + 1)
        var = (0.25 + sq) / (i + 1)
    got = betting_capital(d[np.newaxis], m, alpha, orders=1, seed=0)
    assert got[0] == pytest.approx(capital)


def test_size_at_the_margin_stays_below_alpha_where_the_t_test_is_liberal():
    rng = np.random.default_rng(11)
    d = latent_batch(Design(), studies=600, topics=50, p_single=0.02, effect=0.1, rng=rng)
    betting_rate = np.mean(betting_capital(d, 0.1, 0.05, orders=16) >= 20)
    t_rate = np.mean([paired_t(x, 0.1, 0.05).p_upper < 0.05 for x in d])
    assert betting_rate <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / 600)
    assert t_rate > 0.07  # the paired t-test over-rejects here (about 12%)


def test_identical_judgments_get_no_p_of_zero():
    zeros = np.zeros(50)
    t = paired_t(zeros, 0.1, 0.05)
    assert not t.equivalent and t.p_tost == 1.0
    b = betting(zeros, 0.1, 0.05)
    assert 0 < b.p_tost < 1 and b.ci_low < 0 < b.ci_high


def test_confidence_bound_is_where_the_p_value_crosses_alpha():
    d = np.random.default_rng(4).normal(0.0, 0.2, 300).clip(-1, 1)
    b = betting(d, 0.1, 0.05)
    assert betting_p(d, b.ci_high, 0.05) == pytest.approx(0.05, abs=2e-3)
    assert b.ci_low < d.mean() < b.ci_high and b.equivalent == (b.p_tost < 0.05)
