"""A small version of the controls benchmark (benchmarks/bench_controls.py): hundreds of studies,
tolerances loose enough to be stable."""

from __future__ import annotations

import numpy as np
import pytest

from harness.analysis.plan.plan_file import Design, bundled_plan_path, load_plan
from harness.analysis.run import analyze
from harness.analysis.simulation.known_accuracy import Reviewers, misclassified_batch
from harness.analysis.simulation.study_folder import write_simulated_study
from harness.analysis.simulation.verdicts import simulate_verdicts, youden_bounds
from harness.analysis.statistics.accuracy import Accuracy

PLAN = load_plan(bundled_plan_path()).plan


def _run(reviewers: Reviewers, effect: float, studies: int, seed: int):
    rng = np.random.default_rng(seed)
    batch = misclassified_batch(
        Design(),
        reviewers,
        studies=studies,
        topics=50,
        p_single=0.3,
        effect=effect,
        controls_per_reviewer=30,
        rng=rng,
    )
    return simulate_verdicts(batch, PLAN, rng, resamples=300)


@pytest.mark.parametrize(("sens", "spec"), [(0.0, 1.0), (1.0, 0.0)])
def test_reviewers_who_answer_everything_alike_never_refute(sens, spec):
    v = _run(Reviewers(sens, spec), 0.0, 150, seed=1)
    assert not v.refuted.any() and not v.gate.any() and np.isnan(v.estimate).all()


def test_accurate_reviewers_corrected_estimate_is_unbiased_and_covers():
    v = _run(Reviewers(0.9, 0.85), 0.1, 300, seed=2)
    assert abs(np.nanmean(v.estimate) - 0.1) < 0.02
    covered = np.mean((v.ci_low <= 0.1) & (v.ci_high >= 0.1))
    assert covered > 0.88
    assert v.gate.mean() > 0.5


def test_supported_keeps_its_size_under_non_differential_misclassification():
    v = _run(Reviewers(0.8, 0.8), 0.0, 300, seed=3)
    assert v.supported.mean() < 0.1 and v.refuted.mean() < 0.1


def test_vectorised_youden_bound_equals_the_accuracy_table():
    a = Accuracy("r", "pooled", "human", 40, 33, 35, 29, 0.95)
    got = youden_bounds(np.array([33]), np.array([40]), np.array([29]), np.array([35]), 0.95)
    assert got[0] == pytest.approx(a.youden_ci()[0])


def test_simulated_study_with_controls_is_analysed_with_its_accuracy(tmp_path, fast_plan):
    folder = write_simulated_study(
        tmp_path / "s",
        Design(samples=1, reviewers=3),
        topics=60,
        seed=5,
        controls_per_reviewer=40,
        sensitivity=1.0,
        specificity=1.0,
    )
    result = analyze(folder, fast_plan, write_report=False)
    pooled = next(a for a in result.controls.accuracy if a["scope"] == "pooled")
    assert (pooled["published"], pooled["unpublished"]) == (60, 60)
    assert pooled["youden"] == 1.0 and result.controls.gate_ok
    assert result.controls.corrected == pytest.approx(result.controls.observed)


def test_weighting_by_real_judgments_removes_the_bias_of_pooled_controls():
    """Busy weak reviewers (J 0.3) with 90% of the real judgments, occasional strong ones (J 0.9),
    equal control counts: pooled controls overstate J (about 0.6 against the 0.36 that shrank
    the difference) and under-correct; weighting by the shares recovers the true difference."""
    from harness.analysis.simulation.known_accuracy import mixed_reviewers_batch

    rng = np.random.default_rng(11)
    batch = mixed_reviewers_batch(
        Design(),
        [(0.65, 0.65)] * 2 + [(0.95, 0.95)] * 2,
        [0.45, 0.45, 0.05, 0.05],
        [60] * 4,
        studies=60,
        topics=400,
        p_single=0.3,
        effect=0.1,
        rng=rng,
    )
    shares = simulate_verdicts(batch, PLAN, rng, resamples=100, weighting="shares")
    pooled = simulate_verdicts(batch, PLAN, rng, resamples=100, weighting="controls")
    assert abs(np.nanmean(shares.estimate) - 0.1) < 0.02
    assert np.nanmean(pooled.estimate) < 0.075
    # the weak busy reviewers cannot pass the gate once they are weighted in
    assert shares.gate.mean() < 0.1 < 0.9 < pooled.gate.mean()
    assert not shares.refuted.any()
