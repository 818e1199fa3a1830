"""A study whose outputs come from two models: the analysis splits them, reports each model's
difference, the pooled test and heterogeneity, and draws the forest plot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.analysis.data import load_study
from harness.analysis.plan.plan_file import Design, load_plan
from harness.analysis.run import analyze
from harness.analysis.simulation.study_folder import write_simulated_study
from harness.analysis.statistics.by_model import models_of, study_across_models
from harness.analysis.statistics.primary import table_for
from harness.study.manifest import read_manifest
from harness.study.store import Study


@pytest.fixture()
def two_models(tmp_path):
    folder = write_simulated_study(
        tmp_path / "s", Design(samples=2, reviewers=2), topics=40, seed=3, effect=0.1
    )
    with Study.open(folder) as study, study.transaction() as conn:
        conn.execute("UPDATE outputs SET model_key = 'model-' || sample")
    return folder


def test_each_model_is_analysed_on_its_own_outputs(two_models, fast_plan):
    plan = load_plan(fast_plan).plan
    with Study.open(two_models) as study:
        j = load_study(study, read_manifest(two_models)).judgments
    assert models_of(j) == ["model-0", "model-1"]
    out = study_across_models(j, plan)
    assert out is not None and [m.model for m in out.models] == ["model-0", "model-1"]
    for m, effect in zip(["model-0", "model-1"], out.models, strict=True):
        table = table_for(j.subset(j.item_model[j.item] == m), plan)
        assert effect.estimate == pytest.approx(float(np.mean(table.d)))


def test_report_shows_the_models_table_and_forest_plot(two_models, fast_plan):
    result = analyze(two_models, fast_plan)
    assert result.models is not None and len(result.models.models) == 2
    report = (two_models / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Across models" in report and "model-1" in report and "Cochran's Q" in report
    assert (two_models / "report" / "figures" / "models.png").stat().st_size > 1000
    saved = json.loads((two_models / "report" / "report.json").read_text(encoding="utf-8"))
    assert saved["models"]["topics"] == 40 and saved["models"]["interaction_df"] == [1, 39]


def test_one_model_has_no_section(tmp_path, fast_plan):
    folder = write_simulated_study(
        tmp_path / "one", Design(samples=1, reviewers=2), topics=20, seed=4
    )
    assert analyze(folder, fast_plan, write_report=False).models is None


@pytest.fixture()
def two_configurations(tmp_path):
    """Two sampling configurations of the embedded model, with the models leak audit recorded."""
    from harness.judge.blinding.leak_models import model_audit
    from harness.study.manifest import record_section
    from harness.study.manifest_sections import LeakAudit

    folder = write_simulated_study(
        tmp_path / "c", Design(samples=2, reviewers=2), topics=40, seed=3, effect=0.1
    )
    with Study.open(folder) as study:
        with study.transaction() as conn:
            conn.execute(
                "UPDATE outputs SET model_key = CASE sample WHEN 0 THEN 'local#sampled' "
                "ELSE 'local#greedy' END"
            )
        audit = model_audit(study, n_boot=50)
    assert audit is not None
    record_section(folder, "leak_audit", LeakAudit(models=audit.as_dict()))
    return folder


def test_configurations_of_one_model_are_reported_as_configurations(two_configurations, fast_plan):
    from harness.analysis.report.figures import forest_title

    result = analyze(two_configurations, fast_plan)
    m = result.models
    assert m is not None and (m.kind, m.of_model) == (
        "configurations",
        "local (SmolLM2-135M-Instruct)",
    )
    report = (two_configurations / "report" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Across configurations of local (SmolLM2-135M-Instruct)\n")[1]
    section = section.split("\n## ")[0]
    assert "models" not in section.lower() and "model's" not in section
    assert "Heterogeneity across configurations of one model" in section
    assert "configuration-by-condition interaction" in section
    assert "tells a configuration's items from the others' with AUC local#sampled vs" in section
    assert "| configuration | topics |" in section and "local#greedy" in section
    assert "Each configuration's difference, configurations of local" in report  # the caption
    assert "| Configurations | local#greedy, local#sampled (of local (" in report
    assert "Across models" not in report
    html = (two_configurations / "report" / "report.html").read_text(encoding="utf-8")
    assert "Across configurations of local (SmolLM2-135M-Instruct)" in html
    saved = json.loads((two_configurations / "report" / "report.json").read_text(encoding="utf-8"))
    assert saved["models"]["kind"] == "configurations"
    assert saved["models"]["heading"] == "Across configurations of local (SmolLM2-135M-Instruct)"
    assert saved["models"]["leak_auc"]["kind"] == "configurations"
    assert forest_title(m).startswith("Each configuration of local (SmolLM2-135M-Instruct)")


def test_several_models_keep_the_models_wording(two_models, fast_plan):
    from harness.analysis.report.figures import forest_title

    result = analyze(two_models, fast_plan, write_report=False)
    assert result.models is not None and result.models.kind == "models"
    assert result.models.heading == "Across models" and result.models.of_model is None
    assert forest_title(result.models).startswith("Each model's difference")


def _per_model(fast_plan, tmp_path):
    text = (
        fast_plan.read_text(encoding="utf-8")
        .replace("primary: pooled            #", "primary: per_model         #")
        .replace("minimum:\n  topics: 50", "minimum:\n  topics: 20")
    )
    path = tmp_path / "per_model.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_per_model_plan_decides_from_the_models_and_says_so(two_models, fast_plan, tmp_path):
    result = analyze(two_models, _per_model(fast_plan, tmp_path), allow_deviation=True)
    assert result.models is not None and result.models.primary == "per_model"
    labels = [m["verdict"] for m in result.models.models]
    assert set(labels) <= {"supported", "refuted", "inconclusive"}
    expected = (
        "supported"
        if "supported" in labels
        else "refuted"
        if set(labels) == {"refuted"}
        else "inconclusive"
    )
    assert result.verdict.label == expected
    assert result.verdict.reason.startswith("per-model primary analysis")
    saved = json.loads((two_models / "report" / "report.json").read_text(encoding="utf-8"))
    assert saved["models"]["primary"] == "per_model"
    assert saved["plan"]["models"]["primary"] == "per_model"
    report = (two_models / "report" / "report.md").read_text(encoding="utf-8")
    assert "Primary analysis across models, fixed in the plan: per_model" in report


def test_one_model_study_ignores_per_model_and_says_so(tmp_path, fast_plan):
    folder = write_simulated_study(
        tmp_path / "one", Design(samples=1, reviewers=2), topics=20, seed=4
    )
    result = analyze(folder, _per_model(fast_plan, tmp_path), write_report=False)
    assert result.models is None
    assert any("per_model is ignored: the study has one model" in n for n in result.notes)
