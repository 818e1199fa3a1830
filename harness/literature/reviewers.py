"""Automated reviewers: one item's text in, a verdict and the searches behind it out.

`RetrievalReviewer` is deterministic: keyword queries from the item's core combination, every
configured source searched, and `published` only when the best hit's match score reaches the
threshold (that hit is cited). The match score is lexical (`retrieval`), the cosine of the
embeddings (`retrieval-dense`), or the mean of both over a deeper list of hits
(`retrieval-hybrid`: a hit must share the combination's words and its meaning). `LlmReviewer`
lets a model propose queries, read the hits and give a verdict; a `published` verdict that
cites no retrieved work is recorded as `unsure`.
Both first `assess` an item (searches and a score), then `decide` at a threshold, so
calibration scores each control once and tries every threshold. Neither sees anything but the
text they are given (the study layer passes only what reviewers may see).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from harness.literature import embedding
from harness.literature.base import Hit, SearchRecord, Source
from harness.literature.defaults import (
    DEFAULT_LIMIT,
    DENSE_THRESHOLD,
    HYBRID_LIMIT,
    HYBRID_THRESHOLD,
    LEXICAL_THRESHOLD,
)
from harness.literature.reviewer_base import (
    Decision,
    Notes,
    Reviewer,
    ReviewerContext,
    ReviewerMethod,
    Search,
)
from harness.literature.text import keyword_query, tokenize

__all__ = [
    "RETRIEVAL",
    "RETRIEVAL_DENSE",
    "RETRIEVAL_HYBRID",
    "RetrievalAssessment",
    "RetrievalReviewer",
    "combination_queries",
    "dense_match",
    "hybrid_match",
    "lexical_match",
]

QUERY_SIZES = (12, 6, 3)  # terms per query: the full combination first, then broader ones


def combination_queries(text: str, max_queries: int) -> list[str]:
    """Distinct keyword queries, narrowest (all terms) first, at most `max_queries`."""
    queries: list[str] = []
    for size in QUERY_SIZES:
        query = keyword_query(text, size)
        if query and query not in queries:
            queries.append(query)
    return queries[: max(max_queries, 1)]


def lexical_match(combination: str, hit: Hit) -> float:
    """Share of the combination's content terms that the hit's title or abstract contains."""
    wanted = set(tokenize(keyword_query(combination, QUERY_SIZES[0])))
    if not wanted:
        return 0.0
    return len(wanted & set(tokenize(hit.text()))) / len(wanted)


def dense_match(combination: str, hits: list[Hit]) -> list[float]:
    """Cosine similarity between the combination and each hit's title and abstract."""
    if not hits:
        return []
    vectors = embedding.encode([combination, *[h.text() for h in hits]])
    return [float(vectors[0] @ v) for v in vectors[1:]]


@dataclass
class Scored:
    """One search with the match score of each of its hits."""

    record: SearchRecord
    scores: list[float]


@dataclass
class RetrievalAssessment:
    """What a retrieval reviewer found for one item, before a threshold makes it a verdict."""

    notes: Notes
    scored: list[Scored]
    best: tuple[float, Hit, SearchRecord] | None
    searched: bool = True  # False: no content words, so no search and `unsure`

    @property
    def score(self) -> float | None:
        """The best match score (None when no hit was found or nothing could be searched)."""
        return self.best[0] if self.best is not None else None

    @property
    def otherwise(self) -> str:
        return "not_published" if self.searched else "unsure"

    def decide(self, threshold: float) -> Decision:
        """`published` citing the best hit when its score reaches `threshold`."""
        notes = {**self.notes, "threshold": threshold}
        if not self.searched:
            notes["rejected"] = "no content words to search for; recorded as unsure"
            return Decision("unsure", None, None, notes, [])
        searches = [
            Search(
                s.record,
                [h.id for h, x in zip(s.record.hits, s.scores, strict=True) if x >= threshold],
            )
            for s in self.scored
        ]
        if self.best is not None and self.best[0] >= threshold:
            _, hit, record = self.best
            notes["cited"] = {"id": hit.id, "database": record.database}
            return Decision(
                "published", None, f"{hit.cite()} via {record.database}", notes, searches
            )
        if self.best is not None:
            notes["closest"] = {"id": self.best[1].id, "title": self.best[1].title}
        return Decision("not_published", None, None, notes, searches)


def hybrid_match(combination: str, hits: list[Hit]) -> list[float]:
    """The mean of the lexical match and the cosine similarity of each hit."""
    cosines = dense_match(combination, hits)
    return [(lexical_match(combination, h) + c) / 2 for h, c in zip(hits, cosines, strict=True)]


