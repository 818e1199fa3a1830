"""Across-models analysis: the pooled relabelling test against brute-force enumeration, Holm
against the hand rule, Cochran's Q against statsmodels, the interaction test against the paired
t-test, and type I error and heterogeneity by simulation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.meta_analysis import combine_effects

from harness.analysis.simulation.several_models import model_batch
from harness.analysis.statistics.across_models import (
    across_models,
    cochran_q,
    differences,
    interaction_test,
)
from harness.analysis.statistics.permutation import relabel_test


def _brute_pooled_p_greater(p: np.ndarray) -> float:
    """Every joint relabelling of each topic's conditions (all models at once)."""
    values = p - (p.sum(axis=2, keepdims=True) - p) / 2  # (T, M, 3): column j as cross
    observed = values[:, :, 2].mean()
    hits = total = 0
    for labels in itertools.product(range(3), repeat=p.shape[0]):
        stat = np.mean([values[t, :, j].mean() for t, j in enumerate(labels)])
        hits += stat >= observed - 1e-12
        total += 1
    return hits / total


def test_pooled_test_relabels_topics_jointly_across_models_exactly():
    rng = np.random.default_rng(4)
    p = rng.integers(0, 4, size=(7, 2, 3)) / 3
    out = across_models(p, ["a", "b"], mid_p=False)
    assert out.pooled.method == "exact"
    assert out.pooled_p_greater == pytest.approx(_brute_pooled_p_greater(p), abs=1e-12)


def test_holm_and_per_model_estimates():
    rng = np.random.default_rng(5)
    p = model_batch(
        studies=1, topics=60, base_rates=[0.2, 0.3, 0.4], effects=[0.0, 0.1, 0.2], rng=rng
    )[0]
    out = across_models(p, ["x", "y", "z"], alpha=0.05)
    raw = np.array([m.p_greater for m in out.models])
    order = np.argsort(raw)
    adjusted = np.maximum.accumulate(np.minimum(1, raw[order] * (3 - np.arange(3))))
    assert [m.p_holm for m in out.models] == pytest.approx(adjusted[np.argsort(order)])
    d = differences(p, "mean_of_singles")
    assert [m.estimate for m in out.models] == pytest.approx(d.mean(axis=0))
    assert "pooled over models" in out.summary() and "I^2" in out.summary()


def test_cochran_q_matches_statsmodels():
    rng = np.random.default_rng(6)
    d = rng.normal([0.0, 0.05, 0.2], 0.3, size=(80, 3))
    q, df, i2 = cochran_q(d)
    ref = combine_effects(d.mean(axis=0), d.var(axis=0, ddof=1) / 80, method_re="chi2")
    assert q == pytest.approx(ref.q) and df == 2
    assert i2 == pytest.approx(max(0.0, (ref.q - 2) / ref.q))


def test_interaction_with_two_models_is_the_paired_t_test():
    rng = np.random.default_rng(7)
    d = rng.normal(0.0, 0.3, size=(40, 2)) + np.array([0.0, 0.1])
    f, dfs, p = interaction_test(d)
    t = stats.ttest_rel(d[:, 0], d[:, 1])
    assert dfs == (1, 39) and f == pytest.approx(t.statistic**2) and p == pytest.approx(t.pvalue)


def test_pooled_type_i_error_with_models_that_differ_in_base_rate():
    rng = np.random.default_rng(8)
    # the pooled test is the relabelling test of the model-averaged proportions (checked above);
    # benchmarks/bench_models.py runs 2,000 studies
    batch = model_batch(
        studies=300, topics=50, base_rates=[0.1, 0.3, 0.5], effects=[0.0, 0.0, 0.0], rng=rng
    )
    rejected = [relabel_test(p.mean(axis=1)).p_greater_mid < 0.05 for p in batch]
    rate = float(np.mean(rejected))
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 300)


def test_an_effect_in_one_model_of_three_shows_in_estimates_and_heterogeneity():
    rng = np.random.default_rng(9)
    batch = model_batch(
        studies=30, topics=150, base_rates=[0.3, 0.3, 0.3], effects=[0.0, 0.0, 0.25], rng=rng
    )
    outs = [across_models(p, ["a", "b", "c"], permutations=2000) for p in batch]
    assert (
        np.mean(
            [o.models[2].estimate > max(o.models[0].estimate, o.models[1].estimate) for o in outs]
        )
        > 0.9
    )
    assert np.mean([o.interaction_p < 0.05 for o in outs]) > 0.8
    assert np.median([o.i2 for o in outs]) > 0.5
