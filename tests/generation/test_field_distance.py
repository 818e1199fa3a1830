"""Field distances come from a table wherever one holds the fields asked for: the bundled one
(fresh for the bundled taxonomy), else the user cache; the model only computes what no table
holds, and what it computed is cached."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.generation import field_distance as fd
from harness.materials.taxonomy import load_taxonomy

TEXTS = {"Alpha": "first description", "Beta": "second description", "Gamma": "third one"}


def taxonomy_texts() -> dict[str, str]:
    return {f.name: f.description for f in load_taxonomy().fields}


def test_the_bundled_table_holds_every_field_of_the_bundled_taxonomy() -> None:
    """Fails after a field's description changed until `python tools/field_distances.py`
    rewrites the table."""
    found = fd.from_table(fd.bundled_table(), taxonomy_texts())
    assert found is not None and len(found) == 26 * 26
    assert all(0.0 < d < 1.5 for (a, b), d in found.items() if a != b)
    assert all(found[(a, b)] == found[(b, a)] for a, b in found)


def test_a_table_holds_a_field_only_under_the_same_description_and_model() -> None:
    texts = taxonomy_texts()
    table = fd.bundled_table()
    some = dict(list(texts.items())[:3])
    assert fd.from_table(table, some) is not None
    changed = {**some, next(iter(some)): "another description"}
    assert fd.from_table(table, changed) is None
    assert fd.from_table(table, {**some, "No such field": "text"}) is None
    assert isinstance(table, dict)
    assert fd.from_table({**table, "model": "another model"}, some) is None
    assert fd.from_table({"model": fd.EMBEDDING_MODEL}, some) is None  # damaged: no rows
    assert fd.from_table(None, some) is None


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[dict[str, str]]:
    """The model replaced by a deterministic distance (its calls recorded), the user cache in
    tmp_path: what these tests check is where distances come from, not their values."""
    calls: list[dict[str, str]] = []

    def distances(texts: dict[str, str]) -> dict[tuple[str, str], float]:
        calls.append(dict(texts))
        return {
            (a, b): round(abs(len(texts[a]) - len(texts[b])) / 10, 6) for a in texts for b in texts
        }

    monkeypatch.setattr(fd, "cosine_distances", distances)
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    return calls


def test_what_no_table_holds_is_computed_once_then_read_from_the_cache(counted) -> None:
    first = fd.field_distances(TEXTS)
    assert len(counted) == 1
    assert fd.field_distances(TEXTS) == first and len(counted) == 1
    assert fd.field_distances({"Alpha": TEXTS["Alpha"], "Beta": TEXTS["Beta"]}) == {
        k: v for k, v in first.items() if "Gamma" not in k
    }
    assert len(counted) == 2  # another set of texts: its own entry
    fd.field_distances({**TEXTS, "Gamma": "changed"})
    assert len(counted) == 3


def test_a_damaged_cache_entry_is_computed_again(counted, tmp_path: Path) -> None:
    fd.field_distances(TEXTS)
    (entry,) = (tmp_path / "cache" / "field-distances").glob("*.json")
    entry.write_text("{not json", encoding="utf-8")
    again = fd.field_distances(TEXTS)
    assert len(counted) == 2 and json.loads(entry.read_text(encoding="utf-8"))["fields"]
    assert fd.field_distances(TEXTS) == again and len(counted) == 2


def test_the_bundled_taxonomy_never_reaches_the_model(counted) -> None:
    fd.field_distances(taxonomy_texts())
    assert counted == []


@pytest.mark.slow
def test_the_bundled_table_is_what_the_model_computes() -> None:
    """The table against the model, for all fields together and for subsets (the distances of a
    study's fields are computed over the fields it uses, in one batch)."""
    texts = taxonomy_texts()
    table = fd.bundled_table()
    assert fd.cosine_distances(texts) == fd.from_table(table, texts)
    names = sorted(texts)
    for subset in (names[:2], names[::3], names[5:20]):
        some = {n: texts[n] for n in subset}
        assert fd.cosine_distances(some) == fd.from_table(table, some)
