"""A `supported` against the adjudicators' differential error: the gaps' bound, the tipping
point and the plan's `adjudication.differential`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.planning.preregister import _differential_line
from harness.analysis.simulation.instrument import gap_bound
from harness.analysis.statistics.differential_error import rate_bounds
from harness.analysis.statistics.instrument import measure
from harness.analysis.statistics.model_verdict import adjudicated_model_verdicts, decide_per_model
from harness.analysis.statistics.ppi import ppi_mean
from harness.analysis.statistics.verdict import decide_adjudicated

PLAN = load_plan(bundled_plan_path()).plan
ALPHA = PLAN.primary.alpha


def test_rate_bounds_are_exact_clopper_pearson():
    """0 of 10 at one-sided 0.025: 1 - 0.025^(1/10) = 0.3085 (closed form), and the rest equal
    statsmodels' `proportion_confint(method="beta")`."""
    assert rate_bounds(0, 10, 0.025) == (0.0, pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12))
    for k, n in ((3, 27), (27, 27), (10, 100)):
        low, high = proportion_confint(k, n, alpha=0.05, method="beta")
        assert rate_bounds(k, n, 0.025) == (pytest.approx(low), pytest.approx(high))


@pytest.mark.parametrize(("fnr_x", "fnr_s"), [(0.2, 0.1), (0.1, 0.1), (0.5, 0.3)])
def test_the_gap_bound_covers_by_exact_enumeration(fnr_x, fnr_s):
    """Every outcome of one adjudicator's 27 + 27 published controls: the bound misses the true
    gap with probability at most alpha / 4 (its two rates at alpha / 8 each)."""
    n, k = 27, np.arange(28)
    kx, ks = (a.ravel() for a in np.meshgrid(k, k, indexing="ij"))
    forms = np.zeros((kx.size, 1, 4, 2))
    forms[..., 0] = n
    forms[:, 0, 0, 1], forms[:, 0, 1, 1] = n - kx, n - ks  # correct = not called novel
    forms[:, 0, 2:, 1] = 0  # unpublished called novel never: that gap is 0 - 1
    bound = gap_bound(forms, ALPHA)
    weight = np.outer(stats.binom.pmf(k, n, fnr_x), stats.binom.pmf(k, n, fnr_s)).ravel()
    miss = float(weight[bound < fnr_x - fnr_s].sum())
    assert miss <= ALPHA / 4


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


def test_a_difference_well_above_the_gaps_bound_is_robust():
    """Two adjudicators, 50 controls each per form and kind, every answer right: each gap's
    bound is the cross-field rate's exact upper bound, 0 of 50 at alpha / 16."""
    inst, ppi = _instrument(0), _ppi(0.3, 0.02)
    error = inst.differential_error(ppi, PLAN)
    assert error.gap_published == 0.0 and error.gap_unpublished == 0.0
    assert error.bound == pytest.approx(1 - (ALPHA / 16) ** (1 / 50))
    assert error.tipping == ppi.interval(1 - ALPHA)[0]  # the lower bound at alpha / 2
    assert error.robust
    decision = decide_adjudicated(ppi, _require(), [], None, inst)
    assert decision.label == "supported"
    assert "robust to it" in (decision.qualifier or "")


def test_a_difference_the_cross_field_errors_could_make_is_not_robust():
    """20 of 100 published cross-field controls called novel, none of the single-field ones:
    a difference of +0.15 could be the adjudicators' own."""
    inst = _instrument(20)
    ppi = _ppi(0.15, 0.03)
    error = inst.differential_error(ppi, PLAN)
    assert error.gap_published == pytest.approx(0.2) and not error.robust
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
    assert error.bound is None and not error.robust
    assert "do not measure it" in error.text() and "100 / 0 published" in error.text()
    assert decide_adjudicated(ppi, _require(), [], None, inst).label == "inconclusive"
    assert decide_adjudicated(ppi, PLAN, [], None, inst).label == "supported"


def test_a_tipping_point_below_zero_says_the_difference_is_not_significant_at_half_alpha():
    inst = _instrument(0)
    text = inst.differential_error(_ppi(0.05, 0.03), PLAN).text()
    assert text.startswith("the difference is not significant at one-sided alpha/2")


def test_a_majority_is_bounded_on_its_own_scale():
    """A majority of 3 magnifies a gap (slope up to 1.5): the bound is M(highest cross-field
    rate) - M(lowest single-field rate), as the simulation's."""
    plan = PLAN.model_copy(
        update={
            "adjudication": PLAN.adjudication.model_copy(
                update={"combine": "majority", "per_item": 3}
            )
        }
    )
    inst = _instrument(20)
    error = inst.differential_error(_ppi(0.3, 0.02), plan)
    tail = ALPHA / 16

    def m(p: float) -> float:
        return float(stats.binom.sf(1, 3, p))

    published = m(rate_bounds(10, 50, tail)[1]) - m(rate_bounds(0, 50, tail)[0])
    unpublished = m(1.0) - m(rate_bounds(50, 50, tail)[0])
    assert error.bound == pytest.approx(max(published, unpublished))
    forms = np.zeros((1, 2, 4, 2))
    forms[..., 0] = 50
    forms[0, :, :, 1] = [40, 50, 50, 50]  # correct: published cross 10 of 50 called novel
    assert gap_bound(forms, ALPHA, majority=3)[0] == pytest.approx(error.bound)
    assert gap_bound(forms, ALPHA)[0] == pytest.approx(
        inst.differential_error(_ppi(0.3, 0.02), PLAN).bound
    )


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
    """Each of m models at alpha / m (Bonferroni): its tipping point is its lower bound at
    alpha / (2 m)."""
    inst, ppi = _instrument(0), _ppi(0.3, 0.02)
    error = inst.differential_error(ppi, PLAN, ALPHA / 2)
    assert error.tipping == ppi.interval(1 - ALPHA / 2)[0]
    assert error.bound == pytest.approx(1 - (ALPHA / 32) ** (1 / 50))


def test_the_preregistration_states_the_rule_it_runs():
    line = _differential_line("require")
    assert "Clopper-Pearson" in line and "alpha/(8 x adjudicators)" in line
    assert "`supported` that is not robust is `inconclusive`" in line
    assert "says whether it is robust" in _differential_line("report")
