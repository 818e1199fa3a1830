"""The gate and the scaled margin when some reviewers of real items judged no controls: they
count as J = 0, so the covered reviewers' bound shrinks by the uncovered share."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.plan.plan_file import load_plan
from harness.analysis.statistics.accuracy import Accuracy
from harness.analysis.statistics.controls import _corrected_equivalence, discrimination_gate
from harness.analysis.statistics.corrected import Corrected
from harness.analysis.statistics.weighted import weighted_accuracy

PLAN = load_plan().plan


def _strong(label: str) -> Accuracy:
    return Accuracy(label, "reviewer", "human", 200, 190, 200, 190, 0.95)  # J = 0.9


def test_uncovered_reviewers_count_as_not_discriminating_in_the_gate():
    full = weighted_accuracy([_strong("a")], {"a": 1.0}, 0.95)
    assert discrimination_gate(full, PLAN)[0]
    # 70 % of the real judgments by a reviewer without controls: 0.3 x J_L < min_youden
    part = weighted_accuracy([_strong("a")], {"a": 0.3, "<none>": 0.7}, 0.95)
    low = part.accuracy.youden_ci()[0]
    assert low >= PLAN.controls.min_youden > 0.3 * low
    ok, reason = discrimination_gate(part, PLAN)
    assert not ok and "count as J = 0" in reason and f"{0.3 * low:.3f}" in reason


def test_margin_bound_is_scaled_by_the_covered_share():
    d = np.random.default_rng(3).normal(0.0, 0.05, 200)
    corrected = Corrected("pooled", 0.0, 0.0, -0.01, 0.01, 0.95, 10, 0.0, "")
    consensus = {"b": 0, "c": 0}
    part = weighted_accuracy([_strong("a")], {"a": 0.7, "<none>": 0.3}, 0.95)
    _, bound = _corrected_equivalence(d, part, corrected, PLAN, consensus)
    covered = part.accuracy.youden_lower(PLAN.primary.alpha / 2)
    assert bound == pytest.approx(0.7 * covered)
    full = weighted_accuracy([_strong("a")], {"a": 1.0}, 0.95)
    assert _corrected_equivalence(d, full, corrected, PLAN, consensus)[1] == pytest.approx(covered)
