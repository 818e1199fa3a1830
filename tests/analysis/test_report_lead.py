"""The report opens with the verdict and the estimate it rests on: under the joint rule the true
difference with Fieller's interval against +/- SESOI; under the betting rule the adjudicators'
difference against SESOI x J's lower bound; without adjudication the primary reviewers' test and
the corrected-scale equivalence. report.md starts with the verdict line and the estimate, and the
figure is drawn once, in the lead, not again among the figures."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from harness.analysis.report.figures import _wrap, verdict_figure
from harness.analysis.report.lead import build_lead, ticks
from harness.analysis.report.results import fmt
from harness.analysis.run import analyze
from tests.analysis.helpers import (
    TWO_HUMANS,
    build_study,
    control_judgments,
    random_judgments,
    report_lead,
)
from tests.analysis.test_adjudication import _truthful_study


def test_the_joint_rule_leads_with_the_true_difference_and_its_fieller_interval(
    tmp_path, fast_plan
):
    study, _ = _truthful_study(tmp_path, effect=0.0)
    result = analyze(study, fast_plan)
    a = result.adjudication
    assert a is not None and a.rule == "joint" and result.verdict.label == "inconclusive"
    lead = build_lead(result)
    true, theirs, robust = lead.rows  # not supported: the row `refuted` reads comes first
    # the controls measure differential error: the corrected difference, which `refuted` reads
    # too under the bundled `differential_error: auto`
    assert a.robust_required and robust.estimate == a.robust_estimate
    assert (robust.low, robust.high) == (a.robust_low, a.robust_high)
    assert "below +0.1 too" in robust.test
    assert (true.estimate, true.low, true.high) == (
        a.corrected_estimate,
        a.corrected_low,
        a.corrected_high,
    )
    assert true.margin == a.sesoi == 0.1 and "Fieller" in true.interval
    # drawn thick: the 90% interval the joint TOST reads (inside +/-0.1 exactly when it refutes)
    assert true.inner == (a.corrected_tost_low, a.corrected_tost_high)
    assert (theirs.estimate, theirs.low, theirs.high) == (a.estimate, a.ci_low, a.ci_high)
    assert theirs.inner == (a.tost_low, a.tost_high) and theirs.margin is None
    j = lead.youden
    assert j is not None and (j.value, j.bound, j.passed) == (a.youden, a.youden_bound, True)

    md = (study / "report" / "report.md").read_text()
    paragraphs = md.split("\n\n")
    assert paragraphs[1] == "## Verdict" and paragraphs[2].startswith("**INCONCLUSIVE**: ")
    assert paragraphs[3].startswith(
        "**The verdict's estimate**: true difference (adjudicated / J) "
        f"{fmt(a.corrected_estimate, signed=True)}, 95% Fieller interval (J's uncertainty "
        f"included) [{fmt(a.corrected_low, signed=True)}, {fmt(a.corrected_high, signed=True)}]"
        " (90%, inside the margin exactly when the joint TOST refutes: "
        f"[{fmt(a.corrected_tost_low, signed=True)}, {fmt(a.corrected_tost_high, signed=True)}])"
        ", tested against +/-0.1"
    )
    assert f"lower bound {fmt(a.youden_bound)}" in paragraphs[3]
    assert "(figures/verdict.png)" in report_lead(md)
    assert md.count("figures/verdict.png") == 1  # not again among the figures
    figures = md.split("\n## Figures\n", 1)[1]
    assert figures.index("figures/estimates.png") < figures.index("figures/paired_proportions")
    assert (study / "report" / "figures" / "verdict.png").read_bytes()[:4] == b"\x89PNG"

    html = (study / "report" / "report.html").read_text()
    assert html.count('id="verdict-figure"') == 1
    assert html.index('id="verdict-figure"') < html.index("NOT PREREGISTERED")
    assert "95% Fieller interval" in html.split('id="verdict-figure"', 1)[1]


def test_when_supported_the_one_sided_estimate_on_their_scale_comes_first(tmp_path, fast_plan):
    study, _ = _truthful_study(tmp_path, effect=0.3)
    result = analyze(study, fast_plan, write_report=False)
    assert result.verdict.label == "supported"
    theirs, true, robust = build_lead(result).rows
    assert theirs.label.startswith("adjudicated difference") and "supported" in theirs.test
    assert robust.label.startswith("true difference corrected for their differential error")
    assert true.label.startswith("true difference") and true.margin == 0.1


def test_the_betting_rule_tests_their_difference_against_sesoi_times_the_bound(tmp_path, fast_plan):
    study, _ = _truthful_study(tmp_path, effect=0.0, drawn=10)
    result = analyze(study, fast_plan, write_report=False)
    a = result.adjudication
    assert a is not None and a.rule == "betting" and a.youden_bound is not None
    lead = build_lead(result)
    (row,) = lead.rows
    assert row.margin == pytest.approx(a.sesoi * a.youden_bound)
    assert (row.low, row.high) == (a.ci_low, a.ci_high)
    assert f"TOST p = {a.p_tost_margin:.4f}" in row.test and "needs < 0.025" in row.test
    assert lead.youden is not None and "exact" in lead.youden.bound_text


def _provisional(tmp_path, controls: bool):
    rows = random_judgments(60, p_cross=0.5, p_single=0.48, reviewers=list(TWO_HUMANS), seed=1)
    made = (
        control_judgments(60, list(TWO_HUMANS), sensitivity=0.95, specificity=0.95, seed=2)
        if controls
        else ()
    )
    return build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=made)


def test_a_provisional_verdict_reads_the_primary_test_and_the_corrected_scale(tmp_path, fast_plan):
    result = analyze(_provisional(tmp_path, controls=True), fast_plan, write_report=False)
    c = result.controls
    assert c is not None and c.gate_ok and c.equivalence is not None
    lead = build_lead(result)
    primary, corrected = lead.rows
    assert (primary.estimate, primary.low, primary.high) == (
        result.primary.estimate,
        result.primary.ci_low,
        result.primary.ci_high,
    )
    assert primary.margin is None
    assert corrected.margin == c.equivalence.sesoi == pytest.approx(0.1 * c.youden_bound)
    assert lead.youden is not None and lead.youden.bound == c.youden_bound


def test_without_controls_refuted_is_out_of_reach_and_no_j_is_drawn(tmp_path, fast_plan):
    result = analyze(_provisional(tmp_path, controls=False), fast_plan, write_report=False)
    lead = build_lead(result)
    (row,) = lead.rows
    assert row.margin == 0.1 and "refuted is out of reach" in row.test
    assert lead.youden is None


def test_the_png_wraps_its_labels_and_none_cover_each_other(tmp_path, fast_plan):
    study, _ = _truthful_study(tmp_path, effect=0.0)
    result = analyze(study, fast_plan, write_report=False)
    lead = build_lead(result)
    fig = verdict_figure(lead, "VERDICT: INCONCLUSIVE")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    labels = [t for ax in fig.axes for t in ax.get_yticklabels()]
    texts = [t.get_text().replace("\n", " ") for t in labels]
    for row in lead.rows:  # every label whole, on as many lines as it needs
        assert f"{row.label}: {fmt(row.estimate, signed=True)}" in texts
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, box in enumerate(boxes):
        assert box.x0 >= 0 and box.y0 >= 0  # inside the figure
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other)


def test_long_labels_wrap_rather_than_cut():
    label = "Topic-level paired permutation test (check: primary reviewers' scale)"
    wrapped = _wrap(label, 44)
    assert "\n" in wrapped and wrapped.replace("\n", " ") == label and "..." not in wrapped


@pytest.mark.parametrize(("low", "high"), [(-0.15, 0.12), (-1.0, 1.0), (-0.12, 0.52), (0.0, 1.0)])
def test_ticks_are_round_few_and_inside_the_axis(low: float, high: float) -> None:
    marks = ticks(low, high)
    assert 3 <= len(marks) <= 6 and all(low <= t <= high for t in marks)
    assert 0.0 in marks
