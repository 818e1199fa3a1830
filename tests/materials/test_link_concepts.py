"""The `concepts` of a known link: the planted pair of the control item the link becomes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.errors import HarnessError
from harness.judge.controls.control_sources import BANK_LISTS, planted_pair, states_concept
from harness.materials.bank import load_topic_bank
from harness.study.tables.controls import TopicSlots


def _slots(topic: Any) -> TopicSlots:
    return TopicSlots(
        topic.id,
        topic.field_a,
        topic.field_b,
        topic.concepts_a,
        topic.concepts_b,
        topic.relation,
        {},
        {},
        {},
    )


def test_every_bundled_known_link_plants_a_pair_its_title_or_summary_states():
    bank = load_topic_bank()
    links = 0
    for topic in bank.topics:
        # the topics table stores each topic's whole entry as this JSON dump
        entry = topic.model_dump(mode="json")
        for key, _kind in BANK_LISTS:
            for link in entry[key]:
                links += 1
                where = f"{topic.id} {key} {link['title']!r}"
                assert link["concepts"] is not None, f"{where}: no concepts"
                planted = planted_pair(link, key, _slots(topic))
                assert planted is not None, where
                pair, fields, _condition = planted
                assert list(pair) == link["concepts"], where
                if key == "known_links":
                    assert fields == (topic.field_a, topic.field_b), where
                said = f"{link['title']} {link['summary']}"
                for concept in pair:
                    assert states_concept(concept, said), f"{where}: {concept!r} not stated"
                    assert 2 <= len(concept.split()) <= 4, f"{where}: {concept!r}"
    assert links >= 293


def _bank_with_link_concepts(tmp_path: Path, concepts: Any) -> tuple[Path, int]:
    bank = load_topic_bank()
    topic = next(t for t in bank.topics if t.known_links)
    entry = topic.model_dump(mode="json", exclude_defaults=True)
    entry = copy.deepcopy(entry)
    entry["known_links"][0]["concepts"] = concepts
    path = tmp_path / "bank.yaml"
    path.write_text(
        yaml.safe_dump({"version": 1, "topics": [entry]}, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    return path, next(i + 1 for i, text in enumerate(lines) if text.startswith("- id:"))


@pytest.mark.parametrize(
    ("concepts", "message"),
    [
        (["spin glasses"], "exactly 2 concepts"),
        (["spin glasses", "neural networks", "grid cells"], "exactly 2 concepts"),
        (["spin glasses", "  "], "missing"),
        (["glasses", "neural networks"], "2-5 words"),
        (["spin glasses", "one two three four five six"], "2-5 words"),
        (["Spin Glasses", "spin glasses"], "must differ"),
    ],
)
def test_bad_link_concepts_name_file_line_and_field(tmp_path, concepts, message):
    path, line = _bank_with_link_concepts(tmp_path, concepts)
    with pytest.raises(HarnessError) as caught:
        load_topic_bank(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: ")
    assert "known_links.0.concepts" in text and message in text


def test_link_without_concepts_still_loads_and_falls_back_to_the_topic_concepts(tmp_path):
    path, _ = _bank_with_link_concepts(tmp_path, None)
    bank = load_topic_bank(path)
    link = bank.topics[0].known_links[0]
    assert link.concepts is None
    path, _ = _bank_with_link_concepts(tmp_path, [" spin glasses ", "neural networks"])
    assert load_topic_bank(path).topics[0].known_links[0].concepts == [
        "spin glasses",
        "neural networks",
    ]
