"""`judge --status` shows reviewer accuracy on controls only once the study is unblinded."""

from __future__ import annotations

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path
from harness.analysis.run import analyze
from harness.judge.review_status import review_status
from harness.study.store import Study
from tests.analysis.helpers import TWO_HUMANS, build_study, control_judgments, random_judgments


@pytest.fixture
def fast_plan(tmp_path):
    """The bundled plan without the slow mixed model."""
    text = bundled_plan_path().read_text(encoding="utf-8")
    path = tmp_path / "plan.yaml"
    path.write_text(
        "".join(
            line
            for line in text.splitlines(keepends=True)
            if not line.strip().startswith("- mixed_glm")
        ),
        encoding="utf-8",
    )
    return path


def test_accuracy_appears_after_unblinding_and_matches_the_report(tmp_path, fast_plan):
    rows = random_judgments(50, p_cross=0.3, p_single=0.3, reviewers=list(TWO_HUMANS), seed=1)
    controls = control_judgments(20, list(TWO_HUMANS), sensitivity=0.8, specificity=0.7, seed=1)
    study = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, controls=controls)
    with Study.open(study) as opened:
        before = review_status(opened)
    assert "sensitivity" not in before.columns and "J" not in before.columns
    assert "controls routed" not in before.columns  # which items are controls stays sealed
    result = analyze(study, fast_plan, write_report=False)
    with Study.open(study) as opened:
        after = review_status(opened).set_index("reviewer")
    for row in result.controls.accuracy:
        if row["scope"] == "reviewer":
            shown = after.loc[row["label"]]
            assert shown["controls scored"] == row["published"] + row["unpublished"]
            assert shown["controls routed"] == 20  # build_study assigns every judged control
            assert shown["sensitivity"] == f"{row['sensitivity']:.2f}"
            assert shown["J"] == f"{row['youden']:.2f}"
            assert shown["J interval"] == f"[{row['youden_low']:.2f}, {row['youden_high']:.2f}]"
