"""Token counts without transformers: the embedded tokenizer's `tokenizers` form, cached after a
check against transformers' tokenizer, gives the same ids on every prompt of the bundled bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.defaults import materials_dir
from harness.generation import token_count
from harness.generation.generate_stage import render_prompts
from harness.materials.bank import load_topic_bank
from harness.materials.templates import load_families, system_message


@pytest.fixture
def cached_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cached form's place in tmp_path (the converted tokenizer stays in the test cache)."""
    path = tmp_path / "tokenizer.json"
    monkeypatch.setattr(token_count, "cached_form", lambda: path)
    return path


def test_the_cached_form_counts_every_bundled_prompt_as_transformers_does(
    cached_at: Path, tokenizer
) -> None:
    first = token_count.prompt_tokenizer()
    assert not isinstance(first, token_count.TokenCounter)  # transformers', its form now cached
    assert cached_at.exists()
    counter = token_count.prompt_tokenizer()
    assert isinstance(counter, token_count.TokenCounter)
    folder = materials_dir("prompts") / "generate"
    families, system = load_families(folder), system_message(folder)
    bank = load_topic_bank()
    fast = render_prompts(bank, families, system, 7, counter)
    slow = render_prompts(bank, families, system, 7, tokenizer)
    assert len(fast) == 3 * len(bank.topics) and fast == slow
    assert token_count.same_ids(counter, tokenizer)


def test_a_damaged_cached_form_is_made_again(cached_at: Path, tokenizer) -> None:
    cached_at.write_text("{not a tokenizer", encoding="utf-8")
    assert not isinstance(token_count.prompt_tokenizer(), token_count.TokenCounter)
    assert isinstance(token_count.prompt_tokenizer(), token_count.TokenCounter)


def test_ids_that_differ_are_told_apart(tokenizer) -> None:
    def shifted(texts, *, add_special_tokens):
        ids = tokenizer(texts, add_special_tokens=add_special_tokens)["input_ids"]
        return {"input_ids": [[*row, 0] for row in ids]}

    assert token_count.same_ids(tokenizer, tokenizer)
    assert not token_count.same_ids(shifted, tokenizer)
