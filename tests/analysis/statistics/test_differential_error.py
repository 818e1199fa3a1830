"""A `supported` against the adjudicators' differential error: the gaps estimated on their
controls, the bias they add weighted by the single-field arm's rate, the intersection-union test
of the difference above 0 and the bias, and the plan's `adjudication.differential_error`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.planning.preregister import _differential_line
from harness.analysis.simulation.instrument import Batch, robust_to_differential
from harness.analysis.statistics.instrument import measure
from harness.analysis.statistics.joint import smoothed_var
from harness.analysis.statistics.model_verdict import adjudicated_model_verdicts, decide_per_model
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.verdict import decide_adjudicated

PLAN = load_plan(bundled_plan_path()).plan
ALPHA = PLAN.primary.alpha


def _ppi(estimate: float, se: float, n: int = 40):
    d = np.array([estimate - se * np.sqrt(n), estimate + se * np.sqrt(n)] * (n // 2))
    return ppi_mean(d, d, np.array([]), estimator="classical")


def _instrument(cross_false_novel: int, per_form: int = 100, single: bool = True):
    """Two adjudicators' controls: per form `per_form` published and unpublished; on published
    cross-field controls `cross_false_novel` are called novel, every other answer is right."""
    rows = []
    forms = ("cross", "single") if single else ("cross",)
    for form in forms:
        for expected in ("published", "not_published"):
            for i in range(per_form):
                wrong = form == "cross" and expected == "published" and i < cross_false_novel
                verdict = "not_published" if wrong or expected == "not_published" else expected
                rows.append(
                    {
                        "item_id": f"c{form}{expected}{i}",
                        "control_id": f"k{form}{expected}{i}",
                        "reviewer_id": f"adj{i % 2}",
                        "reviewer_kind": "human",
                        "verdict": verdict,
                        "expected": expected,
                        "control_kind": form,
                        "split": "evaluation",
                    }
                )
    return measure(pd.DataFrame(rows), {"adj0": 0.5, "adj1": 0.5}, PLAN)


def _mode(mode: str):
    return PLAN.model_copy(
        update={"adjudication": PLAN.adjudication.model_copy(update={"differential_error": mode})}
    )


def _require():
    return _mode("require")


def _report():
    return _mode("report")


def test_the_bundled_plan_requires_robustness():
    assert PLAN.adjudication.differential_error == "auto"


def _p_above(ppi, gap: float, var: float) -> float:
    return float(stats.t.sf((ppi.estimate - gap) / np.sqrt(ppi.se**2 + var), ppi.df))


def test_a_difference_well_above_the_gaps_is_robust():
    """Two adjudicators, 50 controls each per form and kind, every answer right: both gaps are
    0 with the smoothed variance of 0 of 100 (cross) and 0 of 100 (single), equal shares."""
    inst, ppi = _instrument(0), _ppi(0.3, 0.02)
    error = inst.differential_error(ppi, PLAN)
    assert error.published_gap is not None and error.published_gap.value == 0.0
    var = 2 * 0.25 * (smoothed_var(0, 50) + smoothed_var(0, 50))
    assert error.published_gap.variance == pytest.approx(var)
    assert error.p_above(error.published_gap) == pytest.approx(_p_above(ppi, 0.0, var))
    assert error.robust and error.p_value == pytest.approx(
        max(ppi.p_greater(), _p_above(ppi, 0.0, var))
    )
    decision = decide_adjudicated(ppi, _require(), [], None, inst)
    assert decision.label == "supported"
    assert "robust to it" in (decision.qualifier or "")


def test_a_difference_the_cross_field_errors_could_make_is_not_robust():
    """20 of 100 published cross-field controls called novel, none of the single-field ones:
    a difference of +0.15 could be the adjudicators' own."""
    inst = _instrument(20)
    ppi = _ppi(0.15, 0.03)
    error = inst.differential_error(ppi, PLAN)
    assert error.published_gap is not None
    assert error.published_gap.value == pytest.approx(0.2) and not error.robust
    decision = decide_adjudicated(ppi, _report(), [], None, inst)
    assert decision.label == "supported"
    assert "NOT robust to it" in (decision.qualifier or "")
    required = decide_adjudicated(ppi, _require(), [], None, inst)
    assert required.label == "inconclusive"
    assert "adjudication.differential_error: require" in required.reason