MATCHES = {
    "retrieval": "share of combination terms in title/abstract",
    "retrieval-dense": "cosine similarity (all-MiniLM-L6-v2)",
    "retrieval-hybrid": "mean of the share of combination terms in title/abstract and the "
    "cosine similarity (all-MiniLM-L6-v2)",
}


class RetrievalReviewer(Reviewer):
    """The deterministic `retrieval` (lexical), `retrieval-dense` (embedding) and
    `retrieval-hybrid` (both) reviewers. `hybrid` needs densely re-ranked sources, as `dense`
    does. Queries and match scores come from the core combination alone (the text if none)."""

    def __init__(
        self,
        sources: list[Source],
        *,
        threshold: float,
        dense: bool = False,
        hybrid: bool = False,
        cutoff: str | date | None = None,
        max_queries: int = 3,
        limit: int = DEFAULT_LIMIT,
    ) -> None:
        self.sources = sources
        self.threshold = threshold
        self.dense = dense or hybrid
        self.hybrid = hybrid
        self.cutoff = cutoff
        self.max_queries = max_queries
        self.limit = limit

    @property
    def method(self) -> str:
        return (
            "retrieval-hybrid" if self.hybrid else "retrieval-dense" if self.dense else "retrieval"
        )

    def _scores(self, combination: str, hits: list[Hit]) -> list[float]:
        if self.hybrid:
            return hybrid_match(combination, hits)
        if self.dense:
            return dense_match(combination, hits)
        return [lexical_match(combination, h) for h in hits]

    def assess(self, text: str, stop_at: float | None = None) -> RetrievalAssessment:
        """Search and score; broader queries stop once a hit reaches `stop_at` (None: never).

        Stopping early changes no verdict at thresholds up to `stop_at`: the best score of all
        queries reaches a threshold exactly when some query's best hit does.
        """
        queries = combination_queries(text, self.max_queries)
        notes: Notes = {"reviewer": self.method, "match": MATCHES[self.method]}
        if not queries:
            return RetrievalAssessment(notes, [], None, searched=False)
        if self.dense:
            embedding.encode([text, *queries])  # one batch; searches and scores reuse these
        scored, best = self._search(text, queries, stop_at)
        notes["queries"] = list(dict.fromkeys(s.record.query for s in scored))
        notes["best_score"] = round(best[0], 4) if best else None
        return RetrievalAssessment(notes, scored, best)

    def _search(
        self, text: str, queries: list[str], stop_at: float | None
    ) -> tuple[list[Scored], tuple[float, Hit, SearchRecord] | None]:
        """Every source with each query in turn, until a hit reaches `stop_at`."""
        scored: list[Scored] = []
        best: tuple[float, Hit, SearchRecord] | None = None
        for query in queries:
            for source in self.sources:
                record = source.search(query, cutoff=self.cutoff, limit=self.limit)
                scores = self._scores(text, record.hits)
                scored.append(Scored(record, scores))
                for hit, score in zip(record.hits, scores, strict=True):
                    if best is None or score > best[0]:
                        best = (score, hit, record)
            if stop_at is not None and best is not None and best[0] >= stop_at:
                break  # prior work found; broader queries would add nothing
        return scored, best


def _retrieval(
    dense: bool = False, hybrid: bool = False
) -> Callable[[ReviewerContext], RetrievalReviewer]:
    """The `build` of one retrieval method: its sources (dense ones when it embeds), its depth."""

    def build(context: ReviewerContext) -> RetrievalReviewer:
        return RetrievalReviewer(
            context.open_sources(dense or hybrid),
            threshold=context.threshold,
            dense=dense,
            hybrid=hybrid,
            cutoff=context.cutoff,
            max_queries=context.max_queries,
            limit=HYBRID_LIMIT if hybrid else DEFAULT_LIMIT,
        )

    return build


RETRIEVAL = ReviewerMethod(
    name="retrieval",
    label=MATCHES["retrieval"],
    rule="published when the best hit's match score (share of terms) >= threshold",
    default_threshold=LEXICAL_THRESHOLD,
    build=_retrieval(),
)
RETRIEVAL_DENSE = ReviewerMethod(
    name="retrieval-dense",
    label=MATCHES["retrieval-dense"],
    rule="published when the best hit's cosine similarity >= threshold",
    default_threshold=DENSE_THRESHOLD,
    build=_retrieval(dense=True),
)
RETRIEVAL_HYBRID = ReviewerMethod(
    name="retrieval-hybrid",
    label=MATCHES["retrieval-hybrid"],
    rule="published when the best hit's mean of match score (share of terms) "
    "and cosine similarity >= threshold",
    default_threshold=HYBRID_THRESHOLD,
    build=_retrieval(hybrid=True),
)
