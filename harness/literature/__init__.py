"""Literature sources behind one interface: a query in, an auditable `SearchRecord` out.

    >>> from harness.literature import search
    >>> record = search("predictive coding sediment transport", source="local", limit=5)
    >>> [hit.title for hit in record.hits]

Sources (`SOURCES`, the registry in `harness.literature.sources`): `local` (BM25 over a
JSONL/Parquet/datasets corpus; the demonstration corpus when no corpus is given), `openalex`,
`arxiv`, `semanticscholar`, `crossref`.

The record types (`Hit`, `SearchRecord`, `SentRequest`, `Source`, `dedup_key`) are pydantic
models in `harness.literature.base`.
"""

from __future__ import annotations

from datetime import date

from harness.errors import HarnessError
from harness.literature.base import SearchRecord
from harness.literature.defaults import DEFAULT_LIMIT
from harness.literature.sources import SOURCES, open_source

__all__ = ["SOURCES", "open_source", "search"]


def search(
    query: str,
    source: str = "local",
    *,
    cutoff: str | date | None = None,
    limit: int = DEFAULT_LIMIT,
    **options: object,
) -> SearchRecord:
    """Run one search on one source and return its record."""
    if not query or not query.strip():
        raise HarnessError("the query is empty", column="query")
    with open_source(source, **options) as opened:
        return opened.search(query.strip(), cutoff=cutoff, limit=limit)
