"""Controls judged by several adjudicators: the design effect of items as clusters, by hand and
by simulation of control items that differ in difficulty."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.statistics.clustered import design_effect
from harness.analysis.statistics.instrument import measure

PLAN = load_plan(bundled_plan_path()).plan
SHARES = {"adj0": 0.5, "adj1": 0.5}


def _frame(calls: np.ndarray, expected: str, shared: bool) -> pd.DataFrame:
    """calls[i, a]: adjudicator a's call on control i ("novel" 1.0); `shared`: both judge the
    same control i, else each its own."""
    rows = []
    for i, row in enumerate(calls):
        for a, novel in enumerate(row):
            control = f"{expected}-{i}" if shared else f"{expected}-{i}-{a}"
            rows.append(
                {
                    "item_id": control,
                    "control_id": control,
                    "reviewer_id": f"adj{a}",
                    "reviewer_kind": "human",
                    "verdict": "not_published" if novel else "published",
                    "expected": expected,
                    "control_kind": "cross",
                    "split": "evaluation",
                }
            )
    return pd.DataFrame(rows)


def _coded(frame: pd.DataFrame) -> pd.DataFrame:
    expected_novel = frame["expected"] == "not_published"
    novel = (frame["verdict"] == "not_published").astype(float)
    return frame.assign(novel=novel, correct=(novel == 1.0) == expected_novel)


def _study(rng: np.random.Generator, mean: float, n: int, adjudicators: int) -> pd.DataFrame:
    """n published and n unpublished controls, each judged by every adjudicator, each
    control's chance of a right call Beta with `mean` and concentration 1.5."""
    frames = []
    for expected in ("published", "not_published"):
        right = rng.beta(mean * 1.5, (1 - mean) * 1.5, n)
        ok = rng.random((n, adjudicators)) < right[:, None]
        frames.append(_frame(ok if expected == "not_published" else ~ok, expected, True))
    return pd.concat(frames, ignore_index=True)


def test_no_control_judged_twice_has_no_design_effect():
    rng = np.random.default_rng(1)
    calls = rng.random((40, 2)) < 0.2
    cell = _coded(_frame(calls, "published", shared=False))
    assert design_effect(cell, SHARES, "correct") == 1.0
    assert design_effect(cell.drop(columns="control_id"), SHARES, "correct") == 1.0


def test_two_adjudicators_who_always_agree_count_as_one():
    """Identical calls on every shared control, equal shares and counts: the weighted rate is
    one adjudicator's, so its variance is twice what independent judgments would give."""
    rng = np.random.default_rng(2)
    one = rng.random(50) < 0.3
    cell = _coded(_frame(np.stack([one, one], axis=1), "published", shared=True))
    assert design_effect(cell, SHARES, "correct") == pytest.approx(2.0)


def test_the_variance_of_j_holds_when_controls_differ_in_difficulty():
    """Two adjudicators judge the same 60 published and 60 unpublished controls, each control's
    chance of a right call drawn from Beta with mean 0.85 and concentration 1.5 (the calls of
    two adjudicators on one control correlate 0.4): J's stated variance, with the design
    effect, is the spread of its estimate over simulated studies; without it, 0.71 of it."""
    insts = _measured(np.random.default_rng(3), 300, (0.85, 60, 2), SHARES, PLAN)
    values, variances, _ = _estimates(insts)
    published = [i.coded[i.coded["expected"] == "published"] for i in insts]
    deffs = [design_effect(cell, SHARES, "correct") for cell in published]
    spread = float(np.var(values, ddof=1))
    assert float(np.mean(variances)) == pytest.approx(spread, rel=0.2)
    assert float(np.mean(deffs)) == pytest.approx(1.4, abs=0.15)
    assert float(np.mean(variances)) / float(np.mean(deffs)) < 0.85 * spread


def _measured(rng, studies: int, design: tuple[float, int, int], shares, plan) -> list:
    """The adjudicators measured on `studies` simulated studies (`_study`'s mean accuracy,
    controls of a kind and adjudicators)."""
    return [measure(_study(rng, *design), shares, plan) for _ in range(studies)]


