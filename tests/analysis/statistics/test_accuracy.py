"""Reviewer accuracy: exact intervals against statsmodels, the J interval's coverage, the
differential check, exclusion, and the decisive-study helpers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from harness.analysis.statistics.accuracy import (
    Accuracy,
    accuracy_table,
    clopper_pearson,
    coded_controls,
    differential,
    excluded_reviewers,
    uncounted_controls,
)
from harness.analysis.statistics.decisive import controls_needed, design_effect, gate_power
from harness.analysis.statistics.weighted import weighted_accuracy
from harness.study.manifest_sections import LeakAudit


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 40), (1, 1)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_clopper_pearson_matches_statsmodels(k, n, level):
    ours = clopper_pearson(k, n, level)
    ref = proportion_confint(k, n, alpha=1 - level, method="beta")
    assert ours == pytest.approx(tuple(np.nan_to_num(ref, nan=0.0 if k == 0 else 1.0)))


def test_youden_interval_covers_at_least_its_level_by_exact_enumeration():
    # exact coverage: sum over all outcomes of both binomials (no simulation error)
    n_pub, n_unpub, level = 12, 10, 0.9
    for sens, spec in [(0.6, 0.6), (0.9, 0.7), (0.95, 0.95), (0.5, 0.99)]:
        coverage = 0.0
        for k, m in itertools.product(range(n_pub + 1), range(n_unpub + 1)):
            low, high = Accuracy("r", "reviewer", "human", n_pub, k, n_unpub, m, level).youden_ci()
            if low <= sens + spec - 1 <= high:
                coverage += stats.binom.pmf(k, n_pub, sens) * stats.binom.pmf(m, n_unpub, spec)
        assert coverage >= level


def _frame(rows):
    return pd.DataFrame(
        rows,
        columns=[
            "item_id",
            "control_id",
            "reviewer_id",
            "reviewer_kind",
            "verdict",
            "expected",
            "control_kind",
            "split",
        ],
    )


def test_coding_follows_the_plan_and_automated_reviewers_use_held_out_controls():
    rows = [
        ("i1", "c1", "ann", "human", "published", "published", "cross", "calibration"),
        ("i2", "c2", "ann", "human", "unsure", "published", "single", None),
        ("i3", "c3", "ann", "human", "not_published", "not_published", "cross", None),
        ("i1", "c1", "bot", "automated", "published", "published", "cross", "calibration"),
        ("i4", "c4", "bot", "automated", "not_published", "published", "single", "held_out"),
        ("i3", "c3", "bot", "automated", "unsure", "not_published", "cross", None),
    ]
    table = {a.label: a for a in accuracy_table(coded_controls(_frame(rows), "not_novel"), 0.95)}
    ann, bot = table["ann"], table["bot"]
    # unsure counts as not novel: a correct answer for a published control
    assert (ann.published, ann.published_correct, ann.unpublished_correct) == (2, 2, 1)
    # the calibration control is not counted for the automated reviewer; unsure is a miss
    assert (bot.published, bot.published_correct, bot.unpublished, bot.unpublished_correct) == (
        1,
        0,
        1,
        0,
    )
    assert (
        table["all reviewers, pooled"].published == 3
        and table["all reviewers, pooled"].kind == "mixed"
    )
    assert table["all automated reviewers"].youden == -1.0
    assert excluded_reviewers(list(table.values()), 0.0) == ["bot"]
    excluded = accuracy_table(coded_controls(_frame(rows), "exclude"), 0.95)
    assert {a.label: a.published for a in excluded}["ann"] == 1


def test_control_judgments_that_count_for_nothing_are_said_so():
    rows = [
        ("i1", "c1", "bot", "automated", "published", "published", "cross", "calibration"),
        ("i2", "c2", "bot", "automated", "not_published", "not_published", "cross", "calibration"),
        ("i3", "c3", "ann", "human", "unsure", "published", "single", "held_out"),
        ("i4", "c4", "bot", "automated", "unsure", "published", "single", "held_out"),
    ]
    frame = _frame(rows)
    assert coded_controls(frame, "exclude").empty
    assert uncounted_controls(frame, "exclude") == (
        "none of the 4 control judgments of 4 control items counts: 2 on calibration controls "
        "by automated reviewers, which calibrate them and are not counted; 2 unsure, which the "
        "plan leaves out"
    )
    assert uncounted_controls(frame, "not_novel") is None  # the unsure ones count
    assert uncounted_controls(frame.iloc[:0], "exclude") is None


def test_differential_check_flags_only_the_direction_that_favours_the_hypothesis():
    def rows(correct_cross: int, correct_single: int, expected: str) -> list:
        out = []
        for kind, correct in (("cross", correct_cross), ("single", correct_single)):
            for k in range(40):
                right = (
                    expected
                    if k < correct
                    else ("not_published" if expected == "published" else "published")
                )
                out.append(
                    (
                        f"{kind}{k}{expected}",
                        f"c{kind}{k}{expected}",
                        "r",
                        "human",
                        right,
                        expected,
                        kind,
                        None,
                    )
                )
        return out

    harder_cross = coded_controls(
        _frame(rows(20, 38, "published") + rows(30, 30, "not_published")), "not_novel"
    )
    d = differential(harder_cross, 0.05)
    ref = stats.fisher_exact([[20, 20], [38, 2]]).pvalue
    assert d.p_sensitivity == pytest.approx(ref) and d.favours_hypothesis
    harder_single = coded_controls(
        _frame(rows(38, 20, "published") + rows(30, 30, "not_published")), "not_novel"
    )
    assert not differential(harder_single, 0.05).favours_hypothesis
    only_cross = harder_cross[harder_cross["control_kind"] == "cross"]
    assert differential(only_cross, 0.05) is None


def _gate_power_brute(sens: float, spec: float, n: int, minimum: float) -> float:
    """Every pair of counts through the Accuracy class's own Bonferroni interval."""
    pub, unpub = n // 2, n - n // 2
    total = 0.0
    for x in range(pub + 1):
        for y in range(unpub + 1):
            acc = Accuracy("a", "pooled", "human", pub, x, unpub, y, 0.95)
            if acc.youden_ci()[0] >= minimum:
                total += stats.binom.pmf(x, pub, sens) * stats.binom.pmf(y, unpub, spec)
    return total


