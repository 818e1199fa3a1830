"""The verdict rule on constructed results, and the TOST it rests on against statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.weightstats import DescrStatsW, ttost_paired

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.statistics.equivalence import Equivalence, paired_t
from harness.analysis.statistics.primary import PrimaryOutcome
from harness.analysis.statistics.verdict import NO_CONTROLS, AccuracyGate, decide

PLAN = load_plan(bundled_plan_path()).plan


def _primary(p_greater: float, p_less: float, estimate: float) -> PrimaryOutcome:
    return PrimaryOutcome("permutation", None, 60, estimate, -1.0, 1.0, p_greater, p_less)


def _equivalence(p_lower: float, p_upper: float) -> Equivalence:
    return Equivalence("paired_t", 0.10, 0.0, p_lower, p_upper, -0.05, 0.05, 0.05)


def _shown(p_lower: float, p_upper: float) -> AccuracyGate:
    """Reviewers shown to discriminate, with the corrected-scale equivalence given."""
    return AccuracyGate(True, "pooled J = 0.8", _equivalence(p_lower, p_upper))


def _plan(refute_by: str):
    eq = PLAN.equivalence.model_copy(update={"refute_by": refute_by})
    return PLAN.model_copy(update={"equivalence": eq})


def test_significant_in_the_other_direction_is_refuted_not_supported():
    d = decide(_primary(0.99, 0.01, -0.2), _equivalence(0.5, 0.001), PLAN, [], _shown(0.5, 0.5))
    assert d.label == "refuted" and "other way" in d.reason


@pytest.mark.parametrize("p_less", [0.01, 0.5])
def test_nothing_is_refuted_unless_the_reviewers_discriminate(p_less):
    gate = AccuracyGate(
        False,
        "the reviewers could not be shown to discriminate",
        _equivalence(0.001, 0.001),
        "about 80 control judgments",
    )
    for accuracy in (gate, NO_CONTROLS):
        d = decide(_primary(0.5, p_less, 0.0), _equivalence(0.001, 0.001), PLAN, [], accuracy)
        assert d.label == "inconclusive" and "discriminate" in d.reason


def test_supported_does_not_depend_on_accuracy():
    d = decide(_primary(0.01, 0.99, 0.2), _equivalence(0.5, 0.5), PLAN, [], NO_CONTROLS)
    assert d.label == "supported"


def test_refuted_rests_on_the_corrected_equivalence_not_the_observed_one():
    observed_shown = _equivalence(0.001, 0.001)
    d = decide(_primary(0.5, 0.5, 0.0), observed_shown, PLAN, [], _shown(0.2, 0.001))
    assert d.label == "inconclusive"
    d = decide(_primary(0.5, 0.5, 0.0), _equivalence(0.5, 0.5), PLAN, [], _shown(0.001, 0.001))
    assert d.label == "refuted" and "corrected scale" in d.reason


def test_significant_effect_inside_the_margin_is_supported_with_a_qualifier():
    d = decide(_primary(0.01, 0.99, 0.04), _equivalence(0.001, 0.01), PLAN, [])
    assert d.label == "supported" and "smaller than the smallest effect" in d.qualifier


@pytest.mark.parametrize(
    ("refute_by", "label"), [("equivalence", "inconclusive"), ("non_superiority", "refuted")]
)
def test_non_superiority_alone_refutes_only_when_the_plan_says_so(refute_by, label):
    # upper bound shown below +SESOI, lower bound not shown above -SESOI
    d = decide(
        _primary(0.5, 0.5, -0.05),
        _equivalence(0.2, 0.001),
        _plan(refute_by),
        [],
        _shown(0.2, 0.001),
    )
    assert d.label == label


def test_withheld_study_gets_no_verdict_even_when_significant():
    d = decide(_primary(1e-6, 1.0, 0.3), _equivalence(0.5, 0.5), PLAN, ["this is a pilot"])
    assert d.label == "no verdict" and d.reason == "this is a pilot"


def test_paired_tost_matches_statsmodels_at_the_90_percent_interval():
    rng = np.random.default_rng(7)
    d = rng.integers(-4, 5, size=60) / 4 * 0.3 + 0.01
    ours = paired_t(d, 0.10, 0.05)
    p_tost, lower, upper = ttost_paired(d, np.zeros_like(d), -0.10, 0.10)
    assert ours.p_tost == pytest.approx(p_tost)
    assert (ours.p_lower, ours.p_upper) == pytest.approx((lower[1], upper[1]))
    assert (ours.ci_low, ours.ci_high) == pytest.approx(DescrStatsW(d).tconfint_mean(0.10))


def test_per_reviewer_refutation_names_the_corrected_interval_not_a_scaled_margin():
    # the per-reviewer path decides with the bootstrap interval of the corrected difference
    # against the SESOI itself; no J bound scales anything there
    boot = Equivalence("bootstrap", 0.10, 0.01, 0.0, 0.0, -0.06, 0.08, 0.025)
    d = decide(
        _primary(0.5, 0.5, 0.0),
        _equivalence(0.5, 0.5),
        PLAN,
        [],
        AccuracyGate(True, "pooled J = 0.8", boot),
    )
    assert d.label == "refuted"
    assert "95% bootstrap interval of the corrected difference [-0.060, +0.080]" in d.reason
    assert "lower bound of J" not in d.reason and "observed differences" not in d.reason
