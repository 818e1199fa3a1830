"""The plan file: the bundled plan validates, and bad plans fail on one line with file and field."""

from __future__ import annotations

import hashlib

import pytest

from harness.analysis.plan.plan_file import Plan, bundled_plan_path, load_plan
from harness.errors import HarnessError


def test_bundled_plan_is_valid_and_equals_the_model_defaults():
    loaded = load_plan()
    assert loaded.sha256 == hashlib.sha256(bundled_plan_path().read_bytes()).hexdigest()
    plan = loaded.plan
    # one key differs on purpose: a plan without it keeps the meaning it had before it existed
    assert plan.controls.adjudicator_share == 0.4
    defaults = Plan(hypothesis=plan.hypothesis)
    assert defaults.controls.adjudicator_share is None
    controls = defaults.controls.model_copy(update={"adjudicator_share": 0.4})
    assert plan == defaults.model_copy(update={"controls": controls})
    assert plan.primary.test == "permutation" and plan.minimum.topics == 50
    assert "fifty topics" in plan.hypothesis
    assert plan.check_tests == ["mcnemar_exact", "mcnemar_midp", "gee"]


def _write(tmp_path, text: str):
    path = tmp_path / "plan.yaml"
    path.write_text(text, encoding="utf-8")
    return path


HYP = "hypothesis: Cross-field prompts yield more unpublished combinations than single.\n"


def test_bad_value_names_file_line_and_field(tmp_path):
    path = _write(tmp_path, HYP + "primary:\n  test: permutation\n  alpha: 0.9\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    error = caught.value
    assert error.file == str(path) and error.row == 4 and error.column == "primary.alpha"
    assert "\n" not in str(error) and str(error).startswith(f"{path}:4: primary.alpha: ")


def test_unknown_field_is_an_error(tmp_path):
    path = _write(tmp_path, HYP + "equivalence:\n  sesoi: 0.1\n  margn: 0.2\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    assert caught.value.row == 4 and caught.value.column == "equivalence.margn"
    assert "unknown field" in caught.value.message


def test_bad_choice_in_a_list(tmp_path):
    path = _write(tmp_path, HYP + "secondary:\n  analyses:\n    - mixed_glm\n    - astrology\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    assert caught.value.row == 5 and caught.value.column == "secondary.analyses.1"


def test_missing_hypothesis_and_invalid_yaml(tmp_path):
    with pytest.raises(HarnessError) as caught:
        load_plan(_write(tmp_path, "primary:\n  alpha: 0.05\n"))
    assert caught.value.column == "hypothesis" and "missing" in caught.value.message
    with pytest.raises(HarnessError) as caught:
        load_plan(_write(tmp_path, HYP + "primary: [unclosed\n"))
    assert caught.value.row is not None and "invalid YAML" in caught.value.message
    with pytest.raises(HarnessError) as caught:
        load_plan(_write(tmp_path, "- just a list\n"))
    assert "mapping" in caught.value.message
    with pytest.raises(HarnessError) as caught:
        load_plan(tmp_path / "nope.yaml")
    assert "cannot read" in caught.value.message


def test_a_minimal_plan_takes_the_defaults(tmp_path):
    plan = load_plan(_write(tmp_path, HYP + "equivalence:\n  sesoi: 0.05\n")).plan
    assert plan.equivalence.sesoi == 0.05 and plan.primary.alpha == 0.05


def test_models_primary_defaults_to_pooled_and_accepts_per_model(tmp_path):
    assert load_plan().plan.models.primary == "pooled"
    path = _write(tmp_path, HYP + "models:\n  primary: per_model\n")
    assert load_plan(path).plan.models.primary == "per_model"


def test_unknown_models_primary_is_one_line_naming_the_field(tmp_path):
    path = _write(tmp_path, HYP + "models:\n  primary: each\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    assert caught.value.row == 3 and caught.value.column == "models.primary"
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("extra", "needs"),
    [
        ("controls:\n  correction: per_reviewer\n", "controls.correction"),
        ("equivalence:\n  method: tango\n", "equivalence.method"),
    ],
)
def test_per_model_refuses_settings_it_cannot_apply(tmp_path, extra, needs):
    path = _write(tmp_path, HYP + extra + "models:\n  primary: per_model\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    error = caught.value
    assert error.column == "models.primary" and error.row == 3 + extra.count("\n")
    assert needs in str(error) and "\n" not in str(error)


def test_model_correlation_out_of_range_names_its_line(tmp_path):
    path = _write(tmp_path, HYP + "planning:\n  models: 3\n  model_correlation: 1.5\n")
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    assert caught.value.row == 4 and caught.value.column == "planning.model_correlation"


@pytest.mark.parametrize(
    ("section", "row", "column", "words"),
    [
        ("  topics: 1\n", 3, "adjudication.topics", "at least 2"),
        ("  topics: 1.5\n", 3, "adjudication.topics", "share of topics"),
        ("  topics: many\n", 3, "adjudication.topics", "a share"),
        ("  per_item: 1\n", 3, "adjudication.per_item", ""),
        ("  combine: majority\n  per_item: 2\n", 2, "adjudication", "odd per_item"),
    ],
)
def test_adjudication_errors_name_line_and_field(tmp_path, section, row, column, words):
    path = _write(tmp_path, HYP + "adjudication:\n" + section)
    with pytest.raises(HarnessError) as caught:
        load_plan(path)
    assert caught.value.row == row and caught.value.column == column
    assert words in caught.value.message


def test_adjudication_share_count_and_leak_gate(tmp_path):
    plan = load_plan(_write(tmp_path, HYP + "adjudication:\n  topics: 20\n")).plan
    assert isinstance(plan.adjudication.topics, int) and plan.adjudication.size(100) == 20
    assert load_plan().plan.adjudication.size(363) == 91  # 0.25 x 363, rounded
    assert load_plan().plan.controls.max_leak_auc == 0.6
    with pytest.raises(HarnessError) as caught:
        load_plan(_write(tmp_path, HYP + "controls:\n  max_leak_auc: 0.5\n"))
    assert caught.value.column == "controls.max_leak_auc"