def test_without_single_field_controls_the_error_is_not_measured():
    inst = _instrument(0, single=False)
    ppi = _ppi(0.3, 0.02)
    error = inst.differential_error(ppi, PLAN)
    assert error.p_value is None and not error.robust
    assert "not measured" in error.text() and "100 / 0 published" in error.text()
    assert decide_adjudicated(ppi, _require(), [], None, inst).label == "inconclusive"
    assert decide_adjudicated(ppi, _report(), [], None, inst).label == "supported"


def test_a_majority_is_estimated_on_its_own_scale_as_the_simulation():
    """A majority of 3 magnifies a gap: M(rate_x) - M(rate_s) with the delta method; the
    vectorised rule of the simulation decides the same."""
    plan = PLAN.model_copy(
        update={
            "adjudication": PLAN.adjudication.model_copy(
                update={"combine": "majority", "per_item": 3}
            )
        }
    )
    inst, ppi = _instrument(20), _ppi(0.3, 0.02)
    error = inst.differential_error(ppi, plan)

    def m(p: float) -> float:
        return float(stats.binom.sf(1, 3, p))

    assert error.published_gap is not None
    assert error.published_gap.value == pytest.approx(m(0.2) - m(0.0))
    forms = np.zeros((1, 2, 4, 2))
    forms[..., 0] = 50
    forms[0, :, :, 1] = [40, 50, 50, 50]  # correct: published cross 10 of 50 called novel
    for majority, p in ((3, plan), (0, PLAN)):
        batch = Batch(*([np.zeros((1, 2))] * 3), np.zeros(1), 0.0, *([np.ones(1)] * 4))
        batch = Batch(**{**batch.__dict__, "forms": forms, "majority": majority})
        theta, se, df = (np.array([x]) for x in (ppi.estimate, ppi.se, ppi.df))
        robust = robust_to_differential(batch, theta, se, df, ALPHA)[0]
        assert robust == inst.differential_error(ppi, p).robust


def test_the_guard_keeps_its_size_by_simulation():
    """Adjudicators 0.1 more often wrongly call cross-field items novel (and the primary
    reviewers alike), no true difference, the bank with the planned controls: `supported`
    comes out in about 40% of studies, supported and robust in at most alpha (2,000 studies)."""
    from harness.analysis.simulation.instrument import Scenario, auto_rule, simulate

    cell = Scenario("shared", mode="differential", differential=0.1)
    decided = auto_rule(simulate(cell, 0.0, 2000, np.random.default_rng(3)), ALPHA, 0.1, 0.3, 12)
    assert decided.supported.mean() > 0.2
    assert decided.robust is not None and decided.robust.mean() <= ALPHA


def test_each_model_significant_after_holm_must_be_robust_when_the_plan_requires_it():
    inst, ppi = _instrument(20), _ppi(0.15, 0.03)
    models = [("m1", ppi), ("m2", ppi)]
    kept = adjudicated_model_verdicts(models, _report(), None, inst)
    assert [v.label for v in kept] == ["supported", "supported"]
    assert "NOT robust" in kept[0].reason
    required = adjudicated_model_verdicts(models, _require(), None, inst)
    assert [v.label for v in required] == ["inconclusive", "inconclusive"]
    assert decide_per_model(required, []).label == "inconclusive"


def test_several_models_are_checked_at_the_familys_alpha():
    """Each of m models at alpha / m (Bonferroni over the models): the same p, a smaller alpha."""
    inst, ppi = _instrument(0), _ppi(0.3, 0.02)
    assert inst.differential_error(ppi, PLAN, ALPHA / 2).alpha == ALPHA / 2


def test_the_preregistration_states_the_rule_it_runs():
    line = _differential_line("require")
    assert "intersection-union" in line and "exceeds 0 and b" in line
    assert "`supported` or `refuted` that is not robust is `inconclusive`" in line
    assert "corrected for them" in line and "below +SESOI" in line
    assert "says whether it is robust" in _differential_line("report")


