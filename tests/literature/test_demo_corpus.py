"""The demonstration corpus built from a topic bank's known links."""

from __future__ import annotations

import json

import pytest

from harness.literature import search
from harness.literature.corpus import load_corpus
from harness.literature.demo_corpus import build_demo_corpus, corpus_records, write_demo_corpus
from harness.literature.local import LocalSource

HOPFIELD = {
    "title": "Neural networks and physical systems with emergent collective "
    "computational abilities",
    "year": 1982,
    "doi": "10.1073/pnas.79.8.2554",
    "venue": "PNAS",
    "summary": "Carried spin-glass physics over to networks of neurons "
    "so that memories are attractor states.",
}
TOPICS = [
    {
        "id": "phys-neuro-01",
        "field_a": "Physics and Astronomy",
        "field_b": "Neuroscience",
        "known_links": [
            HOPFIELD,
            {
                "title": "Neuronal avalanches in neocortical circuits",
                "year": 2003,
                "summary": "Critical branching processes explain cascades of cortical activity.",
            },
        ],
    },
    {
        "id": "math-neuro-01",
        "field_a": "Mathematics",
        "field_b": "Neuroscience",
        "known_links": [HOPFIELD],
    },  # the same work under a second topic
    {"id": "econ-bio-01", "field_a": "Economics", "field_b": "Biology", "known_links": []},
]


def test_each_known_link_becomes_one_labelled_record():
    records = corpus_records(TOPICS)
    assert len(records) == 2
    assert all(r["demonstration"] is True for r in records)
    hopfield = next(r for r in records if r["doi"] == HOPFIELD["doi"])
    assert hopfield["abstract"] == HOPFIELD["summary"] and hopfield["year"] == 1982


def test_record_ids_say_nothing_about_topics():
    for record in corpus_records(TOPICS):
        assert record["id"].startswith("demo-")
        assert not any(part in record["id"] for part in ("phys", "neuro", "math", "econ"))
    assert corpus_records(TOPICS) == corpus_records(list(reversed(TOPICS)))  # stable


def test_searches_against_it_say_it_is_a_demonstration():
    corpus = build_demo_corpus(TOPICS, built_from=["bank.yaml sha256:abc"])
    record = LocalSource(corpus).search("spin glass neurons memory", limit=3)
    assert record.database.startswith("Demonstration corpus")
    assert "not a literature database" in record.database
    assert record.parameters["corpus_meta"]["demonstration"] is True
    assert "DEMONSTRATION CORPUS" in record.parameters["corpus_meta"]["description"]
    assert record.hits[0].doi == HOPFIELD["doi"]


def test_the_bundled_bank_builds_a_corpus_and_it_can_be_written(tmp_path):
    path = write_demo_corpus(tmp_path / "demo.jsonl")
    corpus = load_corpus(path)
    assert len(corpus.works) >= 50 and corpus.demonstration
    meta = json.loads((tmp_path / "demo.jsonl.meta.json").read_text())
    assert meta["built_from"][0].startswith("bank.yaml sha256:")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(line["demonstration"] for line in lines)


def test_local_source_without_a_corpus_uses_the_demonstration_corpus():
    record = search("neural networks physical systems collective computation", "local", limit=1)
    assert record.database.startswith("Demonstration corpus")
    assert record.hits and record.hits[0].id.startswith("demo-")


@pytest.mark.parametrize(
    "bad", [[{"id": "t", "known_links": [{"title": "", "year": 2000, "summary": "x"}]}]]
)
def test_a_link_without_title_is_refused(bad):
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="missing title"):
        build_demo_corpus(bad)
