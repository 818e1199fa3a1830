"""Betting tests of the prediction-powered mean: equal to the plain betting test without
primary-only topics, valid at the boundary of the null by simulation (both estimands), monotone
in m and in mu_f."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.statistics.equivalence import betting_p
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.ppi_betting import (
    betting_ppi,
    mean_bounds,
    paths,
    ppi_log_capital,
    side,
)


def _result(d, f, fu, estimator="ppi++", estimand="study_topics"):
    point = ppi_mean(d, f, fu, estimator=estimator, interval="t")
    return betting_ppi(point, d, f, fu, alpha=0.05, estimand=estimand)


def test_without_primary_only_topics_it_is_the_plain_betting_test():
    """The population estimand with every topic adjudicated: lambda 0, the mean of d."""
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=30)
    r = _result(d, d * 0.5, np.zeros(0), estimand="topic_population")
    for m in (-0.1, 0.0, 0.1, 0.3):
        assert r.p_less(m) == pytest.approx(betting_p(d, m, 0.05), rel=1e-12)
        assert r.p_greater(m) == pytest.approx(betting_p(-d, -m, 0.05), rel=1e-12)


def test_the_mean_bounds_are_those_of_the_plain_betting_test():
    rng = np.random.default_rng(2)
    x = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.7, 0.2], size=(1, 60))
    low, high = mean_bounds(x, 0.05)
    assert betting_p(x[0], float(high[0]) + 1e-6, 0.05) <= 0.05 + 1e-6
    assert betting_p(x[0], float(high[0]) - 1e-3, 0.05) > 0.05
    assert low[0] < x.mean() < high[0]


@pytest.mark.parametrize("design", [True, False])
def test_the_capital_grows_with_m_and_falls_as_mu_f_grows(design):
    """The validity argument: bisection over m, and mu_f's worst case at its interval's top."""
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 1.0], size=(4, 25))
    f = np.clip(d + rng.normal(0, 0.5, size=d.shape), -1, 1)
    every = np.concatenate([f, rng.choice([-1.0, 0.0, 1.0], size=(4, 50))], axis=1)
    ms = np.linspace(-1, 1, 41)
    if design:
        p = paths(d, f, every, 0.05, 16, 7)
        caps = np.array([ppi_log_capital(p, m) for m in ms])
    else:
        caps = np.array(
            [ppi_log_capital(paths(d, f, every, 0.05, 16, 7, mu_high=np.zeros(4)), m) for m in ms]
        )
        by_mu = [
            ppi_log_capital(paths(d, f, every, 0.05, 16, 7, mu_high=np.full(4, mu)), 0.1)
            for mu in np.linspace(-1, 1, 21)
        ]
        assert np.all(np.diff(np.array(by_mu), axis=0) <= 1e-12)
    assert np.all(np.diff(caps, axis=0) >= -1e-12)


def _rare_studies(studies: int, n_topics: int, seed: int):
    """Single-field base rate about 0.05 with topic heterogeneity (Beta), no true difference;
    primary reviewers flip a fifth of the per-topic differences."""
    rng = np.random.default_rng(seed)
    p = rng.beta(0.5, 9.5, size=(studies, n_topics))
    single = (rng.random((studies, n_topics, 2)) < p[..., None]).mean(axis=2)
    cross = (rng.random((studies, n_topics)) < p).astype(float)
    d = cross - single
    return d, np.where(rng.random(d.shape) < 0.2, -d, d)


@pytest.mark.parametrize("estimand", ["study_topics", "topic_population"])
def test_size_at_the_boundary_with_rare_novelty_and_few_topics(estimand):
    """50 topics, 12 adjudicated, base rate 0.05 (the t reference covered 84% here): H0 theta
    >= truth and H0 theta <= truth are each rejected in at most alpha of the studies, with the
    truth the study topics' mean (design-based) or the population's 0."""
    d, f = _rare_studies(600, 50, 4)
    n = 12
    truth = d.mean(axis=1) if estimand == "study_topics" else np.zeros(d.shape[0])
    kw = {"estimand": estimand, "orders": 8}
    upper = side(1.0, d[:, :n], f[:, :n], f[:, n:], 0.05, **kw)
    lower = side(-1.0, d[:, :n], f[:, :n], f[:, n:], 0.05, **kw)
    assert np.mean(upper.p_values(truth) < 0.05) <= 0.05
    assert np.mean(lower.p_values(-truth) < 0.05) <= 0.05


def test_the_design_based_interval_narrows_as_the_sample_nears_every_topic():
    """Without replacement the last draws are nearly known: every topic drawn gives a much
    narrower interval of the study topics' mean than of the population's."""
    rng = np.random.default_rng(8)
    d = rng.choice([-1.0, 0.0, 1.0], size=40)
    low, high = _result(d, d, np.zeros(0)).interval(0.9)
    p_low, p_high = _result(d, d, np.zeros(0), estimand="topic_population").interval(0.9)
    assert low <= d.mean() <= high
    assert high - low < 0.5 * (p_high - p_low)


def test_interval_holds_its_estimate_and_the_tests_agree_with_it():
    rng = np.random.default_rng(5)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.5, 0.4], size=40)
    f = np.clip(d + rng.normal(0, 0.3, 40), -1, 1)
    fu = np.clip(rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.5, 0.4], size=120) + 0.1, -1, 1)
    r = _result(d, f, fu)
    low, high = r.interval(0.90)
    assert low < r.estimate < high
    assert r.p_less(high + 1e-4) <= 0.05 + 1e-6  # the upper bound at 95% one-sided
    assert r.p_less(high - 0.02) > 0.05
    assert r.p_greater(low - 1e-4) <= 0.05 + 1e-6
    assert r.p_tost(max(abs(low), abs(high)) + 1e-3) <= 0.05 + 1e-6


@pytest.mark.parametrize("estimator", ["ppi++", "ppi", "classical"])
@pytest.mark.parametrize("estimand", ["study_topics", "topic_population"])
def test_every_estimator_gives_p_values_in_range(estimator, estimand):
    rng = np.random.default_rng(6)
    d = rng.choice([-1.0, 0.0, 1.0], size=20)
    r = _result(d, d, rng.choice([-1.0, 0.0, 1.0], size=60), estimator, estimand)
    for m in (-0.5, 0.0, 0.5):
        assert 0.0 < r.p_less(m) <= 1.0
        assert 0.0 < r.p_greater(m) <= 1.0
