"""Small banks for the curation tests: real topics of the bundled bank, one per domain pair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.materials.bank import load_topic_bank


def domain_pair_topics() -> list[dict[str, Any]]:
    """The first bundled topic of each of the six domain pairs, as plain bank entries."""
    bank = load_topic_bank()
    tax, chosen, seen = bank.taxonomy, [], set()
    for topic in bank.topics:
        fa, fb = tax.field(topic.field_a), tax.field(topic.field_b)
        key = frozenset((fa.domain, fb.domain))
        if key not in seen:
            seen.add(key)
            chosen.append(topic.model_dump(mode="json", exclude_defaults=True))
    assert len(chosen) == 6
    return chosen


def write_bank(path: Path, topics: list[dict[str, Any]], text: str | None = None) -> Path:
    body = (
        text
        if text is not None
        else yaml.safe_dump({"version": 1, "topics": topics}, sort_keys=False, allow_unicode=True)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture
def topics() -> list[dict[str, Any]]:
    return domain_pair_topics()


@pytest.fixture(scope="session")
def tokenizer():
    from harness.models.embedded import load_tokenizer

    return load_tokenizer()
