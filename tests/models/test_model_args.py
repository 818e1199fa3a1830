"""`--model-arg`: typed values, `omit`, scoping to one model, and one-line errors."""

from __future__ import annotations

import pytest

from harness.errors import HarnessError
from harness.models.model_args import OMIT, parse_model_args, request_fields

MODELS = ["openai/o3-mini", "ollama/llama3.1:8b"]


def test_values_are_typed_and_scoped():
    args = parse_model_args(
        [
            "temperature=0.2",
            "openai/o3-mini@temperature=omit",
            "max_tokens=300",
            "openai/o3-mini@token_param=max_completion_tokens",
            "stop=END",
            'ollama/llama3.1:8b@stop=["a", "b"]',
            "extra.logprobs=true",
            'extra.metadata={"run": 1}',
            "extra.user=alice",
            "samples=3",
            "openai/o3-mini@reasoning_effort=low",
            "openai/o3-mini@max_cost=2.5",
        ],
        MODELS,
    )
    assert args[None] == {
        "temperature": 0.2,
        "max_tokens": 300,
        "stop": ["END"],
        "extra.logprobs": True,
        "extra.metadata": {"run": 1},
        "extra.user": "alice",
        "samples": 3,
    }
    assert args["openai/o3-mini"] == {
        "temperature": OMIT,
        "token_param": "max_completion_tokens",
        "reasoning_effort": "low",
        "max_cost": 2.5,
    }
    assert args["ollama/llama3.1:8b"] == {"stop": ["a", "b"]}


def test_request_fields_split_body_fields_from_omitted_parameters():
    body, omitted = request_fields(
        {
            "temperature": OMIT,
            "top_p": 0.9,
            "seed": OMIT,
            "reasoning_effort": "high",
            "stop": ["x"],
            "extra.logprobs": True,
            "extra.user": OMIT,
        }
    )
    assert body == {"reasoning_effort": "high", "stop": ["x"], "logprobs": True}
    assert omitted == {"temperature", "seed"}


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("temperature", "is not KEY=VALUE"),
        ("colour=red", "unknown key 'colour'"),
        ("extra.=1", "unknown key 'extra.'"),
        ("extra.model=gpt-4o", "model is not an extra body field"),
        ("extra.stream=true", "stream is not an extra body field"),
        ("extra.max_completion_tokens=9", "max_completion_tokens is not an extra body field"),
        ("gpt-4o@temperature=0", "'gpt-4o' is not one of this run's --model values"),
        ("max_tokens=omit", "max_tokens cannot be omitted"),
        ("max_tokens=many", "max_tokens must be an integer"),
        ("top_p=high", "top_p must be a number"),
        ("token_param=max_new_tokens", "token_param must be one of max_tokens, max_completion"),
        ("stop=[1]", "stop must be a non-empty list"),
        ("stop=[oops", "stop is not a JSON list"),
        ("reasoning_effort=", "reasoning_effort is empty"),
    ],
)
def test_bad_arguments_are_one_line_errors(arg, message):
    with pytest.raises(HarnessError, match=message.replace("[", r"\[")) as caught:
        parse_model_args([arg], MODELS)
    assert "\n" not in str(caught.value)


def test_a_repeated_base_url_adds_replicas_and_other_keys_are_replaced():
    out = parse_model_args(
        ["m@base_url=http://a:1/v1", "m@base_url=http://b:2/v1", "m@rpm=5", "m@rpm=6"], ["m"]
    )
    assert out == {"m": {"base_url": "http://a:1/v1,http://b:2/v1", "rpm": 6.0}}
