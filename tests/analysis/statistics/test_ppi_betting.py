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


def test_the_population_estimand_pairs_each_adjudicated_topic_with_unused_partners():
    """Z_i = d_i - lambda_i (f_i - h_i): with f = d and lambda 1 every Z_i is a partner mean of
    primary-only topics, so the test is one of their mean, which is known here."""
    d = np.tile([1.0, -1.0], 10)[None, :]
    rest = np.full((1, 60), 0.25)
    p = paths(d, d, np.concatenate([d, rest], axis=1), 0.05, 4, 1, fixed=1.0, population=True)
    assert np.allclose(p.z, 0.25)


@pytest.mark.parametrize("design", [True, False])
def test_the_capital_grows_with_m(design):
    """What the bisection for the confidence bounds relies on."""
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 1.0], size=(4, 25))
    f = np.clip(d + rng.normal(0, 0.5, size=d.shape), -1, 1)
    every = np.concatenate([f, rng.choice([-1.0, 0.0, 1.0], size=(4, 50))], axis=1)
    ms = np.linspace(-1, 1, 41)
    if design:
        p = paths(d, f, every, 0.05, 16, 7)
        caps = np.array([ppi_log_capital(p, m) for m in ms])
    else:
        p = paths(d, f, every, 0.05, 16, 7, population=True)
        caps = np.array([ppi_log_capital(p, m) for m in ms])
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
