"""The per-model verdict rule on constructed studies with several models."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.plan.plan_file import bundled_plan_path, load_plan
from harness.analysis.statistics.across_models import across_models
from harness.analysis.statistics.model_verdict import (
    ModelVerdict,
    corrected_equivalence,
    decide_per_model,
    model_verdicts,
)
from harness.analysis.statistics.verdict import NO_CONTROLS, AccuracyGate

PLAN = load_plan(bundled_plan_path()).plan
GATE = AccuracyGate(True, "pooled J = 0.9")
MODELS = ["a", "b", "c"]


def _study(shifts: list[float], topics: int = 80, seed: int = 1) -> np.ndarray:
    """(topics, models, 3) proportions: singles near 0.3, cross shifted per model."""
    rng = np.random.default_rng(seed)
    base = np.clip(0.3 + rng.normal(0.0, 0.02, (topics, len(shifts), 3)), 0.0, 1.0)
    base[:, :, 2] = np.clip(base[:, :, 2] + np.asarray(shifts), 0.0, 1.0)
    return base


def _verdicts(shifts: list[float], gate: AccuracyGate = GATE, bound: float | None = 1.0):
    across = across_models(_study(shifts), MODELS[: len(shifts)], permutations=2000, seed=5)
    return model_verdicts(across, PLAN, gate, bound)


def test_an_effect_in_one_model_supports_that_model_and_the_study():
    verdicts = _verdicts([0.0, 0.0, 0.3])
    assert [v.label for v in verdicts][2] == "supported"
    assert decide_per_model(verdicts, []).label == "supported"
    assert "c" in decide_per_model(verdicts, []).reason


def test_every_model_inside_the_margin_refutes():
    verdicts = _verdicts([0.0, 0.0, 0.0])
    assert [v.label for v in verdicts] == ["refuted"] * 3
    assert decide_per_model(verdicts, []).label == "refuted"


def test_one_model_not_excluded_keeps_the_study_inconclusive():
    # model c sits at the SESOI: not significant after Holm's alpha, not inside the margin
    rng = np.random.default_rng(9)
    p = _study([0.0, 0.0, 0.0])
    p[:, 2, 2] = np.clip(p[:, 2, 2] + rng.normal(0.05, 0.3, p.shape[0]), 0.0, 1.0)
    verdicts = model_verdicts(across_models(p, MODELS, permutations=2000), PLAN, GATE, 1.0)
    assert verdicts[2].label == "inconclusive"
    assert decide_per_model(verdicts, []).label == "inconclusive"


def test_without_the_accuracy_gate_no_model_is_refuted():
    verdicts = _verdicts([0.0, 0.0, 0.0], gate=NO_CONTROLS)
    assert {v.label for v in verdicts} == {"inconclusive"}
    assert decide_per_model(verdicts, []).label == "inconclusive"


def test_a_small_j_bound_narrows_the_margin_and_blocks_refutation():
    d = np.random.default_rng(2).normal(0.0, 0.2, 60)
    assert corrected_equivalence(d, PLAN, 1.0) is not None
    assert corrected_equivalence(d, PLAN, None) is None
    assert corrected_equivalence(d, PLAN, 0.0) is None
    wide, narrow = corrected_equivalence(d, PLAN, 1.0), corrected_equivalence(d, PLAN, 0.2)
    assert wide is not None and narrow is not None
    assert wide.margin == pytest.approx(0.1) and narrow.margin == pytest.approx(0.02)
    assert wide.alpha == pytest.approx(PLAN.primary.alpha / 2)
    assert wide.p_tost < narrow.p_tost


def test_significant_the_other_way_refutes_that_model():
    verdicts = _verdicts([-0.3, 0.0, 0.0])
    assert verdicts[0].label == "refuted" and "other way" in verdicts[0].reason


def test_withheld_study_gets_no_verdict():
    verdicts = [ModelVerdict("a", "supported", "x"), ModelVerdict("b", "refuted", "y")]
    decision = decide_per_model(verdicts, ["only 10 complete topics"])
    assert decision.label == "no verdict" and decision.withheld == ["only 10 complete topics"]


def test_supported_wins_over_refuted_models():
    verdicts = [ModelVerdict("a", "supported", "x"), ModelVerdict("b", "refuted", "y")]
    assert decide_per_model(verdicts, []).label == "supported"