def _exact_controls(n: int) -> list[dict[str, object]]:
    """One adjudicator's n controls of each form and kind, called novel at exactly fnr 0.3 /
    0.1 (published cross / single) and tpr 0.9 / 0.8 (unpublished cross / single)."""
    rates = {("published", "cross"): 0.3, ("published", "single"): 0.1}
    rates |= {("not_published", "cross"): 0.9, ("not_published", "single"): 0.8}
    return [
        {"reviewer_id": "adj", "expected": kind, "control_kind": form, "novel": float(i < r * n)}
        for (kind, form), r in rates.items()
        for i in range(n)
    ]


def test_the_bias_is_the_expected_difference_without_a_true_one():
    """Exact rates (no sampling): fnr 0.1 / 0.3 and tpr 0.8 / 0.9 on single- / cross-field
    controls, and a single-field arm whose true novel rate is 0.25 in both arms: the adjudicated
    difference a study expects, pi (tpr_x - tpr_s) + (1 - pi) (fnr_x - fnr_s), is the bias."""
    from harness.analysis.statistics.differential_error import ArmRate, differential_error

    n, pi = 1000, 0.25
    rows = _exact_controls(n)
    p_single = pi * 0.8 + (1 - pi) * 0.1  # what the adjudicators see in the single-field arm
    expected = pi * (0.9 - 0.8) + (1 - pi) * (0.3 - 0.1)
    error = differential_error(
        pd.DataFrame(rows), {"adj": 1.0}, _ppi(0.3, 0.02), ALPHA, single=ArmRate(p_single, 0.0)
    )
    assert error.bias is not None and error.bias.rate == pytest.approx(pi)
    assert error.bias.value == pytest.approx(expected)
    # the delta method's variance, by numerical differentiation of b in the five rates it is
    # made of (the single-field controls enter both the gaps and pi_s)
    rates = {"fx": (300, 0.3), "fs": (100, 0.1), "tx": (900, 0.9), "ts": (800, 0.8)}
    var = _numeric_delta_var(rates, n, p_single, 0.0)
    assert error.bias.variance == pytest.approx(var, rel=1e-6)
    assert error.p_value == pytest.approx(max(error.ppi.p_greater(), error.p_above(error.bias)))


def _b(fx: float, fs: float, tx: float, ts: float, ps: float) -> float:
    pi = (ps - fs) / (ts - fs)
    return (1 - pi) * (fx - fs) + pi * (tx - ts)


def _numeric_delta_var(
    rates: dict[str, tuple[int, float]], n: int, p_single: float, var_p: float
) -> float:
    """sum_i (db / dx_i)^2 var x_i by central differences: an independent check of the
    analytic gradient (each control rate's variance is the smoothed one of k of n)."""
    x = {key: r for key, (_, r) in rates.items()} | {"ps": p_single}
    var = {key: smoothed_var(k, n) for key, (k, _) in rates.items()} | {"ps": var_p}
    total = 0.0
    for key in x:
        h = 1e-6
        up, down = dict(x), dict(x)
        up[key] += h
        down[key] -= h
        total += ((_b(**up) - _b(**down)) / (2 * h)) ** 2 * var[key]
    return total


