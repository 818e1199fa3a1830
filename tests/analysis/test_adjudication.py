"""`analyze` with an adjudicated sample: the prediction-powered verdict, accuracy on real items,
the provisional verdict without a sample, and the leak gate on control-based accuracy."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from scipy import stats

from harness.analysis.run import analyze
from harness.analysis.statistics.ppi import ppi_mean
from tests.analysis.helpers import CONDITIONS, TWO_HUMANS, build_study, control_judgments

ADJ = {"ada": "human", "abe": "human"}
ROLES = {"ada": "adjudicator", "abe": "adjudicator"}
# adjudicators whose J's lower bound (about 0.96) leaves the SESOI almost whole
SURE_ADJUDICATORS = {"adjudicator_accuracy": 1.0, "adjudicator_controls": 200}


def _truthful_study(
    tmp_path,
    *,
    effect: float,
    n: int = 200,
    drawn: int = 50,
    primary=None,
    samples: int = 1,
    base: float = 0.3,
    adjudicator_accuracy: float = 0.97,
    adjudicator_controls: int = 40,
):
    """Items novel with p 0.3 (+effect after cross); adjudicators judge the truth of the drawn
    topics and `adjudicator_controls` planted controls each with `adjudicator_accuracy`; primary
    reviewers answer by `primary(truth, condition, rng)`."""
    rng = np.random.default_rng(11)
    primary = primary or (lambda truth, c, rng: truth if rng.random() < 0.8 else 1 - truth)
    topics = [f"t{t:03d}" for t in range(n)]
    sample = topics[:: n // drawn][:drawn]
    rows = []
    verdict = ("published", "not_published")
    for t, c, s in itertools.product(topics, CONDITIONS, range(samples)):
        truth = int(rng.random() < base + (effect if c == "cross" else 0.0))
        for r in TWO_HUMANS:
            rows.append((t, c, s, r, verdict[primary(truth, c, rng)]))
        if t in sample:
            rows += [(t, c, s, a, verdict[truth]) for a in ADJ]
    acc = adjudicator_accuracy
    controls = control_judgments(
        adjudicator_controls, list(ADJ), sensitivity=acc, specificity=acc, seed=5
    )
    study = build_study(
        tmp_path / "s",
        rows,
        reviewers=TWO_HUMANS | ADJ,
        roles=ROLES,
        sample=sample,
        controls=controls,
    )
    return study, sample


def test_the_verdict_rests_on_the_adjudicated_scale(tmp_path, fast_plan):
    study, sample = _truthful_study(tmp_path, effect=0.3)
    result = analyze(study, fast_plan)
    a = result.adjudication
    assert a is not None and result.verdict.basis == "adjudicated"
    assert a.topics_sampled == len(sample) == a.topics_labelled
    assert a.topics_unlabelled == 200 - len(sample)
    assert result.verdict.label == "supported", result.verdict.reason
    assert "adjudicated scale" in result.verdict.reason
    assert a.ci_low < a.estimate < a.ci_high and 0 <= a.lam <= 1
    # the primary-scale analyses leave the adjudicators out: two reviewers per item
    assert result.design.reviews_per_item["max"] == 2
    md = (study / "report" / "report.md").read_text()
    assert "## Adjudicated scale (prediction-powered)" in md
    assert "**SUPPORTED**" in md and "PROVISIONAL" not in md
    instrument = md.split("## The adjudicators measured (planted controls)\n", 1)[1]
    assert "They were shown to discriminate" in instrument
    assert "| ada | both |" in instrument and "true difference (theirs / J)" in instrument
    # the joint rule: the true difference is theirs over J, with Fieller's interval around it
    assert a.rule == "joint" and a.youden > 0.8
    assert a.corrected_estimate == pytest.approx(a.estimate / a.youden)
    assert a.corrected_low < a.corrected_estimate < a.corrected_high
    # the (1 - 2 alpha) interval the joint TOST reads lies inside the printed (1 - alpha) one
    assert a.corrected_low < a.corrected_tost_low < a.corrected_tost_high < a.corrected_high
    # the Power section's paired t-test is not the verdict's test: it points to the PPI++ design
    power = md.split("\n## Power\n", 1)[1].split("\n## ", 1)[0]
    assert "paired t-test on the primary reviewers' observed scale" in power
    assert "(PPI++) on the adjudicated scale" in power and "harness power --adjudicated" in power
    # ... and what this design can decide under the verdict's own rule, simulated with the
    # accuracies the study measured
    p = result.power
    assert p.verdict_supported is not None and p.verdict_refuted is not None
    assert 0 <= p.verdict_refuted <= 1 and 0 < p.verdict_supported < 1  # at +SESOI, not +0.3
    assert "**What this design can decide**" in power and "200 topics, 50 adjudicated" in power
    saved = json.loads((study / "report" / "report.json").read_text())
    assert saved["adjudication"]["estimate"] == pytest.approx(a.estimate)
    assert saved["verdict"]["basis"] == "adjudicated"


def test_accuracy_on_real_items_per_arm(tmp_path, fast_plan):
    # alice is right on single items, always says novel on cross items: differential accuracy
    def primary(truth, c, rng):
        return 1 if c == "cross" else truth

    study, _ = _truthful_study(tmp_path, effect=0.0, primary=primary)
    a = analyze(study, fast_plan, write_report=False).adjudication
    rows = {(x["label"], x["arm"]): x for x in a.accuracy}
    single = rows[("alice", "single")]
    assert single["sensitivity"] == 1.0 and single["specificity"] == 1.0
    cross = rows[("alice", "cross")]
    assert cross["sensitivity"] == 0.0 and cross["specificity"] == 1.0
    assert cross["sensitivity_low"] == 0.0 and cross["sensitivity_high"] > 0.0
    pooled = next(x for x in a.differential if x["scope"] == "pooled")
    assert pooled["p_sensitivity"] < 0.01 and pooled["favours_hypothesis"]


@pytest.fixture
def t_plan(fast_plan, tmp_path):
    """The plan with the t reference on the adjudicated scale."""
    path = tmp_path / "t-plan.yaml"
    text = fast_plan.read_text(encoding="utf-8")
    assert "interval: auto " in text
    path.write_text(text.replace("interval: auto ", "interval: t    "), encoding="utf-8")
    return path


def test_reviewers_answering_alike_leave_the_classical_test(tmp_path, t_plan):
    """Primary reviewers who call everything novel cost power, never validity: the estimate
    is the paired t-test on the adjudicated topics."""
    study, sample = _truthful_study(tmp_path, effect=0.15, primary=lambda *_: 1)
    result = analyze(study, t_plan, write_report=False)
    a = result.adjudication
    assert a.lam == 0.0
    topics = {row["topic_id"]: row for row in result.topics}
    assert topics  # the primary table (all novel: d = 0 everywhere)
    assert a.estimate == pytest.approx(a.classical_estimate)
    d = _adjudicated_differences(study, sample)
    t = stats.ttest_1samp(d, 0.0, alternative="greater")
    assert a.estimate == pytest.approx(d.mean())
    assert a.p_greater == pytest.approx(t.pvalue, rel=1e-9)


def _adjudicated_differences(study, sample) -> np.ndarray:
    from harness.study.store import Study

    with Study.open(study) as s:
        frame = s.frame(
            "SELECT p.topic_id, p.condition, AVG(r.verdict = 'not_published') AS novel "
            "FROM reviews r JOIN items i ON i.item_id = r.item_id "
            "JOIN outputs o ON o.output_id = i.output_id "
            "JOIN prompts p ON p.prompt_id = o.prompt_id "
            "JOIN reviewers v ON v.reviewer_id = r.reviewer_id "
            "WHERE v.role = 'adjudicator' GROUP BY p.topic_id, p.condition"
        )
    wide = frame.pivot(index="topic_id", columns="condition", values="novel").loc[sample]
    return (wide["cross"] - (wide["single_a"] + wide["single_b"]) / 2).to_numpy()


def test_estimate_equals_ppi_on_the_stored_differences(tmp_path, fast_plan):
    study, sample = _truthful_study(tmp_path, effect=0.1)
    a = analyze(study, fast_plan, write_report=False).adjudication
    d = _adjudicated_differences(study, sample)
    assert a.classical_estimate == pytest.approx(d.mean())
    ref = ppi_mean(d, d, np.array([]), estimator="classical")
    assert a.classical_se == pytest.approx(ref.classical_se)


def test_a_drawn_topic_without_adjudication_withholds_the_verdict(tmp_path, fast_plan):
    study, sample = _truthful_study(tmp_path, effect=0.3)
    from harness.study.store import Study

    with Study.open(study) as s, s.transaction() as conn:
        conn.execute("INSERT INTO adjudication_sample VALUES ('t001', 'all')")
    manifest = json.loads((study / "manifest.json").read_text())
    with Study.open(study) as s:
        from harness.study.blinding import commitment

        manifest["blinding"]["sha256"] = commitment(s.conn)
    (study / "manifest.json").write_text(json.dumps(manifest))
    result = analyze(study, fast_plan, write_report=False)
    assert result.verdict.label == "no verdict"
    assert "t001" in result.verdict.reason and "adjudicat" in result.verdict.reason


def test_without_a_sample_the_verdict_is_provisional(tmp_path, fast_plan):
    rows = [
        (f"t{t:03d}", c, 0, r, "not_published" if (t + len(c) + len(r)) % 3 else "published")
        for t in range(60)
        for c in CONDITIONS
        for r in TWO_HUMANS
    ]
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)
    result = analyze(study, fast_plan)
    assert result.adjudication is None and result.verdict.basis == "provisional"
    assert "PROVISIONAL VERDICT" in result.headline()
    md = (study / "report" / "report.md").read_text()
    assert "no adjudicated sample" in md and "**INCONCLUSIVE** (provisional: resting on" in md


def test_a_leaking_control_set_is_not_used_for_accuracy(tmp_path, fast_plan):
    from tests.analysis.helpers import random_judgments

    rows = random_judgments(400, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=3)
    controls = control_judgments(60, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=3)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls)
    assert analyze(study, fast_plan, write_report=False).verdict.label == "refuted"
    manifest = json.loads((study / "manifest.json").read_text())
    manifest["leak_audit"] = {"controls": {"auc": 0.83, "ci_low": 0.76, "ci_high": 0.89}}
    (study / "manifest.json").write_text(json.dumps(manifest))
    result = analyze(study, fast_plan, write_report=False)
    assert result.verdict.label == "inconclusive"
    assert "leak audit tells control items from real items" in result.verdict.reason


def test_per_model_plan_tests_each_model_on_the_adjudicated_scale(tmp_path, fast_plan):
    from harness.study.store import Study

    study, _ = _truthful_study(tmp_path, effect=0.3, samples=2)
    with Study.open(study) as s, s.transaction() as conn:
        conn.execute("UPDATE outputs SET model_key = 'model-' || sample")
    plan = tmp_path / "per-model.yaml"
    plan.write_text(re.sub(r"primary: pooled", "primary: per_model", fast_plan.read_text()))
    result = analyze(study, plan, allow_deviation=True, write_report=False)
    a = result.adjudication
    assert [m["model"] for m in a.models] == ["model-0", "model-1"]
    assert all(m["p_holm"] >= m["p_greater"] for m in a.models)
    assert result.verdict.label == "supported", result.verdict.reason
    assert "significant after Holm over 2 models" in result.verdict.reason


def test_status_shows_accuracy_on_real_items_after_unblinding(tmp_path, fast_plan):
    from harness.judge.review_status import review_status
    from harness.study.store import Study

    study, _ = _truthful_study(tmp_path, effect=0.0, primary=lambda truth, c, rng: truth)
    with Study.open(study) as s:
        assert "real sensitivity" not in review_status(s).columns  # sealed before analyze
    analyze(study, fast_plan)
    with Study.open(study) as s:
        frame = review_status(s).set_index("reviewer")
    assert frame.loc["alice", "real sensitivity"].startswith("1.00 [")
    assert frame.loc["ada", "real sensitivity"] == ""  # adjudicators are the reference


def test_the_explorer_carries_accuracy_on_real_items(tmp_path, fast_plan):
    import re

    study, _ = _truthful_study(tmp_path, effect=0.0)
    analyze(study, fast_plan)
    page = (study / "report" / "explorer.html").read_text(encoding="utf-8")
    found = re.search(r'id="explorer-data">(.*?)</script>', page, re.S)
    data = json.loads(found.group(1))
    acc = data["real_accuracy"]
    rows = [dict(zip(acc["columns"], r, strict=True)) for r in acc["rows"]]
    assert {(r["label"], r["arm"]) for r in rows} >= {("alice", "both"), ("bob", "cross")}
    roles = dict((r[0], r[3]) for r in data["reviewers"]["rows"])
    assert roles["ada"] == "adjudicator" and roles["alice"] == "primary"


def test_adjudicators_who_call_everything_novel_cannot_refute(tmp_path, fast_plan):
    rows = []
    topics = [f"t{t:03d}" for t in range(60)]
    for t, c in itertools.product(topics, CONDITIONS):
        rows += [
            (t, c, 0, r, "not_published" if (len(t) + len(c)) % 2 else "published")
            for r in TWO_HUMANS
        ]
        if t < "t020":
            rows += [(t, c, 0, a, "not_published") for a in ADJ]
    study = build_study(
        tmp_path / "s", rows, reviewers=TWO_HUMANS | ADJ, roles=ROLES, sample=topics[:20]
    )
    result = analyze(study, fast_plan, write_report=False)
    assert result.adjudication.estimate == 0.0
    assert result.verdict.label == "inconclusive"
    assert "judged every item novel" in result.verdict.reason


def test_a_refutation_where_novelty_is_rare_carries_a_caution(tmp_path, t_plan):
    """The t reference is liberal there; the betting tests (the default) need no caution."""
    study, _ = _truthful_study(tmp_path, effect=0.0, base=0.04, drawn=100, **SURE_ADJUDICATORS)
    result = analyze(study, t_plan, write_report=False)
    assert result.adjudication.novel_rate < 0.1
    assert result.verdict.label == "refuted", result.verdict.reason
    assert "novelty is rare on the adjudicated scale" in result.verdict.qualifier


def test_adjudicators_at_chance_on_their_controls_cannot_refute(tmp_path, fast_plan):
    """Accurate adjudicators of every one of 300 topics refute where novelty is rare; the same
    at chance on their controls cannot."""
    rare = {"effect": 0.0, "base": 0.04, "n": 300, "drawn": 300}
    study, _ = _truthful_study(tmp_path, **rare, **SURE_ADJUDICATORS)
    good = analyze(study, fast_plan, write_report=False)
    assert good.verdict.label == "refuted", good.verdict.reason
    a = good.adjudication
    assert a.adjudicator_gate and a.rule == "joint" and a.p_tost_margin < 0.05
    assert -0.1 < a.corrected_low < a.corrected_high < 0.1
    study, _ = _truthful_study(
        tmp_path / "chance", **rare, adjudicator_accuracy=0.5, adjudicator_controls=200
    )
    result = analyze(study, fast_plan, write_report=False)
    assert result.verdict.label == "inconclusive"
    assert "could not be shown to discriminate" in result.verdict.reason


def test_adjudicators_near_the_ceiling_cannot_refute(tmp_path, fast_plan):
    """95% of single-field items judged novel: a +SESOI difference has no room on this scale."""
    study, _ = _truthful_study(tmp_path, effect=0.0, base=0.95, drawn=100)
    result = analyze(study, fast_plan, write_report=False)
    assert result.adjudication.p_tost < 0.05  # the equivalence test alone would refute
    assert result.verdict.label == "inconclusive"
    assert "single-field items novel" in result.verdict.reason
    assert "ceiling" in result.verdict.reason


def test_an_excluded_primary_reviewer_does_not_withhold_the_adjudicated_verdict(
    tmp_path, fast_plan
):
    """bob answers his controls backwards (J below 0) and is left out of the primary-scale
    analyses, leaving one reviewer per item there; the adjudicated estimate needs no reviewer
    count, so its 50 topics still decide."""
    rng = np.random.default_rng(4)
    topics = [f"t{t:03d}" for t in range(50)]
    verdict = ("published", "not_published")
    rows = []
    for t, c in itertools.product(topics, CONDITIONS):
        truth = int(rng.random() < 0.3 + (0.3 if c == "cross" else 0.0))
        rows.append((t, c, 0, "alice", verdict[truth if rng.random() < 0.8 else 1 - truth]))
        rows.append((t, c, 0, "bob", verdict[1 - truth]))
        rows += [(t, c, 0, a, verdict[truth]) for a in ADJ]
    controls = control_judgments(
        40, list(ADJ) + ["alice"], sensitivity=1.0, specificity=1.0, seed=5
    )
    controls += control_judgments(40, ["bob"], sensitivity=0.0, specificity=0.0, seed=6)
    study = build_study(
        tmp_path / "s",
        rows,
        reviewers=TWO_HUMANS | ADJ,
        roles=ROLES,
        sample=topics,
        controls=controls,
    )
    result = analyze(study, fast_plan, write_report=False)
    assert result.primary.n_topics < 50  # the primary scale lost bob's second review
    assert result.verdict.basis == "adjudicated"
    assert result.verdict.label == "supported", result.verdict.reason
