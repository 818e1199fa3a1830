"""Analytic power against published sample sizes; simulation against its own targets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from harness.analyze.plan import Design, load_plan
from harness.analyze.planning import power
from harness.analyze.sample_size import (
    discordant,
    mcnemar_power,
    mcnemar_sample_size,
    paired_power,
    paired_sample_size,
    tost_power,
    tost_sample_size,
)
from harness.analyze.simulate import (
    latent_parameters,
    rejection_rates,
    simulate_design,
    simulate_judgments,
)
from harness.errors import HarnessError


def test_connor_1987_sample_size_worked_example():
    # Connor (1987), Biometrics 43:207, p. 209, as in the powerandsamplesize.com calculators:
    # p01 = 0.45, p10 = 0.05, alpha 0.05 two-sided, power 0.80 -> 23 pairs; one-sided at
    # power 0.90 -> 23 pairs.
    assert mcnemar_sample_size(0.05, 0.45, alpha=0.05, power=0.80, sided=2) == 23
    assert mcnemar_sample_size(0.05, 0.45, alpha=0.05, power=0.90, sided=1) == 23


def test_connor_power_inverts_sample_size():
    for p10, p01 in [(0.25, 0.1), (0.2127, 0.1127), (0.05, 0.45)]:
        n = mcnemar_sample_size(p10, p01, 0.05, 0.8)
        if p10 > p01:
            assert mcnemar_power(n, p10, p01) >= 0.8 > mcnemar_power(n - 1, p10, p01)
        assert mcnemar_power(n, p01, p10, sided=2) == pytest.approx(
            mcnemar_power(n, p10, p01, sided=2))


def test_paired_normal_sample_size_textbook_value():
    # ((z_0.95 + z_0.80) * sd / delta)^2 = (1.6449 + 0.8416)^2 / 0.25 = 24.7 -> 25
    assert paired_sample_size(0.5, 1.0, 0.05, 0.8) == 25
    assert paired_power(25, 0.5, 1.0) == pytest.approx(0.8038, abs=1e-3)


def test_tost_power_and_sample_size():
    n = tost_sample_size(0.4, 0.1, 0.0, 0.05, 0.8)
    assert tost_power(n, 0.4, 0.1) >= 0.8 > tost_power(n - 1, 0.4, 0.1)
    # at delta 0: n = ((z_a + z_{b/2}) sd / margin)^2 = ((1.6449 + 1.2816) * 4)^2 = 137.02
    assert n == 138
    assert tost_power(10, 0.4, 0.1) == 0.0


def test_discordant_cells_and_impossible_correlation():
    p10, p01 = discordant(0.4, 0.3, 0.0)
    assert p10 == pytest.approx(0.4 * 0.7) and p01 == pytest.approx(0.3 * 0.6)
    with pytest.raises(HarnessError):
        discordant(0.9, 0.1, 0.9)


def test_power_api_defaults_come_from_the_plan():
    result = power()
    plan = load_plan().plan
    assert result.inputs["topics"] == plan.planning.topics
    assert list(result.curve.columns) == ["topics", "mcnemar", "paired", "equivalence"]
    assert result.curve["mcnemar"].is_monotonic_increasing
    assert "Connor 1987" in result.summary()


def test_latent_parameters_reach_the_requested_proportions():
    # reviewer bias is drawn once per study (the same reviewers judge every item), so the
    # marginal proportion of one study is checked without it
    design = Design(unsure_rate=0.1, sd_reviewer=0.0)
    mu, beta = latent_parameters(design, 0.3, 0.1)
    rng = np.random.default_rng(0)
    j = simulate_judgments(design, 4000, mu, beta, rng)
    novel = j.verdict == 1
    cross = j.condition == 2
    assert novel[~cross].mean() == pytest.approx(0.3, abs=0.015)
    assert novel[cross].mean() == pytest.approx(0.4, abs=0.015)
    assert (j.verdict == 2).mean() == pytest.approx(0.1, abs=0.01)
    assert special.expit(mu) < 0.4  # the latent spread pulls the median below the mean


def test_simulated_type_i_error_and_power():
    plan = load_plan().plan
    null = rejection_rates(plan, plan.planning.design, topics=50, p_single=0.3, effect=0.0,
                           reps=400, seed=11)
    assert 0.02 <= null.primary <= 0.085
    alt = rejection_rates(plan, plan.planning.design, topics=50, p_single=0.3, effect=0.15,
                          reps=200, seed=12)
    assert alt.primary > 0.7
    assert math.isfinite(alt.sd_d) and 0 < alt.sd_d < 1


def test_simulate_design_reports_topics_needed():
    plan = load_plan().plan
    result = simulate_design(plan, topics=40, effect=0.2, reps=100, seed=3)
    assert result.topics_needed is not None and result.topics_needed >= 2
    assert result.power_at_needed is not None and result.power_at_needed > 0.5
