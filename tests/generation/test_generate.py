from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.generation.generate_stage import CONDITIONS, generate
from harness.materials.bank import load_topic_bank
from harness.study import Study
from harness.study.manifest import read_manifest
from tests.generation.conftest import write_bank


def dump(study: Path) -> list[tuple]:
    conn = sqlite3.connect(study / "study.sqlite")
    try:
        return conn.execute("SELECT * FROM prompts ORDER BY prompt_id").fetchall()
    finally:
        conn.close()


def test_bundled_bank_has_enough_valid_topics():
    bank = load_topic_bank()
    assert len(bank.topics) >= 60
    assert len({t.id for t in bank.topics}) == len(bank.topics)


def test_same_inputs_and_seed_give_byte_identical_prompts(tmp_path, tokenizer):
    bank = write_bank(tmp_path / "bank", 6)
    generate(tmp_path / "a", topics=bank, seed=3, pilot=True, tokenizer=tokenizer)
    generate(tmp_path / "b", topics=bank, seed=3, pilot=True, tokenizer=tokenizer)
    a, b = dump(tmp_path / "a"), dump(tmp_path / "b")
    assert len(a) == 18
    assert a == b
    generate(tmp_path / "c", topics=bank, seed=4, pilot=True, tokenizer=tokenizer)
    families = lambda rows: [r[3] for r in rows]  # noqa: E731
    assert families(dump(tmp_path / "c")) != families(a)


def test_conditions_differ_only_in_concept_origin(tmp_path, tokenizer):
    bank = write_bank(tmp_path / "bank", 3)
    audit = generate(tmp_path / "s", topics=bank, seed=1, pilot=True, tokenizer=tokenizer)
    assert audit.structure_ok
    with Study.open(tmp_path / "s") as s:
        rows = s.rows("SELECT * FROM prompts WHERE topic_id = 't000'")
    by = {r["condition"]: r for r in rows}
    assert set(by) == set(CONDITIONS)
    spans = {c: json.loads(by[c]["spans"]) for c in by}
    text = lambda c, slot: by[c]["text"][slice(*spans[c][slot])]  # noqa: E731
    assert text("cross", "concept_1") == text("single_a", "concept_1") == "standing waves 0"
    assert text("cross", "concept_2") == text("single_b", "concept_2") == "Gregorian chant"
    assert text("cross", "field_2") == "Arts and Humanities"
    assert text("single_a", "field_2") == "Physics and Astronomy"
    assert all(by[c]["n_tokens"] > 20 for c in by)


def test_pilot_flag_required_below_fifty_topics(tmp_path, tokenizer):
    bank = write_bank(tmp_path / "bank", 4)
    with pytest.raises(HarnessError, match="at least 50"):
        generate(tmp_path / "s", topics=bank, tokenizer=tokenizer)
    assert not (tmp_path / "s").exists()
    generate(tmp_path / "s", topics=bank, pilot=True, tokenizer=tokenizer)
    with Study.open(tmp_path / "s") as s:
        assert s.pilot
    assert read_manifest(tmp_path / "s").record()["generate"]["pilot"] is True


def test_rerun_is_idempotent_and_refuses_other_prompts(tmp_path, tokenizer):
    bank = write_bank(tmp_path / "bank", 3)
    generate(tmp_path / "s", topics=bank, seed=1, pilot=True, tokenizer=tokenizer)
    generate(tmp_path / "s", topics=bank, seed=1, pilot=True, tokenizer=tokenizer)
    assert len(dump(tmp_path / "s")) == 9
    other = write_bank(tmp_path / "other", 4)
    with pytest.raises(HarnessError, match="different prompts"):
        generate(tmp_path / "s", topics=other, seed=1, pilot=True, tokenizer=tokenizer)
    assert len(dump(tmp_path / "s")) == 9


def test_manifest_records_materials_and_distances(tmp_path, tokenizer):
    bank = write_bank(tmp_path / "bank", 2)
    generate(tmp_path / "s", topics=bank, pilot=True, tokenizer=tokenizer)
    manifest = read_manifest(tmp_path / "s").record()
    assert manifest["materials"]["topics"]["topics/bank.yaml"]["sha256"]
    assert len(manifest["materials"]["prompts"]) >= 3
    assert manifest["commands"][0]["stage"] == "generate"
    assert manifest["commands"][0]["packages"]["torch"]
    with Study.open(tmp_path / "s") as s:
        row = s.rows("SELECT taxonomy_distance, embedding_distance FROM topics")[0]
    assert row[0] == 3
    assert 0.0 < row[1] < 2.0


def test_subset_is_seeded_and_recorded(tmp_path, tokenizer):
    from harness.materials.subset import choose_subset

    bank = load_topic_bank()
    generate(tmp_path / "s", subset=8, subset_seed=5, pilot=True, tokenizer=tokenizer)
    expected = [t.id for t in choose_subset(bank.topics, bank.taxonomy, 8, 5)]
    with Study.open(tmp_path / "s") as study:
        stored = [r[0] for r in study.rows("SELECT topic_id FROM topics ORDER BY rowid")]
        meta = json.loads(study.meta("topic_selection") or "{}")
    assert stored == expected
    assert meta["rule"] == "subset" and meta["seed"] == 5 and meta["topic_ids"] == expected
    assert meta["domain_pairs"] == 6 and meta["of"] == len(bank.topics)
    section = read_manifest(tmp_path / "s").record()["generate"]["topic_selection"]
    assert section == meta and "round robin" in section["description"]


def test_limit_still_takes_the_first_topics_and_excludes_subset(tmp_path, tokenizer):
    path = write_bank(tmp_path / "bank", 6)
    generate(tmp_path / "l", topics=path, limit=4, pilot=True, tokenizer=tokenizer)
    with Study.open(tmp_path / "l") as study:
        meta = json.loads(study.meta("topic_selection") or "{}")
    assert meta["topic_ids"] == ["t000", "t001", "t002", "t003"] and meta["rule"] == "limit"
    with pytest.raises(HarnessError, match="--limit and --subset"):
        generate(tmp_path / "x", topics=path, limit=4, subset=4, pilot=True, tokenizer=tokenizer)
    assert not (tmp_path / "x" / "study.sqlite").exists()
