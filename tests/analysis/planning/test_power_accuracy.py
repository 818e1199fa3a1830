"""`harness power` and prereg.md with reviewer accuracy."""

from __future__ import annotations

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.planning.power_analysis import power
from harness.analysis.planning.preregister import controls_lines
from harness.analysis.statistics.decisive import youden_bound

PLAN = load_plan(bundled_plan_path()).plan


def _accuracy(plan):
    """`harness power`'s figures at 200 topics without the adjudicated section (adjudicated=0):
    the accuracy section does not use its simulation."""
    return power(plan=plan, topics=200, adjudicated=0)


def _plan(sens: float, spec: float, controls: int = 100):
    planning = PLAN.planning.model_copy(
        update={"sensitivity": sens, "specificity": spec, "controls": controls}
    )
    return PLAN.model_copy(update={"planning": planning})


def test_power_of_supported_shrinks_with_j():
    perfect = _accuracy(_plan(1.0, 1.0)).accuracy
    weak = _accuracy(_plan(0.7, 0.7)).accuracy
    assert perfect["observed_effect"] == pytest.approx(0.1)
    assert weak["observed_effect"] == pytest.approx(0.04)
    assert weak["supported_power"] < perfect["supported_power"]
    assert weak["supported_needed"] > perfect["supported_needed"]


def test_refutation_needs_enough_controls_and_accuracy():
    a = _accuracy(_plan(0.9, 0.9, controls=100)).accuracy
    assert a["youden_bound"] == pytest.approx(youden_bound(0.9, 0.9, 100, 0.95))
    assert a["controls_needed"] is not None and a["refute_needed"] > 0
    none = _accuracy(_plan(0.6, 0.6))
    assert none.accuracy["controls_needed"] is None
    assert "does NOT reach" in none.summary()


def test_prereg_states_the_controls_section():
    text = "\n".join(controls_lines(PLAN))
    assert "share of the real judgments) to be at least 0.3" in text
    assert "with probability 0.8" in text
    assert "held-out controls only" in text and "Clopper-Pearson" in text