def test_the_variance_carries_the_single_field_controls_and_the_arm_in_both_places():
    """Gaps of opposite signs (g_unpub - g_pub > 0, where leaving out the single-field controls'
    double part understates the variance) and an arm that covaries with theta: b's variance is
    the numerical delta method's, and theta - b's variance subtracts twice their covariance."""
    from harness.analysis.statistics.differential_error import ArmRate, differential_error

    n = 200
    cells = {("published", "cross"): 20, ("published", "single"): 40}
    cells |= {("not_published", "cross"): 190, ("not_published", "single"): 150}
    rows = [
        {"reviewer_id": "adj", "expected": kind, "control_kind": form, "novel": float(i < k)}
        for (kind, form), k in cells.items()
        for i in range(n)
    ]
    single = np.array([0.3, 0.5, 0.2, 0.6, 0.4, 0.35])
    rectifier = np.array([0.1, 0.3, -0.1, 0.2, 0.15, 0.05])
    arm = ArmRate.of(single, rectifier)
    assert arm.covariance == pytest.approx(np.cov(single, rectifier)[0, 1] / single.size)
    ppi = _ppi(0.2, 0.03)
    error = differential_error(pd.DataFrame(rows), {"adj": 1.0}, ppi, ALPHA, single=arm)
    rates = {"fx": (20, 0.1), "fs": (40, 0.2), "tx": (190, 0.95), "ts": (150, 0.75)}
    assert error.bias is not None
    assert error.bias.variance == pytest.approx(
        _numeric_delta_var(rates, n, arm.rate, arm.variance), rel=1e-6
    )
    # cov(theta, b) = db/dp_s cov(theta, p_s), with db/dp_s = D / J_s
    d_over_j = ((0.95 - 0.75) - (0.1 - 0.2)) / (0.75 - 0.2)
    assert error.bias.covariance == pytest.approx(d_over_j * arm.covariance)
    var = ppi.se**2 + error.bias.variance - 2 * error.bias.covariance
    assert error.p_above(error.bias) == pytest.approx(
        _p_above(ppi, error.bias.value, var - ppi.se**2)
    )


def test_the_variance_of_theta_less_b_holds_by_simulation():
    """The vectorised twin's var(theta - b) against the spread of theta - b over simulated
    studies, where the single-field controls' double part matters (g_unpub > g_pub: cross-field
    items recognised as unpublished more often, single-field ones less)."""
    from harness.analysis.simulation.instrument import _bias_at, _scale_rates, ppi_t

    rng = np.random.default_rng(5)
    studies, topics, per = 4000, 60, 60
    rates = np.array([0.15, 0.15, 0.95, 0.7])  # novel calls: published x, s; unpublished x, s
    forms = np.zeros((studies, 1, 4, 2))
    forms[..., 0] = per
    novel = rng.binomial(per, rates, (studies, 1, 4))
    forms[..., 1] = np.concatenate([per - novel[..., :2], novel[..., 2:]], axis=-1)
    pi_s = 0.3
    p_s = pi_s * 0.7 + (1 - pi_s) * 0.15
    single = rng.binomial(4, p_s, (studies, topics)) / 4
    cross = rng.binomial(2, pi_s * 0.95 + (1 - pi_s) * 0.15, (studies, topics)) / 2
    d = cross - single
    batch = Batch(d, d.copy(), np.zeros((studies, 0)), np.zeros(studies), 0.0,
                  *([np.ones(studies)] * 4), forms=forms, single=single)  # fmt: skip
    theta, se, _ = ppi_t(batch)
    value, var, tie = _scale_rates(batch)
    bias, var_b, cov, _, _ = _bias_at(batch, single, value, var, tie, 1)
    spread = np.var(theta - bias)
    predicted = np.mean(se**2 + var_b - 2 * cov)
    assert predicted == pytest.approx(spread, rel=0.08)
    # the earlier form (no double part, no covariance) understated it by more than that
    assert np.mean(se**2 + var_b - (var[:, 1] + var[:, 3]) * 0.9) < spread


def test_weighting_gives_power_the_larger_gap_lacks():
    """A difference of +0.15 against a published gap of +0.2 and no unpublished gap: not above
    the larger gap, but above the bias when the single-field arm's novel rate is high."""
    from harness.analysis.statistics.differential_error import ArmRate

    inst, ppi = _instrument(80, per_form=400), _ppi(0.15, 0.01)
    assert not inst.differential_error(ppi, PLAN).robust  # no single-field arm: both gaps
    arm = ArmRate(0.6, 0.0004)  # pi_s 0.6: b = 0.4 x 0.2 = 0.08
    error = replace(inst, single=arm).differential_error(ppi, PLAN)
    assert error.bias is not None and error.bias.value == pytest.approx(0.08, abs=0.001)
    assert error.robust and "robust to it" in error.text()


def _twin_controls() -> list[dict[str, object]]:
    """The controls of the twin tests' `forms`: per adjudicator 50 of each form and kind, novel
    calls 10 (published cross), 0 (published single), 45 and 50 (unpublished cross, single)."""
    cells = (("cross", "published", 10), ("single", "published", 0))
    cells += (("cross", "not_published", 45), ("single", "not_published", 50))
    return [
        {"reviewer_id": r, "expected": e, "control_kind": f, "novel": float(k < novel)}
        for f, e, novel in cells
        for r in ("adj0", "adj1")
        for k in range(50)
    ]


