"""A `supported` against the adjudicators' differential error: the gaps estimated on their
controls, the intersection-union test of the difference above both, and the plan's
`adjudication.differential_error`."""

from __future__ import annotations

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


def _require():
    return PLAN.model_copy(
        update={
            "adjudication": PLAN.adjudication.model_copy(update={"differential_error": "require"})
        }
    )


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
    decision = decide_adjudicated(ppi, PLAN, [], None, inst)
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
    assert decide_adjudicated(ppi, PLAN, [], None, inst).label == "supported"


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
    kept = adjudicated_model_verdicts(models, PLAN, None, inst)
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
    assert "intersection-union" in line and "exceeds 0 and both gaps" in line
    assert "`supported` that is not robust is `inconclusive`" in line
    assert "says whether it is robust" in _differential_line("report")
