"""Checks before unblinding: reviews present, blinding key intact, plan as preregistered."""

from __future__ import annotations

import json
import sqlite3

import pytest

from harness.analysis.plan.plan_file import bundled_plan_path
from harness.analysis.run import analyze
from harness.errors import HarnessError
from harness.study.manifest import read_manifest
from harness.study.store import Study
from tests.analysis.helpers import TWO_HUMANS, build_study, random_judgments, report_lead
from tests.cli_run import run_cli as cli


@pytest.fixture
def study(tmp_path):
    rows = random_judgments(50, p_cross=0.4, p_single=0.3, reviewers=list(TWO_HUMANS), seed=2)
    return build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS)


def test_no_reviews_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "empty"
    Study.open(path, create=True).close()
    with pytest.raises(HarnessError, match="no reviews"):
        analyze(path)
    code, _, err = cli(capsys, "analyze", "--study", str(path))
    assert code == 2 and err.count("\n") == 1 and "no reviews" in err


def test_changed_blinding_key_is_refused_before_unblinding(study, capsys):
    # someone swaps two items' outputs in the database after the packets went out
    with sqlite3.connect(study / "study.sqlite") as conn:
        (a, out_a), (b, out_b) = conn.execute(
            "SELECT item_id, output_id FROM items ORDER BY item_id LIMIT 2"
        ).fetchall()
        conn.execute("UPDATE items SET output_id = 'swap' WHERE item_id = ?", (a,))
        conn.execute("UPDATE items SET output_id = ? WHERE item_id = ?", (out_a, b))
        conn.execute("UPDATE items SET output_id = ? WHERE item_id = ?", (out_b, a))
    with pytest.raises(HarnessError, match="does not match the commitment") as caught:
        analyze(study, allow_deviation=True)
    assert caught.value.column == "blinding.sha256"
    assert not (study / "report").exists()
    assert "analysis" not in read_manifest(study).record()
    code, _, err = cli(capsys, "analyze", "--study", str(study))
    # one line of error; the progress of the work before it (shown when it takes seconds, as on
    # a loaded machine) is not part of it
    lines = [x for x in err.splitlines() if not x.startswith("computing the preregistered")]
    assert (
        code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "blinding key" in err
    )


def test_missing_commitment_needs_allow_deviation(tmp_path, fast_plan):
    rows = random_judgments(50, p_cross=0.4, p_single=0.3, reviewers=list(TWO_HUMANS), seed=2)
    path = build_study(tmp_path / "s", rows, reviewers=TWO_HUMANS, commit=False)
    with pytest.raises(HarnessError, match="no blinding commitment"):
        analyze(path, fast_plan)
    result = analyze(path, fast_plan, allow_deviation=True)
    assert result.verification.blinding_status == "missing"
    md = (path / "report" / "report.md").read_text()
    assert "DEVIATION: the blinding key could not be verified" in report_lead(md)


def test_prereg_then_analyze_then_a_changed_plan(study, tmp_path, capsys, fast_plan):
    plan = tmp_path / "plan.yaml"
    plan.write_text(fast_plan.read_text())
    code, out, _ = cli(capsys, "prereg", "--study", str(study), "--plan", str(plan))
    assert code == 0 and "sha256" in out
    text = (study / "prereg.md").read_text()
    manifest = read_manifest(study).record()
    sha = manifest["prereg"]["plan_sha256"]
    assert sha in text and manifest["blinding"]["sha256"] in text
    assert "## Power analysis for 50 topics" in text and "Connor 1987" in text
    assert "fifty topics" in text  # the hypothesis
    assert manifest["materials"]["analysis"]["plan.yaml"]["sha256"] == sha
    assert "Warning: 300 reviews were already in the store" in text
    # without --plan, analyze uses the preregistered plan
    result = analyze(study, write_report=False)
    assert result.verification.preregistered and result.verification.plan_sha256 == sha
    assert result.verification.deviations == []
    assert any("after the first review" in n for n in result.notes)
    # a changed plan is refused, then reported as a deviation when allowed
    plan.write_text(plan.read_text().replace("sesoi: 0.10", "sesoi: 0.20"))
    with pytest.raises(HarnessError, match="differs from the plan preregistered") as caught:
        analyze(study)
    assert caught.value.file == str(plan.resolve())
    code, _, err = cli(capsys, "analyze", "--study", str(study))
    # one line of error; the progress of the work before it (shown when it takes seconds, as on
    # a loaded machine) is not part of it
    lines = [x for x in err.splitlines() if not x.startswith("computing the preregistered")]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    result = analyze(study, allow_deviation=True)
    assert result.equivalence.sesoi == 0.2
    md = (study / "report" / "report.md").read_text()
    assert "DEVIATION: the analysis plan" in report_lead(md)
    assert read_manifest(study).record()["analysis"]["deviations"]


def test_invalid_plan_is_a_one_line_error(study, tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(bundled_plan_path().read_text().replace("  alpha: 0.05 ", "  alpha: five ", 1))
    code, _, err = cli(capsys, "analyze", "--study", str(study), "--plan", str(bad))
    assert code == 2 and err.count("\n") == 1
    assert str(bad) in err and "primary.alpha" in err


def test_cli_prints_verdict_and_primary_numbers(study, capsys, fast_plan):
    code, out, _ = cli(capsys, "analyze", "--study", str(study), "--plan", str(fast_plan))
    assert code == 0
    assert "VERDICT:" in out and "one-sided p (mid-p)" in out and "report.html" in out
    data = json.loads((study / "report" / "report.json").read_text())
    assert f"{data['primary']['p_value']:.4f}" in out


def test_cli_power_and_help(capsys):
    code, out, _ = cli(
        capsys,
        "power",
        "--topics",
        "80",
        "--p-single",
        "0.2",
        "--effect",
        "0.15",
        "--simulate",
        "--reps",
        "60",
    )
    assert code == 0 and "Power for 80 topics" in out and "type I error" in out
    for command in ("analyze", "prereg", "power"):
        code, out, _ = cli(capsys, command, "--help")
        assert code == 0 and "Example: harness" in out
    code, _, err = cli(capsys, "power", "--p-single", "0.95", "--effect", "0.1")
    assert code == 2 and "between 0 and 1" in err


def test_analysis_does_not_import_the_judge_stage():
    import subprocess
    import sys

    # `import harness` loads the judge stage's public functions; the analysis adds none of it
    code = (
        "import sys, harness; "
        "judge = lambda: {m for m in sys.modules if m.startswith('harness.judge')}; "
        "before = judge(); "
        "import harness.analysis.run, harness.analysis.data, harness.analysis.compute; "
        "bad = judge() - before; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