def test_the_simulation_weights_the_bias_as_the_analysis():
    """The vectorised guard and `statistics.differential_error` decide alike across differences
    near the bias, for equal shares and a given single-field arm."""
    from harness.analysis.simulation.instrument import _bias_at, _scale_rates
    from harness.analysis.statistics.differential_error import ArmRate

    inst = _instrument(20)
    single = np.array([[0.5, 0.7, 0.6, 0.4]])  # per-topic single-field rates, drawn topics
    d = np.array([[0.1, -0.2, 0.3, 0.2]])  # per-topic differences (no primary-only topics)
    arm = ArmRate.of(single[0], d[0])
    forms = np.zeros((1, 2, 4, 2))
    forms[..., 0] = 50
    forms[0, :, :, 1] = [40, 50, 45, 50]
    batch = Batch(d, d, np.zeros((1, 0)), np.zeros(1), 0.0, *([np.ones(1)] * 4))
    batch = Batch(**{**batch.__dict__, "forms": forms, "single": single})
    inst = replace(inst, coded=pd.DataFrame(_twin_controls()))
    bias = replace(inst, single=arm).differential_error(_ppi(0.2, 0.02), PLAN).bias
    value, var, tie = _scale_rates(batch)
    twin = [float(x[0]) for x in _bias_at(batch, single, value, var, tie, 1)]
    assert bias is not None
    assert (bias.value, bias.variance, bias.covariance, bias.rate) == pytest.approx(twin[:4])
    decided = []
    for estimate in np.linspace(0.0, 0.2, 41):
        ppi = _ppi(float(estimate), 0.02)
        theta, se, df = (np.array([x]) for x in (ppi.estimate, ppi.se, ppi.df))
        simulated = bool(robust_to_differential(batch, theta, se, df, ALPHA)[0])
        assert simulated == replace(inst, single=arm).differential_error(ppi, PLAN).robust
        decided.append(simulated)
    assert any(decided) and not all(decided)


def test_auto_requires_robustness_only_where_the_controls_measure_the_error():
    """The bundled `auto`: with both forms planted a difference the cross-field errors could
    make is inconclusive; without single-field controls it stays supported and says the error
    is not measured."""
    ppi = _ppi(0.15, 0.03)
    measured = decide_adjudicated(ppi, PLAN, [], None, _instrument(20))
    assert measured.label == "inconclusive" and "NOT robust" in measured.reason
    unmeasured = decide_adjudicated(ppi, PLAN, [], None, _instrument(20, single=False))
    assert unmeasured.label == "supported" and "not measured" in (unmeasured.qualifier or "")
    assert "both forms" in _differential_line("auto")


def test_the_corrected_difference_is_the_true_one_with_exact_rates():
    """Exact rates as above, true novel rates 0.45 (cross) and 0.25 (single): the adjudicated
    difference they make, corrected for the differential error, is exactly 0.20, and Fieller's
    interval (hardly any uncertainty but theta's) is theta's interval less the bias at the
    cross-field rate, 0.45 x 0.1 + 0.55 x 0.2, divided by J_s = 0.7."""
    from harness.analysis.statistics.differential_error import ArmRate, differential_error

    n, pi_x, pi_s = 100_000, 0.45, 0.25
    rows = _exact_controls(n)
    p_x, p_s = pi_x * 0.9 + (1 - pi_x) * 0.3, pi_s * 0.8 + (1 - pi_s) * 0.1
    ppi = _ppi(p_x - p_s, 0.01)
    arms = ArmRate(p_s, 0.0), ArmRate(p_x, 0.0)
    error = differential_error(pd.DataFrame(rows), {"adj": 1.0}, ppi, ALPHA, 0, *arms)
    c = error.corrected
    assert c is not None and c.estimate == pytest.approx(pi_x - pi_s, abs=1e-9)
    low, high = ppi.interval(1 - ALPHA)
    assert (c.low, c.high) == pytest.approx(((low - 0.155) / 0.7, (high - 0.155) / 0.7), abs=2e-3)
    assert "corrected for it, the true difference is +0.200" in error.text()
    assert error.record()["corrected"]["estimate"] == pytest.approx(0.2)


