"""A tiny study written straight into the store, and a small random transformer for fast tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.study import Study

TOPICS = [
    (
        "Physics",
        "Music",
        ["standing waves", "acoustic resonance"],
        ["Gregorian chant", "cathedral architecture"],
        "a shared mechanism",
    ),
    (
        "Biology",
        "Economics",
        ["natural selection", "gene regulation"],
        ["market competition", "price signals"],
        "an analogy of structure",
    ),
    (
        "Control theory",
        "Linguistics",
        ["feedback loops", "stability margins"],
        ["turn taking", "repair sequences"],
        "a causal dependence",
    ),
    (
        "Geology",
        "Computer science",
        ["plate tectonics", "erosion rates"],
        ["load balancing", "cache eviction"],
        "a common constraint",
    ),
]
TEMPLATE = (
    "Consider {concept_1} from {field_1} and {concept_2} from {field_2}. "
    "Examine {relation} between them."
)


def render(slots: dict[str, str]) -> tuple[str, dict[str, list[int]]]:
    """The prompt text and the character span of each slot."""
    text, spans = "", {}
    for literal, name in _pieces(TEMPLATE):
        text += literal
        if name:
            spans[name] = [len(text), len(text) + len(slots[name])]
            text += slots[name]
    return text, {k: v for k, v in spans.items() if k != "relation"}


def _pieces(template: str) -> list[tuple[str, str | None]]:
    out, rest = [], template
    while "{" in rest:
        literal, rest = rest.split("{", 1)
        name, rest = rest.split("}", 1)
        out.append((literal, name))
    out.append((rest, None))
    return out


def conditions(field_a, field_b, ca, cb, relation) -> dict[str, dict[str, str]]:
    base = {"relation": relation}
    return {
        "cross": {
            **base,
            "concept_1": ca[0],
            "field_1": field_a,
            "concept_2": cb[0],
            "field_2": field_b,
        },
        "single_a": {
            **base,
            "concept_1": ca[0],
            "field_1": field_a,
            "concept_2": ca[1],
            "field_2": field_a,
        },
        "single_b": {
            **base,
            "concept_1": cb[1],
            "field_1": field_b,
            "concept_2": cb[0],
            "field_2": field_b,
        },
    }


def make_study(folder: Path, n_topics: int = 2, *, spans_override: str | None = None) -> Path:
    """A study with n_topics topics x 3 conditions, rows inserted directly into the store."""
    with Study.open(folder, create=True) as study, study.transaction() as conn:
        for i in range(n_topics):
            field_a, field_b, ca, cb, relation = TOPICS[i % len(TOPICS)]
            tid = f"t{i:03d}"
            conn.execute(
                "INSERT INTO topics VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    tid,
                    field_a,
                    1,
                    "D1",
                    field_b,
                    2,
                    "D2",
                    json.dumps(ca),
                    json.dumps(cb),
                    relation,
                    3,
                    0.5,
                    "{}",
                ),
            )
            for condition, slots in conditions(field_a, field_b, ca, cb, relation).items():
                text, spans = render(slots)
                conn.execute(
                    "INSERT INTO prompts VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        f"{tid}.{condition}",
                        tid,
                        condition,
                        "plain",
                        "0" * 64,
                        None,
                        text,
                        len(text.split()),
                        spans_override or json.dumps(spans),
                    ),
                )
    return folder


@pytest.fixture(scope="session")
def tokenizer():
    from harness.models.embedded import load_tokenizer

    return load_tokenizer()


@pytest.fixture(scope="session")
def tiny_model(tokenizer):
    """A randomly initialised 2-layer Llama with the embedded tokenizer: real forward passes and
    attention weights in milliseconds."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from harness.geometry.realmodel import LoadedModel

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        attn_implementation="eager",
    )
    model = LlamaForCausalLM(config).eval()
    return LoadedModel("tiny-llama", model, tokenizer)
