"""Prompts as the model sees them (chat template) and the tokens of each named slot."""

from __future__ import annotations

import json

import pytest

from harness.errors import HarnessError
from harness.geometry.tokens import encode_prompt, parse_spans
from tests.geometry.conftest import conditions, render

WHERE = {"file": "study.sqlite", "row": "t000.cross"}


@pytest.fixture
def prompt():
    text, spans = render(
        conditions(
            "Physics",
            "Music",
            ["standing waves", "x"],
            ["Gregorian chant", "y"],
            "a shared mechanism",
        )["cross"]
    )
    return text, parse_spans(json.dumps(spans), text, where=WHERE)


def test_slots_map_to_their_tokens_inside_the_chat_template(tokenizer, prompt):
    text, spans = prompt
    encoded = encode_prompt(tokenizer, text, spans, system="Answer briefly.")
    assert encoded.text.startswith("<|im_start|>system\nAnswer briefly.")
    assert encoded.text.endswith("<|im_start|>assistant\n")  # the model is about to answer
    assert encoded.text[encoded.user_offset : encoded.user_offset + len(text)] == text
    decoded = {
        slot: tokenizer.decode([encoded.input_ids[i] for i in idx]).strip()
        for slot, idx in encoded.slot_tokens.items()
    }
    assert decoded == {
        "concept_1": "standing waves",
        "field_1": "Physics",
        "concept_2": "Gregorian chant",
        "field_2": "Music",
    }
    assert encoded.input_ids == tokenizer(encoded.text, add_special_tokens=False)["input_ids"]


def test_without_template_the_spans_index_the_bare_text(tokenizer, prompt):
    text, spans = prompt
    encoded = encode_prompt(tokenizer, text, spans, chat_template=False)
    assert encoded.text == text and encoded.user_offset == 0
    first = encoded.slot_tokens["concept_1"]
    assert tokenizer.decode([encoded.input_ids[i] for i in first]).strip() == "standing waves"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"concept_1": [5, 2]}', "0 <= start < end"),
        ('{"concept_1": [0, 9999]}', "0 <= start < end"),
        ('{"concept_1": "0-4"}', "0 <= start < end"),
    ],
)
def test_bad_spans_name_the_row_and_column(raw, message):
    with pytest.raises(HarnessError) as error:
        parse_spans(raw, "Consider standing waves.", where=WHERE)
    assert message in str(error.value)
    assert (error.value.row, error.value.column) == ("t000.cross", "spans")
    assert str(error.value).startswith("study.sqlite:t000.cross: spans: ")