def test_the_simulation_corrects_the_difference_as_the_analysis():
    from harness.analysis.simulation.instrument import corrected_interval
    from harness.analysis.statistics.differential_error import ArmRate

    single, cross = np.array([[0.3, 0.5, 0.4, 0.2]]), np.array([[0.6, 0.7, 0.5, 0.6]])
    arms = {
        k: ArmRate(float(v.mean()), float(v.var(ddof=1) / v.size))
        for k, v in (("single", single), ("cross", cross))
    }
    forms = np.zeros((1, 2, 4, 2))
    forms[..., 0] = 50
    forms[0, :, :, 1] = [40, 50, 45, 50]
    d = cross - single  # the per-topic differences (no primary-only topics)
    arms = {k: ArmRate.of(v[0], d[0]) for k, v in (("single", single), ("cross", cross))}
    batch = Batch(d, d, np.zeros((1, 0)), np.zeros(1), 0.0, *([np.ones(1)] * 4))
    batch = Batch(**{**batch.__dict__, "forms": forms, "single": single, "cross": cross})
    ppi = _ppi(0.25, 0.03)
    theta, se, df = (np.array([x]) for x in (ppi.estimate, ppi.se, ppi.df))
    fixed = corrected_interval(batch, theta, se, df, ALPHA)
    assert fixed is not None
    rows = _twin_controls()
    from harness.analysis.statistics.differential_error import differential_error

    error = differential_error(
        pd.DataFrame(rows), {"adj0": 0.5, "adj1": 0.5}, ppi, ALPHA, 0, arms["single"], arms["cross"]
    )
    assert error.corrected is not None
    assert (error.corrected.low, error.corrected.high) == pytest.approx(
        (float(fixed[0][0]), float(fixed[1][0]))
    )


def test_fieller_with_a_covariance_is_the_set_it_defines():
    """The corrected interval's numerator covaries with J_s (both use the single-field
    controls): Fieller's ends are the ends of {delta: (theta - delta j)^2 <= q^2 (se^2 -
    2 delta cov + delta^2 var_j)}, found here on a fine grid."""
    from harness.analysis.statistics.joint import fieller

    for cov in (-0.001, 0.0, 0.0015):
        theta, se, j, var_j, q = 0.2, 0.05, 0.7, 0.004, 1.96
        low, high = fieller(theta, se, j, var_j, q, cov)
        grid = np.linspace(-1, 1, 400_001)
        inside = (theta - grid * j) ** 2 <= q * q * (se**2 - 2 * grid * cov + grid**2 * var_j)
        assert (low, high) == pytest.approx((grid[inside].min(), grid[inside].max()), abs=1e-5)


def test_a_clipped_rate_does_not_move_with_its_estimates():
    """A single-field arm below the false-novel rate (pi_s clipped to 0): b is the published gap,
    its variance the gap's alone, with no part from the arm and no covariance with theta."""
    from harness.analysis.statistics.differential_error import ArmRate, differential_error

    n = 200
    rows = _exact_controls(n)
    arm = ArmRate(0.05, 0.001, 0.0005)  # below fnr_s 0.1
    error = differential_error(pd.DataFrame(rows), {"adj": 1.0}, _ppi(0.3, 0.02), ALPHA, single=arm)
    assert error.bias is not None and error.bias.rate == 0.0
    assert error.bias.value == pytest.approx(0.3 - 0.1)
    assert error.bias.variance == pytest.approx(smoothed_var(60, n) + smoothed_var(20, n))
    assert error.bias.covariance == 0.0


