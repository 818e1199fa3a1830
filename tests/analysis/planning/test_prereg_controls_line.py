"""The prereg's controls section says `n/a: the assumed J is not above it` only when it is so."""

from __future__ import annotations

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.planning.preregister import controls_lines


def _planning_line(sensitivity: float, specificity: float) -> str:
    plan = load_plan(None).plan
    planning = plan.planning.model_copy(
        update={"sensitivity": sensitivity, "specificity": specificity}
    )
    lines = controls_lines(plan.model_copy(update={"planning": planning}))
    return next(line for line in lines if "Planning assumes" in line)


def test_the_na_reason_appears_only_when_the_assumed_j_is_not_above_min_youden() -> None:
    above = _planning_line(0.9, 0.9)  # J 0.80 above min_youden 0.3
    assert "n/a" not in above and "about 53 control judgments" in above
    below = _planning_line(0.6, 0.6)  # J 0.20
    assert "about n/a control judgments" in below
    assert "(n/a: the assumed J is not above it)" in below