def _estimates(insts: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each study's J, its stated variance and the gate's lower bound."""
    assert all(i.estimate is not None for i in insts)
    rows = [(i.estimate.value, i.estimate.variance, i.estimate.lower) for i in insts]
    value, variance, lower = np.array(rows).T
    return value, variance, lower


def _majority_of_three():
    plan = PLAN.model_copy(
        update={
            "adjudication": PLAN.adjudication.model_copy(
                update={"combine": "majority", "per_item": 3}
            )
        }
    )
    return plan, {"adj0": 1 / 3, "adj1": 1 / 3, "adj2": 1 / 3}


def _true_majority(mean: float, concentration: float, k: int = 3) -> float:
    """P(a majority of k right) when each control's chance of a right call is Beta(mean,
    concentration): the binomial tail averaged over the Beta by quadrature (a reference
    independent of the beta-binomial formula)."""
    from scipy import integrate, stats

    a, b = mean * concentration, (1 - mean) * concentration
    value, _ = integrate.quad(
        lambda p: stats.binom.sf(k // 2, k, p) * stats.beta.pdf(p, a, b), 0, 1, limit=200
    )
    return float(value)


def test_a_majority_of_correlated_raters_is_the_beta_binomial_tail():
    from harness.analysis.statistics.joint import majority_rate

    for mean, concentration in ((0.9, 1.5), (0.85, 5.0), (0.6, 2.0)):
        rho = 1.0 / (1.0 + concentration)
        assert float(majority_rate(mean, 3, rho)) == pytest.approx(
            _true_majority(mean, concentration), abs=1e-6
        )
    assert float(majority_rate(0.9, 3, 0.0)) == pytest.approx(0.972)  # independent: 3p^2 - 2p^3


def test_a_majoritys_j_follows_controls_that_differ_in_difficulty():
    """Three adjudicators judge every one of 100 published and 100 unpublished controls, each
    control's chance of a right call Beta with mean 0.9 and concentration 1.5: the majority's
    true J is 0.84 where independent raters would give 0.94. The estimate through the
    correlation the design effect implies is within 0.03 of the truth on average; assuming
    independence it was 0.1 above."""
    plan, shares = _majority_of_three()
    truth = 2 * _true_majority(0.9, 1.5) - 1
    rng = np.random.default_rng(4)
    estimates, _, _ = _estimates(_measured(rng, 40, (0.9, 100, 3), shares, plan))
    assert truth == pytest.approx(0.837, abs=0.005)
    assert float(np.mean(estimates)) == pytest.approx(truth, abs=0.03)


def test_the_design_effects_variance_is_its_spread():
    """The design effect's delta-method variance and its covariance with the weighted rate
    (each control's influence) against their spread over simulated studies."""
    from harness.analysis.statistics.clustered import design_effect_var

    rng = np.random.default_rng(6)
    draws = []
    for _ in range(400):
        cell = _coded(_study(rng, 0.85, 80, 2))
        cell = cell[cell["expected"] == "published"]
        ratio, var, cov = design_effect_var(cell, SHARES, "correct")
        draws.append((ratio, var, cov, cell["correct"].mean()))
    ratio, var, cov, rate = np.array(draws).T
    assert float(var.mean()) == pytest.approx(float(ratio.var(ddof=1)), rel=0.25)
    assert float(cov.mean()) == pytest.approx(float(np.cov(rate, ratio)[0, 1]), rel=0.3)
    assert float(np.cov(rate, ratio)[0, 1]) < 0  # hard controls: lower rate, higher ratio


def test_a_majoritys_j_carries_the_uncertainty_of_its_correlation():
    """Three adjudicators on 100 + 100 shared controls, accuracy Beta with mean 0.9 and
    concentration 1.5: the majority's J moves with the estimated correlation of their calls,
    so its stated variance includes the correlation's (and its covariance with the rates).
    Without those terms it was 0.6-0.75 of the spread over simulated studies."""
    plan, shares = _majority_of_three()
    truth = 2 * _true_majority(0.9, 1.5) - 1
    values, variances, lowers = _estimates(
        _measured(np.random.default_rng(8), 200, (0.9, 100, 3), shares, plan)
    )
    assert float(np.mean(variances)) == pytest.approx(float(np.var(values, ddof=1)), rel=0.15)
    assert float(np.mean(np.array(lowers) <= truth)) >= 0.94  # one-sided 97.5%


def test_a_correlation_is_never_known_exactly():
    """Only one adjudicator errs on the shared controls: every control's influence on the
    design effect is 0, and the delta method alone would call rho known; its variance is
    floored at its value under independent calls, 2 / (m (m - 1) C)."""
    from harness.analysis.statistics.clustered import correlation, design_effect_var

    calls = np.zeros((40, 2), dtype=bool)
    calls[:4, 0] = True  # adjudicator 0 calls four published controls novel
    cell = _coded(_frame(calls, "published", shared=True))
    ratio, var, _ = design_effect_var(cell, SHARES, "correct")
    assert ratio == pytest.approx(1.0) and var == pytest.approx(0.0, abs=1e-15)
    rho, rho_var, _ = correlation(cell, max(ratio, 1.0), var)
    assert rho == 0.0 and rho_var == pytest.approx(2 / (2 * 1 * 40))