def test_a_majority_of_adjudicators_who_agree_on_every_control_has_their_own_gap():
    """Three adjudicators make the same call on every shared control (20 of 100 published
    cross-field controls called novel, no single-field one): their majority says what each says,
    so the published gap on the majority's scale is about 0.2, not the binomial majority's
    M(0.2) - M(0) = 0.104 that independent adjudicators would give."""
    from harness.analysis.statistics.differential_error import differential_error

    rows = [
        {
            "reviewer_id": f"adj{a}",
            "control_id": f"{form}-{kind}-{i}",
            "expected": kind,
            "control_kind": form,
            "novel": float(kind == "not_published" or (form == "cross" and i < 20)),
        }
        for form in ("cross", "single")
        for kind in ("published", "not_published")
        for i in range(100)
        for a in range(3)
    ]
    shares = {f"adj{a}": 1 / 3 for a in range(3)}
    error = differential_error(pd.DataFrame(rows), shares, _ppi(0.3, 0.02), ALPHA, 3)
    assert error.published_gap is not None
    assert error.published_gap.value == pytest.approx(0.2, abs=0.01)


def test_a_majoritys_bias_with_shared_controls_is_the_analysis_one():
    """Three adjudicators, each control judged by two of them, controls that differ in
    difficulty: the twin's J (value, variance, gate bound) and its bias b (value, variance)
    on a majority's scale are the analysis' on the same calls, each kind's correlation of
    calls on one control and its uncertainty included."""
    from harness.analysis.simulation import instrument as I
    from harness.analysis.statistics.differential_error import ArmRate

    rng = np.random.default_rng(12)
    right = (0.8, 0.9, 0.9, 0.75)  # published cross, single; unpublished cross, single
    calls, who, rows = [], [], []
    for form, (rate, (kind, shape)) in enumerate(zip(right, _cells(), strict=True)):
        units = 60
        p = rng.beta(rate * 2.0, (1 - rate) * 2.0, units)
        calls.append((rng.random((units, 2)) < p[:, None])[None])
        who.append((np.arange(units)[:, None] * 2 + np.arange(2)) % 3)
        for u in range(units):
            for j in range(2):
                novel = calls[-1][0, u, j] == (kind == "not_published")
                rows.append({
                    "item_id": f"i{form}-{u}-{j}", "control_id": f"k{form}-{u}",
                    "reviewer_id": f"adj{who[-1][u, j]}", "reviewer_kind": "human",
                    "verdict": "not_published" if novel else "published", "expected": kind,
                    "control_kind": shape, "split": "evaluation",
                })  # fmt: skip
    plan = PLAN.model_copy(
        update={"adjudication": PLAN.adjudication.model_copy(update={"combine": "majority", "per_item": 3})}
    )  # fmt: skip
    shares = {f"adj{a}": 1 / 3 for a in range(3)}
    inst = measure(pd.DataFrame(rows), shares, plan)
    ctl = I._summarised(calls, who, 3)
    single = np.array([[0.5, 0.7, 0.6, 0.4, 0.3]])
    d = np.array([[0.1, -0.2, 0.3, 0.2, 0.1]])
    (pub, pub_ok), (unpub, unpub_ok) = ctl.kinds.transpose(1, 2, 0)
    batch = Batch(d, d, np.zeros((1, 0)), np.zeros(1), 0.0, pub, pub_ok, unpub, unpub_ok,
                  forms=ctl.forms, single=single, majority=3, rho=ctl.rho,
                  rho_var=ctl.rho_var, rho_cov=ctl.rho_cov)  # fmt: skip
    j, var_j, low = I.youden(batch, plan.controls.level)
    est = inst.estimate
    assert est is not None
    assert (est.value, est.variance, est.lower) == pytest.approx((j[0], var_j[0], low[0]), rel=1e-3)
    bias = (
        replace(inst, single=ArmRate.of(single[0], d[0]))
        .differential_error(_ppi(0.2, 0.02), plan)
        .bias
    )
    value, var, tie = I._scale_rates(batch)
    twin = [float(x[0]) for x in I._bias_at(batch, single, value, var, tie, 1)]
    assert bias is not None
    assert bias.value == pytest.approx(twin[0], rel=1e-6)
    # the twin smooths effective counts, n / deff + 2, where the analysis scales the variance
    # of n + 2 by deff: a few percent apart at 60 controls a cell
    assert bias.variance == pytest.approx(twin[1], rel=0.03)
    assert float(ctl.rho_var.min()) > 0  # the correlation's uncertainty is in both


