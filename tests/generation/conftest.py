from __future__ import annotations

from pathlib import Path

import pytest

from harness.models.embedded import load_tokenizer

TOPIC = """\
  - id: {id}
    field_a: Physics and Astronomy
    field_b: Arts and Humanities
    concepts_a: [standing waves {n}, acoustic resonance]
    concepts_b: [Gregorian chant, cathedral architecture {n}]
    relation: a shared mechanism
"""


def write_bank(folder: Path, n: int, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bank.yaml"
    body = "".join(TOPIC.format(id=f"t{i:03d}", n=i) for i in range(n))
    path.write_text("version: 1\ntopics:\n" + body + extra, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def tokenizer():
    return load_tokenizer()
