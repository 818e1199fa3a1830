"""Provider strings: what each means, and one-line errors for what is wrong."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models.providers import (
    ModelSpec,
    legacy_spec,
    model_of,
    parse_model,
    resolve_model,
    stored_key,
)
from harness.study.migrations import old_output_key


@pytest.mark.parametrize(
    ("text", "provider", "name", "backend", "url"),
    [
        ("local", "local", None, "local", None),
        ("local/embedded", "local", None, "local", None),
        ("local/SmolLM2-135M-Instruct", "local", None, "local", None),
        ("local/models/q.gguf", "local", "models/q.gguf", "local", None),
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini", "openai", None),
        (
            "vllm/Qwen/Qwen2.5-7B-Instruct",
            "vllm",
            "Qwen/Qwen2.5-7B-Instruct",
            "openai",
            "http://localhost:8000/v1",
        ),
        ("llamacpp/smollm2", "llamacpp", "smollm2", "openai", "http://localhost:8080/v1"),
        ("ollama/llama3.1:8b", "ollama", "llama3.1:8b", "openai", "http://localhost:11434/v1"),
        ("openai-compatible/m", "openai-compatible", "m", "openai", ""),
    ],
)
def test_provider_strings(text, provider, name, backend, url):
    spec = parse_model(text)
    assert (spec.provider, spec.name, spec.backend, spec.default_url) == (
        provider,
        name,
        backend,
        url,
    )
    assert parse_model(spec.key) == spec  # the key reads back as the same model


def test_only_openai_and_generic_servers_get_the_openai_key():
    assert parse_model("openai/x").sends_openai_key
    assert parse_model("openai-compatible/x").sends_openai_key
    assert not any(parse_model(f"{p}/x").sends_openai_key for p in ("vllm", "llamacpp", "ollama"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty model"),
        ("anthropic/claude", "unknown provider 'anthropic'"),
        ("vllm/", "names no model"),
        ("gpt-4o-mini", "unknown provider 'gpt-4o-mini'"),
    ],
)
def test_bad_provider_strings_are_one_line_errors(text, message):
    with pytest.raises(HarnessError, match=message) as caught:
        parse_model(text)
    assert caught.value.column == "model" and "\n" not in str(caught.value)


def test_the_older_backend_and_model_pair_still_means_what_it_meant(tmp_path):
    assert legacy_spec(None, None) == ModelSpec("local", None)
    assert legacy_spec("openai", "gpt-4o-mini") == ModelSpec("openai", "gpt-4o-mini")
    assert legacy_spec("vllm", "Qwen/Qwen2.5-7B") == ModelSpec("vllm", "Qwen/Qwen2.5-7B")
    with pytest.raises(HarnessError, match="needs --model"):
        legacy_spec("openai", None)
    with pytest.raises(HarnessError, match="unknown backend 'tgi'"):
        legacy_spec("tgi", "m")
    # --model alone: a provider string, else a local path as before
    weights = tmp_path / "w" / "m.gguf"
    weights.parent.mkdir()
    weights.write_bytes(b"")
    assert resolve_model(str(weights)) == ModelSpec("local", str(weights))
    assert resolve_model("m.gguf") == ModelSpec("local", "m.gguf")
    assert resolve_model("openai/gpt-4o", backend=None) == ModelSpec("openai", "gpt-4o")
    assert resolve_model("gpt-4o", backend="openai") == ModelSpec("openai", "gpt-4o")
    with pytest.raises(HarnessError, match="unknown provider 'mistral'"):
        resolve_model("mistral/large")


@pytest.mark.parametrize(
    ("backend", "model", "key"),
    [
        ("local", "SmolLM2-135M-Instruct", "local"),
        ("local", "", "local"),
        ("local", "m.gguf", "local/m.gguf"),
        ("openai", "gpt-4o-mini", "openai/gpt-4o-mini"),
    ],
)
def test_keys_of_outputs_stored_before_provider_strings(backend, model, key):
    # the store's migration keys old outputs by its own copy of the rule
    assert stored_key(backend, model) == key
    assert old_output_key(backend, model) == key


@pytest.mark.parametrize(
    ("text", "model_string", "label"),
    [
        ("local#greedy", "local", "greedy"),
        ("local/embedded#t1.0", "local", "t1.0"),
        ("ollama/llama3.1:8b#hot_2", "ollama/llama3.1:8b", "hot_2"),
        ("vllm/Qwen/Qwen2.5-7B-Instruct#a-b", "vllm/Qwen/Qwen2.5-7B-Instruct", "a-b"),
    ],
)
def test_a_label_names_a_configuration_of_a_model(text, model_string, label):
    spec = parse_model(text)
    assert (spec.model_string, spec.label, spec.key) == (
        model_string,
        label,
        f"{model_string}#{label}",
    )
    assert parse_model(spec.key) == spec and model_of(spec.key) == model_string
    assert resolve_model(text) == spec  # the --model form reads it the same way
    assert parse_model(model_string).label is None and model_of(model_string) == model_string


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("local#", "bad configuration label ''"),
        ("#greedy", "names no model before '#'"),
        ("local#bad:tag", "bad configuration label 'bad:tag'"),
        ("local#a/b", "bad configuration label 'a/b'"),
        ("local#x@y", "bad configuration label 'x@y'"),
        ("local#-x", "bad configuration label '-x'"),
        ("local#" + "x" * 41, "bad configuration label"),
    ],
)
def test_bad_labels_are_one_line_errors(text, message):
    with pytest.raises(HarnessError, match=message) as error:
        resolve_model(text)
    assert "\n" not in str(error.value) and error.value.column == "model"


def test_keys_are_configurations_only_when_they_share_one_model():
    from harness.models.configurations import wording

    same = wording(["local#greedy", "local#sampled"])
    assert (same.kind, same.of_model) == ("configurations", "local (SmolLM2-135M-Instruct)")
    assert same.heading == "Across configurations of local (SmolLM2-135M-Instruct)"
    assert wording(["openai/a#x", "openai/a#y"]).of_model == "openai/a"
    for keys in (
        ["local", "openai/a"],
        ["local#x", "openai/a#x"],
        ["local", "local#x"],
        ["local#x"],
    ):
        assert wording(keys).kind == "models" and wording(keys).heading == "Across models"


def test_a_registered_provider_gets_the_key_its_record_names(monkeypatch):
    """`key_env` is read for a provider other than OpenAI's; unset, the placeholder is sent."""
    from harness.models import providers

    monkeypatch.setattr(providers, "PROVIDERS", dict(providers.PROVIDERS))
    providers.register_provider(
        providers.Provider("toyhost", "a toy host", "openai", "https://toy.invalid/v1", "TOY_KEY")
    )
    spec = providers.parse_model("toyhost/m")
    monkeypatch.delenv("TOY_KEY", raising=False)
    assert providers.api_key(spec) == providers.NO_KEY
    monkeypatch.setenv("TOY_KEY", "secret-value")
    assert providers.endpoint(spec, None) == ("https://toy.invalid/v1", "secret-value")
    assert providers.api_key(providers.parse_model("openai/m")) is None  # the client reads it