def _cells() -> list[tuple[str, str]]:
    return [("published", "cross"), ("published", "single"), ("not_published", "cross"),
            ("not_published", "single")]  # fmt: skip


def _against(missed: int, per_form: int = 100):
    """Two adjudicators' controls, every answer right but `missed` unpublished cross-field
    controls called published: an error against the hypothesis (cross-field novelty missed)."""
    rows = []
    for form in ("cross", "single"):
        for expected in ("published", "not_published"):
            for i in range(per_form):
                wrong = form == "cross" and expected == "not_published" and i < missed
                verdict = (
                    ("published" if expected == "not_published" else "not_published")
                    if wrong
                    else expected
                )
                rows.append({
                    "item_id": f"c{form}{expected}{i}", "control_id": f"k{form}{expected}{i}",
                    "reviewer_id": f"adj{i % 2}", "reviewer_kind": "human", "verdict": verdict,
                    "expected": expected, "control_kind": form, "split": "evaluation",
                })  # fmt: skip
    return measure(pd.DataFrame(rows), {"adj0": 0.5, "adj1": 0.5}, PLAN)


def test_a_refuted_must_survive_differential_error_against_the_hypothesis():
    """No adjudicated difference (0.000, SE 0.01): the joint test refutes. But where the
    adjudicators miss cross-field novelty (30 of 100 unpublished cross-field controls called
    published) the difference corrected for that error is about +0.13, so under `auto` the
    verdict is inconclusive and says why; under `report` it stays refuted; with no such error
    the guard passes."""
    from harness.analysis.statistics.differential_error import ArmRate

    arms = {"single": ArmRate(0.3, 0.0004), "cross": ArmRate(0.3, 0.0004)}
    ppi = _ppi(0.0, 0.01)
    erring = replace(_against(30), **arms)
    held = decide_adjudicated(ppi, PLAN, [], None, erring)
    assert held.label == "inconclusive"
    assert "robust to the adjudicators' differential error" in held.reason
    assert "corrected for it is not shown below +0.1" in held.reason
    report = PLAN.model_copy(
        update={"adjudication": PLAN.adjudication.model_copy(update={"differential_error": "report"})}
    )  # fmt: skip
    assert decide_adjudicated(ppi, report, [], None, erring).label == "refuted"
    honest = replace(_against(0), **arms)
    assert decide_adjudicated(ppi, PLAN, [], None, honest).label == "refuted"


def test_majority_rates_treat_a_rounding_correlation_as_none():
    """A design effect of 1 plus rounding gives rho near 1e-16: the binomial, not a
    beta-binomial of concentration 1e16 (which returned 0 or 1)."""
    from harness.analysis.statistics.joint import majority_rate, majority_slope

    for tiny in (1e-16, 2.2e-16, 1e-9):
        assert float(majority_rate(0.84, 3, tiny)) == pytest.approx(float(majority_rate(0.84, 3)))
        assert float(majority_slope(0.84, 3, tiny)) == pytest.approx(float(majority_slope(0.84, 3)))


def test_the_refute_guard_reads_the_t_reference_below_finite_below():
    """Below `finite_below` the verdict's tests are betting ones (no reference distribution):
    the corrected difference's Fieller limit still reads the t reference of the point estimate,
    as the simulated rule that the benchmark measures does (a normal quantile put it 0.045
    lower on average at 12 topics)."""
    from harness.analysis.statistics.differential_error import ArmRate
    from harness.analysis.statistics.ppi_betting import betting_ppi
    from harness.analysis.statistics.verdict import refute_guard

    rng = np.random.default_rng(3)
    d, f, fu = rng.normal(0.0, 0.3, 8), rng.normal(0.0, 0.3, 8), rng.normal(0.0, 0.3, 24)
    point = ppi_mean(d, f, fu)
    betting = betting_ppi(point, d, f, fu, alpha=ALPHA)
    arms = {"single": ArmRate(0.3, 0.004), "cross": ArmRate(0.3, 0.004)}
    inst = replace(_against(10), **arms)
    said = refute_guard(betting, PLAN, inst)
    assert said is not None and said == refute_guard(point, PLAN, inst)
