"""The collect stage's settings object: built once from keywords, read back from its record."""

from __future__ import annotations

import inspect
import json
from dataclasses import fields

import pytest

from harness.cli.collect_cmds import _RENAMED
from harness.cli.collect_cmds import collect as collect_command
from harness.collection.collect_settings import CollectSettings
from harness.errors import HarnessError
from harness.models.settings import ServerOptions


def test_settings_round_trip_through_their_record():
    settings = CollectSettings(
        models=("vllm/a#x", "local"),
        model_args=("x@temperature=0", "local@batch_size=4"),
        samples=3,
        temperature=0.5,
        top_p=0.9,
        max_tokens=64,
        seed=7,
        server=ServerOptions(
            base_url=("http://a:8000/v1", "http://b:8000/v1"),
            concurrency=4,
            rpm=60.0,
            tpm=1000.0,
            timeout=30.0,
            max_attempts=2,
            batch_api=True,
        ),
        batch_size=8,
        threads=2,
        backend_options={"poll_interval": 0.5},
        max_cost=2.5,
        retry_errors=True,
        new_endpoint=True,
    )
    record = json.loads(json.dumps(settings.record()))
    assert record["base_url"] == ["http://a:8000/v1", "http://b:8000/v1"]
    assert record["poll_interval"] == 0.5 and record["retry_errors"] is True
    assert CollectSettings.from_record(record) == settings
    assert CollectSettings().record() == {}
    assert CollectSettings.from_record({}) == CollectSettings()


def test_keywords_are_sorted_into_the_settings():
    built = CollectSettings.from_keywords(
        backend="openai",
        model="m",
        model_args=None,
        samples=None,
        max_tokens=12,
        base_url=["http://a/v1", "http://b/v1"],
        concurrency=4,
        batch_size=None,
        poll_interval=0.02,
    )
    assert built == CollectSettings(
        backend="openai",
        model="m",
        max_tokens=12,
        server=ServerOptions(base_url=("http://a/v1", "http://b/v1"), concurrency=4),
        backend_options={"poll_interval": 0.02},
    )
    assert built.generation() == dict.fromkeys(
        ("samples", "temperature", "top_p", "seed"), None
    ) | {"max_tokens": 12}
    assert built.run_options() == {
        "base_url": ("http://a/v1", "http://b/v1"),
        "concurrency": 4,
        "poll_interval": 0.02,
    }


def test_an_option_no_backend_takes_is_refused_when_the_backend_is_built(tmp_path):
    from harness.collection.model_plan import plan
    from harness.study import Study
    from tests.collection.conftest import make_study

    study = make_study(tmp_path / "s", 1)
    asked = CollectSettings.from_keywords(model="local", colour="red")
    assert asked.backend_options == {"colour": "red"}
    with Study.open(study) as opened, pytest.raises(HarnessError, match="unknown backend option"):
        plan(opened, asked)


def test_each_command_line_option_is_a_setting_of_its_name():
    # `harness collect` passes its options on by name: one that is no field would silently
    # become a backend option
    names = {f.name for f in fields(CollectSettings)} | {f.name for f in fields(ServerOptions)}
    options = set(inspect.signature(collect_command).parameters) - {"ctx", *_RENAMED}
    assert options <= names, sorted(options - names)
