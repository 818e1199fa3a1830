"""A local corpus searched with BM25 (`bm25s`), optionally re-ranked by the offline embedding model.

The index is built once per corpus and process (keyed by the corpus hash), so many searches in
one run share it. With a cut-off, works dated after it are masked out before ranking; a work
known only by year counts as published on 1 January of that year (OpenAlex's convention), and
undated works are left out (they cannot be shown to predate the cut-off).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from importlib import metadata
from typing import TYPE_CHECKING

from harness.literature import embedding
from harness.literature.base import (
    Hit,
    SearchRecord,
    Source,
    SourceKind,
    check_limit,
    dedup_key,
    parse_cutoff,
)
from harness.literature.corpus import Corpus, load_corpus
from harness.literature.defaults import BM25_B, BM25_K1, EMBEDDING_MODEL_NAME, RERANK_DEPTH
from harness.literature.demo_corpus import demo_corpus
from harness.literature.text import tokenize
from harness.study.clock import utc_now

if TYPE_CHECKING:
    import numpy as np
    from bm25s import BM25

#: The date ordinal of an undated work: the largest int32, after every cut-off.
UNDATED = 2**31 - 1


@dataclass
class Index:
    """A built BM25 index with the per-work arrays searches need."""

    corpus: Corpus
    bm25: BM25
    dates: np.ndarray  # proleptic ordinal of each work's date (UNDATED if none)


_indexes: dict[tuple[str, float, float], Index] = {}
_lock = threading.Lock()


def build_index(corpus: Corpus, k1: float = BM25_K1, b: float = BM25_B) -> Index:
    """The BM25 index of a corpus, built on first use and then shared."""
    import bm25s
    import numpy as np

    key = (corpus.sha256, k1, b)
    with _lock:
        if key in _indexes:
            return _indexes[key]
        bm25 = bm25s.BM25(k1=k1, b=b)
        bm25.index([tokenize(w.text()) for w in corpus.works], show_progress=False)
        dates = np.array([_ordinal(w.published, w.year) for w in corpus.works], dtype=np.int32)
        index = Index(corpus=corpus, bm25=bm25, dates=dates)
        _indexes[key] = index
        return index


def _ordinal(published: date | None, year: int | None) -> int:
    if published is not None:
        return published.toordinal()
    if year is not None:
        return date(year, 1, 1).toordinal()
    return UNDATED


class LocalSource(Source):
    """BM25 over a local corpus; `dense=True` re-ranks the top BM25 candidates by cosine."""

    name = "local"

    def __init__(
        self,
        corpus: object = None,
        *,
        dense: bool = False,
        rerank_depth: int = RERANK_DEPTH,
        k1: float = BM25_K1,
        b: float = BM25_B,
        name: str | None = None,
    ) -> None:
        if corpus is None:
            corpus = demo_corpus()
        self.corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus, name=name)
        self.dense = dense
        self.rerank_depth = rerank_depth
        self.k1, self.b = k1, b
        self.index = build_index(self.corpus, k1, b)
        self.database = _database(self.corpus)

    def search(
        self, query: str, *, cutoff: str | date | None = None, limit: int = 10
    ) -> SearchRecord:
        import numpy as np

        limit = check_limit(limit)
        until = parse_cutoff(cutoff)
        terms = tokenize(query)
        scores = self._bm25_scores(terms)
        if until is None:
            mask = np.ones(len(self.corpus.works), dtype=bool)
        else:
            mask = self.index.dates <= until.toordinal()
        scores = np.where(mask, scores, 0.0)
        matching = np.flatnonzero(scores > 0)
        depth = max(self.rerank_depth, limit) if self.dense else limit
        order = _top(matching, scores, depth)
        if self.dense:
            order, shown = self._rerank(query, order)
        else:
            shown = scores
        hits = [
            self._hit(int(i), float(shown[i]), rank)
            for rank, i in enumerate(order[:limit], start=1)
        ]
        filters = {
            "cutoff": until.isoformat() if until else None,
            "limit": limit,
            "applied_as": "publication date <= cut-off (year-only works dated 1 January;"
            " undated works excluded)"
            if until
            else None,
            "excluded_by_cutoff": int((~mask).sum()),
        }
        return SearchRecord(
            database=self.database,
            interface=self._interface(),
            query=query,
            parameters=self._parameters(terms),
            filters=filters,
            run_at=utc_now(),
            total_hits=int(matching.size),
            hits=hits,
            dedup_key=dedup_key(self.database, query, filters),
        )

    def _bm25_scores(self, terms: list[str]) -> np.ndarray:
        import numpy as np

        ids = self.index.bm25.get_tokens_ids(terms)
        if not ids:
            return np.zeros(len(self.corpus.works), dtype=np.float32)
        return np.asarray(self.index.bm25.get_scores_from_ids(ids), dtype=np.float32)

    def _rerank(self, query: str, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates ordered by cosine similarity to the query; returns (order, score by id)."""
        import numpy as np

        shown = np.zeros(len(self.corpus.works), dtype=np.float32)
        if candidates.size == 0:
            return candidates, shown
        vectors = self.embeddings([int(i) for i in candidates])
        cosine = vectors @ embedding.encode([query])[0]
        shown[candidates] = cosine
        return candidates[np.argsort(-cosine, kind="stable")], shown

    def embeddings(self, ids: list[int]) -> np.ndarray:
        """Embeddings of works by position (kept by text, so each work is embedded once)."""
        result: np.ndarray = embedding.encode([self.corpus.works[i].text() for i in ids])
        return result

    def _hit(self, position: int, score: float, rank: int) -> Hit:
        work = self.corpus.works[position]
        return Hit(
            id=work.id,
            doi=work.doi,
            title=work.title,
            year=work.year,
            score=round(score, 6),
            rank=rank,
            abstract=work.abstract,
        )

    def _interface(self) -> str:
        text = f"harness local search, bm25s {_bm25s_version()} BM25 (k1={self.k1}, b={self.b})"
        if self.dense:
            text += f", top {self.rerank_depth} re-ranked by {EMBEDDING_MODEL_NAME} cosine"
        return text

    def _parameters(self, terms: list[str]) -> dict[str, object]:
        params: dict[str, object] = {
            "corpus": self.corpus.name,
            "corpus_sha256": self.corpus.sha256,
            "corpus_records": len(self.corpus.works),
            "query_terms": terms,
            "tokenizer": "harness.literature.text.tokenize",
            "k1": self.k1,
            "b": self.b,
            "dense": self.dense,
        }
        if self.dense:
            params.update(
                rerank_depth=self.rerank_depth,
                model=EMBEDDING_MODEL_NAME,
                score="cosine similarity",
            )
        else:
            params["score"] = "BM25"
        if self.corpus.meta:
            params["corpus_meta"] = self.corpus.meta
        return params


def _top(candidates: np.ndarray, scores: np.ndarray, k: int) -> np.ndarray:
    """The k best candidates by score, best first; ties keep corpus order (deterministic)."""
    import numpy as np

    if candidates.size > k:
        # partition first: sorting every matching work costs more than the search itself
        kth = np.partition(-scores[candidates], k - 1)[k - 1]
        candidates = candidates[-scores[candidates] <= kth]
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k]


@lru_cache(maxsize=1)
def _bm25s_version() -> str:
    return metadata.version("bm25s")


def _database(corpus: Corpus) -> str:
    if corpus.demonstration:
        return f"Demonstration corpus {corpus.name} (not a literature database)"
    return f"Local corpus {corpus.name}"


SOURCE = SourceKind(
    "local",
    "a local corpus searched with BM25 (the demonstration corpus when none is given)",
    LocalSource,
    argument="corpus",
)
