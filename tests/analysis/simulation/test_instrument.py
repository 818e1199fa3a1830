"""The simulated instrument: the tiers' agreement guard, vectorised, against the analysis' own,
and on adjudicators who judge real items by a rule of their own."""

from __future__ import annotations

from unittest.mock import MagicMock

import numpy as np
import pytest

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.simulation import instrument as I
from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.instrument import Instrument
from harness.analysis.statistics.joint import youden_estimate
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.tier_agreement import implied_rate
from harness.analysis.statistics.verdict import decide_adjudicated


@pytest.mark.parametrize(
    ("k", "n", "controls"),
    [(12.5, 91, (50, 49, 50, 48)), (40.0, 182, (100, 80, 100, 79)), (3.0, 30, (10, 6, 10, 5))],
)
def test_the_vectorised_implied_rate_is_the_analysis_one(k, n, controls) -> None:
    pub, pub_ok, unpub, unpub_ok = controls
    acc = Accuracy("x", "weighted", "mixed", pub, pub_ok, unpub, unpub_ok, 0.95)
    want = implied_rate(k, n, acc, 0.95)
    as_arrays = tuple(np.array([float(v)]) for v in controls)
    low, high = I._implied(np.array([k]), np.array([float(n)]), as_arrays, 0.95)
    assert (low[0], high[0]) == pytest.approx(want, abs=1e-9)


def test_adjudicators_with_a_rule_of_their_own_do_not_refute_a_true_effect() -> None:
    rng = np.random.default_rng(11)
    own = I.Scenario("own rule", mode="own_rule", own_rate=0.01)
    batch = I.simulate(own, 0.1, 300, rng)
    assert I.tiers_disagree(batch).mean() > 0.9
    decided = I.measured_rule(batch, 0.05, 0.1, 0.3, orders=2)
    assert decided.refuted.mean() <= 0.05
    accurate = I.simulate(I.Scenario("accurate"), 0.1, 300, rng)
    assert not I.tiers_disagree(accurate).any()


def test_the_vectorised_joint_rule_is_the_verdicts():
    """The simulation's joint rule decides each study as `decide_adjudicated` does on the same
    numbers (PPI++ t reference, J from the pooled controls, the gate, the joint TOST)."""
    plan = load_plan().plan
    rng = np.random.default_rng(7)
    scenario = I.Scenario("t", topics=120, share=0.5, controls=12)
    for effect in (0.0, 0.1):
        batch = I.simulate(scenario, effect, 40, rng)
        fast = I.joint_rule(batch, 0.05, 0.1, 0.3)
        for i in range(40):
            ppi = ppi_mean(batch.d[i], batch.f[i], batch.f_rest[i])
            est = youden_estimate(
                batch.pub_correct[i], batch.pub[i], batch.unpub_correct[i], batch.unpub[i], 0.95
            )
            inst = _instrument_with(est)
            label = decide_adjudicated(ppi, plan, [], None, inst).label
            assert (label == "supported") == fast.supported[i]
            tiers = I.tiers_disagree(batch)[i]
            assert (label == "refuted") == fast.refuted[i] or tiers


def _instrument_with(est):
    inst = MagicMock(spec=Instrument)
    inst.estimate = est
    inst.differential = None
    inst.margin.return_value = None
    inst.reason = "measured"
    ok = est.lower >= 0.3
    inst.joint_gate.return_value = (ok, "gate")
    inst.differential_error.return_value = MagicMock(
        text=lambda: None, robust=True, measured=False, corrected=None
    )
    return inst


def test_the_vectorised_design_effect_is_the_analysis_one():
    """Controls that differ in difficulty, judged by two of three adjudicators each: the design
    effect per simulated study, its variance and covariance with the rate are
    `statistics.clustered.design_effect_var` on the same calls."""
    import pandas as pd

    from harness.analysis.statistics.clustered import design_effect_var

    rng = np.random.default_rng(5)
    units, c, m = 45, 2, 3
    p = rng.beta(1.2, 0.3, (6, units))
    calls = rng.random((6, units, c)) < p[..., None]
    who = (np.arange(units)[:, None] * c + np.arange(c)) % m
    fast = I._design_effect(calls, who, m)
    for i in range(6):
        frame = pd.DataFrame(
            {
                "reviewer_id": [f"a{w}" for w in who.ravel()],
                "control_id": np.repeat(np.arange(units), c),
                "correct": calls[i].ravel().astype(float),
            }
        )
        ratio, var, cov = design_effect_var(frame, {f"a{a}": 1.0 for a in range(m)}, "correct")
        assert fast[:, i] == pytest.approx([max(ratio, 1.0), var, cov], rel=1e-10)
    assert fast[0].mean() > 1.2  # hard controls are hard for both: their calls covary


def test_controls_that_differ_in_difficulty_keep_js_variance_honest():
    """A majority of three, escalated (two calls per control), controls and real items whose
    chance of a right call is Beta with mean 0.9 and two calls' correlation 0.4: the majority's
    J the twin estimates is centred on the true (beta-binomial) J, its stated variance matches
    its spread (with the correlation's uncertainty: 0.63 of it without), and the gate's
    Newcombe bound covers the true J at about its level (91-94% without)."""
    from harness.analysis.statistics.joint import majority_rate

    s = I.Scenario(
        "t", topics=120, share=0.5, adjudicators=3, combine="majority", controls=120,
        control_correlation=0.4, per_control=2,
    )  # fmt: skip
    b = I.simulate(s, 0.0, 1500, np.random.default_rng(9))
    assert b.rho is not None
    assert b.rho.mean() == pytest.approx(0.4, abs=0.06)
    j, var, low = I.youden(b, 0.95)
    true_j = b.youden
    assert true_j == pytest.approx(2 * majority_rate(0.9, 3, 0.4) - 1)
    assert j.mean() == pytest.approx(true_j, abs=0.01)
    assert var.mean() / j.var() == pytest.approx(1.0, abs=0.15)
    assert (low <= true_j).mean() >= 0.95  # one-sided 97.5%
    once = I.Scenario("t", topics=120, share=0.5, controls=120, per_control=1)
    assert I.simulate(once, 0.0, 20, np.random.default_rng(9)).rho is None  # judged once
