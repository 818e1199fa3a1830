"""`harness power --config study.yaml`: the design of the study the file runs, flags overriding."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.planning.power_analysis import bank_size, power
from harness.analysis.planning.study_design import study_design
from harness.errors import HarnessError
from tests.cli_run import run_subprocesses

THREE_MODELS = """
subset: 60
samples: 2
models:
  - model: local
  - model: openai/model-x
    base_url: http://127.0.0.1:9/v1
  - model: openai/model-y
    base_url: http://127.0.0.1:9/v1
    samples: 3
"""


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_design_takes_topics_models_and_samples(tmp_path):
    design = study_design(_file(tmp_path, THREE_MODELS))
    assert (design.topics, design.topics_from, design.models, design.samples) == (
        60,
        "subset",
        3,
        2,
    )
    assert design.plan is None and design.bank is None


def test_topics_without_subset_are_the_limit_or_the_whole_bank(tmp_path):
    in_bank, _ = bank_size(None)
    assert study_design(_file(tmp_path, "limit: 70\n")).topics == 70
    assert study_design(_file(tmp_path, f"limit: {in_bank + 5}\n")).topics == in_bank
    whole = study_design(_file(tmp_path, "seed: 3\n"))
    assert (whole.topics, whole.topics_from, whole.models) == (in_bank, "bank", 1)


def test_power_uses_the_file_and_flags_override(tmp_path):
    # adjudicated=0 throughout: the adjudicated section's simulation is not what this checks
    path = _file(tmp_path, THREE_MODELS)
    from_file = power(study_file=path, adjudicated=0)
    assert from_file.inputs["topics"] == 60 and from_file.inputs["models"] == 3
    assert from_file.models is not None  # the several-models section
    assert any("design from study file study.yaml: 60 topics" in n for n in from_file.notes)
    assert from_file.summary() != power(topics=60, adjudicated=0).summary()
    assert from_file.analytic == power(topics=60, models=3, adjudicated=0).analytic
    overridden = power(study_file=path, topics=80, models=1, adjudicated=0)
    assert overridden.inputs["topics"] == 80 and overridden.models is None


def test_the_files_plan_is_used(tmp_path):
    plan = Path(__file__).resolve().parents[3] / "analysis" / "plan.yaml"
    text = plan.read_text(encoding="utf-8").replace("sesoi: 0.1", "sesoi: 0.15")
    assert text != plan.read_text(encoding="utf-8")
    (tmp_path / "plan.yaml").write_text(text, encoding="utf-8")
    result = power(study_file=_file(tmp_path, "subset: 60\nplan: plan.yaml\n"), adjudicated=0)
    assert result.inputs["sesoi"] == 0.15


def test_a_bad_study_file_names_file_line_and_field(tmp_path):
    with pytest.raises(HarnessError) as caught:
        power(study_file=_file(tmp_path, "subset: 60\nsamples: 0\n"))
    message = str(caught.value)
    assert "study.yaml" in message and "2" in message and "samples" in message


def test_cli_power_config(tmp_path):
    path = _file(tmp_path, THREE_MODELS)
    done, bad = run_subprocesses(
        ["power", "--config", str(path)], ["power", "--config", "nope.yaml"]
    )
    assert done.returncode == 0, done.stderr
    assert "Power for 60 topics" in done.stdout and "Several models: 3" in done.stdout
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "nope.yaml" in bad.stderr
