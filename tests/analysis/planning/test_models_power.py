"""Power with several models: the formulas against Monte Carlo, and `harness power --models` as a
subprocess."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from harness.analysis.planning.models_power import models_power, pooled_sd
from harness.errors import HarnessError
from tests.cli_run import run_subprocesses

ROOT = Path(__file__).resolve().parents[3]


def _draws(reps: int, topics: int, models: int, r: float, sd: float, shift: np.ndarray, seed: int):
    """(reps, topics, models) d_t, equicorrelated across models within a topic."""
    cov = sd**2 * ((1 - r) * np.eye(models) + r * np.ones((models, models)))
    rng = np.random.default_rng(seed)
    return rng.multivariate_normal(shift, cov, size=(reps, topics))


def _holm_rejects(p: np.ndarray, alpha: float) -> np.ndarray:
    """Holm's step-down over the last axis, row by row (checked against statsmodels below)."""
    order = np.argsort(p, axis=1)
    ranked = np.take_along_axis(p, order, axis=1) * (p.shape[1] - np.arange(p.shape[1]))
    adjusted = np.maximum.accumulate(np.minimum(ranked, 1.0), axis=1)
    rejects = np.empty_like(p, dtype=bool)
    np.put_along_axis(rejects, order, adjusted < alpha, axis=1)
    return rejects


def test_vectorised_holm_agrees_with_statsmodels(monkeypatch):
    # multipletests runs a full garbage collection on every call: no value changes without it,
    # and 50 of them take most of a minute in a process that holds a test suite
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    p = np.random.default_rng(7).uniform(0.0, 0.06, (50, 3))
    expected = np.array([multipletests(row, alpha=0.05, method="holm")[0] for row in p])
    assert np.array_equal(_holm_rejects(p, 0.05), expected)


def _t_p(d: np.ndarray) -> np.ndarray:
    """One-sided t-test p over axis 1."""
    n = d.shape[1]
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    p: np.ndarray = stats.t.sf(t, n - 1)
    return p


@pytest.mark.parametrize(("models", "r"), [(1, 0.5), (3, 0.0), (3, 0.5), (5, 0.8)])
def test_pooled_sd_matches_the_sd_of_simulated_averages(models, r):
    d = _draws(1, 40_000, models, r, 0.4, np.zeros(models), seed=models)[0]
    assert d.mean(axis=1).std() == pytest.approx(pooled_sd(0.4, models, r), rel=0.02)


def test_pooled_power_matches_monte_carlo_with_the_effect_in_every_model():
    topics, models, r, sd, effect = 60, 3, 0.5, 0.5, 0.12
    formula = models_power(
        topics=topics, effect=effect, sd=sd, models=models, correlation=r, alpha=0.05, target=0.8
    )
    d = _draws(4000, topics, models, r, sd, np.full(models, effect), seed=1)
    simulated = float(np.mean(_t_p(d.mean(axis=2)) < 0.05))
    assert simulated == pytest.approx(formula.pooled_power, abs=0.03)
    one = _draws(4000, topics, models, r, sd, np.array([effect, 0.0, 0.0]), seed=2)
    simulated_one = float(np.mean(_t_p(one.mean(axis=2)) < 0.05))
    assert simulated_one == pytest.approx(formula.pooled_one_power, abs=0.03)


def test_per_model_power_is_holms_power_for_the_model_with_the_effect():
    topics, models, r, sd, effect = 60, 3, 0.5, 0.5, 0.2
    formula = models_power(
        topics=topics, effect=effect, sd=sd, models=models, correlation=r, alpha=0.05, target=0.8
    )
    d = _draws(4000, topics, models, r, sd, np.array([effect, 0.0, 0.0]), seed=3)
    p = _t_p(d)  # (reps, models)
    simulated = float(np.mean(_holm_rejects(p, 0.05)[:, 0]))
    assert simulated >= formula.per_model_power - 0.03
    assert simulated == pytest.approx(formula.per_model_power, abs=0.04)


def test_topics_needed_reach_the_target_and_one_fewer_does_not():
    fixed = {"effect": 0.1, "sd": 0.5, "models": 4, "correlation": 0.3, "alpha": 0.05}
    m = models_power(topics=50, target=0.8, **fixed)
    assert m.pooled_needed is not None and m.per_model_needed is not None
    again = models_power(topics=m.pooled_needed, target=0.8, **fixed)
    fewer = models_power(topics=m.pooled_needed - 1, target=0.8, **fixed)
    assert again.pooled_power >= 0.8 > fewer.pooled_power
    assert m.per_model_needed > m.pooled_needed  # a Holm-adjusted test on one model's topics


def test_no_effect_has_no_sample_size_and_bad_inputs_are_refused():
    m = models_power(
        topics=50, effect=0.0, sd=0.5, models=2, correlation=0.5, alpha=0.05, target=0.8
    )
    assert m.pooled_needed is None and m.pooled_power == pytest.approx(0.05)
    with pytest.raises(HarnessError):
        pooled_sd(0.5, 2, 1.5)


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "power", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def test_cli_power_with_models_reports_both_designs():
    done = _harness("--models", "3", "--model-correlation", "0.25", "--topics", "80")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Several models: 3, correlation of a topic's d_t between models 0.25" in out
    assert "pooled, effect +0.1 in every model: power" in out
    assert "per model at Holm's alpha (first step 0.01667)" in out


def test_cli_power_with_one_model_has_no_models_lines_and_bad_values_fail():
    one, no_model, bad_correlation = run_subprocesses(
        ["power", "--models", "1"],
        ["power", "--models", "0"],
        ["power", "--models", "2", "--model-correlation", "1.5"],
    )
    assert one.returncode == 0 and "Several models" not in one.stdout
    assert no_model.returncode == 2 and "--models" in no_model.stderr
    assert bad_correlation.returncode == 2 and "--model-correlation" in bad_correlation.stderr


def test_prereg_states_the_models_rule_of_the_plan():
    from harness.analysis.plan.plan_file import load_plan
    from harness.analysis.planning.preregister import models_lines

    plan = load_plan().plan
    assert "pooled: the primary test relabels" in models_lines(plan, 3)[0]
    per_model = plan.model_copy(
        update={"models": plan.models.model_copy(update={"primary": "per_model"})}
    )
    text = "\n".join(models_lines(per_model, 1))
    assert "per_model: a model is `supported`" in text and "`refuted` only when every model" in text
    assert "With one model the choice has no effect" in text


def test_power_api_adds_models_only_above_one():
    from harness.analysis.planning.power_analysis import power

    assert power(topics=50).models is None
    result = power(topics=50, models=4, model_correlation=0.2)
    assert result.models is not None and result.models["models"] == 4
    assert result.models["sd_pooled"] == pytest.approx(pooled_sd(result.analytic["sd"], 4, 0.2))
    with pytest.raises(HarnessError):
        power(topics=50, models=2, model_correlation=-0.1)
