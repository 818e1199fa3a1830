"""Analytic power against published sample sizes; simulation against its own targets."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import special

from harness.analysis.plan.plan_file import Design, load_plan
from harness.analysis.planning.power_analysis import power
from harness.analysis.simulation import design_search
from harness.analysis.simulation.full_design import (
    latent_parameters,
    rejection_rates,
    simulate_judgments,
)
from harness.analysis.simulation.simulated_power import simulate_design
from harness.analysis.statistics.sample_size import (
    analytic_power,
    discordant,
    mcnemar_power,
    mcnemar_sample_size,
    minimal_detectable_effect,
    paired_power,
    paired_sample_size,
    sd_binary_difference,
    tost_power,
    tost_sample_size,
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
            mcnemar_power(n, p10, p01, sided=2)
        )


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
    null = rejection_rates(
        plan, plan.planning.design, topics=50, p_single=0.3, effect=0.0, reps=400, seed=11
    )
    assert 0.02 <= null.primary <= 0.085
    alt = rejection_rates(
        plan, plan.planning.design, topics=50, p_single=0.3, effect=0.15, reps=200, seed=12
    )
    assert alt.primary > 0.7
    assert math.isfinite(alt.sd_d) and 0 < alt.sd_d < 1


def test_simulated_searches_end_on_values_their_own_simulation_verifies():
    plan = load_plan().plan
    design = plan.planning.design
    target = plan.planning.power
    result = simulate_design(plan, topics=30, effect=0.2, reps=200, seed=3)
    needed = result.topics_search
    assert needed is not None and needed.value is not None
    assert needed.power >= target > needed.power_below and needed.below == needed.value - 1
    rerun = rejection_rates(
        plan, design, topics=int(needed.value), p_single=0.3, effect=0.2, reps=200, seed=3 + 2
    )
    assert rerun.primary == needed.power
    assert needed.power_se == pytest.approx(math.sqrt(needed.power * (1 - needed.power) / 200))
    mde = result.effect_search
    assert mde is not None and mde.value is not None
    assert mde.power >= target > mde.power_below
    assert mde.below == pytest.approx(mde.value - 0.001)
    rerun = rejection_rates(
        plan, design, topics=30, p_single=0.3, effect=mde.value, reps=200, seed=3 + 3
    )
    assert rerun.primary == mde.power
    assert mde.value_se is not None and 0 < mde.value_se < 0.05


class _Curve:
    """A known power curve standing in for the simulation: power rises with topics or effect."""

    def __init__(self, by: str, threshold: float) -> None:
        self.by, self.threshold, self.calls = by, threshold, []

    def __call__(self, plan, design, *, topics, p_single, effect, reps, seed):
        x = topics if self.by == "topics" else effect
        self.calls.append(x)
        rate = 0.85 if x >= self.threshold - 1e-9 else 0.6
        return SimpleNamespace(primary=rate)


@pytest.mark.parametrize("start", [5, 40, 41, 300])
def test_topics_search_finds_the_first_passing_number_from_any_start(monkeypatch, start):
    curve = _Curve("topics", 41)
    monkeypatch.setattr(design_search, "rejection_rates", curve)
    plan = load_plan().plan
    found = design_search.search_topics(
        plan,
        plan.planning.design,
        p_single=0.3,
        effect=0.1,
        target=0.8,
        start=start,
        reps=100,
        seed=0,
    )
    assert (found.value, found.below, found.power, found.power_below) == (41, 40, 0.85, 0.6)
    assert found.simulations == len(curve.calls) == len(set(curve.calls))


@pytest.mark.parametrize("start", [0.01, 0.137, 0.5])
def test_effect_search_finds_the_first_passing_effect_from_any_start(monkeypatch, start):
    monkeypatch.setattr(design_search, "rejection_rates", _Curve("effect", 0.137))
    plan = load_plan().plan
    found = design_search.search_effect(
        plan,
        plan.planning.design,
        topics=50,
        p_single=0.3,
        target=0.8,
        start=start,
        reps=100,
        seed=0,
    )
    assert found.value == pytest.approx(0.137) and found.below == pytest.approx(0.136)


def test_analytic_minimal_detectable_effect_reaches_the_target_exactly():
    n, p_single, rho = 50, 0.3, 0.3
    for method in ("paired", "mcnemar"):
        mde = minimal_detectable_effect(n, p_single, rho, 0.05, 0.8, method)
        assert analytic_power(n, p_single, mde, rho, 0.05, method) == pytest.approx(0.8, abs=1e-6)
        assert analytic_power(n, p_single, mde - 0.005, rho, 0.05, method) < 0.8
    # the paired MDE is the effect whose paired sample size is n
    mde = minimal_detectable_effect(n, p_single, rho)
    sd = sd_binary_difference(p_single + mde + 1e-6, p_single, rho)
    assert paired_sample_size(mde + 1e-6, sd, 0.05, 0.8) == n
    assert minimal_detectable_effect(3, 0.9, 0.0, 0.05, 0.99) is None


def test_power_reports_minimal_detectable_effect():
    # adjudicated=0: the analytic figures alone, without the adjudicated design's simulation
    result = power(topics=50, p_single=0.3, rho=0.3, alpha=0.05, target=0.8, adjudicated=0)
    a = result.analytic
    assert a["mde_paired"] == pytest.approx(minimal_detectable_effect(50, 0.3, 0.3))
    assert a["mde_mcnemar"] > a["mde_paired"] > 0.1
    assert f"paired {a['mde_paired']:+.3f}" in result.summary()


def test_equivalence_power_uses_the_sd_at_no_difference():
    result = power(
        topics=80,
        p_single=0.3,
        effect=0.3,
        rho=0.3,
        sesoi=0.15,
        alpha=0.05,
        target=0.8,
        adjudicated=0,  # the analytic figures alone
    )
    a = result.analytic
    sd0 = sd_binary_difference(0.3, 0.3, 0.3)
    assert a["sd_equivalence"] == pytest.approx(sd0) and a["sd"] > sd0 + 0.01
    assert a["tost_power"] == pytest.approx(tost_power(80, sd0, 0.15, 0.0, 0.05))
    assert a["tost_needed"] == tost_sample_size(sd0, 0.15, 0.0, 0.05, 0.8)
    assert a["tost_needed"] < tost_sample_size(a["sd"], 0.15, 0.0, 0.05, 0.8)
    row = result.curve[result.curve["topics"] == result.curve["topics"].iloc[5]].iloc[0]
    assert row["equivalence"] == pytest.approx(tost_power(row["topics"], sd0, 0.15, 0.0, 0.05))
    assert "assuming a true difference of 0" in result.summary()


def test_tost_sample_size_when_one_topic_already_has_the_power() -> None:
    from harness.analysis.statistics.sample_size import tost_power, tost_sample_size

    assert tost_power(1, 0.001, 0.1, 0.0, 0.05) > 0.8
    assert tost_sample_size(0.001, 0.1) == 1