@pytest.mark.parametrize(("sens", "spec", "n"), [(0.9, 0.9, 40), (0.8, 0.95, 61), (0.7, 0.7, 90)])
def test_gate_power_matches_brute_force_enumeration(sens: float, spec: float, n: int) -> None:
    assert gate_power(sens, spec, n, 0.3, 0.95) == pytest.approx(
        _gate_power_brute(sens, spec, n, 0.3), abs=1e-12
    )


def test_controls_needed_is_the_smallest_count_with_the_planned_gate_power():
    n = controls_needed(0.9, 0.9, 0.3, 0.95, 0.8)
    assert gate_power(0.9, 0.9, n, 0.3, 0.95) >= 0.8
    assert gate_power(0.9, 0.9, n - 1, 0.3, 0.95) < 0.8
    # more power needs more controls; a coin flip of passing needs fewer
    assert controls_needed(0.9, 0.9, 0.3, 0.95, 0.9) > n > controls_needed(0.9, 0.9, 0.3, 0.95, 0.5)
    assert controls_needed(0.6, 0.6, 0.3, 0.95) is None  # J = 0.2 can never get there
    assert controls_needed(0.95, 0.95, 0.3, 0.95, 0.8) < n


def test_leak_auc_is_read_from_the_leak_audit_of_the_blind_stage() -> None:
    from harness.analysis.compute import leak_auc

    audit = {
        "auc": 0.43,
        "ci_low": 0.25,
        "ci_high": 0.6,
        "n_controls": 10,
        "method": "logistic",
        "note": "text",
    }
    assert leak_auc(LeakAudit(controls=audit)) == {
        "auc": 0.43,
        "ci_low": 0.25,
        "ci_high": 0.6,
        "n_controls": 10.0,
    }
    assert leak_auc(LeakAudit(auc=0.5)) is None  # the real-items audit is not this
    assert leak_auc(None) is None


def test_controls_needed_is_where_the_saw_toothed_power_settles():
    # 0.8 / 0.8: a bisection lands on 156, but 157 gives 0.796; power stays >= 0.8 from 159 on
    n = controls_needed(0.8, 0.8, 0.3, 0.95, 0.8)
    assert gate_power(0.8, 0.8, n - 1, 0.3, 0.95) < 0.8
    assert all(gate_power(0.8, 0.8, m, 0.3, 0.95) >= 0.8 for m in range(n, n + 40))


def test_design_effect_of_shares_and_controls():
    assert design_effect(np.full(4, 0.25), np.full(4, 20)) == pytest.approx(1.0)
    assert design_effect(np.array([0.45, 0.45, 0.05, 0.05]), np.full(4, 13)) == pytest.approx(1.64)
    # reviewers without controls are left out and the shares renormalised
    assert design_effect(np.array([0.5, 0.5, 0.2]), np.array([10, 10, 0])) == pytest.approx(1.0)


def _weighted_gate_passes(per_reviewer: int, shares: dict[str, float], runs: int) -> float:
    """Seeded Monte Carlo of the gate on the weighted accuracy, sens = spec = 0.9."""
    rng = np.random.default_rng(7)
    pub = per_reviewer // 2
    unpub = per_reviewer - pub
    passed = 0
    for _ in range(runs):
        reviewers = [
            Accuracy(
                x,
                "reviewer",
                "human",
                pub,
                rng.binomial(pub, 0.9),
                unpub,
                rng.binomial(unpub, 0.9),
                0.95,
            )
            for x in shares
        ]
        passed += weighted_accuracy(reviewers, shares, 0.95).accuracy.youden_ci()[0] >= 0.3
    return passed / runs


def test_controls_needed_with_the_design_effect_reaches_the_power_of_the_weighted_gate():
    shares = {"a": 0.45, "b": 0.45, "c": 0.05, "d": 0.05}
    pooled = controls_needed(0.9, 0.9, 0.3, 0.95, 0.8)  # 53: on pooled judgments
    deff = design_effect(np.array(list(shares.values())), np.full(4, pooled / 4))
    weighted = controls_needed(0.9, 0.9, 0.3, 0.95, 0.8, deff)
    assert weighted == math.ceil(pooled * deff)
    assert _weighted_gate_passes(pooled // 4, shares, 1500) < 0.4
    assert _weighted_gate_passes(math.ceil(weighted / 4), shares, 1500) > 0.75
