"""`analyze` end to end on stores built row by row: numbers, verdicts, report files."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.analysis.run import analyze
from harness.study.manifest import read_manifest
from tests.analysis.helpers import (
    TWO_HUMANS,
    build_study,
    control_judgments,
    random_judgments,
    report_lead,
)


def test_full_analysis_writes_a_self_contained_report(tmp_path):
    rows = random_judgments(
        60, p_cross=0.6, p_single=0.25, reviewers=list(TWO_HUMANS), seed=1, p_unsure=0.05
    )
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)
    result = analyze(study)
    assert result.verdict.label == "supported"
    assert result.primary.n_topics == 60 and result.primary.p_value < 0.05
    files = result.report_files
    html = (study / "report" / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 5
    assert not re.search(r'src="(?!data:)', html) and "<link" not in html
    md = (study / "report" / "report.md").read_text()
    assert "**SUPPORTED**" in md and "literal rule" in md
    assert "mean of the single_a and single_b proportions" in md
    for name in ("paired_proportions", "estimates", "agreement", "power", "accuracy"):
        png = study / "report" / "figures" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and files[f"figure:{name}"]
    data = json.loads(
        (study / "report" / "report.json").read_text(), parse_constant=_no_nan
    )  # strict JSON: no NaN or Infinity
    assert data["primary"]["p_value"] == result.primary.p_value
    assert data["verdict"]["label"] == "supported"
    assert len(data["topics"]) == 60
    roles = {e["role"] for e in data["estimates"]}
    assert roles == {"primary", "check", "literal", "secondary"}
    names = {e["name"] for e in data["estimates"]}
    assert {
        "mixed_glm",
        "conditional_logit",
        "unsure_novel",
        "unsure_excluded",
        "reviewer_kind:human",
        "gee",
        "mcnemar_exact",
    } <= names
    holm = [e["p_holm"] for e in data["estimates"] if e["role"] == "secondary" and e["p_holm"]]
    assert holm and all(0 <= p <= 1 for p in holm)
    manifest = read_manifest(study).record()
    assert manifest["analysis"]["verdict"] == "supported"
    assert manifest["commands"][-1]["stage"] == "analyze"
    # the same data and plan give the same report.json, the mixed model included, byte for byte
    # but for the time of the analysis
    analyze(study)
    again = (study / "report" / "report.json").read_text()
    first = json.dumps(data, sort_keys=True)
    assert re.sub(r'"analysed_at": "[^"]*"', "", first) == re.sub(
        r'"analysed_at": "[^"]*"',
        "",
        json.dumps(json.loads(again, parse_constant=_no_nan), sort_keys=True),
    )
    assert "VERDICT: SUPPORTED" in result.summary()


def _no_nan(token: str) -> None:
    raise AssertionError(f"report.json holds {token}")


def _direct_topic_table(rows, unsure: str, min_reviews: int) -> pd.DataFrame:
    """Per-topic proportions recomputed with pandas, independently of the package."""
    frame = pd.DataFrame(rows, columns=["topic", "condition", "sample", "reviewer", "verdict"])
    frame["reviews"] = frame.groupby(["topic", "condition", "sample"])["verdict"].transform("size")
    frame = frame[frame["reviews"] >= min_reviews]
    coded = {
        "not_published": 1.0,
        "published": 0.0,
        "unsure": {"novel": 1.0, "not_novel": 0.0, "exclude": np.nan}[unsure],
    }
    frame["y"] = frame["verdict"].map(coded)
    items = frame.groupby(["topic", "condition", "sample"])["y"].mean().dropna()
    cells = items.groupby(["topic", "condition"]).mean().unstack("condition")
    cells["single"] = (cells["single_a"] + cells["single_b"]) / 2
    cells["d"] = cells["cross"] - cells["single"]
    return cells.dropna(subset=["d"])


def _brute_mid_p(p: np.ndarray) -> float:
    """Mid-p of the within-topic relabelling test by enumerating all 3^n labellings."""
    values = p - (p.sum(axis=1, keepdims=True) - p) / 2  # column j: condition j labelled cross
    rows = np.arange(len(p))
    totals = np.array(
        [values[rows, list(pick)].sum() for pick in itertools.product(range(3), repeat=len(p))]
    )
    observed = values[:, 2].sum()
    return float(
        np.mean(totals > observed + 1e-9) + 0.5 * np.mean(np.abs(totals - observed) <= 1e-9)
    )


def test_numbers_match_direct_computation(tmp_path, fast_plan):
    reviewers = {"a": "human", "b": "human", "c": "automated"}
    rows = random_judgments(
        11, p_cross=0.5, p_single=0.35, reviewers=list(reviewers), seed=7, samples=2, p_unsure=0.15
    )
    rows = [r for r in rows if not (r[0] == "t0003" and r[3] != "a")]  # t0003: one review each
    study = build_study(tmp_path / "s", rows, reviewers=reviewers)
    result = analyze(study, fast_plan, write_report=False)
    direct = _direct_topic_table(rows, "not_novel", 2)
    topics = result.topics_frame().set_index("topic_id")
    complete = topics[topics["complete"]]
    assert list(complete.index) == list(direct.index)
    assert "t0003" not in direct.index and not topics.loc["t0003", "complete"]
    np.testing.assert_allclose(complete["d"], direct["d"])
    np.testing.assert_allclose(complete["p_cross"], direct["cross"])
    observed = direct[["single_a", "single_b", "cross"]].to_numpy()
    assert result.primary.p_value == pytest.approx(_brute_mid_p(observed))
    assert result.primary.estimate == pytest.approx(direct["d"].mean())
    assert result.design.items_short == 6  # t0003: 3 conditions x 2 samples
    assert result.verdict.label == "no verdict"
    assert "only 10 complete topics" in result.verdict.reason
    assert "fewer than 2 reviewers' verdicts" in result.verdict.reason
    excluded = _direct_topic_table(rows, "exclude", 2)
    variant = next(e for e in result.estimates if e.name == "unsure_excluded")
    assert variant.estimate == pytest.approx(excluded["d"].mean())
    lit = result.literal_rule
    frame = pd.DataFrame(rows, columns=["topic", "condition", "sample", "reviewer", "verdict"])
    cross = frame[frame["condition"] == "cross"]
    assert lit.novel_cross == int((cross["verdict"] == "not_published").sum())
    assert lit.n_cross == len(cross)


def test_without_controls_no_difference_is_inconclusive_not_refuted(tmp_path, fast_plan):
    rows = random_judgments(400, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=3)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS), fast_plan, write_report=False
    )
    # equivalence is shown on the observed scale, but nothing shows the reviewers discriminate
    assert result.equivalence.equivalent
    assert result.verdict.label == "inconclusive"
    assert "could not be shown to discriminate" in result.verdict.reason
    assert "control judgments" in result.verdict.reason  # what a decisive study needs
    assert result.controls is not None and not result.controls.available
    # the literal rule calls it refuted, for the wrong reason (no significant difference)
    assert result.verdict.literal_label == "refuted"


def test_refuted_when_accurate_reviewers_show_equivalence(tmp_path, fast_plan):
    rows = random_judgments(400, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=3)
    controls = control_judgments(60, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=3)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls),
        fast_plan,
        write_report=False,
    )
    c = result.controls
    assert c.gate_ok and c.pooled_youden_low >= 0.3
    assert result.verdict.label == "refuted", result.verdict.reason
    assert "corrected scale" in result.verdict.reason
    assert c.equivalence.sesoi == pytest.approx(0.1 * c.youden_bound)
    assert c.corrected_low < c.corrected < c.corrected_high


def test_single_field_higher_is_refuted_only_with_accuracy_shown(tmp_path, fast_plan):
    rows = random_judgments(60, p_cross=0.1, p_single=0.5, reviewers=list(TWO_HUMANS), seed=4)
    result = analyze(
        build_study(tmp_path / "a", rows, reviewers=TWO_HUMANS), fast_plan, write_report=False
    )
    assert result.verdict.label == "inconclusive"
    controls = control_judgments(40, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=4)
    result = analyze(
        build_study(tmp_path / "b", rows, reviewers=TWO_HUMANS, controls=controls),
        fast_plan,
        write_report=False,
    )
    assert result.verdict.label == "refuted" and "other way" in result.verdict.reason


def test_inconclusive_reports_power_and_topics_needed(tmp_path, fast_plan):
    rows = random_judgments(50, p_cross=0.33, p_single=0.3, reviewers=list(TWO_HUMANS), seed=5)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)
    result = analyze(study, fast_plan)
    assert result.verdict.label == "inconclusive"
    assert result.power.topics_needed > 50 and 0 < result.power.power_at_sesoi < 0.8
    md = (study / "report" / "report.md").read_text()
    assert "Power achieved" in md and f"{result.power.topics_needed} topics" in md
    # the t-test power on the observed scale is not the power of the corrected-scale verdict
    assert "as if the reviewers were perfect" in md and "upper bounds" in md
    # the Power section and the verdict's "about N topics" say which test each count is for
    power = md.split("\n## Power\n", 1)[1].split("\n## ", 1)[0]
    assert "paired t-test on the primary reviewers' observed scale" in power
    assert "upper bounds for the tests the provisional verdict uses" in power
    assert "the test of the provisional verdict's `refuted`" in result.verdict.reason
    assert "the Power section's smaller count is for the paired t-test" in result.verdict.reason
    # the author's literal rule would call this refuted
    assert result.verdict.literal_label == "refuted"


def test_pilot_and_demonstration_studies(tmp_path, fast_plan):
    rows = random_judgments(60, p_cross=0.6, p_single=0.2, reviewers=list(TWO_HUMANS), seed=6)
    study = build_study(
        tmp_path / "s", rows, reviewers=TWO_HUMANS, meta={"pilot": "1", "demo": "1"}
    )
    result = analyze(study, fast_plan)
    assert result.verdict.label == "no verdict" and "pilot" in result.verdict.reason
    md = (study / "report" / "report.md").read_text()
    head = report_lead(md)
    assert "135M-parameter model" in head and "not evidence" in head
    assert "PILOT" in head


@pytest.mark.parametrize(
    ("test", "method"),
    [("mcnemar_midp", "tango"), ("mcnemar_exact", "paired_t"), ("gee", "paired_t")],
)
def test_other_primary_tests_and_tango_equivalence(tmp_path, fast_plan, test, method):
    text = fast_plan.read_text().replace("test: permutation ", f"test: {test} ", 1)
    plan = tmp_path / "plan.yaml"
    plan.write_text(text.replace("method: betting ", f"method: {method} ", 1))
    rows = random_judgments(60, p_cross=0.7, p_single=0.2, reviewers=list(TWO_HUMANS), seed=12)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS), plan, write_report=False
    )
    assert result.primary.test == test and result.equivalence.method == method
    assert result.verdict.label == "supported"
    checks = {e.name for e in result.estimates if e.role == "check"}
    assert test not in checks and "permutation" in checks
    if test.startswith("mcnemar"):
        c = result.consensus
        assert c.both + c.cross_only + c.single_only + c.neither == 60
        assert result.primary.estimate == pytest.approx((c.cross_only - c.single_only) / 60)


def test_a_tiny_study_with_single_reviews_still_reports(tmp_path, fast_plan):
    rows = random_judgments(3, p_cross=0.5, p_single=0.5, reviewers=["alice"], seed=1)
    study = build_study(tmp_path / "s", rows, reviewers={"alice": "human"})
    result = analyze(study, fast_plan)
    assert result.verdict.label == "no verdict" and result.primary.n_topics == 0
    assert "9 of 9 reviewed items have fewer than 2" in result.verdict.reason
    assert result.power.power_at_sesoi is None and result.agreement.n_items == 0
    assert (study / "report" / "report.html").exists()


def test_tango_equivalence_with_no_complete_topic_gives_no_verdict(tmp_path, fast_plan):
    plan = tmp_path / "plan.yaml"
    plan.write_text(fast_plan.read_text().replace("method: betting ", "method: tango ", 1))
    rows = random_judgments(3, p_cross=0.5, p_single=0.5, reviewers=["alice"], seed=1)
    study = build_study(tmp_path / "s", rows, reviewers={"alice": "human"})
    result = analyze(study, plan, write_report=False)
    assert result.verdict.label == "no verdict" and result.primary.n_topics == 0
    assert not result.equivalence.equivalent


def test_a_check_that_cannot_be_estimated_reports_no_p_value(tmp_path, fast_plan):
    rows = random_judgments(8, p_cross=1.0, p_single=1.0, reviewers=list(TWO_HUMANS), seed=2)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)
    result = analyze(study, fast_plan, write_report=False)
    gee = next(e for e in result.estimates if e.name == "gee")
    assert gee.estimate is None and gee.p_value is None and "not estimable" in gee.note
    assert re.search(r"GEE clustered on topic .*p = n/a", result.summary())


def test_report_shows_reviewer_accuracy_and_the_leak_audit_auc(tmp_path, fast_plan):
    rows = random_judgments(60, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=8)
    controls = control_judgments(30, list(TWO_HUMANS), sensitivity=0.9, specificity=0.8, seed=8)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls)
    manifest = json.loads((study / "manifest.json").read_text())
    manifest["leak_audit"] = {
        "controls": {
            "auc": 0.53,
            "ci_low": 0.41,
            "ci_high": 0.65,
            "method": "as judge --blind writes it",
        }
    }
    (study / "manifest.json").write_text(json.dumps(manifest))
    result = analyze(study, fast_plan)
    md = (study / "report" / "report.md").read_text()
    assert "## Reviewer accuracy on control items" in md
    assert "AUC 0.530 [0.410, 0.650]" in md
    assert (study / "report" / "figures" / "accuracy.png").stat().st_size > 1000
    saved = json.loads((study / "report" / "report.json").read_text())
    alice = next(a for a in saved["controls"]["accuracy"] if a["label"] == "alice")
    expected = [c for c in controls if c[4] == "alice" and c[1] == "published"]
    assert alice["published"] == len(expected)
    assert alice["published_correct"] == sum(c[5] == "published" for c in expected)
    names = [e["name"] for e in saved["estimates"]]
    assert names[:2] == ["primary", "corrected"]
    assert result.controls.differential is not None


@pytest.mark.parametrize("answer", ["not_published", "published"])
def test_reviewers_who_answer_alike_are_inconclusive_through_the_cli(
    tmp_path, fast_plan, capsys, answer
):
    from tests.cli_run import run_cli

    humans = {"ann": "human", "ben": "human", "cat": "human"}
    rows = [
        (f"t{t:03d}", c, 0, r, answer)
        for t in range(60)
        for c in ("single_a", "single_b", "cross")
        for r in humans
    ]
    controls = [
        (c, e, k, None, r, answer)
        for (c, e, k, _, r, _) in control_judgments(
            20, list(humans), sensitivity=1.0, specificity=1.0, seed=9
        )
    ]
    study = build_study(tmp_path / "s", rows, reviewers=humans, controls=controls)
    code, out, _ = run_cli(
        capsys, "analyze", "--study", str(study), "--plan", str(fast_plan), "--allow-deviation"
    )
    assert code == 0
    assert "VERDICT: INCONCLUSIVE" in out and "could not be shown to discriminate" in out
    saved = json.loads((study / "report" / "report.json").read_text())
    assert saved["controls"]["pooled_youden"] == 0.0 and not saved["controls"]["gate_ok"]


def _plan_with(fast_plan, tmp_path, **controls) -> str:
    head, tail = fast_plan.read_text().split("\ncontrols:", 1)
    for key, value in controls.items():
        tail = re.sub(rf"(\n  {key}: )\S+", rf"\g<1>{value}", tail, count=1)
    path = tmp_path / "plan-controls.yaml"
    path.write_text(head + "\ncontrols:" + tail)
    return str(path)


def test_a_reviewer_below_the_threshold_is_left_out_of_every_analysis(tmp_path, fast_plan):
    three = {"ann": "human", "ben": "human", "cat": "human"}
    rows = random_judgments(60, p_cross=0.4, p_single=0.3, reviewers=list(three), seed=10)
    controls = control_judgments(
        30, ["ann", "ben"], sensitivity=0.95, specificity=0.95, seed=10
    ) + control_judgments(30, ["cat"], sensitivity=0.3, specificity=0.3, seed=10)
    study = build_study(tmp_path / "s", rows, reviewers=three, controls=controls)
    plan = _plan_with(fast_plan, tmp_path, exclude_reviewer_below=0.2)
    result = analyze(study, plan, allow_deviation=True, write_report=False)
    assert result.controls.excluded == ["cat"]
    kept = [r for r in rows if r[3] != "cat"]
    alone = analyze(
        build_study(tmp_path / "k", kept, reviewers={"ann": "human", "ben": "human"}),
        fast_plan,
        write_report=False,
    )
    assert result.primary.estimate == pytest.approx(alone.primary.estimate)
    assert "cat" not in {r["reviewer_id"] for r in result.per_reviewer}


def test_per_reviewer_correction(tmp_path, fast_plan):
    rows = random_judgments(60, p_cross=0.4, p_single=0.3, reviewers=list(TWO_HUMANS), seed=11)
    controls = control_judgments(30, list(TWO_HUMANS), sensitivity=1.0, specificity=1.0, seed=11)
    plan = _plan_with(fast_plan, tmp_path, correction="per_reviewer")
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls),
        plan,
        allow_deviation=True,
        write_report=False,
    )
    c = result.controls
    assert c.correction == "per_reviewer" and c.corrected == pytest.approx(c.observed)
    assert c.equivalence.method == "bootstrap"
    # a reviewer without controls: no per-reviewer accuracy, so no corrected estimate
    only_alice = [x for x in controls if x[4] == "alice"]
    result = analyze(
        build_study(tmp_path / "t", rows, reviewers=TWO_HUMANS, controls=only_alice),
        plan,
        allow_deviation=True,
        write_report=False,
    )
    assert result.controls.corrected is None and "not estimable" in result.controls.corrected_note


def test_per_reviewer_equivalence_interval_follows_the_plans_alpha(tmp_path, fast_plan):
    # the per-reviewer corrected equivalence decides with the bootstrap interval, alpha/2 per
    # side like the pooled path: at alpha 0.01 it must be the 99% interval, not a fixed 95%
    rows = random_judgments(60, p_cross=0.4, p_single=0.35, reviewers=list(TWO_HUMANS), seed=12)
    controls = control_judgments(30, list(TWO_HUMANS), sensitivity=0.9, specificity=0.85, seed=12)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls)
    per_reviewer = _plan_with(fast_plan, tmp_path, correction="per_reviewer")
    results = {}
    for alpha in ("0.05", "0.01"):
        text = re.sub(
            r"(\nprimary:(?:\n .*)*?\n  alpha: )\S+",
            rf"\g<1>{alpha}",
            Path(per_reviewer).read_text(),
            count=1,
        )
        plan = tmp_path / f"plan-{alpha}.yaml"
        plan.write_text(text)
        results[alpha] = analyze(
            study, str(plan), allow_deviation=True, write_report=False
        ).controls
    wide, usual = results["0.01"], results["0.05"]
    assert wide.corrected_level == pytest.approx(0.99) and usual.corrected_level == 0.95
    assert wide.corrected_low < usual.corrected_low and wide.corrected_high > usual.corrected_high
    assert (wide.equivalence.ci_low, wide.equivalence.ci_high) == (
        wide.corrected_low,
        wide.corrected_high,
    )


def test_one_verdict_to_every_real_item_is_inconclusive_even_with_accurate_controls(
    tmp_path, fast_plan
):
    # reviewers answer controls well (they are recognisable) but call every real item published:
    # d_t = 0 everywhere says nothing about discrimination among real items
    rows = random_judgments(300, p_cross=0.0, p_single=0.0, reviewers=list(TWO_HUMANS), seed=1)
    controls = control_judgments(100, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=1)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls),
        fast_plan,
        write_report=False,
    )
    assert result.controls.pooled_youden_low >= 0.3
    assert not result.controls.gate_ok
    assert result.verdict.label == "inconclusive", result.verdict.reason
    assert "every one of the" in result.verdict.reason and "not novel" in result.verdict.reason


def test_real_judgments_outside_what_the_measured_accuracy_allows_are_inconclusive(
    tmp_path, fast_plan
):
    # near-constant answers: a reviewer with sensitivity 0.95 calls at least ~5% of anything
    # novel, yet only 0.3% of real judgments are novel, so the controls do not describe them
    rows = random_judgments(300, p_cross=0.003, p_single=0.003, reviewers=list(TWO_HUMANS), seed=2)
    controls = control_judgments(100, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=2)
    result = analyze(
        build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls),
        fast_plan,
        write_report=False,
    )
    assert result.controls.pooled_youden_low >= 0.3
    assert result.verdict.label == "inconclusive", result.verdict.reason
    assert "does not describe how they judged real items" in result.verdict.reason
    # reviewers whose real judgments fit their accuracy pass the same check
    rows = random_judgments(300, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=2)
    result = analyze(
        build_study(tmp_path / "t", rows, reviewers=TWO_HUMANS, controls=controls),
        fast_plan,
        write_report=False,
    )
    assert result.controls.gate_ok, result.verdict.reason
