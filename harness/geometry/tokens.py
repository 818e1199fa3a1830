"""A study prompt as the model sees it, and which of its tokens belong to each named slot.

The probe reads attention at the moment the model starts answering, so the prompt is wrapped in
the model's chat template with the generation prompt appended (as the collect stage sends it).
The prompt's character spans (`prompts.spans`, relative to the user text) are shifted to where the
user text sits in the templated string and mapped to tokens through the tokenizer's offsets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from harness.errors import HarnessError

#: Slots named in every prompt: the two concepts and the fields they come from.
SLOTS = ("concept_1", "concept_2", "field_1", "field_2")


class Where(TypedDict, total=False):
    """Where a prompt comes from, as an error names it."""

    file: str | Path | None
    row: int | str | None


@dataclass(frozen=True)
class EncodedPrompt:
    text: str  # the string the model reads (templated when the tokenizer has a chat template)
    input_ids: list[int]
    slot_tokens: dict[str, list[int]]  # slot -> token positions overlapping its characters
    user_offset: int  # where the user text starts inside `text`


def parse_spans(
    raw: str | Mapping[str, object], text: str, *, where: Where
) -> dict[str, tuple[int, int]]:
    """{slot: (start, end)} from the prompts table, checked against the prompt text."""
    try:
        spans = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (TypeError, ValueError) as error:
        raise HarnessError(f"spans is not valid JSON ({error})", column="spans", **where) from None
    if not isinstance(spans, dict):
        raise HarnessError(
            "spans must be a JSON object {slot: [start, end]}", column="spans", **where
        )
    checked: dict[str, tuple[int, int]] = {}
    for slot, span in spans.items():
        ok = (
            isinstance(span, list | tuple)
            and len(span) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) for i in span)
            and 0 <= span[0] < span[1] <= len(text)
        )
        if not ok:
            raise HarnessError(
                f"span of {slot!r} must be [start, end] with "
                f"0 <= start < end <= {len(text)}, got {span!r}",
                column="spans",
                **where,
            )
        checked[slot] = (span[0], span[1])
    return checked


def encode_prompt(
    tokenizer: Any,
    text: str,
    spans: Mapping[str, tuple[int, int]],
    *,
    system: str | None = None,
    chat_template: bool = True,
    where: Where | None = None,
) -> EncodedPrompt:
    """Template `text`, tokenize it, and map each slot's characters to token positions."""
    where = where or {}
    if chat_template and getattr(tokenizer, "chat_template", None):
        full, offset = _templated(tokenizer, text, system, where)
        special = False  # the template already holds the special tokens
    else:
        full, offset, special = text, 0, True
    encoded = tokenizer(full, add_special_tokens=special, return_offsets_mapping=True)
    offsets = [tuple(pair) for pair in encoded["offset_mapping"]]
    slot_tokens = {}
    for slot, (start, end) in spans.items():
        lo, hi = start + offset, end + offset
        tokens = [i for i, (a, b) in enumerate(offsets) if b > a and a < hi and b > lo]
        if not tokens:
            raise HarnessError(
                f"no token covers the characters of {slot!r} ({text[start:end]!r})",
                column="spans",
                **where,
            )
        slot_tokens[slot] = tokens
    return EncodedPrompt(full, list(encoded["input_ids"]), slot_tokens, offset)


def _templated(tokenizer: Any, text: str, system: str | None, where: Where) -> tuple[str, int]:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": text})
    full = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    offset = full.rfind(text)  # the user turn is the last message
    if offset < 0:
        raise HarnessError(
            "the chat template altered the prompt text, so its spans cannot be "
            "placed (rerun with the chat template off)",
            column="text",
            **where,
        )
    return full, offset
