"""The local corpus: JSONL, Parquet and datasets input, BM25 ranking, cut-off, dense re-ranking."""

from __future__ import annotations

import json

import pytest

from harness.errors import HarnessError
from harness.literature import open_source, search
from harness.literature.corpus import load_corpus
from tests.literature.conftest import CORPUS, write_jsonl


@pytest.fixture
def corpus_file(tmp_path):
    return write_jsonl(tmp_path / "works.jsonl", [dict(r) for r in CORPUS])


def test_bm25_puts_the_work_that_has_every_term_first(corpus_file):
    record = search("predictive coding sediment transport", f"local:{corpus_file}", limit=3)
    assert [h.id for h in record.hits][:2] == ["w1", "w4"]
    assert record.hits[0].score > record.hits[1].score > 0
    # works sharing at least one term: w5 "predicts" shares the stem of "predictive"
    assert record.total_hits == 3
    assert record.database == "Local corpus works.jsonl"
    params = record.parameters
    assert params["corpus_records"] == 6 and len(params["corpus_sha256"]) == 64
    assert params["query_terms"] == ["predict", "code", "sediment", "transport"]
    assert str(corpus_file.parent) not in record.model_dump_json()  # no local paths stored


def test_hits_keep_doi_and_year_and_drop_the_abstract(corpus_file):
    hit = search("predictive coding", f"local:{corpus_file}", limit=1).hits[0]
    assert (hit.id, hit.doi, hit.year, hit.rank) == ("w1", "10.1/w1", 2019, 1)
    assert hit.abstract and "abstract" not in hit.model_dump()


def test_cutoff_uses_dates_then_years_and_leaves_out_undated_works(corpus_file):
    source = open_source("local", corpus=corpus_file)
    assert {h.id for h in source.search("queueing", limit=5).hits} == {"w3", "w6"}
    assert source.search("queueing", limit=5, cutoff="2021-03-03").hits == []  # w3: 2021-03-04
    assert [h.id for h in source.search("queueing", limit=5, cutoff="2021-03-04").hits] == ["w3"]
    # year-only works count as published on 1 January of their year
    assert [h.id for h in source.search("crystal", cutoff="2023-01-01").hits] == ["w5"]
    assert source.search("crystal", cutoff="2022-12-31").hits == []
    record = source.search("sediment", cutoff="2010")
    assert [h.id for h in record.hits] == ["w4"]
    assert record.filters["cutoff"] == "2010-12-31" and record.filters["excluded_by_cutoff"] == 5


def test_dedup_key_names_a_repeated_search(corpus_file):
    source = open_source("local", corpus=corpus_file)
    a = source.search("Sediment  Transport", limit=3)
    b = source.search("sediment transport", limit=3)
    c = source.search("sediment transport", limit=3, cutoff="2010-01-01")
    assert a.dedup_key == b.dedup_key != c.dedup_key


def test_unknown_words_find_nothing(corpus_file):
    record = search("zyzzyva", f"local:{corpus_file}")
    assert record.total_hits == 0 and record.hits == []


def test_parquet_and_datasets_give_the_same_hits(corpus_file, tmp_path):
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        dict(
            r, abstract=r.get("abstract"), year=r.get("year"), doi=r.get("doi"), date=r.get("date")
        )
        for r in CORPUS
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "works.parquet")
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "works-ds"))
    want = [h.id for h in search("sediment rivers", f"local:{corpus_file}").hits]
    for path in (tmp_path / "works.parquet", tmp_path / "works-ds"):
        assert [h.id for h in search("sediment rivers", f"local:{path}").hits] == want
    in_memory = datasets.Dataset.from_list(rows)
    assert [h.id for h in search("sediment rivers", "local", corpus=in_memory).hits] == want


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ({"id": "x1", "abstract": "no title"}, "title", "missing title"),
        ({"title": "No id"}, "id", "missing id"),
        ({"id": "x1", "title": "Bad year", "year": "recently"}, "year", "year must be"),
        ({"id": "x1", "title": "Bad date", "date": "03/04/2021"}, "date", "YYYY-MM-DD"),
        ({"id": "w1", "title": "Duplicate"}, "id", "duplicate id 'w1'"),
    ],
)
def test_bad_records_name_file_row_and_field(tmp_path, line, column, message):
    path = write_jsonl(tmp_path / "bad.jsonl", [CORPUS[0], CORPUS[1], line])
    with pytest.raises(HarnessError) as caught:
        load_corpus(path)
    error = caught.value
    assert (error.file, error.row, error.column) == (str(path), 3, column)
    assert message in error.message


def test_broken_json_line_and_missing_file(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(CORPUS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(HarnessError) as caught:
        load_corpus(path)
    assert caught.value.row == 2 and "not valid JSON" in caught.value.message
    with pytest.raises(HarnessError, match="corpus not found"):
        load_corpus(tmp_path / "missing.jsonl")
    with pytest.raises(HarnessError, match="no records"):
        load_corpus(write_jsonl(tmp_path / "empty.jsonl", []))


def test_sidecar_metadata_travels_into_records(corpus_file):
    meta = {"demonstration": True, "description": "toy"}
    corpus_file.with_name("works.jsonl.meta.json").write_text(json.dumps(meta))
    record = search("enzyme", f"local:{corpus_file}")
    assert record.parameters["corpus_meta"] == meta
    assert record.database.startswith("Demonstration corpus works.jsonl")


def test_index_is_built_once_per_corpus(corpus_file):
    one = open_source("local", corpus=corpus_file)
    two = open_source("local", corpus=corpus_file)
    assert one.index is two.index


@pytest.mark.slow
def test_dense_reranking_orders_candidates_by_meaning(tmp_path):
    rows = [
        {"id": "unix", "title": "cats cats cats: the unix cat command", "year": 2001},
        {"id": "pets", "title": "Domestic cats as feline companions in family homes", "year": 2015},
    ]
    path = write_jsonl(tmp_path / "cats.jsonl", rows)
    lexical = search("pet cats", f"local:{path}", limit=2)
    dense = search("pet cats", f"local:{path}", limit=2, dense=True)
    assert [h.id for h in lexical.hits] == ["unix", "pets"]
    assert [h.id for h in dense.hits] == ["pets", "unix"]
    assert 0 < dense.hits[1].score < dense.hits[0].score <= 1
    assert dense.parameters["dense"] is True and dense.parameters["score"] == "cosine similarity"
    assert "re-ranked by all-MiniLM-L6-v2" in dense.interface
