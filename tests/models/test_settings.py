"""Backend settings: built from option values in one place, refused where they do not apply,
and the same defaults as the backends' own."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from harness.errors import HarnessError
from harness.models import open_backend
from harness.models.local import LocalBackend
from harness.models.openai_api import OpenAIBackend
from harness.models.settings import (
    LocalSettings,
    OpenAISettings,
    build_settings,
    foreign,
    option_names,
)


@pytest.mark.parametrize(
    "settings, backend", [(LocalSettings, LocalBackend), (OpenAISettings, OpenAIBackend)]
)
def test_defaults_are_the_backends_own(settings, backend):
    parameters = inspect.signature(backend.__init__).parameters
    for f in fields(settings):
        if f.name in ("extra_body",):  # the backend takes None for "no extra fields"
            continue
        assert parameters[f.name].default == f.default, f.name


def test_options_become_typed_settings():
    built = build_settings("openai", {"concurrency": 4, "rpm": None, "batch_api": True})
    assert built == OpenAISettings(concurrency=4, batch_api=True)
    assert build_settings("local", {"threads": 2}) == LocalSettings(threads=2)


@pytest.mark.parametrize(
    "backend, name, message",
    [
        ("local", "concurrency", "--concurrency does not apply to the local backend"),
        ("local", "rpm", "--rpm does not apply to the local backend"),
        ("openai", "batch_size", "--batch-size does not apply to the openai backend"),
        ("openai", "concurency", "unknown backend option 'concurency'"),
    ],
)
def test_an_option_that_does_not_apply_is_refused_in_one_line(backend, name, message):
    with pytest.raises(HarnessError, match=message) as caught:
        build_settings(backend, {name: 3})
    assert "\n" not in str(caught.value) and caught.value.column == name


def test_foreign_options_and_unknown_backends():
    assert foreign("local", "base_url") and foreign("openai", "threads")
    assert not foreign("openai", "base_url") and not foreign("local", "no_such_option")
    assert option_names("local") == {"batch_size", "threads", "precision"}
    with pytest.raises(HarnessError, match="unknown backend 'nope'"):
        build_settings("nope", {})


def test_open_backend_builds_the_backend_from_its_settings():
    engine = open_backend(
        "openai",
        "m",
        api_key="k",
        base_url="http://127.0.0.1:9/v1",
        concurrency=3,
        timeout=7.0,
        token_param="max_completion_tokens",
        omit=frozenset({"seed"}),
    )
    assert isinstance(engine, OpenAIBackend)
    assert engine.concurrency == 3 and engine.policy.timeout == 7.0
    assert engine.token_param == "max_completion_tokens" and engine.omit == {"seed"}
    engine.close()
    with pytest.raises(HarnessError, match="--threads does not apply to the openai backend"):
        open_backend("openai", "m", threads=2)
