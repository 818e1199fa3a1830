"""`harness run`'s settings object: one set of defaults, a record that reads back, keyword
forms that name exactly its fields, and settings checked before the study folder is made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_type_hints

import pytest

from harness.cli.run_cmds import run as run_command
from harness.errors import HarnessError
from harness.pipeline.run_settings import RunOptions, RunSettings, settings
from harness.pipeline.runner import run_study


def test_settings_round_trip_through_their_record(tmp_path):
    chosen = RunSettings(
        pilot=True,
        limit=4,
        topics=tmp_path / "bank.yaml",
        seed=3,
        reviewers=tmp_path / "roster.yaml",
        cutoff=None,
        plan=tmp_path / "plan.yaml",
        models=("local#a", "vllm/m"),
        model_args=("a@temperature=0",),
        study_file={"path": "x", "sha256": "0" * 64, "overrides": {"seed": 3}},
    )
    record = json.loads(json.dumps(chosen.record()))
    assert record["topics"] == str(tmp_path / "bank.yaml") and record["models"] == [
        "local#a",
        "vllm/m",
    ]
    assert RunSettings.from_record(record) == chosen
    assert RunSettings.from_record(RunSettings().record()) == RunSettings()
    assert RunSettings.from_record({"seed": 5}) == RunSettings(seed=5)


def test_an_unknown_setting_in_a_record_is_named():
    with pytest.raises(HarnessError, match="unknown run setting 'sampels'") as caught:
        RunSettings.from_record({"sampels": 2})
    assert caught.value.column == "sampels"


def test_the_keyword_forms_name_exactly_the_settings():
    fields = get_type_hints(RunSettings)
    assert get_type_hints(RunOptions) == fields
    # the command line's flags (but its two paths) are settings by name; a flag may be left
    # out: None
    flags = get_type_hints(run_command)
    flags = {k: v for k, v in flags.items() if k not in ("ctx", "study", "config", "return")}
    assert set(flags) <= set(fields)
    for name, kind in flags.items():
        assert kind == fields[name] | None


def test_flags_given_override_the_defaults_and_others_keep_them():
    out = settings(None, {"seed": 9, "probe": False, "limit": None})
    assert out == RunSettings(seed=9, probe=False)
    with pytest.raises(HarnessError, match="unknown run setting 'sampels'"):
        settings(None, {"sampels": 2})


def test_run_study_checks_its_settings_before_the_folder_is_made(tmp_path):
    folder = tmp_path / "s"
    with pytest.raises(TypeError, match="pilott"):
        run_study(folder, pilott=True)  # type: ignore[call-arg]
    with pytest.raises(HarnessError, match="not a date"):
        run_study(folder, cutoff="soon")
    with pytest.raises(HarnessError, match="not a date"):
        run_study(folder, RunSettings(cutoff="soon"))
    # keywords override the object: the cut-off is good now, the model is not
    with pytest.raises(HarnessError, match="unknown provider 'nowhere'"):
        run_study(folder, RunSettings(cutoff="soon"), cutoff="1990", models=("nowhere/x",))
    assert not folder.exists()


def test_keywords_set_over_a_settings_object():
    base = RunSettings(limit=3, seed=2)
    assert base.with_options({"seed": 4, "plan": Path("p.yaml")}) == RunSettings(
        limit=3, seed=4, plan=Path("p.yaml")
    )
