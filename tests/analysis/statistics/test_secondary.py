"""Secondary analyses, equivalence and the pooled test against direct computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.weightstats import ttost_paired

from harness.analysis.run import analyze
from harness.analysis.statistics.consensus import CROSS, SINGLE_A, Judgments, topic_table
from harness.analysis.statistics.equivalence import paired_t
from harness.analysis.statistics.gee import fit_gee
from harness.analysis.statistics.pooled import pooled_test
from harness.analysis.statistics.secondary import SecondaryTest, holm
from tests.analysis.helpers import TWO_HUMANS, build_study, random_judgments


def test_holm_adjusts_the_tests_that_ran_and_leaves_skipped_ones():
    p = [0.01, 0.04, 0.03, 0.2, 0.005]
    tests = [SecondaryTest(f"t{i}", "", "difference", p_value=v) for i, v in enumerate(p)]
    tests.insert(2, SecondaryTest("skipped", "", "difference", skipped="no data"))
    adjusted = holm(tests)
    # by hand, m = 5 (the skipped test does not count): sorted 5 x 0.005, 4 x 0.01, 3 x 0.03,
    # max(0.09, 2 x 0.04), 1 x 0.2
    ran = [t for t in adjusted if t.skipped is None]
    assert [t.p_holm for t in ran] == pytest.approx([0.04, 0.09, 0.09, 0.2, 0.025])
    assert adjusted[2].p_holm is None


def test_tost_matches_statsmodels_ttost_paired():
    rng = np.random.default_rng(0)
    cross, single = rng.random(40), rng.random(40) * 0.9
    ours = paired_t(cross - single, 0.1, 0.05)
    p, lower, upper = ttost_paired(cross, single, -0.1, 0.1)
    assert ours.p_tost == pytest.approx(p)
    assert ours.p_lower == pytest.approx(lower[1]) and ours.p_upper == pytest.approx(upper[1])


def test_pooled_test_is_the_textbook_two_proportion_z():
    y = np.array([1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0], dtype=float)
    condition = np.array([CROSS] * 4 + [SINGLE_A] * 8)
    result = pooled_test(y, condition, "mean_of_singles", "two-sided")
    p1, p2, pooled = 3 / 4, 2 / 8, 5 / 12
    z = (p1 - p2) / math.sqrt(pooled * (1 - pooled) * (1 / 4 + 1 / 8))
    assert result.z == pytest.approx(z)
    assert (result.novel_cross, result.n_cross, result.novel_single) == (3, 4, 2)


def test_gee_on_balanced_data_recovers_the_pooled_difference():
    rng = np.random.default_rng(2)
    topics, reviewers = 80, 3
    n_items = topics * 3
    item_condition = np.tile(np.arange(3), topics)
    p = np.where(item_condition == CROSS, 0.5, 0.3)
    verdict = (rng.random((n_items, reviewers)) < p[:, None]).astype(np.int8)
    j = Judgments(
        item=np.repeat(np.arange(n_items), reviewers),
        reviewer=np.tile(np.arange(reviewers), n_items),
        verdict=verdict.reshape(-1),
        item_topic=np.repeat(np.arange(topics), 3),
        item_condition=item_condition,
        n_topics=topics,
        n_reviewers=reviewers,
    )
    table = topic_table(j, unsure="not_novel", min_reviewers=2)
    y = (j.verdict == 1).astype(float)
    fit = fit_gee(j, y, table.item_eligible, single="mean_of_singles", max_topics=2000, seed=0)
    cross = j.condition == CROSS
    assert fit.risk_difference == pytest.approx(y[cross].mean() - y[~cross].mean(), abs=1e-6)
    assert fit.rd_ci_low < fit.risk_difference < fit.rd_ci_high
    assert fit.p_greater + fit.p_less == pytest.approx(1.0)
    small = fit_gee(j, y, table.item_eligible, single="mean_of_singles", max_topics=20, seed=0)
    assert small.n_topics == 20 and small.subsampled_from == 80


def test_moderators_recover_a_planted_slope(tmp_path, fast_plan):
    rng = np.random.default_rng(9)
    reviewers = {"a": "human", "b": "automated"}
    rows, distances, geometry = [], {}, []
    for t in range(60):
        topic = f"t{t:03d}"
        distance = rng.uniform(0, 1)
        distances[topic] = distance
        p_cross = 0.1 + 0.8 * distance  # d_t grows with the field distance
        for condition in ("single_a", "single_b", "cross"):
            p = p_cross if condition == "cross" else 0.1 + 0.1 * rng.random()
            geometry.append(
                (topic, condition, 3.0 + (distance if condition == "cross" else 0), 0.5)
            )
            for sample in range(3):
                for r in reviewers:
                    rows.append(
                        (
                            topic,
                            condition,
                            sample,
                            r,
                            "not_published" if rng.random() < p else "published",
                        )
                    )
    study = build_study(
        tmp_path / "s", rows, reviewers=reviewers, distances=distances, geometry=geometry
    )
    result = analyze(study, fast_plan, write_report=False)
    by_name = {e.name: e for e in result.estimates}
    slope = by_name["field_distance:embedding_distance"]
    assert slope.ci_low < 0.8 < slope.ci_high and slope.p_value < 0.001
    assert by_name["field_distance:taxonomy_distance"].skipped == "no variation across topics"
    entropy = by_name["geometry:delta_entropy"]
    assert entropy.estimate > 0.4 and entropy.p_value < 0.001
    assert by_name["geometry:delta_split_index"].skipped
    assert by_name["reviewer_kind:human"].n_topics == 60
    assert by_name["conditional_logit"].estimate > 1
    assert [r["reviewer_id"] for r in result.per_reviewer] == ["a", "b"]
    assert result.agreement.fleiss_raters == 2 and len(result.agreement.pairs) == 1


def test_unsure_variants_follow_the_coding(tmp_path, fast_plan):
    rows = random_judgments(50, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=8)
    # unsure verdicts only in the cross arm, and only on the first reviewer's `published`
    # verdicts: counting them as novel, or leaving them out, must raise the difference
    rows = [
        replace_verdict(r, "unsure")
        if r[1] == "cross" and r[3] == "alice" and r[4] == "published"
        else r
        for r in rows
    ]
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS), fast_plan, write_report=False
    )
    by_name = {e.name: e for e in result.estimates}
    assert by_name["unsure_novel"].estimate > result.primary.estimate
    assert by_name["unsure_excluded"].estimate > result.primary.estimate
    assert by_name["reviewer_kind:automated"].skipped == "no automated reviews"


def replace_verdict(row: tuple, verdict: str) -> tuple:
    return (*row[:4], verdict)


def test_secondary_heavy_models_subsample(tmp_path, fast_plan):
    plan_text = fast_plan.read_text().replace("heavy_max_topics: 2000", "heavy_max_topics: 20")
    plan = tmp_path / "plan.yaml"
    plan.write_text(plan_text)
    rows = random_judgments(50, p_cross=0.5, p_single=0.3, reviewers=list(TWO_HUMANS), seed=10)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS), plan, write_report=False
    )
    gee = next(e for e in result.estimates if e.name == "gee")
    assert "random subsample of 20 of 50 topics" in gee.note
    clogit = next(e for e in result.estimates if e.name == "conditional_logit")
    assert "random subsample of 20 of 50 topics" in clogit.note


def test_the_mixed_model_starts_from_the_same_seeded_values_on_every_statsmodels():
    """statsmodels before 0.15 has no `rng` in fit_vb: the same draw goes in as `sd`."""
    from scipy import sparse
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    from harness.analysis.statistics.secondary import _fit_vb

    rng = np.random.default_rng(3)
    topic = np.repeat(np.arange(12), 6)
    cross = np.tile([0.0, 1.0], 36)
    endog = (rng.random(72) < 0.3 + 0.3 * cross).astype(float)
    random = sparse.csr_matrix((np.ones(72), (np.arange(72), topic)))
    exog = np.column_stack([np.ones(72), cross])
    model = BinomialBayesMixedGLM(endog, exog, random, np.zeros(12, dtype=int))

    class Before015:  # fit_vb as statsmodels 0.14 has it: no rng
        k_fep, k_vcp, k_vc = model.k_fep, model.k_vcp, model.k_vc

        def fit_vb(self, mean=None, sd=None, fit_method="BFGS"):
            assert sd is not None  # else 0.14 would draw from numpy's global state
            return model.fit_vb(mean=mean, sd=sd, fit_method=fit_method)

    new, old = _fit_vb(model, 7), _fit_vb(Before015(), 7)
    assert new.fe_mean == pytest.approx(old.fe_mean, rel=1e-6, abs=1e-9)
    assert new.fe_sd == pytest.approx(old.fe_sd, rel=1e-6, abs=1e-9)
    assert _fit_vb(model, 7).fe_mean == pytest.approx(new.fe_mean, rel=0, abs=0)
